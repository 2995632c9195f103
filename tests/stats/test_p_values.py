"""p-values that match their intervals: the resample p, the exact permutation p, the one
leave-one-out reference, the agreement of every record's p-value with its interval, no
p-value at the resampling floor printed as a value, and every interval from its declared
design."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from analysis.stats.bootstrap import BootstrapResult, bootstrap_statistic
from analysis.stats.intervals import exact_permutation_attainable, exact_permutation_p
from analysis.stats.records import DISAGREEMENT_EXPLAINED, percentile_bounds, resample_p_value
from analysis.stats.study_common import leave_one_out_majority

REPO_ROOT = Path(__file__).resolve().parents[2]
LEVEL = re.compile(r"(\d+(?:\.\d+)?)% CI")
RESAMPLES = re.compile(r"smaller share of the (\d+) resamples")


def p_interval_disagreement(record: Mapping[str, Any], level: float) -> str | None:
    """Why a record's unadjusted p-value and its interval disagree, or None when they agree.

    For a record (a ``numbers.json`` entry) with an interval and ``extra.p_value`` of
    ``extra.null``: "p < 1 - level" must equal "the interval excludes the null", unless the
    method says the two come from different methods and :data:`DISAGREEMENT_EXPLAINED`.
    A p-value without its null is itself reported (the record must say what it tested).
    """
    extra = record.get("extra") or {}
    p = extra.get("p_value")
    if p is None:
        return None
    if extra.get("null") is None:
        return f"p_value {p} without extra.null"
    low, high = record.get("ci_low"), record.get("ci_high")
    if low is None or high is None:
        return None
    null = float(extra["null"])
    significant = float(p) < 1.0 - level
    excludes = null < float(low) or null > float(high)
    if significant == excludes or DISAGREEMENT_EXPLAINED in str(record.get("method", "")):
        return None
    return (
        f"p = {float(p):.4g} {'<' if significant else '>='} {1.0 - level:.2g} but the interval "
        f"[{float(low):.4g}, {float(high):.4g}] {'excludes' if excludes else 'contains'} {null:g}"
    )


def floors_printed_as_values(numbers: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Records whose resample p-value sits at the floor 1/B without saying it is a bound."""
    out = []
    for key, rec in numbers.items():
        extra = rec.get("extra") or {}
        found = RESAMPLES.search(str(extra.get("test", "")))
        if extra.get("p_value") is None or not found:
            continue
        at_floor = extra["p_value"] <= 1.0 / int(found.group(1)) + 1e-15
        if at_floor != bool(extra.get("p_value_is_upper_bound")):
            out.append(f"{key}: p = {extra['p_value']} of {found.group(1)} resamples")
    return out


