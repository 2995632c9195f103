"""Does it reproduce? Each figure the study published against this build's record.

The study's figures are data (``config/study/<name>.yaml``, Hydra group ``study``); this
module reads them, finds each one's record with the claims language's globs and aggregates
(:func:`analysis.paper.claims.match_keys`, :data:`analysis.paper.claims.AGGREGATES`) and
computes a verdict, never types one:

* *different method*: the study's figure comes from a method this artifact does not run (the
  row still shows this build's nearest analogue);
* *not in this dataset*: no record matches;
* *partial*: the dataset holds only part of what the study pooled over (``coverage``: e.g. 2
  of the 5 models in the real final round); whether the part agrees is kept in ``extra``;
* *reproduced* / *differs*: on **real** data (the study's own annotations) sampling error is
  the wrong yardstick, since the data are the same: the estimate must round to the published
  figure (within half a step of its last digit, or the stated tolerance of "about" values).
  On a **simulated** build the question is whether the published value (or range) lies in
  the reproduced 95% interval; a record without an interval (a count) is compared exactly.

Each row becomes two records, ``repro.<name>.published`` (the value, printed as the study
worded it) and ``repro.<name>.verdict`` (a coded value printed as its label), plus a row of
``results/<dataset>/scorecard.csv``.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analysis.paper.claims import AGGREGATES, match_keys, record_field
from analysis.provenance import Record
from analysis.settings import Aggregate, PublishedValue, StudyConfig, StudyMethod

Numbers = Mapping[str, Mapping[str, Any]]

REPRODUCED = "reproduced"
DIFFERS = "differs"
PARTIAL = "partial"
DIFFERENT_METHOD = "different method"
NOT_IN_DATASET = "not in this dataset"
#: verdict label -> the code stored as the verdict record's value (the label is its text)
VERDICT_CODES: dict[str, int] = {
    REPRODUCED: 1,
    DIFFERS: 2,
    PARTIAL: 3,
    DIFFERENT_METHOD: 4,
    NOT_IN_DATASET: 5,
}
#: a float comparison at a published bound is not decided by rounding noise
EPS = 1e-9

CSV_COLUMNS = (
    "name",
    "quantity",
    "published",
    "where",
    "key",
    "estimate",
    "ci_low",
    "ci_high",
    "n",
    "verdict",
    "reason",
)


@dataclass(frozen=True)
class Row:
    """One line of the scorecard: a published figure, this build's estimate, the verdict."""

    name: str
    order: int
    entry: PublishedValue
    quantity: str
    key: str | None
    estimate: float | None
    ci: tuple[float, float] | None
    n: int | None
    verdict: str
    reason: str
    agrees: bool | None


def accept_interval(entry: PublishedValue) -> tuple[float, float]:
    """What counts as the published figure on real data: its stated tolerance, or the figure
    (or range) widened by half a step of its last published digit."""
    if entry.tolerance is not None:
        return float(entry.tolerance[0]), float(entry.tolerance[1])
    low, high = published_span(entry)
    half = float(entry.precision or 0.0) / 2
    return low - half, high + half


def published_span(entry: PublishedValue) -> tuple[float, float]:
    """The published point as ``(v, v)``, or the published range."""
    if entry.range is not None:
        return float(entry.range[0]), float(entry.range[1])
    value = float(entry.value if entry.value is not None else math.nan)
    return value, value


def published_point(entry: PublishedValue) -> float:
    """One number for the published figure: the point, or a range's midpoint."""
    low, high = published_span(entry)
    return (low + high) / 2


def _ci(record: Mapping[str, Any]) -> tuple[float, float] | None:
    low, high = record.get("ci_low"), record.get("ci_high")
    if isinstance(low, int | float) and isinstance(high, int | float):
        return float(low), float(high)
    return None


def _n(record: Mapping[str, Any]) -> int | None:
    n = record.get("n")
    return int(n) if isinstance(n, int | float) and not isinstance(n, bool) else None


