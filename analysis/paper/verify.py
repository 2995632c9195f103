"""``recenter verify``: reviewer mode. Rebuild every number offline and compare.

1. copy the repository's source files (git-tracked plus untracked-but-not-ignored files, which
   include the raw data under ``data/`` and the committed call store) into a fresh temporary
   folder, without any results, logs or generated paper files;
2. run Snakemake there with ``llm.mode=replay`` (no network: a call missing from the store
   fails the run instead of being made), for the chosen dataset;
3. diff every record of the rebuilt ``results/<dataset>/numbers.json`` against the one in
   this checkout: the value, the printed form (what the paper's macro shows), the CI and n.

It exits 0 when every number is identical, 1 listing each number that changed, appeared or
disappeared, and 2 when the rebuild itself failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analysis import REPO_ROOT
from analysis.paths import BuildPaths
from analysis.provenance import load_numbers
from analysis.software import (
    COMMIT_VARIABLE,
    CONFIG_CACHE_VARIABLE,
    EMBEDDING_CACHE_VARIABLE,
    commit_label,
    installed_software,
    repository_commit,
    software_differences,
)

#: outputs of a run: never copied into the fresh tree
GENERATED = ("results/", "logs/", ".snakemake/", "paper/build/", "paper/generated/")


class VerifyError(RuntimeError):
    """The rebuild could not run or failed; the message says where its log is."""


@dataclass
class NumberDiff:
    """What differs between two ``numbers.json``: changed fields, new and vanished keys."""

    changed: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not (self.changed or self.added or self.removed)

    def lines(self) -> list[str]:
        out = []
        for key, fields in sorted(self.changed.items()):
            parts = ", ".join(f"{f}: {a!r} -> {b!r}" for f, (a, b) in fields.items())
            out.append(f"changed  {key}  ({parts})")
        out += [f"new      {k}  (only in the rebuild)" for k in self.added]
        out += [f"missing  {k}  (not produced by the rebuild)" for k in self.removed]
        return out


def diff_numbers(
    here: Mapping[str, Mapping[str, Any]], rebuilt: Mapping[str, Mapping[str, Any]]
) -> NumberDiff:
    """Compare two key -> record maps on the fields the paper prints (``recenter diff``'s
    refactor check, :func:`analysis.paper.diff.compare_numbers`)."""
    from analysis.paper.diff import compare_numbers

    removed, added, changes = compare_numbers(dict(here), dict(rebuilt))
    diff = NumberDiff(added=added, removed=removed)
    for c in changes:
        diff.changed.setdefault(c.key, {})[c.field] = (c.old, c.new)
    return diff


def source_files(root: Path) -> list[str]:
    """Files a fresh clone has: tracked plus untracked-but-not-ignored, minus run outputs."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            check=True,
            capture_output=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as err:
        raise VerifyError(f"{root} is not a git checkout (git ls-files failed: {err})") from err
    files = [f for f in out.split("\0") if f]
    return sorted(f for f in files if (root / f).is_file() and not f.startswith(GENERATED))


def copy_sources(root: Path, dest: Path) -> int:
    """Copy :func:`source_files` of ``root`` to ``dest``; returns how many files."""
    files = source_files(root)
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    return len(files)


def data_root_override(dataset: str, root: Path) -> list[str]:
    """``data.root=<absolute>`` when the dataset's raw files live outside the repository.

    A relative ``data.root`` inside the repository is copied with it; one outside (the real
    exports beside the checkout) would not resolve from the temporary copy.
    """
    from analysis.workflow_config import compose_config

    if not (root / "config").is_dir():  # a workflow without the Hydra config sets no data.root
        return []
    cfg = compose_config([f"data={dataset}"], config_dir=root / "config")
    data_root = Path(cfg["data"]["root"])
    resolved = data_root if data_root.is_absolute() else (root / data_root).resolve()
    try:
        resolved.relative_to(root.resolve())
        return []
    except ValueError:
        return [f"data.root={resolved}"]


