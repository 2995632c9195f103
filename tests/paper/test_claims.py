"""Claims are conditions on records: supported, refuted (stops the build) or not testable."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analysis import REPO_ROOT
from analysis.paper import claims as C
from analysis.paper.latex import breakable
from analysis.provenance import attach_provenance
from tests.paper.fake_records import records_by_rule


def numbers(**values: float) -> dict[str, dict]:
    return {k.replace("__", "."): {"value": v} for k, v in values.items()}


NEGATIVE = "That this holds is not supported on this dataset."
LOW = {"key": "k", "field": "ci_low", "op": ">", "value": 0}


def write_claims(tmp_path: Path, entries: list[dict]) -> Path:
    """``claims.yaml`` of ``entries``; each gets a negative sentence unless it sets one."""
    path = tmp_path / "claims.yaml"
    entries = [{"negative": NEGATIVE, **e} if "negative" not in e else e for e in entries]
    path.write_text(yaml.safe_dump({"claims": entries}), encoding="utf-8")
    return path


def lower_above(key: str, value: float) -> dict:
    """The condition "the interval of ``key`` lies above ``value``"."""
    return {"key": key, "field": "ci_low", "op": ">", "value": value}


def fixture_numbers(kind: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for rule, recs in records_by_rule(kind).items():
        out |= attach_provenance(recs, rule=rule, inputs=[])
    return out


def est(value: float, low: float, high: float, **extra: float) -> dict:
    return {"value": value, "ci_low": low, "ci_high": high, "extra": extra}


NUMS = {
    "stage2.final.over_selection.gpt": est(2.4, 2.1, 2.7, p_adjusted=0.01),
    "stage2.final.over_selection.gemma": est(2.0, 0.9, 3.1, p_adjusted=0.2),
    "stage2.final.over_selection.smollm2-135m": est(0.8, 0.5, 1.1),
    "stage2.final.recall_vs_majority.gpt": est(0.8, 0.75, 0.85),
    "stage2.final.precision_vs_majority.gpt": est(0.4, 0.35, 0.45),
    "stage2.final.recall_vs_majority.gemma": est(0.7, 0.6, 0.8),
    "stage2.final.precision_vs_majority.gemma": est(0.3, 0.2, 0.4),
    "stage2.final.kappa.model_model": {"value": 0.6, "ci_low": 0.5},
    "stage2.final.kappa.human_model": {"value": 0.3},
    # paired differences: one clear, one whose interval straddles zero
    "stage2.final.kappa_diff.model_model_minus_human_model": est(0.3, 0.25, 0.35),
    "stage2.final.kappa_diff.model_model_minus_human_human": est(0.02, -0.01, 0.05),
    # five models: a point estimate well above zero, an exact p above 0.05
    "stage3.mention_habit_vs_bias.spearman": est(0.9, -0.17, 1.0, p_value=0.083),
}


def verdict(cond: dict, nums: dict | None = None) -> str:
    C.validate_condition(cond, "test")
    return C.evaluate(cond, nums or NUMS).verdict


def test_leaf_comparisons_and_aggregates() -> None:
    over = "stage2.final.over_selection.*"
    excl = ["*smollm2*"]
    assert (
        verdict({"key": over, "exclude": excl, "aggregate": "mean", "op": ">", "value": 1.5})
        == C.SUPPORTED
    )
    assert (
        verdict(
            {"key": over, "exclude": excl, "aggregate": "mean", "op": "between", "value": [2, 3]}
        )
        == C.SUPPORTED
    )
    # without the exclusion the near-random model drags `all` down
    assert verdict({"key": over, "aggregate": "all", "op": ">", "value": 1.0}) == C.REFUTED
    assert verdict({"key": over, "aggregate": "any", "op": "<", "value": 1.0}) == C.SUPPORTED
    assert (
        verdict(
            {"key": "stage2.final.kappa.model_model", "field": "ci_low", "op": ">=", "value": 0.5}
        )
        == C.SUPPORTED
    )
    assert (
        verdict(
            {"key": over, "exclude": excl, "field": "extra.p_adjusted", "op": "<", "value": 0.05}
        )
        == C.REFUTED
    )


def test_directional_claims_are_judged_on_the_difference_interval() -> None:
    """A difference whose point estimate is positive but whose interval reaches zero does not
    support "more than"; one whose lower bound is above zero does."""

    def above_zero(key: str) -> dict:
        return {"key": key, "field": "ci_low", "op": ">", "value": 0.0}

    clear = "stage2.final.kappa_diff.model_model_minus_human_model"
    straddles = "stage2.final.kappa_diff.model_model_minus_human_human"
    assert verdict(above_zero(clear)) == C.SUPPORTED
    assert NUMS[straddles]["value"] > 0  # the point value alone would have said yes
    assert verdict(above_zero(straddles)) == C.REFUTED
    out = C.evaluate(above_zero(straddles), NUMS)
    assert out.evidence == [f"fails: {straddles} lower CI bound = -0.01 > 0"]
    # an upper bound below the null: the other direction
    below = {"key": straddles, "field": "ci_high", "op": "<", "value": 0.1}
    assert verdict(below) == C.SUPPORTED


def test_interval_conditions_over_globs() -> None:
    over = "stage2.final.over_selection.*"
    every = {"key": over, "exclude": ["*smollm2*"], "field": "ci_low", "op": ">", "value": 1.0}
    # gemma's ratio is 2.0 but its interval reaches below 1: not every model over-selects
    assert verdict(dict(every, aggregate="all")) == C.REFUTED
    assert verdict(dict(every, aggregate="any")) == C.SUPPORTED
    out = C.evaluate(dict(every, aggregate="all"), NUMS)
    assert "fails: stage2.final.over_selection.gemma lower CI bound = 0.9 > 1" in out.evidence
    assert "holds: stage2.final.over_selection.gpt lower CI bound = 2.1 > 1" in out.evidence
    # a record without an interval cannot be judged on one: not testable, never a pass
    no_ci = {"key": "stage2.final.kappa.human_model", "field": "ci_low", "op": ">", "value": 0}
    assert verdict(no_ci) == C.UNTESTABLE


def test_a_small_sample_correlation_is_judged_on_its_exact_p() -> None:
    key = "stage3.mention_habit_vs_bias.spearman"
    claim = {
        "all": [
            {"key": key, "op": ">", "value": 0.0},
            {"key": key, "field": "extra.p_value", "op": "<", "value": 0.05},
        ]
    }
    assert verdict(claim) == C.REFUTED  # rho = 0.9, but p = 0.083
    out = C.evaluate(claim, NUMS)
    assert f"fails: {key} p-value = 0.083 < 0.05" in out.evidence
    exact = dict(NUMS, **{key: est(1.0, 0.2, 1.0, p_value=0.0167)})
    assert C.evaluate(claim, exact).verdict == C.SUPPORTED


def five_models(rho: float, p: float) -> dict:
    """The habit-vs-bias record of five models, listing the exact test's outcomes."""
    from analysis.stats.intervals import exact_permutation_attainable

    record = est(rho, -0.17, 1.0, p_value=p)
    record["n"], record["unit"] = 5, "models"
    record["extra"]["statistic"] = "rho"
    record["extra"]["attainable"] = exact_permutation_attainable(range(5), range(5))
    return record


