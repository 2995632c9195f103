r"""The simulation as a validation study: does the pipeline recover the world's ground truth?

A simulated world carries its ground truth (``truth.json`` beside its raw files, written by
``recenter simulate``): the population value of every estimand the simulator controls, keyed
by the record key of its estimate. :func:`validation_records` compares each estimate's 95%
interval with that truth (records ``validation.<key>.truth`` and ``validation.<key>.covered``
plus the counts ``validation.n_estimands`` / ``validation.n_covered``);
:func:`render_validation_table` prints the paper's table "what the simulation put in, what the
pipeline recovered". Real data has no truth file, so neither exists there.

One world says little about coverage (a 95% interval misses now and then by design); the
coverage of each estimator over many worlds is measured by ``benchmarks/bench_coverage.py``,
which appends one line per world to ``benchmarks/coverage_worlds.jsonl``. On the bundled
world (whose model those worlds share) :func:`coverage_records` turns the lines into records
``validation.<key>.coverage`` (the Monte Carlo interval as the CI) and the counts
``validation.coverage.n_worlds`` / ``validation.coverage.n_findings``, so the paper prints
what the benchmark found instead of a sentence typed after reading it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from analysis.paper.latex import escape_latex
from analysis.provenance import Record, RecordError
from analysis.stats.coverage import COVERAGE_TARGET, COVERAGE_WORLDS, interval_coverage

MODULE = "analysis.paper.validation"
#: level of the Monte Carlo interval of a coverage (and of the intervals it judges)
MC_LEVEL = 0.95
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


def read_coverage_worlds(path: Path | str) -> dict[str, np.ndarray]:
    """Record key -> rows ``[value, ci_low, ci_high]``, one per world of the coverage run.

    A malformed line is an error naming the file, the line and the field; nothing is skipped.
    """
    path = Path(path)
    rows: dict[str, list[list[float]]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            world = json.loads(line)
        except json.JSONDecodeError as err:
            raise RecordError(f"{path}: line {n} is not valid JSON ({err.msg})") from err
        estimates = world.get("estimates") if isinstance(world, dict) else None
        if not isinstance(estimates, dict):
            raise RecordError(f"{path}: line {n} needs an object 'estimates'")
        for key, triple in estimates.items():
            if not (isinstance(triple, list) and len(triple) == 3):
                raise RecordError(
                    f"{path}: line {n}, estimates[{key!r}] must be [value, ci_low, ci_high]"
                )
            rows.setdefault(key, []).append([float(x) for x in triple])
    if not rows:
        raise RecordError(f"{path}: no worlds")
    return {key: np.asarray(r, dtype=np.float64) for key, r in rows.items()}


def coverage_records(
    worlds: Mapping[str, np.ndarray], truth: Mapping[str, Mapping[str, Any]]
) -> list[Record]:
    """Coverage of every estimator of the coverage study over the benchmark's worlds."""
    out: list[Record] = []
    n_worlds = max(len(rows) for rows in worlds.values())
    findings: list[str] = []
    lo, hi = COVERAGE_TARGET
    for key in sorted(truth):
        if key not in worlds or not truth[key].get("in_coverage", True):
            continue
        cov = interval_coverage(worlds[key], float(truth[key]["value"]), level=MC_LEVEL)
        if cov.verdict != "ok":
            findings.append(key)
        out.append(
            Record(
                key=f"{PREFIX}{key}.coverage",
                value=cov.coverage,
                fmt=".3f",
                method=(
                    f"share of {cov.worlds} simulated worlds (fresh seeds, the bundled world's"
                    f" model) whose 95% interval of {key} holds its truth; Wilson 95% Monte"
                    " Carlo interval; a finding when that interval lies wholly outside"
                    f" [{lo}, {hi}] (benchmarks/bench_coverage.py)"
                ),
                code=f"{MODULE}:coverage_records",
                ci_low=cov.mc_low,
                ci_high=cov.mc_high,
                ci_level=MC_LEVEL,
                n=cov.worlds,
                extra={
                    "estimate": key,
                    "verdict": cov.verdict,
                    "bias": cov.bias,
                    "bias_mc_se": cov.bias_mc_se,
                    "mean_ci_width": cov.mean_ci_width,
                    "width_to_spread": cov.width_to_spread,
                },
            )
        )
    if out:
        out += [
            Record(
                f"{PREFIX}coverage.n_worlds",
                n_worlds,
                ",d",
                "simulated worlds of the coverage benchmark (benchmarks/coverage_worlds.jsonl)",
                f"{MODULE}:coverage_records",
            ),
            Record(
                f"{PREFIX}coverage.n_findings",
                len(findings),
                "d",
                (
                    "estimators whose coverage's Monte Carlo interval lies wholly outside"
                    f" [{lo}, {hi}]"
                ),
                f"{MODULE}:coverage_records",
                extra={"findings": findings},
            ),
        ]
    return out


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
    """The table (estimand | truth | estimate [CI] | covered | across worlds), or a sentence."""
    keys = sorted(
        k[len(PREFIX) : -len(".truth")]
        for k in numbers
        if k.startswith(PREFIX) and k.endswith(".truth")
    )
    head = "% Generated by rule `validation_table` from numbers.json. Do not edit.\n"
    if not keys:
        return head + r"\emph{This dataset has no ground truth (it is not simulated).}" + "\n"
    across = f"{PREFIX}coverage.n_worlds" in numbers
    lines = [
        r"\begingroup\tiny\setlength\tabcolsep{4pt}\renewcommand\arraystretch{0.92}",
        r"\begin{tabular}{@{}lrrl" + ("l" if across else "") + "@{}}",
        r"\toprule",
        r"Estimand (record key) & Truth & Estimate [95\% CI] & Covered"
        + (r" & Across worlds [MC 95\% CI]" if across else "")
        + r" \\",
        r"\midrule",
    ]
    for key in keys:
        covered = numbers.get(f"{PREFIX}{key}.covered")
        verdict = "outside the study" if covered is None else ("yes" if covered["value"] else "no")
        est = f"\\rcint{{{key}}}" if key in numbers else "--"
        row = f"\\code{{{escape_latex(key)}}} & \\rc{{{PREFIX}{key}.truth}} & {est} & {verdict}"
        if across:
            cov = numbers.get(f"{PREFIX}{key}.coverage")
            cell = "--" if cov is None else f"\\rcint{{{PREFIX}{key}.coverage}}"
            if cov is not None and cov.get("extra", {}).get("verdict", "ok") != "ok":
                cell += f" \\textbf{{{cov['extra']['verdict']}}}"
            row += f" & {cell}"
        lines.append(row + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if f"{PREFIX}n_covered" in numbers:
        lines.append(
            rf"\par\smallskip\parbox{{\linewidth}}{{\rc{{{PREFIX}n_covered}} of"
            rf" \rc{{{PREFIX}n_estimands}} intervals hold their truth. {TABLE_NOTE}"
            + (coverage_note(numbers) if across else "")
            + "}"
        )
    lines.append(r"\endgroup")
    return head + "\n".join(lines) + "\n"


#: findings whose cause has been diagnosed (estimand key -> why), printed beside the finding;
#: any other finding is printed as "cause not diagnosed". Empty while the coverage run has no
#: diagnosed finding (the last one, the overall stage-1 acceptance rate's over-coverage, was
#: fixed by resampling stage 1 within sources: ``analysis.stats.study_stage1``).
DIAGNOSED_CAUSES: dict[str, str] = {}


def coverage_note(numbers: Mapping[str, Mapping[str, Any]]) -> str:
    """The table note's sentence on coverage across worlds, naming every finding."""
    lo, hi = COVERAGE_TARGET
    findings = numbers[f"{PREFIX}coverage.n_findings"].get("extra", {}).get("findings", [])
    verdicts = {
        k: numbers[f"{PREFIX}{k}.coverage"].get("extra", {}).get("verdict", "") for k in findings
    }
    named = (
        "; ".join(
            rf"\code{{{escape_latex(k)}}} {verdicts[k]}"
            + f" ({DIAGNOSED_CAUSES.get(k, 'cause not diagnosed')})"
            for k in findings
        )
        or "none"
    )
    short = (
        f" The run is shorter than the {COVERAGE_WORLDS:,} worlds a coverage study should"
        " have, so its Monte Carlo intervals are wider and fewer shortfalls reach a finding."
        if numbers[f"{PREFIX}coverage.n_worlds"]["value"] < COVERAGE_WORLDS
        else ""
    )
    return (
        rf" Across worlds: the share of \rc{{{PREFIX}coverage.n_worlds}} worlds with fresh"
        r" seeds (the same model) whose interval holds the truth, with its Monte Carlo"
        rf" interval (\code{{benchmarks/bench\_coverage.py}}); a finding when that interval"
        rf" lies wholly outside [{lo}, {hi}].{short} Findings: {named}."
    )
