"""``recenter diff`` (alias ``numbers-diff``): every key of two builds with the change, paired
intervals where both sides share their resamples; the refactor check compares every reported
field of every key."""

from __future__ import annotations

import functools
import json
import math
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from analysis.cli import main
from analysis.paper.diff import compare_numbers, diff_builds, read_side, render_table
from analysis.paths import BuildPaths
from analysis.provenance import dump_json, write_records
from analysis.resamples import Part, Resamples, write_resamples
from analysis.stats.records import Statistic, make_records, pair_resamples, read_interval, stored
from analysis.stats.resampling import Units, cell_labels, pairwise_kappa, plan, totals
from analysis.stats.settings import StatsSettings
from tests.paper.fake_study import write_fake_study
from tests.settings_defaults import compose_config_plain, stats_settings


def _rec(value: float, lo: float | None = None, hi: float | None = None, n: int = 10) -> dict:
    return {"value": value, "ci_low": lo, "ci_high": hi, "n": n, "display": f"{value:.2f}"}


def test_identical_numbers_pass_and_provenance_is_ignored(tmp_path: Path) -> None:
    old = {"a": {**_rec(0.5, 0.4, 0.6), "rule": "x", "config_sha256": "1"}}
    new = {"a": {**_rec(0.5, 0.4, 0.6), "rule": "y", "config_sha256": "2"}}
    assert compare_numbers(old, new) == ([], [], [])
    dump_json(old, tmp_path / "old.json")
    dump_json(new, tmp_path / "new.json")
    assert main(["numbers-diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0


def test_a_moved_value_or_a_lost_key_fails(tmp_path: Path) -> None:
    old = {"a": _rec(0.5, 0.4, 0.6), "b": _rec(1.0)}
    new = {"a": _rec(0.51, 0.4, 0.6), "c": _rec(1.0)}
    removed, added, changes = compare_numbers(old, new)
    assert (removed, added) == (["b"], ["c"])
    assert {(c.key, c.field) for c in changes} == {("a", "value"), ("a", "display")}
    assert not any(c.allowed for c in changes)
    dump_json(old, tmp_path / "old.json")
    dump_json(new, tmp_path / "new.json")
    assert main(["numbers-diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 1


def test_ci_tolerance_allows_small_bound_moves_only_with_value_and_n_fixed() -> None:
    old = {"a": _rec(0.5, 0.40, 0.60), "b": _rec(0.5, 0.40, 0.60)}
    new = {"a": _rec(0.5, 0.41, 0.60), "b": _rec(0.5, 0.40, 0.65)}
    _, _, changes = compare_numbers(old, new, ci_width_tolerance=0.10)
    by_key = {c.key: c.allowed for c in changes}
    assert by_key == {"a": True, "b": False}  # 5% vs 25% of the width
    moved_value = {"a": _rec(0.51, 0.41, 0.60)}
    _, _, changes = compare_numbers(old, moved_value, ci_width_tolerance=0.10)
    assert not any(c.allowed for c in changes)


def test_ci_level_is_compared_only_where_both_records_carry_it() -> None:
    """A record gaining ``ci_level`` is no change; a changed level is one (not tolerated)."""
    old = {"a": _rec(0.5, 0.4, 0.6), "b": {**_rec(0.5, 0.4, 0.6), "ci_level": 0.95}}
    new = {
        "a": {**_rec(0.5, 0.4, 0.6), "ci_level": 0.95},
        "b": {**_rec(0.5, 0.4, 0.6), "ci_level": 0.9},
    }
    _, _, changes = compare_numbers(old, new, ci_width_tolerance=0.10)
    assert [(c.key, c.field, c.allowed) for c in changes] == [("b", "ci_level", False)]


# ---------------------------------------------------------------- recenter diff: two builds


@functools.cache
def _config_text(n_boot: int = 400) -> str:
    """A build's resolved config (the shipped defaults, ``stats.n_boot`` as given)."""
    cfg = compose_config_plain()
    cfg["stats"]["n_boot"] = n_boot
    return yaml.safe_dump(cfg, sort_keys=True)


def _side_files(
    folder: Path, values: dict[str, float], reps: dict[str, np.ndarray], digest: str
) -> Path:
    """A build's numbers.json, resamples.npz (one bootstrapped factor per record) and config."""
    numbers = {}
    kept = {}
    for key, value in values.items():
        r = reps[key]
        numbers[key] = {
            **_rec(value, float(np.nanquantile(r, 0.025)), float(np.nanquantile(r, 0.975))),
            "fmt": ".2f",
            "ci_level": 0.95,
        }
        kept[key] = Resamples(value, (Part("users", digest, r, None, 40, seed=1),))
    dump_json(numbers, folder / "numbers.json")
    write_resamples(kept, folder / "resamples.npz")
    (folder / "config.yaml").write_text(_config_text(), encoding="utf-8")
    return folder / "numbers.json"


def _draws(seed: int, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.5 + shift, 0.05, size=400)


def test_a_build_diffed_with_itself_changes_by_zero_on_a_zero_interval(tmp_path: Path) -> None:
    """Also where the statistic is undefined on some resamples (a ratio over none): those are
    left out of the change, as the interval reader leaves them out of a record."""
    draws = _draws(1)
    draws[:7] = np.nan
    path = _side_files(tmp_path / "a", {"k": 0.5}, {"k": draws}, "d1")
    d = diff_builds(read_side(path), read_side(path))
    (row,) = d.keys
    assert row.status == "same" and row.paired
    assert row.change == 0.0 and row.ci == (0.0, 0.0) and row.p_value == 1.0
    assert row.change_display == "+0.00" and row.ci_display == "[+0.00, +0.00]"


def test_shared_resamples_give_the_change_a_paired_interval(tmp_path: Path) -> None:
    """The same draws moved by 0.03 and a little noise: the paired interval is about that
    move alone, far narrower than either side's interval, and its p-value says it is real."""
    base = _draws(2)
    moved = base + 0.03 + np.random.default_rng(0).normal(0, 0.004, base.size)
    a = read_side(_side_files(tmp_path / "a", {"k": 0.5}, {"k": base}, "same"))
    b = read_side(_side_files(tmp_path / "b", {"k": 0.53}, {"k": moved}, "same"))
    (row,) = diff_builds(a, b).keys
    assert row.paired and row.status == "changed"
    assert row.change == pytest.approx(0.03)
    assert row.ci == pytest.approx(tuple(np.quantile(moved - base, [0.025, 0.975])), abs=1e-12)
    assert row.ci[1] - row.ci[0] < 0.03 < 0.5 * (a.numbers["k"]["ci_high"] - 0.5)
    assert row.p_value == pytest.approx(1 / 400)  # floored at 1/B: every resample moved up
    assert row.n_resamples == 400
    assert "percentile" in row.note


@pytest.mark.parametrize(
    ("digest_b", "n_b", "why"),
    [
        ("other", 400, "other draws of users (resample-weight digests"),
        ("same", 300, "other draws of users (400 vs 300 resamples that are not the first ones"),
    ],
)
def test_other_draws_are_not_paired_and_say_why(
    tmp_path: Path, digest_b: str, n_b: int, why: str
) -> None:
    a = read_side(_side_files(tmp_path / "a", {"k": 0.5}, {"k": _draws(3)}, "same"))
    b = read_side(_side_files(tmp_path / "b", {"k": 0.6}, {"k": _draws(4)[:n_b]}, digest_b))
    (row,) = diff_builds(a, b).keys
    assert not row.paired and row.ci is None and row.p_value is None
    assert why in row.note
    assert row.a.startswith("0.50 [") and row.b.startswith("0.60 [")  # both intervals shown


def test_other_data_is_not_paired_and_settings_come_from_the_records(tmp_path: Path) -> None:
    """The digests count clusters and draws, not which data they hold: other ``data.*`` in
    the resolved configs leaves every key unpaired, saying why. The change is read with the
    record's own statistics settings (its ``config``), else its build's; with neither it is
    not paired."""
    draws = _draws(5)
    a = read_side(_side_files(tmp_path / "a", {"k": 0.5}, {"k": draws}, "same"))
    b = read_side(_side_files(tmp_path / "b", {"k": 0.6}, {"k": draws + 0.1}, "same"))
    assert a.config is not None and b.config is not None
    b.config["data"]["root"] = "elsewhere"
    (row,) = diff_builds(a, b).keys
    assert not row.paired and "other data (data.root differ)" in row.note
    b.config = None  # data unknown on one side: the digests decide
    (row,) = diff_builds(a, b).keys
    assert row.paired and "95% CI" in row.note
    params = {"stats": {**a.config["stats"], "ci_level": 0.9}, "run.seed": 1}
    a.numbers["k"]["config"] = params  # the record's own settings come first
    (row,) = diff_builds(a, b).keys
    assert row.paired and row.level == 0.9 and "90% CI" in row.note
    del a.numbers["k"]["config"]
    a.config = None
    (row,) = diff_builds(a, b).keys
    assert not row.paired and "no statistics settings" in row.note


def test_a_side_without_resamples_is_compared_unpaired(tmp_path: Path) -> None:
    a = read_side(_side_files(tmp_path / "a", {"k": 0.5}, {"k": _draws(5)}, "same"))
    dump_json({"k": {**_rec(0.7, 0.6, 0.8), "fmt": ".2f"}}, tmp_path / "old" / "numbers.json")
    (row,) = diff_builds(a, read_side(tmp_path / "old" / "numbers.json")).keys
    assert not row.paired and "no resamples kept on B" in row.note


def test_a_value_fixed_by_construction_is_compared_unpaired_and_says_why(tmp_path: Path) -> None:
    """A record whose value the rule fixes (the all-positive rule's recall) keeps no resamples
    and no interval: diffed with itself or with an estimated record of the same key, the row
    says it is fixed by construction instead of pairing (or failing)."""
    cfg = yaml.safe_load(_config_text())
    settings = StatsSettings.from_rule_params(
        {"stats": cfg["stats"], "run.seed": cfg["run"]["seed"]}
    )
    labels = np.arange(50)
    units = Units(
        50, (labels % 10).astype(str).astype(object), (labels % 7).astype(str).astype(object)
    )
    design = plan(settings, "relevance_items", units)
    hits = {"all": np.ones(50), "some": (labels % 5 != 0).astype(float), "n": np.ones(50)}
    resampled = totals(design, hits, 50)
    every = resampled.stat(lambda g: g("all") / g("n"))
    some = resampled.stat(lambda g: g("some") / g("n"))
    fixed = Statistic("k.recall", every, ".3f", "recall", "m:f", n=50, by_construction="why")
    estimated = Statistic("k.recall", some, ".3f", "recall", "m:f", n=50)
    sides = {}
    for name, stat in (("fixed", fixed), ("estimated", estimated)):
        (record,) = make_records([stat], settings)
        out = tmp_path / name / "numbers.json"
        write_records([record], out, rule="r", inputs=[])
        (out.parent / "config.yaml").write_text(_config_text(), encoding="utf-8")
        write_resamples(
            {} if record.resamples is None else {record.key: record.resamples},
            out.parent / "resamples.npz",
        )
        sides[name] = read_side(out)
    assert "k.recall" not in sides["fixed"].resamples
    (row,) = diff_builds(sides["fixed"], sides["fixed"]).keys
    assert row.status == "same" and not row.paired and row.ci is None
    assert "fixed by construction on A and B" in row.note
    (row,) = diff_builds(sides["estimated"], sides["fixed"]).keys
    assert row.status == "changed" and not row.paired and row.ci is None
    assert "fixed by construction on B" in row.note and row.change == pytest.approx(0.2)


# ---------------------------------------------------------------- a crossed design


def _crossed_votes(seed: int) -> pd.DataFrame:
    """A model's YES votes on sparse crossed items (30 users, 24 prompts, each user with 4-6
    prompts and 3 items each), under prompt v1 and under a v2 that says YES less often on
    some items (the same items: a prompt variant changes only the model's calls)."""
    rng = np.random.default_rng(seed)
    user_effect, prompt_effect = rng.normal(0, 0.8, 30), rng.normal(0, 0.8, 24)
    rows = []
    for u in range(30):
        for p in rng.choice(24, size=int(rng.integers(4, 7)), replace=False):
            for _ in range(3):
                logit = 0.3 + user_effect[u] + prompt_effect[p] + rng.normal(0, 0.5)
                v1 = float(rng.random() < 1 / (1 + np.exp(-logit)))
                rows.append({"user": f"u{u}", "prompt": f"p{p}", "v1": v1})
    frame = pd.DataFrame(rows)
    # v2 turns a fifth of v1's YES votes to NO, more often on some prompts
    turn = rng.random(len(frame)) < 0.1 + 0.2 * (frame["prompt"].str[1:].astype(int) % 2)
    frame["v2"] = np.where(turn, 0.0, frame["v1"])
    return frame


def test_a_crossed_design_change_gets_the_interval_of_the_differenced_data(
    tmp_path: Path,
) -> None:
    """Two variants' YES rate under the crossed users x prompts design (a t interval of the
    two-way variance, the kind of record that keeps no single set of resamples): each record
    keeps its design's parts, the diff differences them part by part and reads them with the
    record maker's interval reader. The paired interval equals the one of the rate difference
    computed directly on the differenced votes, and is narrower than an unpaired one."""
    votes = _crossed_votes(11)
    cfg = yaml.safe_load(_config_text(300))
    settings = StatsSettings.from_rule_params(
        {"stats": cfg["stats"], "run.seed": cfg["run"]["seed"]}
    )
    units = Units(len(votes), votes["user"].to_numpy(object), votes["prompt"].to_numpy(object))
    design = plan(settings, "relevance_items", units)
    columns = {"v1": votes["v1"].to_numpy(), "v2": votes["v2"].to_numpy(), "n": np.ones(len(votes))}
    resampled = totals(design, columns, len(votes))
    sides = []
    for name in ("v1", "v2"):
        rate = resampled.stat(lambda g, name=name: g(name) / g("n"))
        stat = Statistic("stage2.yes_rate", rate, ".3f", "YES rate", "m:f", n=len(votes))
        records = make_records([stat], settings)
        assert "t interval" in records[0].method and records[0].resamples is not None
        out = tmp_path / name / "records" / "stage2.json"
        params = {"stats": cfg["stats"], "run.seed": cfg["run"]["seed"]}
        write_records(records, out, rule="stage2", inputs=[], config=params)
        (out.parent.parent / "config.yaml").write_text(_config_text(300), encoding="utf-8")
        sides.append(read_side(out))
    a, b = sides
    (row,) = diff_builds(a, b).keys
    assert row.paired and row.status == "changed", row.note
    assert "t interval" in row.note and "Cameron-Gelbach-Miller" in row.note
    # the same interval as the difference computed on the differenced data, directly
    direct = resampled.stat(lambda g: g("v2") / g("n") - g("v1") / g("n"))
    reading = read_interval(direct, settings, None, len(votes))
    assert row.change == pytest.approx(float(direct.estimate), abs=1e-12)
    assert row.ci == pytest.approx((reading.interval.low, reading.interval.high), abs=1e-12)
    p, _, _ = reading.test(0.0)
    assert row.p_value == pytest.approx(p, rel=1e-9)
    # narrower than the change's interval were the two sides independent
    half = [
        (s.numbers["stage2.yes_rate"]["ci_high"] - s.numbers["stage2.yes_rate"]["ci_low"]) / 2
        for s in sides
    ]
    assert row.ci[1] - row.ci[0] < 2 * math.hypot(*half)
    assert row.ci[1] < 0  # v2 says YES less often, and the paired interval shows it


def _one_way_build(
    folder: Path, votes: pd.DataFrame, column: str, n_boot: int, seed: int = 7
) -> Path:
    """A build of one record, the YES rate of ``column`` resampled over users alone
    (``stats.design = one_way``: a percentile interval), at ``n_boot`` resamples: its
    records file with the resamples beside it, and its resolved config."""
    settings = stats_settings(n_boot=n_boot, design="one_way", cluster="user", seed=seed)
    units = Units(len(votes), votes["user"].to_numpy(object), votes["prompt"].to_numpy(object))
    design = plan(settings, "relevance_items", units)
    resampled = totals(
        design, {"y": votes[column].to_numpy(), "n": np.ones(len(votes))}, len(votes)
    )
    stat = Statistic(
        "stage2.yes_rate",
        resampled.stat(lambda g: g("y") / g("n")),
        ".3f",
        "YES rate",
        "m:f",
        n=len(votes),
    )
    out = folder / "records" / "stage2.json"
    cfg = compose_config_plain()
    cfg["stats"].update(n_boot=n_boot, design="one_way", cluster="user")
    cfg["run"]["seed"] = seed
    params = {"stats": cfg["stats"], "run.seed": seed}
    write_records(make_records([stat], settings), out, rule="stage2", inputs=[], config=params)
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True), encoding="utf-8")
    return out


def test_other_numbers_of_resamples_pair_on_their_shared_first_draws(tmp_path: Path) -> None:
    """A variant with other votes *and* more resamples (``stats.n_boot`` 200 -> 400): the
    engine draws resamples one after another from one seed's stream, so the 200 are the 400's
    first 200, and the change is paired on those. Checked by hand from the stored files: the
    first 200 replicates of the same statistic at B = 400 are the B = 200 ones, and the row's
    interval and p-value are the percentile interval and the two-sided resample p of the
    replicates' differences read from the two ``.npz`` files. Another seed is not paired."""
    votes = _crossed_votes(12)
    a = _one_way_build(tmp_path / "a", votes, "v1", 200)
    b = _one_way_build(tmp_path / "b", votes, "v2", 400)
    same_at_400 = _one_way_build(tmp_path / "c", votes, "v1", 400)

    def replicates(records: Path) -> np.ndarray:
        with np.load(records.with_name("stage2.resamples.npz")) as data:
            assert list(data["clusters"]) == ["users"]  # one part: users
            return data["replicates"]

    rep_a, rep_b = replicates(a), replicates(b)
    assert (rep_a.size, rep_b.size) == (200, 400)
    np.testing.assert_array_equal(replicates(same_at_400)[:200], rep_a)
    d = diff_builds(read_side(a), read_side(b))
    (row,) = d.keys
    assert row.paired and row.status == "changed", row.note
    assert row.n_resamples == 200
    assert "paired on:\n  1 keys: the first 200 of 200 vs 400 resamples" in render_table(d)
    assert "users: the first 200 of 200 vs 400 resamples" in row.note
    d = rep_b[:200] - rep_a
    assert row.change == pytest.approx(float(votes["v2"].mean() - votes["v1"].mean()), abs=1e-12)
    assert row.ci == pytest.approx(tuple(np.quantile(d, [0.025, 0.975])), abs=1e-12)
    p = max(2 * min(np.mean(d <= 0), np.mean(d >= 0)), 1 / 200)
    assert row.p_value == pytest.approx(p)
    assert row.ci[1] < 0  # v2 says YES less often
    (row,) = diff_builds(read_side(b), read_side(a)).keys  # either order
    assert row.paired and row.ci == pytest.approx(tuple(np.quantile(-d, [0.025, 0.975])))
    other_seed = _one_way_build(tmp_path / "d", votes, "v2", 400, seed=8)
    (row,) = diff_builds(read_side(a), read_side(other_seed)).keys
    assert not row.paired and "not the first ones of one seed's stream" in row.note


def _kappa_votes() -> tuple[pd.DataFrame, Units, dict[str, str]]:
    """Five people and two models voting on 240 crossed items (20 users, 12 prompts); h4
    and h5 share 30 items, every other pair 70 or more."""
    rng = np.random.default_rng(3)
    n = 240
    users = np.array([f"u{i % 20}" for i in range(n)], dtype=object)
    prompts = np.array([f"p{(i * 7) % 12}" for i in range(n)], dtype=object)
    truth = rng.random(n) < 0.3
    who = {"h1": (0, n), "h2": (0, n), "h3": (40, n), "h4": (0, 110), "h5": (80, n)}
    who |= {"m1": (0, n), "m2": (0, n)}
    rows = []
    for rater, (start, stop) in who.items():
        right = rng.random(stop - start) < (0.8 if rater[0] == "h" else 0.7)
        for i, ok in zip(range(start, stop), right, strict=True):
            rows.append({"item": i, "rater": rater, "label": bool(truth[i] == ok)})
    long = pd.DataFrame(rows)
    long["users"], long["prompts"] = users[long["item"]], prompts[long["item"]]
    long["cells"] = cell_labels(users, prompts)[long["item"]]
    units = Units(n, users, prompts, annotators=("h1", "h2", "h3", "h4", "h5"))
    return long, units, {r: "human" if r[0] == "h" else "model" for r in who}


def test_another_rater_pair_subset_pairs_with_its_deletions_matched_by_name(
    tmp_path: Path,
) -> None:
    """``stats.min_shared_items`` 0 -> 50 drops the one pair of people that shares 30 items
    (h4 ~ h5): the human-human group mean is then over 9 pairs, not 10. It is still a statistic
    of the same resampled data, so the change pairs on the row factors' resamples; the people's
    deletions are matched by name, a deletion that does not touch one side leaving its value
    there. Checked by hand: the change with each annotator (each rater pair) deleted is the
    difference of the two means over the pairs left, from the kappa matrix's estimates."""
    long, units, groups = _kappa_votes()
    settings = stats_settings(n_boot=200)
    design = plan(settings, "relevance_people", units)
    sides, kappas = [], []
    for name, min_shared in (("all", 0), ("shared50", 50)):
        k = pairwise_kappa(
            design, long, groups=groups, categories=[False, True], min_shared=min_shared
        )
        kappas.append(k)
        stat = Statistic(
            "kappa.human_human", k.group_means["human_human"], ".2f", "kappa", "m:f", n=240
        )
        out = tmp_path / name / "records" / "kappa.json"
        write_records(make_records([stat], settings), out, rule="kappa", inputs=[])
        (out.parent.parent / "config.yaml").write_text(_config_text(200), encoding="utf-8")
        sides.append(read_side(out))
    wide, narrow = kappas
    assert len(wide.pairs) - len(narrow.pairs) == 1 and ("h4", "h5") not in narrow.pairs
    (row,) = diff_builds(*sides).keys
    assert row.paired and row.status == "changed", row.note
    assert "t interval" in row.note and row.n_resamples == 200
    assert "rater-pairs: 10 deleted levels matched by name (1 only in A, 0 only in B" in row.note
    assert row.ci[0] < row.change < row.ci[1]
    # the stored parts, matched: each deletion's change by hand from the matrices' estimates
    paired = pair_resamples(*(s.resamples["kappa.human_human"] for s in sides))
    assert not isinstance(paired, str)
    change = {p.cluster: p for p in paired.change.parts}

    def mean_without(k, deleted: str) -> float:
        """The human-human mean of ``k``'s pair estimates with an annotator or a pair deleted."""
        est = np.asarray(k.matrix.estimate)
        left = [
            est[i]
            for i, (x, y) in enumerate(k.pairs)
            if x[0] == y[0] == "h" and deleted not in (x, y, f"{x}~{y}")
        ]
        return float(np.mean(left))

    for clustering in ("annotators", "rater-pairs"):
        part = change[clustering]
        assert part.levels is not None
        for name, value in zip(part.levels, part.jackknife, strict=True):
            hand = mean_without(narrow, name) - mean_without(wide, name)
            assert value == pytest.approx(hand, abs=1e-12), name
    assert change["annotators"].jackknife[change["annotators"].levels.index("h4")] == 0.0
    # the row factors' change is the replicates' difference, resample by resample
    users = [
        next(p for p in s.resamples["kappa.human_human"].parts if p.cluster == "users")
        for s in sides
    ]
    np.testing.assert_array_equal(
        change["users"].replicates, users[1].replicates - users[0].replicates
    )


def test_deletions_that_cannot_be_matched_are_not_paired_and_say_why() -> None:
    """A build from before the deleted levels were named: with the same number of the same
    clustering's deletions it pairs them in order (as it always did); with another number it
    cannot match them, and says so."""
    long, units, groups = _kappa_votes()
    design = plan(stats_settings(n_boot=50), "relevance_people", units)
    kept = []
    for min_shared in (0, 50):
        k = pairwise_kappa(
            design, long, groups=groups, categories=[False, True], min_shared=min_shared
        )
        res = stored(k.group_means["human_human"])
        kept.append(Resamples(res.estimate, tuple(replace(p, levels=None) for p in res.parts)))
    assert not isinstance(pair_resamples(kept[0], kept[0]), str)
    why = pair_resamples(*kept)
    assert isinstance(why, str)
    assert "the annotators' deletions of rater-pairs cannot be matched (10 vs 9 deleted" in why


def test_the_command_prints_a_table_markdown_and_json(tmp_path: Path, capsys) -> None:
    base = _draws(6)
    a = _side_files(tmp_path / "a", {"k": 0.5, "gone": 1.0}, {"k": base, "gone": base}, "s")
    b = _side_files(tmp_path / "b", {"k": 0.55, "new": 2.0}, {"k": base + 0.05, "new": base}, "s")
    cfg = yaml.safe_load(_config_text())
    cfg["stats"]["cluster"] = "prompt"  # the one-way unit: no change of the declared designs
    (tmp_path / "b" / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    assert main(["diff", str(a), str(b)]) == 1  # numbers moved
    table = capsys.readouterr().out
    assert "config: stats.cluster: 'user' -> 'prompt'" in table
    assert re.search(
        r"^k\s+0\.50 \[.*\]\s+0\.55 \[.*\]\s+\+0\.05\s+\[\+0\.05, \+0\.05\]", table, re.M
    )
    assert "3 keys: 1 changed, 0 the same, 1 only in A, 1 only in B" in table
    assert main(["diff", str(a), str(b), "--format", "md"]) == 1
    md = capsys.readouterr().out
    assert "| `stats.cluster` | 'user' | 'prompt' |" in md and "| `k` | 0.50 [" in md
    out = tmp_path / "diff.json"
    assert main(["diff", str(a), str(b), "--format", "json", "--output", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["summary"]["paired_changed"] == 1
    assert {k["key"]: k["status"] for k in doc["keys"]} == {
        "gone": "only_a",
        "k": "changed",
        "new": "only_b",
    }
    # the old name still works, and a build against itself is no difference
    assert main(["numbers-diff", str(a), str(a)]) == 0


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_two_commits_compare_from_their_committed_outputs(tmp_path: Path, capsys) -> None:
    """``--rev`` reads a commit's committed outputs when it has them (no build)."""
    repo = tmp_path / "repo"
    (repo / "workflow").mkdir(parents=True)
    (repo / "workflow" / "Snakefile").write_text("# a recenter checkout\n")
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    build = BuildPaths("demo")
    base = _draws(7)
    for value in (0.5, 0.6):
        _side_files(repo / build.results, {"k": value}, {"k": base + value - 0.5}, "s")
        _git(repo, "add", "-f", ".")
        _git(repo, "commit", "-q", "-m", f"value {value}")
    code = main(["diff", "--repo", str(repo), "--dataset", "demo", "--rev", "HEAD~1", "HEAD"])
    out = capsys.readouterr().out
    assert code == 1
    assert "A: HEAD~1:demo  (committed at HEAD~1)" in out
    assert re.search(r"^k\s+0\.50 .*\+0\.10\s+\[\+0\.10, \+0\.10\]", out, re.M)
    assert main(["diff", "--repo", str(repo), "--rev", "HEAD~1", "nope", "--dataset", "demo"]) == 2
    assert "'nope' is no commit" in capsys.readouterr().err


@pytest.mark.slow
def test_a_commit_without_committed_outputs_is_built_in_a_temporary_worktree(
    tmp_path: Path, capsys
) -> None:
    repo = tmp_path / "repo"
    write_fake_study(repo, "workflow/Snakefile", "1.0")
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    for value in ("1.0", "1.5"):
        (repo / "data" / "value.txt").write_text(value)
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", value)
    args = ["--repo", str(repo), "--dataset", "demo", "--cores", "1"]
    code = main(["diff", *args, "--rev", "HEAD~1", "HEAD"])
    captured = capsys.readouterr()
    out = captured.out
    assert code == 1, captured.err
    assert "A: HEAD~1:demo  (built at HEAD~1 in a temporary worktree)" in out
    assert re.search(r"^k\.x\s+1\.00\s+1\.50\s+\+0\.5", out, re.M)
    assert "no resamples kept" in out  # the fake study keeps none
    listed = subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert len(listed.splitlines()) == 1  # the temporary worktrees are gone


def test_the_comparison_is_a_page_of_the_variants_audit_site(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "repo"
    (repo / "workflow").mkdir(parents=True)
    (repo / "workflow" / "Snakefile").write_text("# a recenter checkout\n")
    base = _draws(8)
    _side_files(repo / BuildPaths("demo").results, {"k": 0.5}, {"k": base}, "s")
    variant = BuildPaths("demo", "stats.n_boot-400")
    _side_files(repo / variant.results, {"k": 0.6}, {"k": base + 0.1}, "s")
    args = ["diff", "--repo", str(repo), "--dataset", "demo", "default", "stats.n_boot-400"]
    assert main([*args, "--site"]) == 1
    page = repo / variant.site / "diffs" / "demo.html"
    assert f"wrote the audit site's page {page}" in capsys.readouterr().err
    html = page.read_text()
    assert '<a href="../numbers/k.html#k"><code>k</code></a>' in html  # B's entry page
    assert "+0.10" in html and "[+0.10, +0.10]" in html
    assert main([*args, "--format", "html"]) == 1
    assert capsys.readouterr().out == html


def test_the_bundled_build_keeps_each_records_design_parts(bundled_build: Path) -> None:
    """The shared build's ``resamples.npz``: every resampled record keeps its design's parts
    (each bootstrap part as many replicates as ``stats.n_boot``, each jackknifed factor its
    deleted levels), the crossed designs' records (stage-2 over-selection, kappas) included;
    a one-factor percentile record's bounds are read off its replicates; diffed with itself,
    every one of them is paired and changes by +0 [+0, +0], and the command exits 0."""
    build = BuildPaths("bundled")
    side = read_side(bundled_build / build.numbers)
    stats = yaml.safe_load((bundled_build / build.config).read_text())["stats"]
    assert side.resamples, "the build kept no resamples"
    assert set(side.resamples) <= set(side.numbers)
    alpha = 1 - stats["ci_level"]
    crossed = set()
    for key, kept in side.resamples.items():
        rec = side.numbers[key]
        assert kept.estimate == pytest.approx(rec["value"], rel=1e-12, abs=1e-12), key
        for part in kept.parts:
            assert len(part.digest) == 64 and part.n_boot in (0, stats["n_boot"]), key
            assert part.n_boot or part.jackknife is not None, key
        if any(p.sign < 0 for p in kept.parts):
            crossed.add(key)
        one_factor = len(kept.parts) == 1 and kept.parts[0].n_boot
        if one_factor and stats["ci_method"] == "percentile" and "percentile" in rec["method"]:
            reps = kept.parts[0].replicates[np.isfinite(kept.parts[0].replicates)]
            bounds = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
            assert bounds == pytest.approx([rec["ci_low"], rec["ci_high"]], rel=1e-9, abs=1e-12)
    assert "stage2.final.over_selection.sim-llm-a" in crossed
    # issue 35's records come from the same record maker and keep their parts the same way
    for prefix in (
        "stage2.final.kappa_max.",
        "stage2.final.kappa_share_of_max.",
        "stage2.final.kappa_share_of_max_diff.",
        "stage3.worse_share",
        "stage3.equal_share",
        "stage3.mention_delta_within_generator.",
    ):
        keys = [k for k in side.numbers if k.startswith(prefix)]
        assert keys and set(keys) <= set(side.resamples) & crossed, prefix
    # a value fixed by construction keeps none, and its row says why
    fixed = {k for k, r in side.numbers.items() if (r.get("extra") or {}).get("by_construction")}
    assert fixed and not fixed & set(side.resamples)
    d = diff_builds(side, side)
    assert all("fixed by construction" in k.note for k in d.keys if k.key in fixed)
    paired = {k.key: k for k in d.keys if k.paired}
    assert set(paired) == set(side.resamples)
    assert all(k.ci == (0.0, 0.0) and k.change == 0.0 and k.p_value == 1.0 for k in paired.values())
    numbers = str(bundled_build / build.numbers)
    assert main(["diff", numbers, numbers]) == 0