def zero_width_intervals(numbers: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Records printing an interval of width zero that is not exact."""
    return [
        key
        for key, rec in numbers.items()
        if rec.get("ci_low") is not None
        and rec["ci_low"] == rec["ci_high"]
        and not (rec.get("extra") or {}).get("exact")
    ]


#: designs that resample the annotators (every statement about people)
PEOPLE_DESIGNS = ("attribute_judgments", "relevance_people", "rating_people")
#: records that are statements about people, and the users x prompts statements against the
#: majority label (key pattern -> the designs they must carry)
DECLARED = {
    r"^stage1\.(acceptance_rate|flags\.share|problematic_gap|kappa\.human|alpha|ceiling)": (
        "attribute_judgments",
    ),
    r"^stage2\.[^.]+\.(kappa\.human_|kappa_diff\.|ceiling\.|vs_rest\.|relevance_rate\.human$)": (
        "relevance_people",
    ),
    r"^stage2\.[^.]+\.over_selection\.": ("relevance_items",),
    r"^stage3\.(judge_minus_human|judge_better_share_minus_human|mention_delta\.human$"
    r"|mean_rating|no_better_share|human_better_share|ceiling)": ("rating_people",),
}


def design_problems(numbers: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Records whose interval does not come from their declared design.

    Every record with an interval (or "not estimable") names its design in its method, bar
    the validation records (Monte Carlo intervals over simulated worlds); the statements
    about people carry a design that resamples the annotators (and the method says how many
    annotators when the data hold several), over-selection the users x prompts design.
    """
    out = []
    for key, rec in numbers.items():
        has_interval = rec.get("ci_low") is not None or rec.get("text") == "not estimable"
        if not has_interval or key.startswith("validation."):
            continue
        method = str(rec.get("method", ""))
        design = (rec.get("extra") or {}).get("design")
        if design is None or f"design {design}:" not in method:
            out.append(f"{key}: no declared design in its method")
            continue
        for pattern, designs in DECLARED.items():
            if re.search(pattern, key) and design not in designs:
                out.append(f"{key}: design {design}, expected one of {designs}")
        if design in PEOPLE_DESIGNS and "random" in method and "annotators (" not in method:
            if "a single level of annotators" not in method:
                out.append(f"{key}: a statement about people without its annotators")
    return out


def result_of(replicates: list[float]) -> BootstrapResult:
    return BootstrapResult(
        estimate=np.asarray(0.0),
        replicates=np.asarray(replicates, dtype=np.float64),
        jackknife=None,
        n_clusters=3,
        cluster="user",
        seed=0,
        weights_digest="x",
    )


def test_resample_p_value_formula() -> None:
    # 10 resamples: 3 at or below 0.5 (0.1, 0.2, 0.5; a tie counts on both sides), 8 at or
    # above it; for 0.95: 7 below, 3 above
    res = result_of([0.1, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2])
    assert resample_p_value(res, 0.5) == pytest.approx(2 * 3 / 10)
    assert resample_p_value(res, 0.95) == pytest.approx(2 * 3 / 10)
    assert resample_p_value(res, 0.15) == pytest.approx(2 * 1 / 10)
    # every resample above the null: floored at 1/B, never 0
    assert resample_p_value(res, -1.0) == pytest.approx(1 / 10)
    # capped at 1 (the null in the middle of many ties)
    assert resample_p_value(result_of([0.0] * 4), 0.0) == 1.0


def test_resample_p_value_ignores_undefined_resamples() -> None:
    res = result_of([np.nan, 0.3, 0.4, np.nan, -0.1])
    # B counts the 3 defined resamples; 1 of them <= 0
    assert resample_p_value(res, 0.0) == pytest.approx(2 / 3)
    assert np.isnan(resample_p_value(result_of([np.nan, np.nan]), 0.0))


def test_leave_one_out_majority_by_hand() -> None:
    n = np.nan
    # items x raters A B C D (NaN = no vote)
    votes = np.array(
        [
            [1, 1, 0, 1],  # A's others B C D: 2 of 3 -> 1
            [0, 1, 0, n],  # A's others B C: 1-1 tie -> dropped
            [1, 0, n, n],  # A's others: only B -> fewer than 2, undefined
            [n, 1, 1, 0],  # A did not vote -> undefined
            [0, 0, 0, 1],  # 0 of... others B C D: 1 of 3 -> 0
        ],
        dtype=np.float64,
    )
    label, tie = leave_one_out_majority(votes, 0)
    np.testing.assert_array_equal(label, [1, n, n, n, 0])
    np.testing.assert_array_equal(tie, [False, True, False, False, False])
    # D's others A B C on item 1: 1, 1, 0 -> 1; D has no vote on items 2, 3
    label_d, tie_d = leave_one_out_majority(votes, 3)
    np.testing.assert_array_equal(label_d, [1, n, n, 1, 0])
    assert not tie_d.any()


def test_exact_permutation_p_five_models() -> None:
    x = [0.05, 0.2, 0.4, 0.5, 0.7]
    y = [-0.39, 0.1, 0.2, 0.5, 0.4]
    assert stats.spearmanr(x, y).statistic == pytest.approx(0.9)
    # of the 120 pairings, |rho| >= 0.9 for 10 (rho = 1, four at 0.9, and their mirrors)
    assert exact_permutation_p(x, y, "spearman") == pytest.approx(10 / 120)
    assert round(exact_permutation_p(x, y, "spearman"), 3) == 0.083
    # the t approximation is what it replaces
    assert stats.spearmanr(x, y).pvalue < 0.05
    with pytest.raises(ValueError, match="too large"):
        exact_permutation_p(np.arange(10), np.arange(10))


def test_the_exact_test_s_attainable_outcomes() -> None:
    """Five models: the 120 pairings give rho in steps of 0.1, and only rho = +/-1 reaches
    p < 0.05 (2/120); the observed outcome's p is the one exact_permutation_p gives."""
    x = [0.05, 0.2, 0.4, 0.5, 0.7]
    y = [-0.39, 0.1, 0.2, 0.5, 0.4]
    table = dict((round(t, 9), q) for t, q in exact_permutation_attainable(x, y))
    assert sorted(table) == [round(0.1 * k, 9) for k in range(-10, 11)]
    assert table[1.0] == pytest.approx(2 / 120) and table[-1.0] == pytest.approx(2 / 120)
    assert table[0.9] == pytest.approx(exact_permutation_p(x, y, "spearman"))
    assert [t for t, q in table.items() if q < 0.05] == [-1.0, 1.0]
    # six models: more outcomes reach the level than the two extremes
    six = exact_permutation_attainable(np.arange(6), np.arange(6))
    assert sum(q < 0.05 for _, q in six) > 2


def record(value: float, low: float, high: float, p: float, method: str = "") -> dict:
    return {
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "method": f"x; 95% CI: ...{method}",
        "extra": {"p_value": p, "null": 0.0},
    }


def test_disagreement_detector() -> None:
    assert p_interval_disagreement(record(0.5, 0.1, 0.9, 0.01), 0.95) is None
    assert p_interval_disagreement(record(0.5, -0.1, 0.9, 0.3), 0.95) is None
    assert "excludes" in str(p_interval_disagreement(record(0.5, 0.1, 0.9, 0.2), 0.95))
    assert "contains" in str(p_interval_disagreement(record(0.5, -0.1, 0.9, 0.001), 0.95))
    explained = record(0.5, 0.1, 0.9, 0.2, f"; they {DISAGREEMENT_EXPLAINED}")
    assert p_interval_disagreement(explained, 0.95) is None
    no_null = {"ci_low": 0.0, "ci_high": 1.0, "extra": {"p_value": 0.5}}
    assert "without extra.null" in str(p_interval_disagreement(no_null, 0.95))


def test_resample_p_agrees_with_percentile_interval_on_synthetic_data() -> None:
    """Many clustered differences of means, some null and some not: p < 0.05 <=> CI excludes 0."""
    rng = np.random.default_rng(3)
    checked = 0
    for trial in range(60):
        n_users = int(rng.integers(5, 40))
        users = rng.integers(0, n_users, 300)
        effect = rng.choice([0.0, 0.05, 0.2])
        d = effect + rng.normal(0, 1, n_users)[users] * 0.3 + rng.normal(0, 1, 300)
        res = bootstrap_statistic(
            np.column_stack([d, np.ones_like(d)]),
            lambda t: t[:, 0] / t[:, 1],
            clusters=users,
            cluster_name="users",
            n_boot=999,
            seed=trial,
        )
        low, high = percentile_bounds(res, 0.95, "percentile")
        rec = {
            "ci_low": float(low),
            "ci_high": float(high),
            "method": "m",
            "extra": {"p_value": resample_p_value(res, 0.0), "null": 0.0},
        }
        assert p_interval_disagreement(rec, 0.95) is None, (trial, rec)
        checked += 1
    assert checked == 60


def numbers_disagreements(numbers: dict) -> list[str]:
    """Every record whose p-value and interval disagree without a stated reason."""
    out = []
    for key, rec in numbers.items():
        m = LEVEL.search(str(rec.get("method", "")))
        level = float(m.group(1)) / 100 if m else 0.95
        why = p_interval_disagreement(rec, level)
        if why:
            out.append(f"{key}: {why}")
    return out


@pytest.mark.slow
def test_bundled_build_p_values_agree_with_intervals(bundled_build: Path) -> None:
    """Over every record of the session's fresh bundled build: p-values and intervals agree,
    no floor is printed as a value, no interval has width zero unless it is exact, and every
    interval comes from its declared design (people's statements resample annotators)."""
    path = bundled_build / "results/bundled/numbers.json"
    numbers = json.loads(path.read_text())
    tested = [k for k, r in numbers.items() if (r.get("extra") or {}).get("p_value") is not None]
    assert tested, "the bundled build has no record with a p-value"
    assert numbers_disagreements(numbers) == []
    assert floors_printed_as_values(numbers) == []
    assert zero_width_intervals(numbers) == []
    assert design_problems(numbers) == []
