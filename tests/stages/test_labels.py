"""Labels asked for as JSON (with a schema) or as one word; both parsed strictly."""

from __future__ import annotations

import pytest

from analysis.llm.models import ModelSpec
from analysis.stages.labels import label_request, label_schema, parse_json_label
from analysis.stages.parsing import ParseError
from analysis.stages.prompts import PromptSet
from tests.stages.conftest import fake_spec


def test_json_labels_are_strict() -> None:
    assert parse_json_label('{"answer": "YES"}', "yes_no") is True
    assert parse_json_label('{ "answer" : "NO" }', "yes_no") is False
    assert parse_json_label('{"answer": "UNSUPPORTED"}', "supported") is False
    assert parse_json_label('{"rating": 4}', "rating") == 4
    for text, kind in [
        ('{"answer": "yes"}', "yes_no"),
        ('{"answer": "YES", "why": "x"}', "yes_no"),
        ('{"rating": "4"}', "rating"),
        ('{"rating": 4.0}', "rating"),
        ('{"rating": true}', "rating"),
        ('{"rating": 6}', "rating"),
        ("YES", "yes_no"),
        ('{"answer": "YES"', "yes_no"),
    ]:
        with pytest.raises(ParseError):
            parse_json_label(text, kind)


def test_label_request_forms(prompts: PromptSet) -> None:
    hosted = label_request("yes_no", "json", fake_spec(), prompts)
    assert hosted.params["response_format"]["type"] == "json_schema"
    assert hosted.params["response_format"]["json_schema"]["schema"] == label_schema("yes_no")
    assert '{"answer": "YES"}' in hosted.answer_format
    local = ModelSpec("l", None, None, {}, server={"kind": "llama_cpp", "file": "m.gguf"})
    grammar = label_request("rating", "json", local, prompts)
    assert grammar.params == {
        "response_format": {"type": "json_object", "schema": label_schema("rating")}
    }
    word = label_request("supported", "word", local, prompts)
    assert word.params == {} and word.parser("SUPPORTED") is True
    assert "one word" in prompts.repair("supported", "bad", **word.repair_fields())
    with pytest.raises(ValueError):
        label_request("yes_no", "xml", local, prompts)
