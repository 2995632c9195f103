"""``recenter numbers-diff OLD NEW``: does a rebuild give the same numbers as before?

A refactor proves itself by rebuilding the paper before and after and comparing every value of
``numbers.json``. Provenance fields (code and config hashes, input hashes, rule names) may
change; the reported quantities may not. Only the fields below are compared, so a reviewer
sees at once which numbers moved and by how much.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.provenance import load_numbers

#: The fields of a record that the paper shows; everything else is provenance.
REPORTED_FIELDS: tuple[str, ...] = ("value", "ci_low", "ci_high", "n", "display")
#: Shown too, but compared only where both files carry it: records written before the field
#: existed have none, and gaining it is no change of a number.
COMPARED_WHEN_BOTH: tuple[str, ...] = ("ci_level",)


@dataclass(frozen=True)
class NumberChange:
    """One key whose reported fields differ, and whether the change is allowed."""

    key: str
    field: str
    old: Any
    new: Any
    allowed: bool
    why: str = ""


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def compare_numbers(
    old: dict[str, dict[str, Any]],
    new: dict[str, dict[str, Any]],
    *,
    ci_width_tolerance: float = 0.0,
    tolerant_keys: frozenset[str] | None = None,
) -> tuple[list[str], list[str], list[NumberChange]]:
    """(keys only in ``old``, keys only in ``new``, changed fields).

    A CI bound (and the display, which may print it) of a key in ``tolerant_keys`` (all keys
    when ``None``) may move by less than ``ci_width_tolerance`` times the old interval's width
    with value and n unchanged: the allowance for intervals whose bootstrap engine was merged.
    """
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    changes: list[NumberChange] = []
    for key in sorted(set(old) & set(new)):
        a, b = old[key], new[key]
        moved = [f for f in REPORTED_FIELDS if not _same(a.get(f), b.get(f))]
        moved += [
            f for f in COMPARED_WHEN_BOTH if f in a and f in b and not _same(a.get(f), b.get(f))
        ]
        if not moved:
            continue
        core_same = _same(a.get("value"), b.get("value")) and _same(a.get("n"), b.get("n"))
        width = (
            (a["ci_high"] - a["ci_low"])
            if a.get("ci_low") is not None and a.get("ci_high") is not None
            else None
        )
        eligible = (
            ci_width_tolerance > 0
            and core_same
            and width is not None
            and (tolerant_keys is None or key in tolerant_keys)
        )
        for f in moved:
            allowed, why = False, ""
            if eligible and f in ("ci_low", "ci_high") and b.get(f) is not None:
                shift = abs(b[f] - a[f])
                allowed = shift < ci_width_tolerance * width
                why = f"bound moved {shift:.4g} = {shift / width:.1%} of the interval's width"
            elif eligible and f == "display":
                allowed, why = True, "display of a tolerated interval"
            changes.append(NumberChange(key, f, a.get(f), b.get(f), allowed, why))
    return removed, added, changes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", type=Path, help="numbers.json before the change")
    parser.add_argument("new", type=Path, help="numbers.json after the change")
    parser.add_argument(
        "--ci-width-tolerance",
        type=float,
        default=0.0,
        help="allow a CI bound to move by less than this share of the old width "
        "(value and n unchanged); default 0: everything must be identical",
    )


def run(args: argparse.Namespace) -> int:
    old, new = load_numbers(args.old), load_numbers(args.new)
    removed, added, changes = compare_numbers(old, new, ci_width_tolerance=args.ci_width_tolerance)
    for key in removed:
        print(f"- {key}: only in {args.old}")
    for key in added:
        print(f"+ {key}: only in {args.new}")
    for c in changes:
        mark = "~" if c.allowed else "!"
        note = f"  ({c.why})" if c.why else ""
        print(f"{mark} {c.key}.{c.field}: {c.old!r} -> {c.new!r}{note}")
    bad = len(removed) + len(added) + sum(not c.allowed for c in changes)
    tolerated = sorted({c.key for c in changes if c.allowed})
    print(
        f"{len(set(old) & set(new))} keys compared on {', '.join(REPORTED_FIELDS)}: "
        f"{bad} differences, {len(tolerated)} keys within the CI tolerance"
    )
    return 1 if bad else 0