def test_a_test_that_cannot_reach_its_level_is_inconclusive_not_refuted() -> None:
    """With five models only rho = +/-1 reaches p < 0.05: rho = 0.9 (p = 0.083) misses the
    level because the test cannot do better short of a perfect ordering, so the claim is
    inconclusive; a claim that points the wrong way is still refuted, and a test with finer
    resolution (six models) that misses its level refutes."""
    key = "stage3.mention_habit_vs_bias.spearman"
    claim = {
        "all": [
            {"key": key, "op": ">", "value": 0.0},
            {"key": key, "field": "extra.p_value", "op": "<", "value": 0.05},
        ]
    }
    out = C.evaluate(claim, {key: five_models(0.9, 0.083)})
    assert out.verdict == C.INCONCLUSIVE
    assert out.why_inconclusive == "with 5 models only rho = 1 reaches p < 0.05"
    assert C.evaluate(claim, {key: five_models(1.0, 2 / 120)}).verdict == C.SUPPORTED
    assert C.evaluate(claim, {key: five_models(-0.9, 0.083)}).verdict == C.REFUTED
    six = five_models(0.7, 0.19)
    from analysis.stats.intervals import exact_permutation_attainable

    six["n"], six["extra"]["attainable"] = 6, exact_permutation_attainable(range(6), range(6))
    assert C.evaluate(claim, {key: six}).verdict == C.REFUTED
    # Kleene: a refuted branch outweighs an inconclusive one under all, not under any
    both = {key: five_models(0.9, 0.083), "k": est(0.1, -0.1, 0.3)}
    p_leaf = claim["all"][1]
    assert C.evaluate({"all": [p_leaf, lower_above("k", 0.0)]}, both).verdict == C.REFUTED
    assert C.evaluate({"any": [p_leaf, lower_above("k", 0.0)]}, both).verdict == C.INCONCLUSIVE
    assert C.evaluate({"not": p_leaf}, both).verdict == C.INCONCLUSIVE
    # an inconclusive claim never stops a strict build
    claims = [C.Claim("habit", "Habit goes with bias.", claim, NEGATIVE)]
    C.check(C.evaluate_claims(claims, both), "strict")


