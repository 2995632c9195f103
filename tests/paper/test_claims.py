"""Claims are conditions on records: supported, refuted (stops the build) or not testable."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analysis import REPO_ROOT
from analysis.paper import claims as C
from analysis.provenance import attach_provenance
from tests.paper.fake_records import records_by_rule


def numbers(**values: float) -> dict[str, dict]:
    return {k.replace("__", "."): {"value": v} for k, v in values.items()}


def write_claims(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": entries}), encoding="utf-8")
    return path


def fixture_numbers(kind: str) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for rule, recs in records_by_rule(kind).items():
        out |= attach_provenance(recs, rule=rule, inputs=[])
    return out


NUMS = {
    "stage2.final.over_selection.gpt": {"value": 2.4, "extra": {"p_adjusted": 0.01}},
    "stage2.final.over_selection.gemma": {"value": 2.0, "extra": {"p_adjusted": 0.2}},
    "stage2.final.over_selection.smollm2-135m": {"value": 0.8},
    "stage2.final.recall_vs_majority.gpt": {"value": 0.8},
    "stage2.final.precision_vs_majority.gpt": {"value": 0.4},
    "stage2.final.recall_vs_majority.gemma": {"value": 0.7},
    "stage2.final.precision_vs_majority.gemma": {"value": 0.3},
    "stage2.final.kappa.model_model": {"value": 0.6, "ci_low": 0.5},
    "stage2.final.kappa.human_model": {"value": 0.3},
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


def test_key_against_key_and_paired_globs() -> None:
    assert (
        verdict(
            {
                "key": "stage2.final.kappa.human_model",
                "op": "<",
                "other": "stage2.final.kappa.model_model",
            }
        )
        == C.SUPPORTED
    )
    paired = {
        "key": "stage2.final.recall_vs_majority.*",
        "op": ">",
        "other": "stage2.final.precision_vs_majority.*",
    }
    out = C.evaluate(paired, NUMS)
    assert out.verdict == C.SUPPORTED
    assert "stage2.final.precision_vs_majority.gemma" in out.keys
    flipped = dict(NUMS, **{"stage2.final.precision_vs_majority.gemma": {"value": 0.9}})
    assert C.evaluate(paired, flipped).verdict == C.REFUTED


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
                "condition": {"key": "stage2.final.kappa.model_model", "op": ">", "value": 0.5},
            },
            {
                "id": "too_strong",
                "statement": "Humans and models agree strongly.",
                "condition": {"key": "stage2.final.kappa.human_model", "op": ">", "value": 0.8},
            },
            {
                "id": "stage3_gap",
                "statement": "Needs stage 3.",
                "condition": {"key": "stage3.no_better_share", "op": ">", "value": 0.4},
            },
        ],
    )
    results = C.evaluate_claims(C.load_claims(path), NUMS)
    assert [r.verdict for r in results] == [C.SUPPORTED, C.REFUTED, C.UNTESTABLE]
    with pytest.raises(C.ClaimNotSupported) as err:
        C.check(results, "strict")
    message = str(err.value)
    assert "too_strong" in message and "stage2.final.kappa.human_model" in message
    assert "0.3" in message and "> 0.8" in message
    assert "fine" not in message.split("paper.claims_mode")[0]
    assert "paper.claims_mode=report" in message
    C.check(results, "report")  # report mode only reports


def test_mode_comes_from_paper_config() -> None:
    assert C.resolve_mode({"paper.claims_mode": "strict"}) == "strict"
    assert C.resolve_mode({"paper.claims_mode": "report"}) == "report"
    with pytest.raises(C.ClaimError, match="claims_mode"):
        C.resolve_mode({"paper.claims_mode": "ignore"})


def test_the_appendix_and_verdict_macros(tmp_path: Path) -> None:
    path = write_claims(
        tmp_path,
        [
            {
                "id": "ok_claim",
                "statement": "Models agree 50% of the time.",
                "condition": {"key": "stage2.final.kappa.model_model", "op": ">", "value": 0.5},
            },
            {
                "id": "untested",
                "statement": "Needs stage 3.",
                "condition": {"key": "stage3.no_better_share", "op": ">", "value": 0.4},
            },
        ],
    )
    results = C.evaluate_claims(C.load_claims(path), NUMS)
    table = C.render_claims_tex(results, "strict")
    assert r"\hypertarget{claim:ok_claim}" in table
    assert r"50\% of the time" in table
    assert r"\rc{stage2.final.kappa.model_model}" in table  # values link to provenance rows
    assert "not testable on this dataset" in table
    verdicts = C.render_verdicts_tex(results)
    assert r"\csname rc@claim@ok_claim\endcsname{supported}" in verdicts
    assert r"\csname rc@claim@untested\endcsname{untestable}" in verdicts


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
