"""``recenter calls``: what the call store holds and what it cost; ``--validate`` checks it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from analysis.llm.calls import resolve_store
from analysis.llm.store import StoreError, upgrade_store, usage_summary, validate_store


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
    try:
        frame = usage_summary(store, args.prompt_version)
    except StoreError as err:  # a corrupt record: --validate lists them all
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.stage:
        frame = frame[frame["stage"] == args.stage].reset_index(drop=True)
    sys.stdout.write(format_usage(frame, args.format))
    return status
