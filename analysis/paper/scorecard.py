"""Does it reproduce? Each figure the study published against this build's record.

The study's figures are data (``config/study/<name>.yaml``, Hydra group ``study``); this
module reads them, finds each one's record with the claims language's globs and aggregates
(:func:`analysis.paper.claims.match_keys`, :data:`analysis.paper.claims.AGGREGATES`) and
computes a verdict, never types one:

* *different method*: the study's figure comes from a method this artifact does not run (the
  row still shows this build's nearest analogue);
* *not in this dataset*: no record matches;
* *partial*: the dataset holds only part of what the study pooled over (``coverage``: e.g. 2
  of the 5 models in the real final round); what the part alone would get is kept in
  ``extra.part_verdict``;
* *reproduced* / *differs* / *inconclusive*, by one of two rules:

  - the **rounding rule**, for a figure this build recomputes from the study's own data by
    the study's method (``real_data_rule: rounding`` on a build from real data): sampling
    error is the wrong yardstick when the data are the same, so the estimate must round to
    the published figure (within half a step of its last digit, or the stated tolerance of
    an "about" value); it is reproduced or differs;
  - the **equivalence margin**, for every other row (every row of a simulated build): the
    95% interval of (this build - published) against the entry's ``margin``, a substantive
    distance written with its reason in the study file. Reproduced when that interval lies
    within +/- margin (for a published range: the build's interval within the range widened
    by the margin), differs when it lies wholly outside, inconclusive otherwise. A published
    value merely inside a wide interval is no longer a match: imprecision cannot reproduce.
    A count carries no interval and is exact; any other record without an interval is
    inconclusive.

Each row becomes two records, ``repro.<name>.published`` (the value, printed as the study
worded it, with the margin, unit, stage and what the authors' release holds for it) and
``repro.<name>.verdict`` (a coded value printed as its label), plus a row of
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
from analysis.settings import (
    Aggregate,
    PublishedValue,
    RealDataRule,
    StudyConfig,
    StudyMethod,
)

Numbers = Mapping[str, Mapping[str, Any]]

REPRODUCED = "reproduced"
DIFFERS = "differs"
PARTIAL = "partial"
DIFFERENT_METHOD = "different method"
NOT_IN_DATASET = "not in this dataset"
INCONCLUSIVE = "inconclusive"
#: verdict label -> the code stored as the verdict record's value (the label is its text);
#: codes are never renumbered, so a diff of two builds compares like with like
VERDICT_CODES: dict[str, int] = {
    REPRODUCED: 1,
    DIFFERS: 2,
    PARTIAL: 3,
    DIFFERENT_METHOD: 4,
    NOT_IN_DATASET: 5,
    INCONCLUSIVE: 6,
}
#: a simulated build's verdicts say what they are: the simulator was solved to hit these very
#: figures, so a match is true by construction and checks the workflow, not the study (the
#: paper of a simulated build shows recovery across worlds instead of this table)
SIMULATED_SUFFIX = " (simulated data)"
SIMULATED_CAVEAT = (
    "simulated data: the simulator was calibrated to the published figures, so these verdicts "
    "are true (or false) by construction and check the workflow, not the study; the paper shows "
    "recovery across simulated worlds instead"
)
#: the column a simulated build's scorecard.csv adds, with SIMULATED_CAVEAT on every row
CAVEAT_COLUMN = "caveat"
#: the two ways a row is judged (``extra.rule`` of its verdict record)
ROUNDING = "rounding"
MARGIN = "margin"
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
    "rule",
    "margin",
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
    rule: str | None = None
    part_verdict: str | None = None

    @property
    def entry_name(self) -> str:
        """The study file's entry this row comes from (an ``each`` entry makes several rows)."""
        return self.name.split(".", 1)[0]


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


def judging_rule(entry: PublishedValue, simulated: bool) -> str:
    """:data:`ROUNDING` for a figure recomputed from the study's own data by its method (on a
    build from real data), else :data:`MARGIN`."""
    if not simulated and entry.real_data_rule == RealDataRule.rounding:
        return ROUNDING
    return MARGIN