def _coverage(entry: PublishedValue, numbers: Numbers) -> tuple[int, int] | None:
    """(units found, units the study had) when the entry declares a coverage, else None."""
    cov = entry.coverage
    if cov is None:
        return None
    found = match_keys(cov.key, sorted(numbers), cov.exclude or [])
    return len(found), int(cov.expected)


def _inside(x: float, low: float, high: float) -> bool:
    return low - EPS <= x <= high + EPS


def _judge(
    entry: PublishedValue,
    estimate: float,
    ci: tuple[float, float] | None,
    simulated: bool,
) -> tuple[bool, str]:
    """Does the estimate reproduce the published figure, and the sentence that says why."""
    low, high = published_span(entry)
    if simulated and ci is not None:
        ok = ci[0] - EPS <= high and low <= ci[1] + EPS
        what = "range overlaps" if entry.range is not None else "value lies in"
        return ok, (f"published {what} the CI" if ok else "published value outside the CI")
    acc_low, acc_high = accept_interval(entry)
    ok = _inside(estimate, acc_low, acc_high)
    basis = "stated tolerance" if entry.tolerance is not None else "published precision"
    return ok, f"{'within' if ok else 'outside'} the {basis} [{acc_low:.6g}, {acc_high:.6g}]"


def _selected(
    name: str, entry: PublishedValue, numbers: Numbers, chosen: Mapping[str, str]
) -> list[tuple[str, str | None, float, Mapping[str, Any] | None]]:
    """``(row name, key, value, record)`` per row the entry makes; empty when nothing matches.

    ``key``/``record`` are None for a mean or median over several records.
    """
    field = entry.field or "value"
    matches = match_keys(entry.key, sorted(numbers), entry.exclude or [])
    if entry.same_as is not None:
        wanted = chosen.get(entry.same_as)
        matches = [(k, w) for k, w in matches if w == wanted]
    values = [(k, w, record_field(numbers[k], field)) for k, w in matches]
    values = [(k, w, v) for k, w, v in values if v is not None]
    if not values:
        return []
    agg = entry.aggregate
    if agg == Aggregate.each:
        return [(f"{name}.{w}", k, v, numbers[k]) for k, w, v in values]
    if agg == Aggregate.one:
        if len(values) != 1:
            raise ValueError(
                f"study.published.{name}: key {entry.key!r} matches {len(values)} records; "
                "give an aggregate (each, min, max, mean, median) or same_as"
            )
        k, _, v = values[0]
        return [(name, k, v, numbers[k])]
    if agg in (Aggregate.min, Aggregate.max):
        target = AGGREGATES[agg.value]([v for _, _, v in values])
        k, _, v = next(x for x in values if x[2] == target)
        return [(name, k, v, numbers[k])]
    return [(name, None, float(AGGREGATES[agg.value]([v for _, _, v in values])), None)]


def _wildcard(entry: PublishedValue, key: str) -> str:
    matches = dict(match_keys(entry.key, [key], []))
    return matches.get(key, "")


def scorecard_rows(study: StudyConfig, numbers: Numbers, simulated: bool) -> list[Row]:
    """Every published figure against ``numbers`` (key -> record), in the file's order."""
    rows: list[Row] = []
    chosen: dict[str, str] = {}
    for order, (name, entry) in enumerate(study.published.items()):
        selected = _selected(name, entry, numbers, chosen)
        if not selected:
            reason = f"no record matches {entry.key}"
            verdict = DIFFERENT_METHOD if entry.method == StudyMethod.different else NOT_IN_DATASET
            rows.append(
                Row(
                    name,
                    order,
                    entry,
                    entry.quantity,
                    None,
                    None,
                    None,
                    None,
                    verdict,
                    reason,
                    None,
                )
            )
            continue
        if entry.aggregate in (Aggregate.min, Aggregate.max) and selected[0][1] is not None:
            chosen[name] = _wildcard(entry, str(selected[0][1]))
        coverage = _coverage(entry, numbers)
        for row_name, key, value, record in selected:
            ci = _ci(record) if record is not None and (entry.field or "value") == "value" else None
            n = _n(record) if record is not None else None
            agrees, why = _judge(entry, value, ci, simulated)
            if entry.method == StudyMethod.different:
                verdict = DIFFERENT_METHOD
                why = entry.note or "the study's figure comes from a method this build does not run"
            elif coverage is not None and coverage[0] < coverage[1]:
                verdict = PARTIAL
                why = f"{coverage[0]} of {coverage[1]} {entry.coverage.unit}; {why}"  # type: ignore[union-attr]
            else:
                verdict = REPRODUCED if agrees else DIFFERS
            which = _wildcard(entry, key) if key is not None and "*" in entry.key else ""
            quantity = f"{entry.quantity} ({which})" if which else entry.quantity
            rows.append(
                Row(row_name, order, entry, quantity, key, value, ci, n, verdict, why, agrees)
            )
    return rows


