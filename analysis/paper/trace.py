"""``recenter trace KEY``: print where one number of the paper comes from, as JSON.

The chain is the record's own provenance: the value and CI, the method, the rule that wrote
it, its input files with sha256 (paths relative to the repository), the config subtree the
rule read, the code location (``module:function``) and the call-store shards with call
counts, and the number's page in the audit site. ``--check`` recomputes the sha256 of every
input and says whether the record is still current; it exits non-zero when an input changed or
is missing. ``--lineage`` follows the chain all the way back to the raw files and call-store
shards (``analysis.paper.lineage``).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analysis import REPO_ROOT
from analysis.paper import site_links
from analysis.paper.lineage import lineage as full_lineage
from analysis.paths import BuildPaths
from analysis.provenance import RecordError, load_numbers, sha256_file
from analysis.software import UNKNOWN_COMMIT, repository_commit


def default_dataset(root: Path = REPO_ROOT) -> str:
    """The dataset the default config builds (``data.name``)."""
    from analysis.workflow_config import compose_config

    return str(compose_config(None, config_dir=root / "config")["data"]["name"])


def numbers_path(dataset: str, root: Path = REPO_ROOT, variant: str | None = None) -> Path:
    """A build's ``numbers.json`` in the checkout ``root`` (the path helper's)."""
    return root / BuildPaths(dataset, variant).numbers


def chain(key: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON document ``trace`` prints for one record."""
    low, high = record.get("ci_low"), record.get("ci_high")
    return {
        "key": key,
        "value": record.get("value"),
        "display": record.get("display"),
        "ci": [low, high] if low is not None and high is not None else None,
        "n": record.get("n"),
        "method": record.get("method"),
        "rule": record.get("rule"),
        "inputs": [{"path": i["path"], "sha256": i["sha256"]} for i in record.get("inputs") or []],
        "config": record.get("config") or {},
        "config_sha256": record.get("config_sha256"),
        "code": record.get("code"),
        "calls": record.get("calls") or {},
    }


def check_inputs(inputs: list[Mapping[str, str]], root: Path = REPO_ROOT) -> dict[str, Any]:
    """Recompute the sha256 of every input: ``{current, changed, missing}``."""
    changed, missing = [], []
    for item in inputs:
        path = Path(item["path"])
        path = path if path.is_absolute() else root / path
        if not path.is_file():
            missing.append(item["path"])
        elif sha256_file(path) != item["sha256"]:
            changed.append(item["path"])
    return {"current": not changed and not missing, "changed": changed, "missing": missing}


def trace(
    key: str,
    dataset: str,
    root: Path = REPO_ROOT,
    check: bool = False,
    lineage: bool = False,
    variant: str | None = None,
) -> dict[str, Any]:
    """The provenance chain of ``key`` in a build's ``numbers.json`` (``lineage``: back to the
    raw files and call-store shards, every file with its hash check)."""
    build = BuildPaths(dataset, variant)
    numbers = load_numbers(root / build.numbers)
    if key not in numbers:
        near = difflib.get_close_matches(key, list(numbers), n=5, cutoff=0.5)
        hint = f"; did you mean: {', '.join(near)}" if near else ""
        raise RecordError(f"no record '{key}' in {build.numbers}{hint}")
    out = chain(key, numbers[key])
    # the number's page in the audit site beside the PDF (rule audit_site)
    out["site"] = f"{build.paper_build}/{site_links.from_pdf(site_links.entry_link(key))}"
    out["software"] = software_summary(dataset, root, variant)
    if check:
        out["check"] = check_inputs(out["inputs"], root)
    if lineage:
        out["lineage"] = full_lineage(key, numbers[key], numbers, dataset, root)
    return out


def software_summary(
    dataset: str, root: Path = REPO_ROOT, variant: str | None = None
) -> dict[str, Any]:
    """The software that built a build's numbers (its ``environment.json``): the repository's
    commit (and the one checked out now, which may be newer), the platform, TeX, the packages
    outside the hashed lock, and the file holding every version."""
    rel = BuildPaths(dataset, variant).environment
    path = root / rel
    if not path.is_file():
        return {"file": None, "note": f"{rel} was not written"}
    sw = json.loads(path.read_text(encoding="utf-8"))
    return {
        "file": rel,
        "sha256": sha256_file(path),
        "commit": sw.get("repository", {}).get("commit", UNKNOWN_COMMIT),
        "uncommitted_changes": sw.get("repository", {}).get("uncommitted_changes"),
        "checkout_commit": repository_commit(root)["commit"],
        **{k: sw.get(k) for k in ("python", "os", "machine", "tex", "latexmk")},
        "outside_lock": sw.get("outside_lock", {}),
        "n_packages": len(sw.get("packages", {})),
    }


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    """``--dataset`` and ``--variant``: which build a command reads (default: the default one)."""
    parser.add_argument("--dataset", help="dataset name (default: data.name of the config)")
    parser.add_argument(
        "--variant",
        help="a variant of the dataset (its folder name under results/<dataset>/variants/; "
        "default: the dataset's default build)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("key", help="record key, e.g. stage2.final.kappa.human_human")
    add_build_arguments(parser)
    parser.add_argument(
        "--check", action="store_true", help="recompute input hashes; exit 1 if not current"
    )
    parser.add_argument(
        "--lineage",
        action="store_true",
        help="the whole chain back to the raw files and call-store shards; exit 1 if any changed",
    )


def run(args: argparse.Namespace) -> int:
    root = args.repo
    dataset = args.dataset or default_dataset(root)
    try:
        out = trace(
            args.key, dataset, root, check=args.check, lineage=args.lineage, variant=args.variant
        )
    except RecordError as err:
        print(f"recenter trace: {err}", file=sys.stderr)
        return 2
    print(json.dumps(out, indent=2, sort_keys=False, ensure_ascii=False))
    if args.lineage and not out["lineage"]["current"]:
        lin = out["lineage"]
        problems = [f"changed: {p}" for p in lin["changed"]]
        problems += [f"missing: {p}" for p in lin["missing"]]
        print(f"{args.key}: lineage NOT current ({'; '.join(problems)})", file=sys.stderr)
        return 1
    if args.lineage:
        lin = out["lineage"]
        print(
            f"{args.key}: lineage of {len(lin['steps'])} steps, {len(lin['raw_files'])} raw files,"
            f" {len(lin['call_shards'])} call-store shards; every recorded sha256 matches",
            file=sys.stderr,
        )
    if args.check:
        state = out["check"]
        if state["current"]:
            print(f"{args.key}: current (every input matches its recorded sha256)", file=sys.stderr)
            return 0
        problems = [f"changed: {p}" for p in state["changed"]]
        problems += [f"missing: {p}" for p in state["missing"]]
        print(
            f"{args.key}: NOT current; rebuild with snakemake ({'; '.join(problems)})",
            file=sys.stderr,
        )
        return 1
    return 0