def rebuild(
    root: Path,
    workdir: Path,
    dataset: str,
    cores: int = 2,
    target: str | None = None,
    extra_overrides: list[str] | None = None,
    build: BuildPaths | None = None,
) -> Path:
    """Run Snakemake offline in ``workdir`` and return the rebuilt build's numbers.json
    (``build``: a variant of ``dataset``, whose overrides are among ``extra_overrides``)."""
    overrides = [f"data={dataset}", "llm.mode=replay", *(extra_overrides or [])]
    # the target goes before --config, which takes every word after it as a config entry
    cmd = [
        "snakemake",
        "--cores",
        str(cores),
        *([target] if target else []),
        "--config",
        "overrides=" + " ".join(shlex.quote(o) for o in overrides),
    ]
    env = dict(
        os.environ,
        PYTHONPATH=str(workdir),  # the copy's package, not the installed checkout's
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    # the copy has no .git: it records the commit of the checkout it was copied from
    env.setdefault(COMMIT_VARIABLE, commit_label(repository_commit(root)))
    env.pop(EMBEDDING_CACHE_VARIABLE, None)  # a verification encodes every text again
    env.pop(CONFIG_CACHE_VARIABLE, None)  # and composes its config again
    log = workdir / "verify-snakemake.log"
    with open(log, "w", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        fh.flush()
        proc = subprocess.run(cmd, cwd=workdir, env=env, stdout=fh, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-40:]
        raise VerifyError(
            f"the offline rebuild failed (exit {proc.returncode}); log: {log}\n" + "\n".join(tail)
        )
    return workdir / (build or BuildPaths(dataset)).numbers


def variant_overrides(build: BuildPaths, root: Path) -> list[str]:
    """The overrides that made a variant (its ``variant.yaml``), to build it elsewhere."""
    if build.variant is None:
        return []
    path = root / build.variant_file
    if not path.is_file():
        raise VerifyError(
            f"{build.variant_file} is missing: the variant's overrides are unknown; build it "
            "here first (snakemake --config overrides=...), which writes them"
        )
    described = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    dataset_keys = ("data=", "data.")
    return [o for o in described.get("overrides", []) if not o.startswith(dataset_keys)]


def verify(
    dataset: str,
    root: Path = REPO_ROOT,
    cores: int = 2,
    keep: bool = False,
    numbers_only: bool = False,
    extra_overrides: list[str] | None = None,
    resolve_data_root: bool = True,
    variant: str | None = None,
) -> NumberDiff:
    """Rebuild a build of ``dataset`` (its default one, or ``variant``) from scratch in a
    temporary copy of ``root`` and diff the numbers.

    ``resolve_data_root`` adds ``data.root=<absolute>`` for raw data outside the repository.
    """
    build = BuildPaths(dataset, variant)
    here = load_numbers(root / build.numbers)
    tmp = Path(tempfile.mkdtemp(prefix="recenter-verify-"))
    try:
        workdir = tmp / root.name
        n = copy_sources(root, workdir)
        print(f"recenter verify: copied {n} source files to {workdir}", file=sys.stderr)
        overrides = data_root_override(dataset, root) if resolve_data_root else []
        overrides += variant_overrides(build, root) + list(extra_overrides or [])
        target = build.numbers if numbers_only else None
        rebuilt = rebuild(root, workdir, dataset, cores, target, overrides, build)
        return diff_numbers(here, load_numbers(rebuilt))
    finally:
        if keep:
            print(f"recenter verify: kept the rebuild in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def revision_build(
    root: Path,
    rev: str,
    build: BuildPaths,
    cores: int = 2,
    keep: bool = False,
    resolve_data_root: bool = True,
) -> Iterator[Path]:
    """Build ``build`` as it was at commit ``rev``, offline, in a temporary git worktree of
    that commit (its numbers only: ``numbers.json`` and the resamples beside it); yields the
    built ``numbers.json``. A variant is built with the overrides recorded in this checkout
    (its ``variant.yaml``); the worktree goes away afterwards unless ``keep``."""
    tmp = Path(tempfile.mkdtemp(prefix="recenter-rev-"))
    workdir = tmp / root.name
    added = subprocess.run(
        ["git", "worktree", "add", "--detach", str(workdir), rev],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if added.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise VerifyError(f"git worktree add {rev} failed: {added.stderr.strip()}")
    try:
        print(f"recenter: building {build.label} at {rev} in {workdir}", file=sys.stderr)
        overrides = data_root_override(build.dataset, root) if resolve_data_root else []
        overrides += variant_overrides(build, root)
        yield rebuild(root, workdir, build.dataset, cores, build.numbers, overrides, build)
    finally:
        if keep:
            print(f"recenter: kept the build of {rev} in {workdir}", file=sys.stderr)
        else:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(workdir)],
                cwd=root,
                capture_output=True,
            )
            shutil.rmtree(tmp, ignore_errors=True)


def software_warnings(
    dataset: str, root: Path = REPO_ROOT, variant: str | None = None
) -> list[str]:
    """How the verifying environment differs from the one that built the numbers (a differing
    number may then come from the software, not the data or code)."""
    rel = BuildPaths(dataset, variant).environment
    path = root / rel
    if not path.is_file():
        return [f"{rel} is missing: the building software is unknown"]
    built = json.loads(path.read_text(encoding="utf-8"))
    return [
        f"this environment differs from the one that built the numbers: {d}"
        for d in software_differences(built, installed_software())
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from analysis.paper.trace import add_build_arguments

    add_build_arguments(parser)
    parser.add_argument("--cores", type=int, default=2, help="cores for the rebuild")
    parser.add_argument("--keep", action="store_true", help="keep the temporary rebuild")
    parser.add_argument(
        "--numbers-only",
        action="store_true",
        help="rebuild up to numbers.json only (skip figures and the PDF)",
    )


def run(args: argparse.Namespace) -> int:
    from analysis.paper.trace import default_dataset

    root = args.repo
    dataset = args.dataset or default_dataset(root)
    for line in software_warnings(dataset, root, args.variant):
        print(f"recenter verify: warning: {line}", file=sys.stderr)
    try:
        diff = verify(dataset, root, args.cores, args.keep, args.numbers_only, variant=args.variant)
    except (VerifyError, ValueError) as err:
        print(f"recenter verify: {err}", file=sys.stderr)
        return 2
    if diff.identical:
        print(f"recenter verify: every number of {dataset} is reproduced exactly")
        return 0
    print(f"recenter verify: {len(diff.lines())} numbers of {dataset} differ:")
    for line in diff.lines():
        print("  " + line)
    return 1
