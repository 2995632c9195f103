"""Generated tables, dataset sizes and call usage: every cell a record, rows found from keys."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.llm.store import iter_store
from analysis.paper.call_usage import shard_counts, usage_records
from analysis.paper.tables import TABLE_NAMES, TABLES, key_words, render_tables
from analysis.provenance import attach_provenance
from tests.paper.fake_records import CAVEAT, records_by_rule
from tests.settings_defaults import dataset_nouns

#: the level a statistics rule writes into every record with an interval
CI95 = {"ci_level": 0.95}


def numbers_of(kind: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for rule, recs in records_by_rule(kind).items():
        out |= attach_provenance(recs, rule=rule, inputs=[])
    return out


def test_every_declared_table_is_rendered_with_booktabs() -> None:
    tables = render_tables(numbers_of("full"))
    assert set(tables) == set(TABLE_NAMES)
    for name in ("stage2_models", "stage2_agreement", "stage3_judges", "dataset_sizes"):
        assert r"\toprule" in tables[name] and r"\bottomrule" in tables[name], name


def test_rows_are_discovered_per_round_and_cells_link_to_records() -> None:
    tex = render_tables(numbers_of("full"))["stage2_models"]
    assert r"\emph{final round}" in tex and r"\emph{pilot round}" in tex
    # a wide table: each interval under its value (\rcstack), every column with its interval
    assert r"\rcstack{stage2.final.over_selection.sim-llm-alpha}" in tex
    assert r"\rcstack{stage2.final.relevance_rate.human_majority}" in tex
    assert r"\rcstack{stage2.final.precision_vs_majority.sim-llm-alpha}" in tex
    assert r"\rcstack{stage2.final.recall_vs_majority.sim-llm-alpha}" in tex
    # against the majority of all humans: no ceiling row (it has another reference)
    assert "ceiling" not in tex and "study's definition" in tex
    # the ceiling and the models on the same leave-one-out references, with paired gaps
    vs_rest = render_tables(numbers_of("full"))["stage2_vs_rest"]
    ceiling_row = next(ln for ln in vs_rest.splitlines() if ln.startswith("human raters: the"))
    assert r"\rcstack{stage2.final.ceiling.f1_human_vs_rest}" in ceiling_row
    assert r"\rcstack{stage2.final.ceiling.kappa_human_vs_rest}" in ceiling_row
    assert ceiling_row.count("--") == 2
    assert r"\rcstack{stage2.final.vs_rest.gap_kappa.sim-llm-alpha}" in vs_rest
    assert r"\rcstack{stage2.final.vs_rest.f1.sim-llm-alpha}" in vs_rest
    assert "Brackets: 95\\% confidence intervals" in tex


def test_the_exercise_model_leaves_every_table_for_its_own() -> None:
    """Rows of a model whose records carry a caveat (stages.caveats) are in one appendix table,
    with the caveat, and in no other (issue 36: SmolLM2 rows out of the main tables)."""
    tables = render_tables(numbers_of("full"))
    for name, tex in tables.items():
        if name not in ("exercise_model", "call_usage", "parse_failures", "present"):
            assert "smollm2" not in tex, name
    exercise = tables["exercise_model"]
    assert r"\rcint{stage2.final.over_selection.smollm2-135m}" in exercise
    assert CAVEAT in exercise
    assert "sim-llm-alpha" not in exercise


def test_tables_name_the_raters_with_the_datasets_nouns() -> None:
    simulated = dataset_nouns("bundled")
    tables = render_tables(numbers_of("full"), simulated=True, nouns=simulated)
    assert "majority of simulated raters &" in tables["stage2_models"]
    assert "simulated raters: the ceiling &" in tables["stage2_vs_rest"]
    assert "the simulated raters" in tables["stage3_models"]  # a column header
    for name, tex in tables.items():
        assert "people" not in tex.replace("real people", ""), name
        assert "Simulated data" in tex or name in (
            "present",
            "scorecard",
            "data_support",
            "release_support",
        ), name


def test_missing_cells_are_dashes_and_empty_tables_say_so() -> None:
    real = render_tables(numbers_of("real_like"))
    assert "No records for this table in this dataset." in real["stage3_judges"]
    human_majority_row = next(
        line for line in real["stage2_models"].splitlines() if line.startswith("majority of")
    )
    assert human_majority_row.count("--") == 5


def test_adjusted_p_values_come_from_the_record_extra() -> None:
    tex = render_tables(numbers_of("full"))["stage3_judges"]
    assert r"\rclink{stage3.judge_minus_human.sim-judge-alpha}{\ensuremath{<}0.001}" in tex


def test_parse_failures_and_call_usage() -> None:
    nums = numbers_of("full")
    tables = render_tables(nums, usage_note="No model calls: the call store data/calls is empty.")
    assert r"\rc{parse_failures.stage2_relevance.smollm2-135m}" in tables["parse_failures"]
    assert "3.0\\%" in tables["parse_failures"]  # failure_rate from the record's extra
    assert "No model calls: the call store data/calls is empty." in tables["call_usage"]
    nums["calls.stage2_relevance.smollm2-135m.calls"] = {"value": 3, "display": "3"}
    tex = render_tables(nums)["call_usage"]
    assert r"\emph{stage 2: relevance}" in tex
    assert r"\rc{calls.stage2_relevance.smollm2-135m.calls}" in tex


def test_intervention_tables_are_split_by_stage_with_word_labels() -> None:
    nums = numbers_of("full")
    tables = render_tables(nums)
    assert r"\rcint{stage1.verifier.auroc}" in tables["interventions_verifier"]
    assert r"\rcint{stage1.verifier.acceptance_kept}" in tables["interventions_verifier_kept"]
    assert r"\rcstack{stage2.classifier.final.f1}" in tables["interventions_classifier"]
    assert r"\rcint{stage3.reward_model.pointwise.spearman}" in tables["interventions_reward"]
    assert (
        r"\rcint{stage3.controls.position_consistency.sim-judge-alpha}" in tables["stage3_position"]
    )
    assert "trained verifier &" in tables["interventions_verifier"]
    assert "trained classifier &" in tables["interventions_classifier"]
    assert "pointwise reward model &" in tables["interventions_reward"]
    for name in ("interventions_verifier", "interventions_classifier", "interventions_reward"):
        assert " / " not in tables[name], name  # labels are words, not key fragments


def test_advantage_words_follow_the_interval_of_the_difference() -> None:
    nums = numbers_of("full")
    prefix = "stage2.classifier.final"
    for model, (low, high), word in (
        ("m-above", (0.01, 0.2), "yes"),
        ("m-zero", (-0.05, 0.2), "no"),
        ("m-below", (-0.2, -0.01), "no, lower"),
    ):
        nums[f"{prefix}.reference.{model}.f1"] = {
            "value": 0.4,
            "ci_low": 0.3,
            "ci_high": 0.5,
            **CI95,
        }
        nums[f"{prefix}.f1_minus_zero_shot.{model}"] = {
            "value": (low + high) / 2,
            "ci_low": low,
            "ci_high": high,
            **CI95,
        }
        row = next(
            line
            for line in TABLES["interventions_classifier"].render(nums).splitlines()
            if line.startswith(model)
        )
        # a stacked table: a little space after each two-line row
        assert row.removesuffix(r"\addlinespace[1pt]").endswith(f"& {word} \\\\"), row
    nums["stage1.verifier.minus_zero_shot.m.auroc"] = {
        "value": 0.2,
        "ci_low": 0.1,
        "ci_high": 0.3,
        **CI95,
    }
    nums["stage1.verifier.minus_zero_shot.m.kappa"] = {
        "value": 0.1,
        "ci_low": -0.1,
        "ci_high": 0.3,
        **CI95,
    }
    nums["stage1.verifier.zero_shot_auroc.m"] = {
        "value": 0.5,
        "ci_low": 0.4,
        "ci_high": 0.6,
        **CI95,
    }
    row = next(
        line
        for line in TABLES["interventions_verifier"].render(nums).splitlines()
        if line.startswith("m &")
    )
    assert row.endswith("& AUROC only \\\\"), row


def test_labels_are_words_not_key_fragments() -> None:
    assert key_words("final.reference.sim-llm-a.f1") == "final round, zero-shot, sim-llm-a, F1"
    assert key_words("judge.gpt-5.4.kendall") == r"model judge, gpt-5.4, Kendall \ensuremath{\tau}"
    assert key_words("controls.position_consistency.x") == "controls, position consistency, x"
    for name, tex in render_tables(numbers_of("full")).items():
        rows = [ln.split(" & ")[0] for ln in tex.splitlines() if " & " in ln and "\\rc" in ln]
        assert not [r for r in rows if " / " in r], (name, rows)  # no "final / reference / ..."


def test_call_usage_records_per_stage_and_model(tmp_path: Path) -> None:
    store = tmp_path / "calls"
    assert usage_records(store).note.startswith("No model calls")
    shard = store / "stage2_relevance" / "smollm2-135m" / "000.jsonl"
    shard.parent.mkdir(parents=True)
    lines = [
        {"key": f"k{i}", "usage": {"prompt_tokens": 10, "completion_tokens": 2}, "cost_usd": 0.5}
        for i in range(2)
    ]
    shard.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"torn', encoding="utf-8")
    assert [path for _, _, path in iter_store(store)] == [shard]
    usage = usage_records(store)
    values = {r.key: r.value for r in usage.records}
    assert values["calls.stage2_relevance.smollm2-135m.calls"] == 2
    assert values["calls.stage2_relevance.smollm2-135m.prompt_tokens"] == 20
    assert values["calls.stage2_relevance.smollm2-135m.cost_usd"] == 1.0
    assert list(usage.shards) == [("stage2_relevance", "smollm2-135m")]
    # a build counts only the calls it asks: the store keeps other worlds' calls too
    asked = usage_records(store, asked={"k1", "k-of-nothing-stored"})
    values = {r.key: r.value for r in asked.records}
    assert values["calls.stage2_relevance.smollm2-135m.calls"] == 1
    assert values["calls.stage2_relevance.smollm2-135m.cost_usd"] == 0.5
    assert usage_records(store, asked=set()).note == (
        "No model calls are in the call store for this build."
    )
    # the torn last line of a killed run is not a call
    assert shard_counts([str(shard)]) == {str(shard): 2}
