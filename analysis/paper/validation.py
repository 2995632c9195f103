r"""The simulation as a validation study: do the pipeline's intervals cover what it put in?

A simulated world carries its ground truth (``truth.json`` beside its raw files, written by
``recenter simulate``): the value of every estimand the simulator controls, keyed by the
record key of its estimate (it integrates over the random factors, users, prompts and
people, and is conditional on the fixed ones, the five models). :func:`validation_records`
writes each truth as a record (``validation.<key>.truth``), so a reader sees it beside the
estimate.

Whether an interval is right is not something one world can say (a 95% interval misses now
and then by design): it is its coverage over many worlds. ``benchmarks/bench_coverage.py``
draws worlds with fresh seeds from the same model, computes every record twice (with each
statistic's declared design, and with users as the only resampled factor) and appends one
line per world to ``benchmarks/coverage_worlds.jsonl``. On the bundled world (whose model
those worlds share), :func:`coverage_records` turns the lines into records: each estimand's
coverage under both configurations with its Monte Carlo interval, its bias, the coverage
pooled over estimands with a Monte Carlo interval from resampling worlds and a test of the
nominal 0.95, per family of estimands, and the targets' findings. :func:`recovery_records`
adds, per family, how well the estimates recover the worlds' truth (bias with its interval
across worlds, RMSE, mean interval width), made by the one record maker under the design
``simulated_worlds``. The paper prints those (:func:`render_validation_table`,
:func:`render_recovery_table` and their notes), never a sentence typed after reading them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from analysis.paper.latex import escape_latex
from analysis.provenance import Record, RecordError
from analysis.stats.coverage import (
    COVERAGE_TARGETS,
    COVERAGE_WORLDS,
    interval_coverage,
    pooled_coverage,
)
from analysis.stats.records import NONNEGATIVE, Statistic, make_records
from analysis.stats.resampling import MIN_BOOTSTRAP_LEVELS, Units, plan, totals
from analysis.stats.settings import StatsSettings
from analysis.stats.study_common import ratio

MODULE = "analysis.paper.validation"
#: level of the Monte Carlo interval of a coverage (and of the intervals it judges)
MC_LEVEL = 0.95
PREFIX = "validation."
#: the two interval configurations of the coverage benchmark, in the order they are shown
CONFIGS: dict[str, str] = {
    "user_only": "users only",
    "design": "declared design",
}
#: families of estimands (first matching pattern wins), for the paper's side-by-side table
FAMILIES: tuple[tuple[str, str, str], ...] = (
    (
        "stage1_rates",
        "Stage 1: acceptance rates and gap",
        r"^stage1\.(acceptance_rate|problematic)",
    ),
    ("stage1_agreement", "Stage 1: agreement among people", r"^stage1\.(kappa|alpha)\."),
    (
        "stage2_rates",
        "Stage 2: relevance rates, over-selection",
        r"^stage2\.\w+\.(relevance_rate|over_selection)\.",
    ),
    (
        "stage2_majority",
        "Stage 2: models vs the majority",
        r"^stage2\.\w+\.(precision|recall|f1|kappa)_vs_majority\.",
    ),
    (
        "stage2_kappa",
        "Stage 2: kappa group means, differences",
        r"^stage2\.\w+\.kappa(_diff|_max|_share_of_max|_share_of_max_diff)?\.",
    ),
    (
        "stage2_ceiling",
        "Stage 2: ceilings, vs the rest, gaps",
        r"^stage2\.\w+\.(ceiling|vs_rest)\.",
    ),
    (
        "stage3_ratings",
        "Stage 3: mean ratings, judge minus people",
        r"^stage3\.(mean_rating|judge_mean_rating|judge_minus_human)\.",
    ),
    (
        "stage3_shares",
        "Stage 3: better / no-better / worse / equal shares",
        r"^stage3\.(no_better_share|human_better_share|judge_better_share|worse_share|equal_share)",
    ),
    (
        "stage3_mentions",
        "Stage 3: mention rates and deltas",
        r"^stage3\.mention_(rate|delta|delta_within_generator)\.",
    ),
)


def family_of(key: str) -> str:
    """The family of an estimand's key ("other" when no pattern matches)."""
    for name, _, pattern in FAMILIES:
        if re.search(pattern, key):
            return name
    return "other"


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


