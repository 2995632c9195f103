"""Rendering is deterministic, strict about fields, and the version is part of every key."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from analysis.llm.calls import call_key
from analysis.settings import AnswerFormat, ConfigError, PromptTemplate
from analysis.stages.prompts import (
    CUT_MARK,
    TEMPLATE_NAMES,
    PromptError,
    PromptSet,
    format_conversation,
    format_profile,
    truncate,
)
from analysis.stages.requests import make_request
from tests.stages.conftest import fake_spec, prompts_config


def test_rendering_is_deterministic_and_fills_every_field(prompts: PromptSet) -> None:
    fields = {
        "attribute": "The user keeps bees.",
        "prompt": "Suggest a dinner recipe.",
        "answer_format": prompts.answer_format("yes_no", "word"),
    }
    first = prompts.render("relevance", **fields)
    again = PromptSet.from_config(prompts_config()).render("relevance", **fields)
    assert first == again
    assert [m["role"] for m in first] == ["system", "user"]
    assert "The user keeps bees." in first[1]["content"]
    assert "$" not in first[0]["content"] + first[1]["content"]


def test_every_template_renders(prompts: PromptSet) -> None:
    samples = {
        "extraction": {"conversation": "User: hi", "max_attributes": 3},
        "verification": {
            "conversations": "User: hi",
            "attribute": "A",
            "reason": "R",
            "answer_format": "F",
        },
        "relevance": {"attribute": "A", "prompt": "P", "answer_format": "F"},
        "generic_response": {"prompt": "P", "max_words": 50},
        "personalized_response": {"prompt": "P", "profile": "- A", "max_words": 50},
        "preference_judge": {
            "attribute": "A",
            "prompt": "P",
            "response_a": "x",
            "response_b": "y",
            "answer_format": "F",
        },
        "no_context_judge": {
            "prompt": "P",
            "response_a": "x",
            "response_b": "y",
            "answer_format": "F",
        },
    }
    assert set(samples) == set(TEMPLATE_NAMES)
    for name, fields in samples.items():
        messages = prompts.render(name, **fields)
        assert messages[-1]["role"] == "user" and messages[-1]["content"].strip()


def test_missing_and_unused_fields_are_errors(prompts: PromptSet) -> None:
    with pytest.raises(PromptError, match="missing field"):
        prompts.render("relevance", attribute="A", answer_format="F")
    with pytest.raises(PromptError, match="unused field"):
        prompts.render("relevance", attribute="A", prompt="P", answer_format="F", tone="warm")
    with pytest.raises(PromptError, match="missing field"):
        prompts.repair("yes_no", "bad")
    with pytest.raises(PromptError, match="no answer format"):
        prompts.answer_format("yes_no", "xml")
    with pytest.raises(PromptError, match="no template"):
        prompts.render("nonexistent")


def test_empty_template_or_version_is_rejected() -> None:
    cfg = prompts_config()
    with pytest.raises(ConfigError, match="prompts.version=''"):  # it names output files
        dataclasses.replace(cfg, version="")
    with pytest.raises(PromptError, match="relevance.user"):
        PromptSet.from_config(
            dataclasses.replace(cfg, relevance=PromptTemplate(system="s", user=" "))
        )
    with pytest.raises(PromptError, match="answer_formats.rating.json"):
        formats = dataclasses.replace(
            cfg.answer_formats, rating=AnswerFormat(word=cfg.answer_formats.rating.word, json="")
        )
        PromptSet.from_config(dataclasses.replace(cfg, answer_formats=formats))


def test_prompt_version_changes_the_call_key(prompts: PromptSet) -> None:
    messages = prompts.render("relevance", attribute="A", prompt="P", answer_format="F")
    request = make_request(messages, {}, "i1")
    spec = fake_spec()
    assert call_key(spec, request, "v1") == call_key(spec, request, "v1")
    assert call_key(spec, request, "v1") != call_key(spec, request, "v2")


def test_conversation_profile_and_truncation() -> None:
    turns = pd.DataFrame(
        {"turn": [1, 0], "role": ["assistant", "user"], "text": ["Sure.", "Help me\r\nplease"]}
    )
    assert format_conversation(turns, 1000) == "User: Help me\nplease\nAssistant: Sure."
    assert format_conversation(turns, 8) == "User: He" + CUT_MARK
    assert truncate("abc", 3) == "abc" and truncate("abcd", 3) == "abc" + CUT_MARK
    assert format_profile(["A.", " B. "]) == "- A.\n- B."