def test_non_overlapping_intervals_where_no_difference_record_exists() -> None:
    paired = {
        "key": "stage2.final.recall_vs_majority.*",
        "field": "ci_low",
        "op": ">",
        "other": "stage2.final.precision_vs_majority.*",
        "other_field": "ci_high",
    }
    out = C.evaluate(paired, NUMS)
    assert out.verdict == C.SUPPORTED
    assert "stage2.final.precision_vs_majority.gemma" in out.keys
    overlapping = dict(NUMS, **{"stage2.final.precision_vs_majority.gemma": est(0.55, 0.45, 0.65)})
    assert C.evaluate(paired, overlapping).verdict == C.REFUTED


def test_absent_keys_make_a_claim_not_testable() -> None:
    assert verdict({"key": "stage3.no_better_share", "op": ">", "value": 0.4}) == C.UNTESTABLE
    assert verdict({"key": "stage3.judge_minus_human.*", "op": ">", "value": 0}) == C.UNTESTABLE
    assert (
        verdict(
            {
                "key": "stage2.final.kappa.human_model",
                "field": "extra.p_adjusted",
                "op": "<",
                "value": 1,
            }
        )
        == C.UNTESTABLE
    )
    # Kleene logic: an untestable branch does not hide a refuted one, nor fake a supported one
    refuted = {"key": "stage2.final.kappa.human_model", "op": ">", "value": 0.9}
    untestable = {"key": "stage3.no_better_share", "op": ">", "value": 0.4}
    supported = {"key": "stage2.final.kappa.human_model", "op": ">", "value": 0}
    assert verdict({"all": [refuted, untestable]}) == C.REFUTED
    assert verdict({"all": [supported, untestable]}) == C.UNTESTABLE
    assert verdict({"any": [supported, untestable]}) == C.SUPPORTED
    assert verdict({"not": refuted}) == C.SUPPORTED


def test_a_refuted_claim_stops_the_build_naming_claim_keys_and_values(tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        [
            {
                "id": "fine",
                "statement": "Models agree.",
                "condition": lower_above("stage2.final.kappa.model_model", 0.4),
            },
            {
                "id": "too_strong",
                "statement": "Over-selection is clear for every model.",
                "condition": dict(
                    lower_above("stage2.final.over_selection.*", 1.0), exclude=["*smollm2*"]
                ),
            },
            {
                "id": "stage3_gap",
                "statement": "Needs stage 3.",
                "condition": lower_above("stage3.no_better_share", 0.4),
            },
        ],
    )
    results = C.evaluate_claims(C.load_claims(path), NUMS)
    assert [r.verdict for r in results] == [C.SUPPORTED, C.REFUTED, C.UNTESTABLE]
    with pytest.raises(C.ClaimNotSupported) as err:
        C.check(results, "strict")
    message = str(err.value)
    assert "too_strong" in message and "stage2.final.over_selection.gemma" in message
    assert "lower CI bound = 0.9 > 1" in message
    assert "fine" not in message.split("paper.claims_mode")[0]
    assert "paper.claims_mode=report" in message
    C.check(results, "report")  # report mode only reports


def test_mode_comes_from_paper_config() -> None:
    assert C.resolve_mode("strict") == "strict"
    assert C.resolve_mode("report") == "report"
    with pytest.raises(C.ClaimError, match="claims_mode"):
        C.resolve_mode("ignore")


RHO = "stage3.mention_habit_vs_bias.spearman"


