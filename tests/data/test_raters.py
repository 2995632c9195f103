"""Rater ids: every spelling of a model maps to one id; humans lose the snapshot's padding."""

from __future__ import annotations

import pytest

from analysis.data.raters import normalize_human_rater, normalize_model_id

#: the five LLMs of the study, as the canonical tables name them
STUDY_MODELS: tuple[str, ...] = (
    "gpt-5.4",
    "claude-sonnet-4-6",
    "gemma-4-31b-it",
    "llama-3.3-70b-instruct",
    "qwen3.5-27b",
)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        (
            "arn:aws:bedrock:us-east-2:000000000000:inference-profile/"
            "us.anthropic.claude-sonnet-4-6",
            "claude-sonnet-4-6",
        ),
        (
            "arn_aws_bedrock_us-east-2_000000000000_inference-profile_us.anthropic.claude-sonnet-4-6",
            "claude-sonnet-4-6",
        ),
        ("anthropic.claude-sonnet-4-6-v1:0", "claude-sonnet-4-6"),
        ("gpt-5.4", "gpt-5.4"),
        ("openai/gpt-5.4", "gpt-5.4"),
        ("google/gemma-4-31B-it", "gemma-4-31b-it"),
        ("google_gemma-4-31b-it", "gemma-4-31b-it"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct"),
        ("meta-llama_llama-3.3-70b-instruct", "llama-3.3-70b-instruct"),
        ("llama-3.3-70b", "llama-3.3-70b-instruct"),
        ("Qwen/Qwen3.5-27B", "qwen3.5-27b"),
        ("qwen_qwen3.5-27b", "qwen3.5-27b"),
        ("sim-llm-03", "sim-llm-03"),
        ("sim-LLM-Judge", "sim-LLM-Judge"),
        ("smollm2-135m", "smollm2-135m"),
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "smollm2-135m"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"),
    ],
)
def test_model_ids_are_normalized(raw: str, canonical: str) -> None:
    assert normalize_model_id(raw) == canonical


def test_study_models_are_fixed_points() -> None:
    assert [normalize_model_id(m) for m in STUDY_MODELS] == list(STUDY_MODELS)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("prolific_P1_____________", "prolific_P1"),
        ("prolific_P5_", "prolific_P5"),
        ("Tal", "Tal"),
        ("Lechen2", "Lechen2"),
        (" sim-human-01 ", "sim-human-01"),
    ],
)
def test_human_raters_lose_the_padding(raw: str, canonical: str) -> None:
    assert normalize_human_rater(raw) == canonical


@pytest.mark.parametrize("bad", ["", "   ", "____"])
def test_empty_human_ids_are_errors(bad: str) -> None:
    with pytest.raises(ValueError):
        normalize_human_rater(bad)


@pytest.mark.parametrize("bad", ["", "   "])
def test_empty_model_ids_are_errors(bad: str) -> None:
    with pytest.raises(ValueError):
        normalize_model_id(bad)