@dataclass
class CoverageWorlds:
    """The coverage benchmark's worlds: per configuration and estimand, one row per world.

    Rows are ``[value, ci_low, ci_high, truth]`` (the truth is the world's own: conditional
    on its models); ``world`` gives each row's world (its position among the lines).
    """

    n_worlds: int
    seeds: tuple[int, int]
    n_boot: int
    rows: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    world: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    conservative: set[str] = field(default_factory=set)


def _triple(path: Path, n: int, where: str, value: Any) -> list[float]:
    if not (isinstance(value, list) and len(value) == 3):
        raise RecordError(f"{path}: line {n}, {where} must be [value, ci_low, ci_high]")
    if any(x is None for x in value):
        return [float("nan")] * 3
    return [float(x) for x in value]


def read_coverage_worlds(path: Path | str) -> CoverageWorlds:
    """The lines of a coverage run; a malformed line is an error naming file, line and field.

    Every line must have the same B (``n_boot``): lines of two runs do not mix.
    """
    path = Path(path)
    rows: dict[str, dict[str, list[list[float]]]] = {c: {} for c in CONFIGS}
    worlds: dict[str, dict[str, list[int]]] = {c: {} for c in CONFIGS}
    seeds: list[int] = []
    n_boots: set[int] = set()
    conservative: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as err:
            raise RecordError(f"{path}: line {n} is not valid JSON ({err.msg})") from err
        if not isinstance(doc, dict):
            raise RecordError(f"{path}: line {n} is not an object")
        for name in ("seed", "n_boot", "truth", "intervals"):
            if name not in doc:
                raise RecordError(f"{path}: line {n} has no field {name!r}")
        truth, intervals = doc["truth"], doc["intervals"]
        if not isinstance(truth, dict) or not isinstance(intervals, dict):
            raise RecordError(f"{path}: line {n}: 'truth' and 'intervals' must be objects")
        index = len(seeds)
        seeds.append(int(doc["seed"]))
        n_boots.add(int(doc["n_boot"]))
        conservative.update(doc.get("conservative", []))
        for config in CONFIGS:
            estimates = intervals.get(config)
            if not isinstance(estimates, dict):
                raise RecordError(f"{path}: line {n} has no object intervals[{config!r}]")
            for key, triple in estimates.items():
                if key not in truth:
                    raise RecordError(
                        f"{path}: line {n}: intervals[{config!r}][{key!r}] has no truth"
                    )
                row = _triple(path, n, f"intervals[{config!r}][{key!r}]", triple)
                rows[config].setdefault(key, []).append([*row, float(truth[key])])
                worlds[config].setdefault(key, []).append(index)
    if not seeds:
        raise RecordError(f"{path}: no worlds")
    if len(n_boots) > 1:
        raise RecordError(f"{path}: lines of several B {sorted(n_boots)}; run the worlds again")
    return CoverageWorlds(
        n_worlds=len(seeds),
        seeds=(min(seeds), max(seeds)),
        n_boot=n_boots.pop(),
        rows={c: {k: np.asarray(v) for k, v in r.items()} for c, r in rows.items()},
        world={c: {k: np.asarray(v) for k, v in r.items()} for c, r in worlds.items()},
        conservative=conservative,
    )


def _finite(rows: np.ndarray) -> np.ndarray:
    return rows[np.isfinite(rows).all(axis=1)]


def _covered_matrix(worlds: CoverageWorlds, config: str, keys: Iterable[str]) -> np.ndarray:
    """(worlds x keys) 1 covered, 0 not, NaN where the world has no interval for the key."""
    keys = list(keys)
    out = np.full((worlds.n_worlds, len(keys)), np.nan)
    for j, key in enumerate(keys):
        rows, at = worlds.rows[config][key], worlds.world[config][key]
        ok = np.isfinite(rows).all(axis=1)
        out[at[ok], j] = (rows[ok, 1] <= rows[ok, 3]) & (rows[ok, 3] <= rows[ok, 2])
    return out


