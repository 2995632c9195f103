"""``recenter calls``: what the call store holds and what it cost; ``--validate`` checks it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

from analysis.llm.calls import resolve_store
from analysis.llm.store import (
    StoreError,
    asked_keys,
    upgrade_store,
    usage_summary,
    validate_store,
)
from analysis.paths import BuildPaths


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default="data/calls",
        help="call-store root (default: data/calls of the repository)",
    )
    parser.add_argument("--stage", help="only this stage")
    parser.add_argument(
        "--prompt-version", help="only the calls of this prompt version (e.g. a prompt variant's)"
    )
    parser.add_argument(
        "--build",
        help="count only the calls one build asks, the keys its model-call tables hold (the "
        "store also keeps calls of the same prompt version recorded for another world or "
        "config): 'default', a variant's name, '<dataset>:<variant>' or a build's results folder",
    )
    parser.add_argument("--format", choices=["table", "csv", "json"], default="table")
    parser.add_argument(
        "--validate",
        action="store_true",
        help="check every record (JSON, fields, folder, digest, the fields replay reads, "
        "recomputed key); exit 1 on any error",
    )
    parser.add_argument(
        "--upgrade",
        action="store_true",
        help="give records written before records carried a digest their digest and revision, "
        "after checking them (nothing is written if any record fails); run while no run "
        "records into the store",
    )


def format_usage(frame: pd.DataFrame, fmt: str) -> str:
    """The usage table as text (``table`` for people, ``csv``/``json`` for the paper's appendix)."""
    if fmt == "csv":
        return frame.to_csv(index=False)
    if fmt == "json":
        return frame.to_json(orient="records", indent=1) + "\n"
    if frame.empty:
        return "(no calls stored)\n"
    shown = frame.copy()
    shown["cost_usd"] = shown["cost_usd"].map(lambda v: f"{v:.4f}")
    return shown.to_string(index=False) + "\n"


class BuildNotFound(ValueError):
    """``--build`` names no build of this checkout, or more than one."""


def build_call_folder(root: Path, build: str) -> Path:
    """The folder holding a build's model-call tables.

    ``build`` is a build's results folder, or ``default``, a variant's name or
    ``<dataset>:<name>`` (as ``recenter diff`` names builds). A built variant that shares
    another build's model calls (a statistics variant: the default build's) reads them in the
    folder its ``variant.yaml`` names; one whose model calls are all that is built yet (the
    README's record command) has them in its own folder.
    """
    folder = next((p for p in (Path(build), root / build) if p.is_dir()), None)
    if folder is None:
        dataset, _, name = build.rpartition(":")
        results = root / "results"
        datasets = (
            [dataset]
            if dataset
            else sorted(p.name for p in results.iterdir() if p.is_dir())
            if results.is_dir()
            else []
        )
        found = [
            root / BuildPaths(d, None if name == "default" else name).results for d in datasets
        ]
        found = [f for f in found if f.is_dir()]
        if len(found) != 1:
            where = ", ".join(str(f.relative_to(root)) for f in found) or "none is built"
            raise BuildNotFound(
                f"--build {build}: {len(found)} builds of that name ({where}); name a built "
                "one, as <dataset>:<variant> where several datasets have it"
            )
        folder = found[0]
    if not (folder / "variant.yaml").is_file():
        return folder
    calls = yaml.safe_load((folder / "variant.yaml").read_text(encoding="utf-8"))["folders"]
    return root / calls["calls"]


def run(args: argparse.Namespace) -> int:
    store: Path = resolve_store(args.store, args.repo)
    status = 0
    if args.upgrade:
        upgraded = upgrade_store(store)
        for error in upgraded.errors:
            print(f"error: {error}", file=sys.stderr)
        if not upgraded.ok:
            print(f"{store}: not upgraded ({len(upgraded.errors)} errors)", file=sys.stderr)
            return 1
        print(
            f"{store}: {upgraded.n_upgraded} of {upgraded.n_records} records upgraded, "
            f"{len(upgraded.shards_rewritten)} shards rewritten",
            file=sys.stderr,
        )
    if args.validate:
        report = validate_store(store)
        for warning in report.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        for error in report.errors:
            print(f"error: {error}", file=sys.stderr)
        verdict = "valid" if report.ok else f"INVALID ({len(report.errors)} errors)"
        print(
            f"{store}: {report.n_shards} shards, {report.n_records} records, "
            f"{report.n_keys} keys: {verdict}",
            file=sys.stderr,
        )
        status = 0 if report.ok else 1
    version = f" of prompt version {args.prompt_version}" if args.prompt_version else ""
    try:
        frame = usage_summary(store, args.prompt_version)
        if args.build:
            folder = build_call_folder(Path(args.repo or "."), args.build)
            asked = asked_keys(folder)
            if not asked:
                raise BuildNotFound(
                    f"--build {args.build}: no model-call tables in {folder}; build its model "
                    "calls first (README, 'Example: a prompt variant')"
                )
            every = int(frame["calls"].sum())
            frame = usage_summary(store, args.prompt_version, asked)
            print(
                f"counting the calls{version} whose keys the model-call tables in {folder} "
                f"ask ({len(asked)} keys): {int(frame['calls'].sum())} of the {every} stored; "
                "the others were recorded for another world or config",
                file=sys.stderr,
            )
        elif args.prompt_version:
            print(
                f"counting every stored call{version}, whatever world or config it was "
                "recorded for; --build NAME counts only the calls one build asks",
                file=sys.stderr,
            )
    except StoreError as err:  # a corrupt record: --validate lists them all
        print(f"error: {err}", file=sys.stderr)
        return 1
    except BuildNotFound as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.stage:
        frame = frame[frame["stage"] == args.stage].reset_index(drop=True)
    sys.stdout.write(format_usage(frame, args.format))
    return status
