"""``recenter numbers``: print a build's numbers, never retype them.

Documentation points here instead of quoting results (a test fails on a ``docs/*.md`` number
equal to a ``numbers.json`` value), so a reader prints today's values from the build:
``recenter scorecard --dataset annotation_tool`` for the study's published figures against
the build, ``recenter numbers 'stage2.final.kappa.*'`` for any keys (a glob as in the claims
language), each with its interval, n and the rule that wrote it.
"""

from __future__ import annotations

import argparse
import sys

from analysis.paper.claims import match_keys
from analysis.paper.macros import display_ci, display_value
from analysis.paper.trace import add_build_arguments, default_dataset, numbers_path
from analysis.provenance import RecordError, load_numbers


def common_arguments(parser: argparse.ArgumentParser) -> None:
    add_build_arguments(parser)


def read_build(args: argparse.Namespace, command: str) -> dict | None:
    root = args.repo
    dataset = args.dataset or default_dataset(root)
    try:
        return load_numbers(numbers_path(dataset, root, args.variant))
    except RecordError as err:
        print(f"recenter {command}: {err}", file=sys.stderr)
        return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("keys", nargs="+", help="record keys or globs, e.g. 'stage2.final.*'")
    common_arguments(parser)


def run(args: argparse.Namespace) -> int:
    numbers = read_build(args, "numbers")
    if numbers is None:
        return 2
    keys = sorted({k for pattern in args.keys for k, _ in match_keys(pattern, sorted(numbers), [])})
    if not keys:
        print(f"recenter numbers: no record matches {' '.join(args.keys)}", file=sys.stderr)
        return 1
    for key in keys:
        rec = numbers[key]
        ci = display_ci(rec)
        value = display_value(rec) + (f" [{ci[0]}, {ci[1]}]" if ci else "")
        n = "" if rec.get("n") is None else f"  n={int(rec['n']):,d}"
        print(f"{key}  {value}{n}  (rule {rec.get('rule')})")
    return 0