def _cov_dict(cov: Any) -> dict[str, Any]:
    return {
        "worlds": cov.worlds,
        "covered": cov.covered,
        "coverage": cov.coverage,
        "mc_low": cov.mc_low,
        "mc_high": cov.mc_high,
        "bias": cov.bias,
        "bias_mc_se": cov.bias_mc_se,
        "mean_ci_width": cov.mean_ci_width,
        "width_to_spread": cov.width_to_spread,
        "verdict": cov.verdict,
    }


def _pooled_dict(cov: Any) -> dict[str, Any]:
    return {
        "worlds": cov.worlds,
        "estimands": cov.estimands,
        "coverage": cov.coverage,
        "mc_low": cov.mc_low,
        "mc_high": cov.mc_high,
        "p_vs_nominal": cov.p_vs_nominal,
        "verdict": cov.verdict,
        "exact": cov.exact,
    }


def coverage_summary(worlds: CoverageWorlds) -> dict[str, Any]:
    """Per estimand and pooled coverage of both configurations, and the targets' verdict."""
    keys = sorted(k for k in worlds.rows["design"] if k in worlds.rows["user_only"])
    estimands: dict[str, dict[str, Any]] = {}
    for key in keys:
        entry: dict[str, Any] = {"family": family_of(key)}
        for config in CONFIGS:
            rows = _finite(worlds.rows[config][key])
            cov = interval_coverage(
                rows[:, :3],
                rows[:, 3],
                level=MC_LEVEL,
                conservative=config == "design" and key in worlds.conservative,
            )
            entry[config] = _cov_dict(cov)
        estimands[key] = entry
    pooled = {
        config: _pooled_dict(pooled_coverage(_covered_matrix(worlds, config, keys)))
        for config in CONFIGS
    }
    families: dict[str, dict[str, Any]] = {}
    for name, label, _ in FAMILIES:
        members = [k for k in keys if estimands[k]["family"] == name]
        if members:
            families[name] = {
                "label": label,
                "estimands": members,
                **{
                    config: _pooled_dict(pooled_coverage(_covered_matrix(worlds, config, members)))
                    for config in CONFIGS
                },
            }
    misses = [
        f"{k}: {r['design']['verdict']}"
        for k, r in estimands.items()
        if r["design"]["verdict"] not in ("ok", "conservative")
    ]
    if pooled["design"]["verdict"] != "ok":
        low, high = COVERAGE_TARGETS.pooled
        misses.append(f"pooled {pooled['design']['coverage']:.3f} outside [{low}, {high}]")
    return {
        "worlds": worlds.n_worlds,
        "n_boot": [worlds.n_boot],
        "seeds": list(worlds.seeds),
        "targets": {
            "floor": COVERAGE_TARGETS.floor,
            "pooled": list(COVERAGE_TARGETS.pooled),
            "ceiling": COVERAGE_TARGETS.ceiling,
            "conservative_width": COVERAGE_TARGETS.conservative_width,
        },
        "mc_interval": (
            "per estimand: Wilson 95% interval of the coverage proportion; pooled: 95%"
            " percentile interval from 2,000 resamples of worlds"
        ),
        "pooled": pooled,
        "families": families,
        "targets_met": not misses,
        "target_misses": misses,
        "user_only_under_floor": [
            k for k, r in estimands.items() if r["user_only"]["mc_high"] < COVERAGE_TARGETS.floor
        ],
        # families whose declared designs under-cover: the pooled Monte Carlo interval lies
        # wholly below the nominal level (the paper names them, whatever the targets say)
        "design_families_under_nominal": [
            name
            for name, fam in families.items()
            if fam["design"]["mc_high"] < COVERAGE_TARGETS.nominal
        ],
        "estimands": estimands,
    }


def _mc_method(what: str, n_worlds: int, n_boot: int) -> str:
    return (
        f"{what} over {n_worlds} simulated worlds (fresh seeds, the bundled world's model; B ="
        f" {n_boot} resamples per interval; benchmarks/bench_coverage.py)"
    )