def test_the_appendix_and_verdict_macros(tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        [
            {
                "id": "ok_claim",
                "statement": "Models agree 50% of the time.",
                "condition": lower_above("stage2.final.kappa.model_model", 0.4),
            },
            {
                "id": "untested",
                "statement": "Needs stage 3.",
                "condition": lower_above("stage3.no_better_share", 0.4),
            },
            {
                "id": "judged_on_p",
                "statement": "Habit goes with bias.",
                "negative": "That habit goes with bias is not supported on this dataset.",
                "condition": {
                    "key": "stage3.mention_habit_vs_bias.spearman",
                    "field": "extra.p_value",
                    "op": "<",
                    "value": 0.05,
                },
            },
        ],
    )
    results = C.evaluate_claims(C.load_claims(path), NUMS)
    table = C.render_claims_tex(results, "strict", NUMS)
    assert r"\hypertarget{claim:ok_claim}" in table
    assert r"50\% of the time" in table
    assert r"\rc{stage2.final.kappa.model_model}" in table  # values link to provenance rows
    assert "not testable on this dataset" in table
    # a claim judged on a p-value shows the record's value and interval as its values; the
    # p-value appears only in the check, named as one
    # the claim's verdict and sentence head its rows; its condition, values and checks follow,
    # each on a row of its own; the negative sentence is the text's, not repeated here
    lines = table.splitlines()
    at = next(i for i, line in enumerate(lines) if "claim:judged_on_p" in line)
    assert r"\textbf{not supported}" in lines[at] and "Habit goes with bias." in lines[at]
    condition, values, checks = lines[at + 1 : at + 4]
    assert "$p$-value of" in condition and "spearman} \\textless{} 0.05" in condition
    assert values.startswith(r"\quad values: ")
    assert values.endswith(r"\rcint{stage3.mention_habit_vs_bias.spearman} \\*")
    assert "0.083" not in values
    assert checks.startswith(r"\quad checked: ") and "p-value = 0.083" in checks
    assert "That habit goes with bias is not supported" not in table
    # a check of a bound the values row prints with its interval is left to the audit site;
    # one whose record the row prints without an interval stays
    bounded = C.ClaimResult(
        C.Claim("bounded", "Rho is above minus one.", lower_above(RHO, -1.0)),
        C.evaluate(lower_above(RHO, -1.0), NUMS),
    )
    rows = C.render_claims_tex([bounded], "strict", NUMS).splitlines()
    at = next(i for i, line in enumerate(rows) if "claim:bounded" in line)
    assert rows[at + 2] == rf"\quad values: {breakable(RHO)} = \rcint{{{RHO}}} \\"
    assert rows[at + 3] == r"\end{longtable}"
    at = next(i for i, line in enumerate(lines) if "claim:ok_claim" in line)
    assert r"\rc{stage2.final.kappa.model_model}" in lines[at + 2]
    assert "lower CI bound = " in lines[at + 3]
    assert "no record matches" in table  # a check that shows no value stays
    verdicts = C.render_verdicts_tex(results, "strict")
    inconclusive = dict(NUMS, **{"stage3.mention_habit_vs_bias.spearman": five_models(0.9, 0.083)})
    again = C.evaluate_claims(C.load_claims(path), inconclusive)
    macros = C.render_verdicts_tex(again, "strict")
    assert r"\csname rc@claim@judged_on_p\endcsname{inconclusive}" in macros
    assert r"\csname rc@claimwhy@judged_on_p\endcsname{with 5 models only rho = 1" in macros
    assert r"\textbf{inconclusive} (with 5 models" in C.render_claims_tex(
        again, "strict", inconclusive
    )
    assert r"\csname rc@claim@ok_claim\endcsname{supported}" in verdicts
    assert r"\csname rc@claim@untested\endcsname{untestable}" in verdicts
    assert r"\csname rc@claim@judged_on_p\endcsname{refuted}" in verdicts
    assert (
        r"\csname rc@claimneg@judged_on_p\endcsname{That habit goes with bias is not "
        "supported on this dataset.}" in verdicts
    )
    assert r"\newcommand\ClaimsMode{strict}" in verdicts
    assert "built in strict mode" in verdicts
    assert "built in report mode" in C.render_verdicts_tex(results, "report")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"id": "x", "statement": "s", "condition": {"key": "k", "op": "=~", "value": 1}}, "op"),
        (
            {"id": "x", "statement": "s", "condition": {"key": "k", "op": ">", "value": "1+1"}},
            "value",
        ),
        (
            {
                "id": "x",
                "statement": "s",
                "condition": {"key": "k", "op": ">", "value": 1, "other": "j"},
            },
            "exactly one",
        ),
        (
            {
                "id": "x",
                "statement": "s",
                "condition": {"key": "k", "op": ">", "value": 1, "eval": "x"},
            },
            "unknown field",
        ),
        (
            {
                "id": "x",
                "statement": "s",
                "condition": {"key": "k", "op": "between", "value": [3, 2]},
            },
            "between",
        ),
        (
            {"id": "Bad-Id", "statement": "s", "condition": {"key": "k", "op": ">", "value": 1}},
            "id",
        ),
        ({"id": "x", "statement": "s", "condition": {"all": []}}, "non-empty"),
        (
            {
                "id": "x",
                "statement": "s",
                "condition": {"key": "k", "field": "__class__", "op": ">", "value": 1},
            },
            "field",
        ),
        ({"id": "x", "statement": "s", "negative": "", "condition": LOW}, "negative"),
        (
            {"id": "x", "statement": "s", "negative": "It is false.", "condition": LOW},
            "not supported on this dataset",
        ),
        (
            {"id": "x", "statement": "s", "condition": {"key": "k", "op": ">", "value": 1}},
            "not on point values",
        ),
        (
            {"id": "x", "statement": "s", "condition": {"key": "k", "op": ">", "other": "j"}},
            "not two point values",
        ),
        (
            {
                "id": "x",
                "statement": "s",
                "condition": {
                    "key": "k",
                    "field": "ci_low",
                    "op": ">",
                    "other": "j",
                    "other_field": "ci_low",
                },
            },
            "not two point values",
        ),
        (
            {"id": "x", "statement": "s", "condition": {**LOW, "key": "k.*", "aggregate": "mean"}},
            "no interval",
        ),
    ],
)
def test_malformed_claims_name_file_claim_and_field(
    tmp_path: Path, entry: dict, message: str
) -> None:
    path = write_claims(tmp_path, [entry])
    with pytest.raises(C.ClaimError, match=message) as err:
        C.load_claims(path)
    assert str(path) in str(err.value)