def equivalence_region(entry: PublishedValue) -> tuple[float, float]:
    """Where this build's whole interval must lie to reproduce the figure: the published
    value (or range) widened by the entry's margin."""
    low, high = published_span(entry)
    margin = float(entry.margin or 0.0)
    return low - margin, high + margin


def _is_count(entry: PublishedValue) -> bool:
    return entry.fmt.endswith("d")


def _by_rounding(entry: PublishedValue, estimate: float) -> tuple[str, str]:
    acc_low, acc_high = accept_interval(entry)
    ok = _inside(estimate, acc_low, acc_high)
    basis = "stated tolerance" if entry.tolerance is not None else "published precision"
    return (
        REPRODUCED if ok else DIFFERS,
        f"rounding rule (the study's data and method): {'within' if ok else 'outside'} the "
        f"{basis} [{acc_low:.6g}, {acc_high:.6g}]",
    )


def _by_margin(
    entry: PublishedValue, estimate: float, ci: tuple[float, float] | None
) -> tuple[str, str]:
    margin = float(entry.margin or 0.0)
    if ci is None and not _is_count(entry):
        return INCONCLUSIVE, "the record has no interval to hold against the margin"
    low, high = ci if ci is not None else (estimate, estimate)
    region = equivalence_region(entry)
    what = "exact count" if ci is None else "95% CI"
    if entry.range is not None:
        span = f"this build's {what} [{low:.4g}, {high:.4g}]"
        target = (
            f"the published range widened by the margin {margin:g}, "
            f"[{region[0]:.4g}, {region[1]:.4g}]"
        )
    else:
        point = published_point(entry)
        span = f"{what} of (this build - published) [{low - point:+.4g}, {high - point:+.4g}]"
        target = f"+/-{margin:g}"
    if _inside(low, *region) and _inside(high, *region):
        return REPRODUCED, f"equivalence margin: {span} lies within {target}"
    if high < region[0] - EPS or low > region[1] + EPS:
        return DIFFERS, f"equivalence margin: {span} lies wholly outside {target}"
    return INCONCLUSIVE, f"equivalence margin: {span} straddles {target}"


def judge(
    entry: PublishedValue,
    estimate: float,
    ci: tuple[float, float] | None,
    simulated: bool,
) -> tuple[str, str, str]:
    """``(verdict, rule, reason)``: reproduced, differs or inconclusive, by the rounding rule
    or the equivalence margin (see the module docstring)."""
    rule = judging_rule(entry, simulated)
    if rule == ROUNDING:
        verdict, reason = _by_rounding(entry, estimate)
    else:
        verdict, reason = _by_margin(entry, estimate, ci)
    return verdict, rule, reason


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
            which = _wildcard(entry, key) if key is not None and "*" in entry.key else ""
            quantity = f"{entry.quantity} ({which})" if which else entry.quantity
            part: str | None = None
            if entry.method == StudyMethod.different:
                verdict, rule, agrees = DIFFERENT_METHOD, None, None
                why = entry.note or "the study's figure comes from a method this build does not run"
            else:
                verdict, rule, why = judge(entry, value, ci, simulated)
                if coverage is not None and coverage[0] < coverage[1]:
                    part, verdict = verdict, PARTIAL
                    units = entry.coverage.unit  # type: ignore[union-attr]
                    why = f"{coverage[0]} of {coverage[1]} {units}; the part: {part} ({why})"
                agrees = {REPRODUCED: True, DIFFERS: False}.get(part or verdict)
            rows.append(
                Row(
                    row_name,
                    order,
                    entry,
                    quantity,
                    key,
                    value,
                    ci,
                    n,
                    verdict,
                    why,
                    agrees,
                    rule,
                    part,
                )
            )
    return rows


def verdict_label(verdict: str, simulated: bool) -> str:
    """A verdict as printed: on a simulated build it says so (:data:`SIMULATED_SUFFIX`)."""
    return verdict + SIMULATED_SUFFIX if simulated else verdict