def coverage_records(worlds: CoverageWorlds) -> list[Record]:
    """The coverage study as records (see the module docstring)."""
    res = coverage_summary(worlds)
    code = f"{MODULE}:coverage_records"
    n, b = res["worlds"], worlds.n_boot
    floor, ceiling = COVERAGE_TARGETS.floor, COVERAGE_TARGETS.ceiling
    out: list[Record] = []
    for key, entry in res["estimands"].items():
        for config, label in CONFIGS.items():
            cov = entry[config]
            suffix = "coverage" if config == "design" else f"coverage_{config}"
            out.append(
                Record(
                    key=f"{PREFIX}{key}.{suffix}",
                    value=cov["coverage"],
                    fmt=".3f",
                    method=_mc_method(
                        f"share of worlds whose 95% interval of {key} ({label}) holds the"
                        " world's truth; Wilson 95% Monte Carlo interval",
                        n,
                        b,
                    ),
                    code=code,
                    ci_low=cov["mc_low"],
                    ci_high=cov["mc_high"],
                    ci_level=MC_LEVEL,
                    n=cov["worlds"],
                    extra={"estimate": key, "config": config, "family": entry["family"], **cov},
                )
            )
        cov = entry["design"]
        se = cov["bias_mc_se"] or 0.0
        out.append(
            Record(
                key=f"{PREFIX}{key}.bias",
                value=cov["bias"],
                fmt="+.3f",
                method=_mc_method(
                    f"mean over worlds of the estimate of {key} minus the world's truth;"
                    " interval: +-1.96 Monte Carlo standard errors",
                    n,
                    b,
                ),
                code=code,
                ci_low=cov["bias"] - 1.96 * se,
                ci_high=cov["bias"] + 1.96 * se,
                ci_level=MC_LEVEL,
                n=cov["worlds"],
                extra={"estimate": key},
            )
        )
    groups = [("", res["pooled"], f"all {res['pooled']['design']['estimands']} estimands")]
    groups += [(f"family.{name}.", fam, fam["label"]) for name, fam in res["families"].items()]
    for stem, entry, label in groups:
        for config, cfg_label in CONFIGS.items():
            cov = entry[config]
            out.append(
                Record(
                    key=f"{PREFIX}coverage.{stem}pooled"
                    + ("" if config == "design" else f"_{config}"),
                    value=cov["coverage"],
                    fmt=".3f",
                    method=_mc_method(
                        f"coverage of the 95% intervals ({cfg_label}) pooled over {label}:"
                        " the share of (world, estimand) intervals holding the world's truth;"
                        + (
                            " every world at that boundary, so the exact (Clopper-Pearson) 95%"
                            " interval over worlds"
                            if cov["exact"]
                            else " 95% percentile interval from 2,000 resamples of worlds"
                        ),
                        n,
                        b,
                    ),
                    code=code,
                    ci_low=cov["mc_low"],
                    ci_high=cov["mc_high"],
                    ci_level=MC_LEVEL,
                    n=cov["estimands"],
                    extra={"config": config, **cov},
                )
            )
    for config, cfg_label in CONFIGS.items():
        cov = res["pooled"][config]
        out.append(
            Record(
                key=f"{PREFIX}coverage.p_vs_nominal" + ("" if config == "design" else f"_{config}"),
                value=cov["p_vs_nominal"],
                fmt=".2g",
                method=_mc_method(
                    f"two-sided p-value of 'pooled coverage ({cfg_label}) = 0.95': normal test"
                    " with the standard error from resampling worlds",
                    n,
                    b,
                ),
                code=code,
                extra={"config": config, "pooled": cov["coverage"]},
            )
        )
    out += [
        Record(
            f"{PREFIX}coverage.n_worlds",
            n,
            ",d",
            "simulated worlds of the coverage benchmark (benchmarks/coverage_worlds.jsonl)",
            code,
        ),
        Record(
            f"{PREFIX}coverage.n_boot",
            b,
            ",d",
            "bootstrap resamples per interval in the coverage benchmark's worlds",
            code,
        ),
        Record(
            f"{PREFIX}coverage.n_findings",
            len(res["target_misses"]),
            "d",
            (
                "targets the declared design's intervals miss: an estimand whose Monte Carlo"
                f" interval lies wholly below {floor}, or wholly above {ceiling} without a"
                " conservative design at most"
                f" {COVERAGE_TARGETS.conservative_width} times the estimates' spread, or a"
                f" pooled coverage outside [{COVERAGE_TARGETS.pooled[0]},"
                f" {COVERAGE_TARGETS.pooled[1]}]"
            ),
            code,
            extra={"findings": res["target_misses"]},
        ),
        Record(
            f"{PREFIX}coverage.n_families_under_nominal",
            len(res["design_families_under_nominal"]),
            "d",
            (
                "families of estimands whose declared designs' pooled coverage has a Monte"
                f" Carlo interval wholly below the nominal {COVERAGE_TARGETS.nominal}"
            ),
            code,
            extra={
                "families": {
                    name: res["families"][name]["label"]
                    for name in res["design_families_under_nominal"]
                }
            },
        ),
        Record(
            f"{PREFIX}coverage.n_user_only_under",
            len(res["user_only_under_floor"]),
            "d",
            (
                "estimands whose users-only interval's coverage has a Monte Carlo interval"
                f" wholly below {floor}: where prompts or people matter"
            ),
            code,
            extra={"estimands": res["user_only_under_floor"]},
        ),
    ]
    return out


