"""Each figure on small handmade tables and records: the expected artists, the records drawn,
intervals exactly at the records' CIs, and a labelled placeholder where data are missing."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PathCollection, QuadMesh
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from analysis.figures.attribute_quality import attribute_quality_figure
from analysis.figures.estimates import FigureDataError
from analysis.figures.kappa_matrix import kappa_matrix_figure, matrix_of_round
from analysis.figures.mention_effect import mention_effect_figure
from analysis.figures.mention_habit_vs_bias import mention_habit_vs_bias_figure
from analysis.figures.pipeline import pipeline_figure
from analysis.figures.ratings_by_generator import ratings_by_generator_figure
from analysis.figures.relevance_prf import relevance_prf_figure
from analysis.figures.style import StudyFigure
from tests.figures.handmade import (
    GENERATORS,
    MENTION_DELTA,
    MENTION_RATE,
    kappa_long,
    rec,
    stage1_records,
    stage1_tables,
    stage2_records,
    stage3_records,
)
from tests.settings_defaults import dataset_nouns


def with_gid(ax, kind, gid: str) -> list:
    return [a for a in ax.get_children() if isinstance(a, kind) and a.get_gid() == gid]


def ci_segments(ax) -> np.ndarray:
    """Every CI segment drawn on ``ax`` (caps included), shape (n, 2, 2)."""
    colls = with_gid(ax, LineCollection, "ci")
    return np.concatenate([np.asarray(c.get_segments()) for c in colls]) if colls else np.empty(0)


def assert_placeholder(fig: StudyFigure, reason_part: str) -> None:
    assert isinstance(fig, Figure) and fig.study.available is False
    assert reason_part in (fig.study.reason or "")
    text = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert "not available in this dataset:" in text and reason_part in " ".join(text.split())
    assert fig.study.records == []


# ---------------------------------------------------------------------------------------------
# 1. pipeline


def test_pipeline_has_three_stages_with_model_and_human_boxes() -> None:
    records = {
        "data.n_judgments.stage1": {"value": 5949},
        "data.n_judgments.stage2.pilot": {"value": 813},
        "data.n_judgments.stage2.pilot_graded": {"value": 712},
        "data.n_judgments.total": {"value": 1},
    }
    fig = pipeline_figure(records)
    ax = fig.axes[0]
    assert len(with_gid(ax, FancyBboxPatch, "stage")) == 3
    for kind in ("data", "model", "human"):
        assert len(with_gid(ax, FancyBboxPatch, f"box-{kind}")) == 3
    assert len(with_gid(ax, FancyArrowPatch, "flow")) == 6
    assert len(with_gid(ax, FancyArrowPatch, "handoff")) == 2
    texts = [t.get_text() for t in ax.texts]
    for title in ("Attribute extraction", "Relevance matching", "Response generation"):
        assert any(title in t for t in texts)
    assert any("5,949 judgments" in t for t in texts)
    assert any("813 (pilot), 712 (pilot_graded)" in " ".join(t.split()) for t in texts)
    assert fig.study.records == [
        "data.n_judgments.stage1",
        "data.n_judgments.stage2.pilot",
        "data.n_judgments.stage2.pilot_graded",
    ]
    assert fig.study.available


def test_pipeline_names_raters_and_users_with_the_datasets_nouns() -> None:
    simulated = dataset_nouns("bundled")
    fig = pipeline_figure({"data.n_judgments.stage1": {"value": 10}}, nouns=simulated)
    text = " ".join(" ".join(t.get_text().split()) for t in fig.axes[0].texts)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "Simulated raters judge each attribute" in text and "simulated chat users" in text
    assert "simulated raters" in legend
    assert not re.search(r"\b(people|People|human judgments|WildChat)\b", text + " ".join(legend))
    real = pipeline_figure(nouns=dataclasses.replace(simulated, people="people"))
    real_text = " ".join(" ".join(t.get_text().split()) for t in real.axes[0].texts)
    assert "People vote yes / no" in real_text


def test_pipeline_without_records_is_the_bare_diagram() -> None:
    fig = pipeline_figure()
    assert fig.study.records == [] and fig.study.available
    assert not any("judgments" in t.get_text() for t in fig.axes[0].texts)


# ---------------------------------------------------------------------------------------------
# 2. attribute quality


def test_attribute_quality_stacks_label_shares_per_source() -> None:
    judgments, users = stage1_tables()
    fig = attribute_quality_figure(judgments, users, stage1_records())
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # real first, then synthetic sources, then the pooled synthetic bar (two synthetic sources)
    assert labels == [
        "wildchat  (n=12)",
        "synthetic:cupid  (n=6)",
        "synthetic:prefeval  (n=6)",
        "all synthetic  (n=12)",
    ]
    accepted = with_gid(ax, Rectangle, "share-accepted")
    assert [round(b.get_width(), 6) for b in accepted] == [0.25, round(5 / 6, 6), 0.666667, 0.75]
    rows = np.zeros(4)
    for lab in ("accepted", "uncertain", "rejected"):
        bars = with_gid(ax, Rectangle, f"share-{lab}")
        assert len(bars) == 4
        rows += [b.get_width() for b in bars]
    np.testing.assert_allclose(rows, 1.0)
    assert accepted[3].get_hatch() and not accepted[0].get_hatch()
    # one interval (plus two caps) per drawn record, exactly at the records' CI bounds
    segs = ci_segments(ax)
    assert len(segs) == 4 * 3
    spans = sorted((s[0][0], s[1][0]) for s in segs[::3])
    assert spans == sorted([(0.1, 0.4), (0.6, 1.0), (0.4, 0.9), (0.55, 0.9)])
    assert fig.study.records == [
        "stage1.acceptance_rate.synthetic",
        "stage1.acceptance_rate.synthetic:cupid",
        "stage1.acceptance_rate.synthetic:prefeval",
        "stage1.acceptance_rate.wildchat",
    ]
    assert "final round" in fig.study.caption


def test_attribute_quality_refuses_records_from_other_data() -> None:
    judgments, users = stage1_tables()
    records = stage1_records()
    records["stage1.acceptance_rate.wildchat"]["value"] = 0.3
    with pytest.raises(FigureDataError, match=r"acceptance_rate.wildchat = 0.300000 .* 0.250000"):
        attribute_quality_figure(judgments, users, records)


def test_attribute_quality_errors_name_row_and_field() -> None:
    judgments, users = stage1_tables()
    judgments.loc[3, "label"] = "maybe"
    with pytest.raises(FigureDataError, match=r"row 3: field 'label' = 'maybe'"):
        attribute_quality_figure(judgments, users, {})
    judgments, users = stage1_tables()
    with pytest.raises(FigureDataError, match=r"'user_id' = 'u4' is not in the users table"):
        attribute_quality_figure(judgments, users[users["user_id"] != "u4"], {})
    with pytest.raises(FigureDataError, match=r"users: missing column\(s\) \['source_kind'\]"):
        attribute_quality_figure(judgments, users.drop(columns="source_kind"), {})


def test_attribute_quality_placeholder_without_human_judgments() -> None:
    judgments, users = stage1_tables()
    fig = attribute_quality_figure(judgments.iloc[0:0], users, {})
    assert_placeholder(fig, "no human stage-1 attribute judgments")


# ---------------------------------------------------------------------------------------------
# 3. kappa matrix


def test_kappa_matrix_draws_one_symmetric_panel_per_round() -> None:
    matrix = pd.concat(
        [
            kappa_long("pilot", ["Tal", "Lechen"], ["gpt-5.4", "gemma-4-31b-it", "qwen3.5-27b"]),
            kappa_long("final", ["sim-human-01", "sim-human-02", "sim-human-03"], ["sim-llm-a"]),
        ]
    )
    fig = kappa_matrix_figure(matrix, stage2_records())
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    meshes = [c for ax in panels for c in ax.collections if isinstance(c, QuadMesh)]
    assert [m.get_gid() for m in meshes] == ["kappa-final", "kappa-pilot"]  # final first
    final, pilot = (np.ma.filled(m.get_array(), np.nan).astype(float) for m in meshes)
    assert final.shape == (4, 4) and pilot.shape == (5, 5)
    for m in (final, pilot):
        assert np.isnan(np.diag(m)).all()
        np.testing.assert_allclose(m, m.T)
    assert final[0, 3] == pytest.approx(0.1 * 3 / 2)  # human 0 vs model 3: no bonus
    assert pilot[2, 3] == pytest.approx(0.1 * 5 / 2 + 0.05)  # two models
    panel = fig.axes[1]
    assert [t.get_text() for t in panel.get_yticklabels()] == [
        "Tal",
        "Lechen",
        "gpt-5.4",
        "gemma-4-31b-it",
        "qwen3.5-27b",
    ]
    blocks = [ln for ln in panel.get_lines() if ln.get_gid() == "block"]
    assert len(blocks) == 2  # one horizontal, one vertical line between humans and models
    assert {t.get_text() for t in panel.texts if t.get_gid() == "block-label"} == {
        "human raters",  # the neutral noun: the rule passes the dataset's (data.nouns)
        "models",
    }
    cells = [t.get_text() for t in panel.texts if t.get_gid() == "cell"]
    assert len(cells) == 5 * 4  # every defined cell: its kappa over its interval
    k = 0.1 * 5 / 2 + 0.05  # gpt-5.4 x gemma-4-31b-it
    assert f"{k:.2f}\n{k - 0.1:.2f}\u2013{k + 0.1:.2f}" in cells
    assert "mean, human raters with human raters: 0.43 [0.38, 0.48]" in fig.axes[0].get_xlabel()
    # the colour scale spans the values drawn (0.05 ... 0.4), not 0 to 1
    assert "colour scale runs from 0 to 0.4" in fig.study.caption
    assert fig.study.records == [
        "stage2.final.kappa.human_human",
        "stage2.final.kappa.human_model",
        "stage2.final.kappa.model_model",
    ]


def test_kappa_matrix_names_the_rater_left_out_of_the_group_means() -> None:
    matrix = kappa_long("final", ["h1", "h2"], ["m1", "m2", "smollm2-135m"])
    matrix["in_group_means"] = ~(
        (matrix["rater_a"] == "smollm2-135m") | (matrix["rater_b"] == "smollm2-135m")
    )
    records = {
        "stage2.final.f1_vs_majority.smollm2-135m": {
            "value": 0.1,
            "extra": {"caveat": "a near-random exercise model"},
        }
    }
    fig = kappa_matrix_figure(matrix, records)
    (panel,) = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert "smollm2-135m" not in [t.get_text() for t in panel.get_yticklabels()]
    note = " ".join(fig.get_supxlabel().split())
    assert note.startswith("Not drawn: smollm2-135m (final round)")
    assert "a near-random exercise model" in note and "a near-random exercise model" in (
        fig.study.caption
    )


def test_kappa_matrix_shows_rounds_where_people_and_models_meet() -> None:
    matrix = pd.concat(
        [
            kappa_long("final", [], ["m1", "m2"]),
            kappa_long("pilot", ["h1", "h2"], ["m1", "m2"]),
            kappa_long("pilot_graded", ["h1", "h2", "h3"], []),
        ]
    )
    fig = kappa_matrix_figure(matrix, {})
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["pilot round"]
    assert "one kind only (final, pilot_graded)" in fig.study.caption


def test_kappa_matrix_mirrors_one_sided_pairs_and_rejects_asymmetry() -> None:
    long = kappa_long("final", ["a", "b"], ["m"])
    one_sided = long[long["order_a"] < long["order_b"]]
    values, raters, kinds = matrix_of_round(one_sided, "final")
    assert raters == ["a", "b", "m"] and kinds == ["human", "human", "model"]
    np.testing.assert_allclose(values, values.T)
    bad = long.copy()
    bad.loc[bad.index[0], "kappa"] += 0.2
    with pytest.raises(FigureDataError, match="not symmetric"):
        matrix_of_round(bad, "final")


def test_kappa_matrix_placeholder_for_an_empty_table() -> None:
    empty = kappa_long("final", ["a"], ["m"]).iloc[0:0]
    assert_placeholder(kappa_matrix_figure(empty, {}), "no stage-2 round has two raters")
    with pytest.raises(FigureDataError, match=r"missing column\(s\) \['kappa'\]"):
        kappa_matrix_figure(empty.drop(columns="kappa"), {})


# ---------------------------------------------------------------------------------------------
# 4. precision / recall / F1


def test_relevance_prf_groups_baselines_models_and_classifier() -> None:
    records = stage2_records()
    fig = relevance_prf_figure(records)
    final, pilot = fig.axes
    assert final.get_title(loc="left") == "final round"
    assert pilot.get_title(loc="left") == "pilot round"
    assert final.get_ylabel() == "score against the\nmajority of human raters"
    names = [re.sub(r"\nn=[\d,]+$", "", t.get_text()) for t in final.get_xticklabels()]
    names = [n.replace("-\n", "-").replace("\n", " ") for n in names]
    assert names == ["bm25", "minilm-embedding", "gpt-5.4", "sim-llm-a", "trained classifier"]
    for metric in ("precision", "recall", "f1"):
        bars = with_gid(final, Rectangle, f"bar-{metric}")
        assert len(bars) == 5
        assert len(with_gid(pilot, Rectangle, f"bar-{metric}")) == 1
    f1 = [b.get_height() for b in with_gid(final, Rectangle, "bar-f1")]
    assert f1[-1] == pytest.approx(0.646)  # the classifier's record
    assert f1[2] == pytest.approx(records["stage2.final.f1_vs_majority.gpt-5.4"]["value"])
    assert len(ci_segments(final)) == 5 * 3 * 3  # 15 intervals with two caps each
    ceiling = [ln for ln in final.get_lines() if ln.get_gid() == "ceiling"]
    assert len(ceiling) == 1 and ceiling[0].get_ydata()[0] == pytest.approx(0.62)
    assert not [ln for ln in pilot.get_lines() if ln.get_gid() == "ceiling"]
    # the comparison with people: the model's F1 against the ceiling's own references, drawn
    # at its F1 bar (only models have it; the pilot has no ceiling)
    (diamonds,) = [ln for ln in final.get_lines() if ln.get_gid() == "f1-vs-rest"]
    assert list(diamonds.get_xdata()) == pytest.approx([2 + 0.45])
    assert list(diamonds.get_ydata()) == pytest.approx([0.58])
    assert not [ln for ln in pilot.get_lines() if ln.get_gid() == "f1-vs-rest"]
    assert len([ln for ln in final.get_lines() if ln.get_gid() == "kind-separator"]) == 2
    used = fig.study.records
    assert "stage2.classifier.final.f1" in used and "stage2.final.ceiling.f1_human_vs_rest" in used
    assert "stage2.classifier.final.auroc" not in used
    assert "stage2.classifier.final.reference.gpt-5.4.f1" not in used
    assert "stage2.final.kappa_vs_majority.gpt-5.4" not in used
    assert "stage2.final.vs_rest.f1.gpt-5.4" in used
    assert "stage2.final.vs_rest.gap_f1.gpt-5.4" not in used
    assert len(used) == 5 * 3 + 3 + 1 + 1


def test_relevance_prf_labels_item_counts_and_leaves_caveated_models_out() -> None:
    records = stage2_records()
    f1 = records["stage2.final.f1_vs_majority.gpt-5.4"]
    records["stage2.final.f1_vs_majority.gpt-5.4"] = {**f1, "n": 1234}
    for metric in ("precision", "recall", "f1"):
        records[f"stage2.final.{metric}_vs_majority.smollm2-135m"] = {
            "value": 0.5,
            "extra": {"caveat": "exercise only"},
        }
    fig = relevance_prf_figure(records)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "gpt-5.4\nn=1,234" in labels
    assert not any("smollm2" in label for label in labels)
    assert fig.get_supxlabel() == "Not drawn: smollm2-135m (exercise only)"
    assert "smollm2" not in " ".join(fig.study.records)
    assert "The item sets differ" in fig.study.caption


def test_relevance_prf_placeholder_without_records() -> None:
    assert_placeholder(
        relevance_prf_figure({"stage2.final.kappa.human_human": {"value": 0.4}}), "no stage-2 rater"
    )


# ---------------------------------------------------------------------------------------------
# 5-7. stage 3


def test_ratings_by_generator_orders_by_mean_and_draws_record_cis() -> None:
    records = stage3_records()
    fig = ratings_by_generator_figure(records)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["sim-llm-d", "gpt-5.4", "sim-llm-c", "sim-llm-b", "all generators"]
    points = with_gid(ax, PathCollection, "means")[0].get_offsets()
    assert list(points[:, 0]) == [3.4, 3.2, 3.05, 2.8, 3.1]
    neutral = [ln for ln in ax.get_lines() if ln.get_gid() == "neutral"]
    assert neutral[0].get_xdata()[0] == 3.0
    segs = ci_segments(ax)[::3]
    expected = [(v - 0.1, v + 0.12) for v in sorted(GENERATORS.values(), reverse=True)]
    np.testing.assert_allclose([(s[0][0], s[1][0]) for s in segs], [*expected, (3.02, 3.18)])
    assert "stage3.judge_mean_rating.gpt-5.4" not in fig.study.records
    assert len(fig.study.records) == 5


def test_ratings_by_generator_placeholder_without_human_ratings() -> None:
    fig = ratings_by_generator_figure({"stage3.mention_rate.gpt-5.4": {"value": 0.2}})
    assert_placeholder(fig, "no stage-3 preference ratings by the human raters")
    simulated = ratings_by_generator_figure({}, nouns=dataset_nouns("bundled"))
    text = " ".join(t.get_text() for t in simulated.axes[0].texts)
    assert "Mean rating by the simulated raters per generator" in text
    assert "by the simulated raters (no records" in simulated.study.reason
    assert "human" not in text


def test_mention_effect_puts_people_first() -> None:
    fig = mention_effect_figure(stage3_records())
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["Human raters", "sim-llm-d", "gpt-5.4", "sim-llm-c", "sim-llm-b"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["human raters", "models as judges"]
    assert len(with_gid(ax, Rectangle, "delta-human")) == 1
    judges = with_gid(ax, Rectangle, "delta-judge")
    assert [b.get_width() for b in judges] == [0.7, 0.5, 0.3, -0.39]
    assert len(ci_segments(ax)) == 5 * 3
    assert "stage3.mention_delta.human" in fig.study.records


def test_mention_effect_judges_only_and_placeholder() -> None:
    records = {k: v for k, v in stage3_records().items() if k != "stage3.mention_delta.human"}
    fig = mention_effect_figure(records)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][0] == "sim-llm-d"
    assert "judges only" in fig.study.caption
    assert_placeholder(mention_effect_figure({}), "no mention-effect records")


def test_mention_habit_vs_bias_scatters_models_with_the_spearman_record() -> None:
    fig = mention_habit_vs_bias_figure(stage3_records())
    ax = fig.axes[0]
    offsets = with_gid(ax, PathCollection, "models")[0].get_offsets()
    models = sorted(GENERATORS)
    np.testing.assert_allclose(offsets[:, 0], [MENTION_RATE[m] for m in models])
    np.testing.assert_allclose(offsets[:, 1], [MENTION_DELTA[m] for m in models])
    assert len(ci_segments(ax)) == 2 * len(models)  # x and y interval per model, no caps
    spearman = [t.get_text() for t in ax.texts if t.get_gid() == "spearman"]
    assert spearman == ["Spearman ρ = 1.00\nn = 4 models"]
    # a rank correlation draws no fitted line: only the reference lines (zero, people)
    assert sorted(ln.get_gid() for ln in ax.get_lines()) == ["human", "zero"]
    assert not with_gid(ax, PathCollection, "excluded")
    assert "stage3.mention_habit_vs_bias.spearman" in fig.study.records
    assert "stage3.mention_delta.human" in fig.study.records


def test_mention_habit_vs_bias_draws_caveated_models_hollow_outside_the_statistic() -> None:
    records = stage3_records()
    records["stage3.mention_habit_vs_bias.spearman"] = rec(
        0.9, -0.17, 1.0, n=3, extra={"excluded_models": ["sim-llm-b"], "p_value": 0.083}
    )
    records["stage3.mention_rate.sim-llm-d"]["extra"] = {"caveat": "near random"}
    fig = mention_habit_vs_bias_figure(records)
    ax = fig.axes[0]
    filled = with_gid(ax, PathCollection, "models")[0].get_offsets()
    hollow = with_gid(ax, PathCollection, "excluded")[0].get_offsets()
    np.testing.assert_allclose(filled[:, 0], [MENTION_RATE["gpt-5.4"], MENTION_RATE["sim-llm-c"]])
    np.testing.assert_allclose(hollow[:, 0], [MENTION_RATE["sim-llm-b"], MENTION_RATE["sim-llm-d"]])
    assert "(sim-llm-b, sim-llm-d) are left out of the correlation" in fig.study.caption
    spearman = [t.get_text() for t in ax.texts if t.get_gid() == "spearman"]
    assert spearman == ["Spearman ρ = 0.90 [-0.17, 1.00], p = 0.083\nn = 3 models"]


def test_mention_habit_vs_bias_without_spearman_and_placeholder() -> None:
    fig = mention_habit_vs_bias_figure(stage3_records(with_spearman=False))
    ax = fig.axes[0]
    assert not [t for t in ax.texts if t.get_gid() == "spearman"]
    assert sorted(ln.get_gid() for ln in ax.get_lines()) == ["human", "zero"]
    assert "not reported for this dataset" in fig.study.caption
    one = {k: v for k, v in stage3_records().items() if "gpt-5.4" in k}
    assert_placeholder(mention_habit_vs_bias_figure(one), "1 model with both")
