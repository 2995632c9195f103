r"""The simulation as a validation study: does the pipeline recover the world's ground truth?

A simulated world carries its ground truth (``truth.json`` beside its raw files, written by
``recenter simulate``): the population value of every estimand the simulator controls, keyed
by the record key of its estimate. :func:`validation_records` compares each estimate's 95%
interval with that truth (records ``validation.<key>.truth`` and ``validation.<key>.covered``
plus the counts ``validation.n_estimands`` / ``validation.n_covered``);
:func:`render_validation_table` prints the paper's table "what the simulation put in, what the
pipeline recovered". Real data has no truth file, so neither exists there.

One world says little about coverage (a 95% interval misses now and then by design); the
coverage of each estimator over many worlds is ``benchmarks/bench_coverage.py``'s job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analysis.paper.latex import escape_latex
from analysis.provenance import Record, RecordError

MODULE = "analysis.paper.validation"
PREFIX = "validation."


def read_truth(path: Path | str) -> dict[str, dict[str, Any]]:
    """The ``estimands`` of a truth.json; a malformed file is an error naming file and key."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise RecordError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from err
    estimands = doc.get("estimands") if isinstance(doc, dict) else None
    if not isinstance(estimands, dict):
        raise RecordError(f"{path}: needs an object 'estimands' (record key -> truth)")
    for key, entry in estimands.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), int | float):
            raise RecordError(f"{path}: estimand {key!r} has no numeric field 'value'")
    return estimands


def validation_records(
    estimates: Mapping[str, Mapping[str, Any]], truth: Mapping[str, Mapping[str, Any]]
) -> list[Record]:
    """Truth and coverage records for every truth key whose estimate has an interval.

    An estimand outside the coverage study (``in_coverage`` false: e.g. a correlation across
    the fixed simulated models, the same in every world) gets its truth, not a verdict.
    """
    out: list[Record] = []
    n_covered = n_judged = 0
    for key in sorted(truth):
        est = estimates.get(key)
        if est is None or est.get("ci_low") is None or est.get("ci_high") is None:
            continue
        entry = truth[key]
        value = float(entry["value"])
        in_study = bool(entry.get("in_coverage", True))
        out.append(
            Record(
                key=f"{PREFIX}{key}.truth",
                value=value,
                fmt=str(est.get("fmt") or ".3g"),
                method=(
                    f"population value of {key} under the simulation's generative parameters"
                    f" ({entry.get('how', 'see truth.json')}); from the world's truth.json"
                ),
                code=f"{MODULE}:validation_records",
                extra={"estimate": key, "in_coverage": in_study},
            )
        )
        if not in_study:
            continue
        covered = float(est["ci_low"]) <= value <= float(est["ci_high"])
        n_judged += 1
        n_covered += covered
        out.append(
            Record(
                key=f"{PREFIX}{key}.covered",
                value=int(covered),
                fmt="d",
                method=(
                    f"1 when the 95% interval of {key} holds its population value"
                    f" ({PREFIX}{key}.truth), else 0"
                ),
                code=f"{MODULE}:validation_records",
                extra={
                    "estimate": key,
                    "truth": value,
                    "ci_low": est["ci_low"],
                    "ci_high": est["ci_high"],
                },
            )
        )
    if n_judged:
        method = "estimands of the coverage study with an estimate and a 95% interval"
        out += [
            Record(f"{PREFIX}n_estimands", n_judged, "d", method, f"{MODULE}:validation_records"),
            Record(
                f"{PREFIX}n_covered",
                n_covered,
                "d",
                "of those, the ones whose interval holds the truth",
                f"{MODULE}:validation_records",
            ),
        ]
    return out


TABLE_NOTE = (
    r"Simulated world: the truth is the population value of each estimand under the"
    r" simulation's generative parameters (\code{truth.json} beside the raw files), what the"
    r" estimator targets, not a latent parameter. Covered: the estimate's interval holds the"
    r" truth. One world shows single draws; the coverage of each interval over many worlds is"
    r" measured by \code{benchmarks/bench\_coverage.py}. Correlations across the fixed set of"
    r" simulated models are outside the coverage study (their truth is the same in every"
    r" world): they show their truth without a verdict. Mention estimates of this build come"
    r" from the text detector, while the truth counts the mentions the simulator wrote, so a"
    r" detector error can move them off their truth."
)


def render_validation_table(numbers: Mapping[str, Mapping[str, Any]]) -> str:
    """The table (estimand | truth | estimate [CI] | covered), or a sentence without truth."""
    keys = sorted(
        k[len(PREFIX) : -len(".truth")]
        for k in numbers
        if k.startswith(PREFIX) and k.endswith(".truth")
    )
    head = "% Generated by rule `validation_table` from numbers.json. Do not edit.\n"
    if not keys:
        return head + r"\emph{This dataset has no ground truth (it is not simulated).}" + "\n"
    lines = [
        r"\begingroup\tiny\setlength\tabcolsep{4pt}\renewcommand\arraystretch{0.92}",
        r"\begin{tabular}{@{}lrrl@{}}",
        r"\toprule",
        r"Estimand (record key) & Truth & Estimate [95\% CI] & Covered \\",
        r"\midrule",
    ]
    for key in keys:
        covered = numbers.get(f"{PREFIX}{key}.covered")
        verdict = "outside the study" if covered is None else ("yes" if covered["value"] else "no")
        est = f"\\rcint{{{key}}}" if key in numbers else "--"
        lines.append(
            f"\\code{{{escape_latex(key)}}} & \\rc{{{PREFIX}{key}.truth}} & {est} & {verdict} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}"]
    if f"{PREFIX}n_covered" in numbers:
        lines.append(
            rf"\par\smallskip\parbox{{\linewidth}}{{\rc{{{PREFIX}n_covered}} of"
            rf" \rc{{{PREFIX}n_estimands}} intervals hold their truth. {TABLE_NOTE}}}"
        )
    lines.append(r"\endgroup")
    return head + "\n".join(lines) + "\n"