#: the design of statistics across the coverage study's worlds (``stats.designs``)
WORLDS_DESIGN = "simulated_worlds"
#: what each family's recovery record reports: key part -> (format, what it is)
RECOVERY = {
    "bias": ("+.3f", "mean of (estimate - the world's truth)"),
    "rmse": (".3f", "root mean square of (estimate - the world's truth)"),
    "mean_ci_width": (".3f", "mean width of the declared design's 95% interval"),
}


def recovery_records(worlds: CoverageWorlds, settings: StatsSettings) -> list[Record]:
    """Per family of estimands, how well the estimates recover each world's truth.

    Over the (world, estimand) pairs of a family, each counted once: the bias (mean of
    estimate minus the world's own truth), the RMSE and the mean width of the declared
    design's interval, in the estimands' own units (a family that mixes units, such as rates
    with over-selection ratios, mixes them here too). The worlds are the units (design
    ``simulated_worlds``): each world's sums are one observation, and the record maker reads
    the interval off the worlds' resamples. With fewer than ten worlds that is the delete-one
    jackknife over worlds and a t interval with ``R - 1`` degrees of freedom (for the bias,
    the one-sample t interval of the worlds' mean errors where every world has every
    estimand), not a bootstrap of a handful of worlds, whose percentiles take few values.
    """
    rows, at = worlds.rows["design"], worlds.world["design"]
    keys = sorted(rows)
    units = Units(n=worlds.n_worlds, noun="simulated worlds")
    design = plan(settings, WORLDS_DESIGN, units)
    code = f"{MODULE}:recovery_records"
    statistics: list[Statistic] = []
    for name, label, _ in FAMILIES:
        members = [k for k in keys if family_of(k) == name]
        if not members:
            continue
        cols = {c: np.zeros(worlds.n_worlds) for c in ("n", "err", "sq", "n_ci", "width")}
        for key in members:
            got, world = rows[key], at[key]
            err = got[:, 0] - got[:, 3]
            ok = np.isfinite(err)
            np.add.at(cols["n"], world[ok], 1.0)
            np.add.at(cols["err"], world[ok], err[ok])
            np.add.at(cols["sq"], world[ok], err[ok] ** 2)
            width = got[:, 2] - got[:, 1]
            ok = np.isfinite(width)
            np.add.at(cols["n_ci"], world[ok], 1.0)
            np.add.at(cols["width"], world[ok], width[ok])
        if not cols["n"].sum():
            continue
        tb = totals(design, cols, worlds.n_worlds)
        estimates = {
            "bias": tb.stat(lambda g: ratio(g("err"), g("n"))),
            "rmse": tb.stat(lambda g: np.sqrt(ratio(g("sq"), g("n")))),
            "mean_ci_width": tb.stat(lambda g: ratio(g("width"), g("n_ci"))),
        }
        pairs = {"n": int(cols["n"].sum()), "n_ci": int(cols["n_ci"].sum())}
        for stat, (fmt, what) in RECOVERY.items():
            n = pairs["n_ci" if stat == "mean_ci_width" else "n"]
            statistics.append(
                Statistic(
                    key=f"{PREFIX}recovery.family.{name}.{stat}",
                    estimate=estimates[stat],
                    fmt=fmt,
                    what=(
                        f"{what} over {label} ({len(members)} estimands) in"
                        f" {worlds.n_worlds} simulated worlds of the coverage benchmark"
                        f" (seeds {worlds.seeds[0]}-{worlds.seeds[1]}, B = {worlds.n_boot};"
                        f" {n} world-estimand pairs, each counted once; in the estimands'"
                        " own units)"
                    ),
                    code=code,
                    n=n,
                    unit="world-estimand pairs",
                    extra={"family": name, "estimands": members, "worlds": worlds.n_worlds},
                    limits=None if stat == "bias" else NONNEGATIVE,
                )
            )
    return make_records(statistics, settings)