def _fmt_value(entry: PublishedValue, x: float) -> float | int:
    """A published or estimated number in the type its format needs (counts are ints)."""
    return int(round(x)) if entry.fmt.endswith("d") else float(x)


def scorecard_records(rows: Sequence[Row], study: StudyConfig, simulated: bool) -> list[Record]:
    """``repro.<name>.published`` and ``repro.<name>.verdict`` for every row."""
    out: list[Record] = []
    for row in rows:
        entry = row.entry
        acc_low, acc_high = accept_interval(entry)
        where = ", ".join(map(str, entry.where))
        published_extra: dict[str, Any] = {
            "quantity": row.quantity,
            "entry": row.entry_name,
            "figure": entry.quantity,
            "order": row.order,
            "where": [str(w) for w in entry.where],
            "accept_low": acc_low,
            "accept_high": acc_high,
            "study": study.name,
            "stage": entry.stage,
            "unit": entry.unit,
            "method": str(entry.method),
            "release": str(entry.release),
            "release_note": entry.release_note,
            "release_source": study.release_source,
            "real_data_rule": str(entry.real_data_rule or RealDataRule.margin),
        }
        if entry.range is not None:
            published_extra["range"] = [float(x) for x in entry.range]
        margin_text = ""
        if entry.margin is not None:
            published_extra["margin"] = float(entry.margin)
            published_extra["margin_reason"] = entry.margin_reason
            margin_text = f"; equivalence margin +/-{entry.margin:g} ({entry.margin_reason})"
        out.append(
            Record(
                key=f"repro.{row.name}.published",
                value=_fmt_value(entry, published_point(entry)),
                fmt=entry.fmt,
                text=entry.published,
                method=(
                    f"the figure as published by {study.citation} ({where}); "
                    f"a range is stored as its midpoint; rounding-rule tolerance [{acc_low:.6g}, "
                    f"{acc_high:.6g}]{margin_text}"
                ),
                code="analysis.paper.scorecard:scorecard_records",
                unit=entry.unit,
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
            "rule": row.rule,
            "part_verdict": row.part_verdict,
            "simulated": simulated,
        }
        if simulated:
            verdict_extra["verdict"] = row.verdict
            verdict_extra["simulated_caveat"] = SIMULATED_CAVEAT
        if entry.margin is not None:
            region = equivalence_region(entry)
            verdict_extra["margin"] = float(entry.margin)
            verdict_extra["equivalence_low"] = region[0]
            verdict_extra["equivalence_high"] = region[1]
        out.append(
            Record(
                key=f"repro.{row.name}.verdict",
                value=VERDICT_CODES[row.verdict],
                fmt="d",
                text=verdict_label(row.verdict, simulated),
                n=row.n,
                method=(f"{SIMULATED_CAVEAT}; " if simulated else "")
                + f"verdict code ({', '.join(f'{c} {v}' for v, c in VERDICT_CODES.items())}); "
                f"{row.reason}",
                code="analysis.paper.scorecard:scorecard_rows",
                extra=verdict_extra,
            )
        )
    return out


def _number(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def scorecard_csv(rows: Sequence[Row], simulated: bool = False) -> str:
    """The rows as CSV (full-precision numbers, fixed column order): byte-stable. A
    ``simulated`` build's verdicts carry :data:`SIMULATED_SUFFIX` and every row the column
    :data:`CAVEAT_COLUMN`, so the file read alone says what its verdicts are."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow((*CSV_COLUMNS, CAVEAT_COLUMN) if simulated else CSV_COLUMNS)
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
                verdict_label(r.verdict, simulated),
                r.reason,
                r.rule or "",
                "" if r.entry.margin is None else repr(float(r.entry.margin)),
                *((SIMULATED_CAVEAT,) if simulated else ()),
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
    caveats = {
        str((numbers[r.verdict_key].get("extra") or {}).get("simulated_caveat") or "") for r in rows
    } - {""}
    lines = [f"> {c[:1].upper()}{c[1:]}.\n" for c in sorted(caveats)]
    lines += [
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