def _fmt_value(entry: PublishedValue, x: float) -> float | int:
    """A published or estimated number in the type its format needs (counts are ints)."""
    return int(round(x)) if entry.fmt.endswith("d") else float(x)


def scorecard_records(rows: Sequence[Row], study: StudyConfig, simulated: bool) -> list[Record]:
    """``repro.<name>.published`` and ``repro.<name>.verdict`` for every row."""
    basis = (
        "simulated build: reproduced when the published value (or range) lies in this build's "
        "confidence interval; a count without an interval must match exactly"
        if simulated
        else "real data: reproduced when the estimate lies within the published precision "
        "(half a step of the last published digit) or the stated tolerance"
    )
    out: list[Record] = []
    for row in rows:
        entry = row.entry
        acc_low, acc_high = accept_interval(entry)
        where = ", ".join(map(str, entry.where))
        published_extra: dict[str, Any] = {
            "quantity": row.quantity,
            "where": [str(w) for w in entry.where],
            "accept_low": acc_low,
            "accept_high": acc_high,
            "study": study.name,
        }
        if entry.range is not None:
            published_extra["range"] = [float(x) for x in entry.range]
        out.append(
            Record(
                key=f"repro.{row.name}.published",
                value=_fmt_value(entry, published_point(entry)),
                fmt=entry.fmt,
                text=entry.published,
                method=(
                    f"the figure as published by {study.citation} ({where}); "
                    f"a range is stored as its midpoint; real-data tolerance [{acc_low:.6g}, "
                    f"{acc_high:.6g}]"
                ),
                code="analysis.paper.scorecard:scorecard_records",
                extra=published_extra,
            )
        )
        verdict_extra: dict[str, Any] = {
            "quantity": row.quantity,
            "order": row.order,
            "key": row.key,
            "estimate": row.estimate,
            "ci_low": row.ci[0] if row.ci else None,
            "ci_high": row.ci[1] if row.ci else None,
            "field": entry.field or "value",
            "reason": row.reason,
            "agrees": row.agrees,
            "simulated": simulated,
        }
        out.append(
            Record(
                key=f"repro.{row.name}.verdict",
                value=VERDICT_CODES[row.verdict],
                fmt="d",
                text=row.verdict,
                n=row.n,
                method=f"verdict code ({', '.join(f'{c} {v}' for v, c in VERDICT_CODES.items())}); "
                f"{basis}; {row.reason}",
                code="analysis.paper.scorecard:scorecard_rows",
                extra=verdict_extra,
            )
        )
    return out