def validation_records(
    estimates: Mapping[str, Mapping[str, Any]], truth: Mapping[str, Mapping[str, Any]]
) -> list[Record]:
    """A truth record for every truth key whose estimate exists (printed beside it)."""
    out: list[Record] = []
    for key in sorted(truth):
        est = estimates.get(key)
        if est is None:
            continue
        entry = truth[key]
        out.append(
            Record(
                key=f"{PREFIX}{key}.truth",
                value=float(entry["value"]),
                fmt=str(est.get("fmt") or ".3g"),
                method=(
                    f"value of {key} in this simulated world under its generative parameters"
                    f" ({entry.get('how', 'see truth.json')}); from the world's truth.json"
                ),
                code=f"{MODULE}:validation_records",
                extra={"estimate": key, "in_coverage": bool(entry.get("in_coverage", True))},
            )
        )
    return out


def _rcint(key: str, numbers: Mapping[str, Any]) -> str:
    return f"\\rcint{{{key}}}" if key in numbers else "--"


def render_validation_table(numbers: Mapping[str, Mapping[str, Any]]) -> str:
    """Coverage across worlds, users-only and declared design side by side, per family."""
    head = "% Generated by rule `validation_table` from numbers.json. Do not edit.\n"
    if not any(k.startswith(PREFIX) and k.endswith(".truth") for k in numbers):
        return head + r"\emph{This dataset has no ground truth (it is not simulated).}" + "\n"
    if f"{PREFIX}coverage.n_worlds" not in numbers:
        return head + (
            r"\emph{No coverage run is recorded for this simulated world's model"
            r" (\code{benchmarks/coverage\_worlds.jsonl}).}" + "\n"
        )
    lines = [
        r"\begingroup\footnotesize\setlength\tabcolsep{4pt}",
        r"\begin{tabular}{@{}lrll@{}}",
        r"\toprule",
        r"Estimands & $n$ & Users only [MC 95\%] & Declared design [MC 95\%] \\",
        r"\midrule",
    ]
    for name, label, _ in FAMILIES:
        key = f"{PREFIX}coverage.family.{name}.pooled"
        if key not in numbers:
            continue
        lines.append(
            f"{escape_latex(label)} & \\rcn{{{key}}} & {_rcint(key + '_user_only', numbers)}"
            f" & {_rcint(key, numbers)} \\\\"
        )
    key = f"{PREFIX}coverage.pooled"
    lines += [
        r"\midrule",
        f"All & \\rcn{{{key}}} & {_rcint(key + '_user_only', numbers)} & {_rcint(key, numbers)}"
        r" \\",
        r"\bottomrule",
        r"\end{tabular}",
        rf"\par\smallskip\noindent\parbox{{\linewidth}}{{\raggedright{{}}{findings_note(numbers)}}}",
        r"\endgroup",
    ]
    return head + "\n".join(lines) + "\n"