def test_the_papers_claims_hold_on_the_full_fixture_and_are_untestable_where_data_lack() -> None:
    claims = C.load_claims(REPO_ROOT / "paper" / "claims.yaml")
    assert len(claims) >= 5
    full = {r.claim.id: r.verdict for r in C.evaluate_claims(claims, fixture_numbers("full"))}
    assert set(full.values()) == {C.SUPPORTED}, full
    real = {r.claim.id: r.verdict for r in C.evaluate_claims(claims, fixture_numbers("real_like"))}
    assert real["judges_more_favourable"] == C.UNTESTABLE
    assert real["personalization_often_no_better"] == C.UNTESTABLE
    assert real["models_agree_with_models"] == C.UNTESTABLE  # no final individual human votes
    assert real["llm_over_selection"] == C.SUPPORTED


def test_every_claim_id_in_the_text_is_declared_and_every_declared_claim_is_used() -> None:
    import re

    declared = {c.id for c in C.load_claims(REPO_ROOT / "paper" / "claims.yaml")}
    text = "".join(
        p.read_text() for p in (REPO_ROOT / "paper").rglob("*.tex") if "generated" not in p.parts
    )
    used = set(re.findall(r"\\Claim\{([^}]+)\}", text))
    assert used <= declared, used - declared
    assert declared <= used, f"claims never stated in the text: {declared - used}"


def test_the_papers_claims_name_who_they_are_about_in_the_datasets_words(tmp_path: Path) -> None:
    import re

    from tests.settings_defaults import dataset_nouns

    bundled = dataset_nouns("bundled")
    real = dataset_nouns("annotation_tool")
    path = REPO_ROOT / "paper" / "claims.yaml"
    human_words = re.compile(r"\b(?:people|human|person|language models?|WildChat)\b", re.I)
    for claim in C.load_claims(path, bundled):
        for sentence in (claim.statement, claim.negative):
            assert "{" not in sentence, (claim.id, sentence)
            # a simulated build's sentence never says its raters or models are real
            assert not human_words.search(sentence), (claim.id, sentence)
    agree = {c.id: c for c in C.load_claims(path, real)}["models_agree_with_models"]
    assert agree.negative == (
        "That the language models agree with each other on relevance more than with the people "
        "is not supported on this dataset."
    )
    # a placeholder that names no noun is an error naming file, claim and field
    robots = {"id": "x", "statement": "The {robots} agree.", "condition": LOW}
    odd = write_claims(tmp_path, [robots])
    with pytest.raises(C.ClaimError, match=r"claim 'x', statement: unknown placeholder.*robots"):
        C.load_claims(odd)