def _number(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def scorecard_csv(rows: Sequence[Row]) -> str:
    """The rows as CSV (full-precision numbers, fixed column order): byte-stable."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        writer.writerow(
            [
                r.name,
                r.quantity,
                r.entry.published,
                " ".join(map(str, r.entry.where)),
                r.key or "",
                _number(r.estimate),
                _number(r.ci[0] if r.ci else None),
                _number(r.ci[1] if r.ci else None),
                "" if r.n is None else r.n,
                r.verdict,
                r.reason,
            ]
        )
    return buf.getvalue()


# ---------------------------------------------------------------- reading it back


@dataclass(frozen=True)
class PrintedRow:
    """A scorecard row as read back from ``numbers.json`` (what the CLI and the paper print)."""

    name: str
    quantity: str
    published_key: str
    verdict_key: str
    key: str | None
    field: str
    estimate: float | None
    verdict: str
    reason: str


def printed_rows(numbers: Numbers) -> list[PrintedRow]:
    """The ``repro.*`` records of a build, in the published file's order."""
    out = []
    for vkey, rec in numbers.items():
        if not (vkey.startswith("repro.") and vkey.endswith(".verdict")):
            continue
        name = vkey[len("repro.") : -len(".verdict")]
        extra = rec.get("extra") or {}
        out.append(
            (
                int(extra.get("order", 0)),
                name,
                PrintedRow(
                    name=name,
                    quantity=str(extra.get("quantity", name)),
                    published_key=f"repro.{name}.published",
                    verdict_key=vkey,
                    key=extra.get("key"),
                    field=str(extra.get("field") or "value"),
                    estimate=extra.get("estimate"),
                    verdict=str(rec.get("display")),
                    reason=str(extra.get("reason", "")),
                ),
            )
        )
    return [row for _, _, row in sorted(out, key=lambda t: (t[0], t[1]))]


def this_build_text(row: PrintedRow, numbers: Numbers) -> tuple[str, str]:
    """``(value [CI], n)`` of a row's record as printed (empty strings where absent)."""
    from analysis.paper.macros import display_ci, display_value

    rec = numbers.get(row.key) if row.key else None
    if rec is None:
        if row.estimate is None:
            return "", ""
        fmt = str(numbers[row.published_key].get("fmt") or "g")
        return format(row.estimate, fmt), ""
    n = "" if rec.get("n") is None else f"{int(rec['n']):,d}"
    if row.field == "n":
        return n, n
    text = display_value(rec)
    ci = display_ci(rec)
    return (f"{text} [{ci[0]}, {ci[1]}]" if ci else text), n


def render_scorecard(numbers: Numbers, fmt: str) -> str:
    """The scorecard as ``md`` (a table), ``csv`` or ``json``, from a build's records."""
    import json

    rows = printed_rows(numbers)
    table = []
    for row in rows:
        build, n = this_build_text(row, numbers)
        table.append(
            {
                "name": row.name,
                "quantity": row.quantity,
                "study": str(numbers[row.published_key].get("display")),
                "this_build": build,
                "n": n,
                "verdict": row.verdict,
                "key": row.key or "",
                "reason": row.reason,
            }
        )
    if fmt == "json":
        return json.dumps(table, indent=1, ensure_ascii=False) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(table[0]) if table else ["name"])
        writer.writeheader()
        writer.writerows(table)
        return buf.getvalue()
    if fmt != "md":
        raise ValueError(f"unknown format {fmt!r}; use md, csv or json")
    lines = [
        "| quantity | study | this build [95% CI] | n | verdict |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['quantity']} | {r['study']} | {r['this_build'] or '--'} | {r['n'] or '--'} | "
        f"{r['verdict']} |"
        for r in table
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- recenter scorecard


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``recenter scorecard [--dataset D] [--format md|csv|json]``."""
    from analysis.paper.print_numbers import common_arguments

    common_arguments(parser)
    parser.add_argument(
        "--format", choices=("md", "csv", "json"), default="md", help="output format"
    )


def run(args: argparse.Namespace) -> int:
    """Print the build's scorecard, read back from its ``numbers.json``."""
    from analysis.paper.print_numbers import read_build

    numbers = read_build(args, "scorecard")
    if numbers is None:
        return 2
    text = render_scorecard(numbers, args.format)
    if not any(k.startswith("repro.") for k in numbers):
        print(
            "recenter scorecard: no repro.* records in this build; run rule `scorecard` "
            "(snakemake --cores 1 results/<dataset>/numbers.json)",
            file=sys.stderr,
        )
        return 2
    sys.stdout.write(text)
    return 0