def render_recovery_table(numbers: Mapping[str, Mapping[str, Any]]) -> str:
    """Recovery of the worlds' truth per family: bias [95% CI], RMSE, mean interval width."""
    head = "% Generated by rule `validation_table` from numbers.json. Do not edit.\n"
    if not any(k.startswith(f"{PREFIX}recovery.") for k in numbers):
        return head + (
            r"\emph{No coverage run is recorded for this dataset (it is not the bundled"
            r" simulated world), so there is no recovery across worlds.}" + "\n"
        )
    lines = [
        r"\begingroup\footnotesize\setlength\tabcolsep{4pt}",
        r"\begin{tabular}{@{}lrlrr@{}}",
        r"\toprule",
        r"Estimands & $n$ & Bias [95\% CI] & RMSE & Mean width \\",
        r"\midrule",
    ]
    for name, label, _ in FAMILIES:
        stem = f"{PREFIX}recovery.family.{name}."
        if stem + "bias" not in numbers:
            continue
        lines.append(
            f"{escape_latex(label)} & \\rcn{{{stem}bias}} & \\rcint{{{stem}bias}}"
            f" & \\rc{{{stem}rmse}} & \\rc{{{stem}mean_ci_width}} \\\\"
        )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\par\smallskip\noindent\parbox{{\linewidth}}{{\raggedright{{}}{recovery_note(numbers)}}}",
        r"\endgroup",
    ]
    return head + "\n".join(lines) + "\n"


def recovery_note(numbers: Mapping[str, Mapping[str, Any]]) -> str:
    """The recovery table's note: units, and how few worlds the intervals rest on."""
    n = numbers.get(f"{PREFIX}coverage.n_worlds", {}).get("value")
    worlds = rf"\rc{{{PREFIX}coverage.n_worlds}}" if n is not None else "the"
    how = (
        "a t interval from the delete-one jackknife over the worlds, with one degree of"
        " freedom fewer than there are worlds: too few worlds to bootstrap"
        if n is not None and n < MIN_BOOTSTRAP_LEVELS
        else "the percentile interval of a bootstrap of worlds"
    )
    return (
        r"\emph{Simulated data} (worlds of the bundled world's model): no row describes real"
        f" people or real models. Over the {worlds} worlds, $n$ counts the (world, estimand)"
        " pairs of a family, each counted once; the error is the estimate minus the world's"
        " own truth, in the estimands' own units (the rates' family mixes shares with"
        " over-selection ratios). The bias's interval treats the worlds as its sample"
        f" (design \\code{{{WORLDS_DESIGN.replace('_', chr(92) + '_')}}}): {how}."
        " RMSE and the mean width of the declared designs' intervals carry the same"
        " intervals in their records (\\code{recenter trace})."
    )


def findings_note(numbers: Mapping[str, Mapping[str, Any]]) -> str:
    """The table note: which targets the declared designs miss (by name), and a short run."""
    entry = numbers.get(f"{PREFIX}coverage.n_findings", {})
    findings = entry.get("extra", {}).get("findings", [])
    floor, ceiling = COVERAGE_TARGETS.floor, COVERAGE_TARGETS.ceiling
    low, high = COVERAGE_TARGETS.pooled
    named = "; ".join(rf"\code{{{escape_latex(f)}}}" for f in findings) or "none"
    under = (
        numbers.get(f"{PREFIX}coverage.n_families_under_nominal", {})
        .get("extra", {})
        .get("families", {})
    )
    families = "; ".join(escape_latex(label) for label in under.values()) or "none"
    return (
        r"\emph{Simulated data} (worlds of the bundled world's model): no row describes real"
        " people or real models. "
        f"Targets for the declared designs: no estimand's Monte Carlo interval wholly below"
        f" {floor}; pooled coverage in [{low}, {high}]; wholly above {ceiling} only for a design"
        f" declared conservative whose interval is at most {COVERAGE_TARGETS.conservative_width}"
        f" times as wide as the estimates' spread across worlds. Missed: {named}. Families"
        f" whose declared designs under-cover (pooled Monte Carlo interval wholly below"
        f" {COVERAGE_TARGETS.nominal}): {families}." + short_run_note(numbers)
    )


def short_run_note(numbers: Mapping[str, Mapping[str, Any]]) -> str:
    """A sentence when the coverage run has fewer worlds than a coverage study should."""
    n = numbers.get(f"{PREFIX}coverage.n_worlds")
    if n is None or n["value"] >= COVERAGE_WORLDS:
        return ""
    return (
        f" The run is shorter than the {COVERAGE_WORLDS:,} worlds a coverage study should have,"
        " so its Monte Carlo intervals are wider."
    )
