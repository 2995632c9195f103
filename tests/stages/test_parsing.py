"""Strict parsers, one bounded repair, failures counted; against a real local HTTP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analysis.llm.calls import ReplayMiss
from analysis.settings import StagesConfig
from analysis.stages import steps
from analysis.stages.parsing import (
    REPAIR_SUFFIX,
    ParseError,
    call_and_parse,
    count_parse_outcomes,
    outcome_frame,
    parse_attributes_json,
    parse_rating,
    parse_supported,
    parse_yes_no,
)
from analysis.stages.prompts import PromptSet
from analysis.stages.requests import ModelCaller, make_request
from tests.settings_defaults import llm_settings
from tests.stages.conftest import ScriptedCaller, fake_spec


@pytest.mark.parametrize(
    ("text", "value"),
    [("YES", True), ("no", False), (" Yes. ", True), ('"NO"', False), ("yes\n", True)],
)
def test_yes_no_accepts_only_the_grammar(text: str, value: bool) -> None:
    assert parse_yes_no(text) is value


@pytest.mark.parametrize("text", ["", "Yes, because", "maybe", "YES NO", "Y", "yes!!", "**YES**"])
def test_yes_no_rejects_everything_else(text: str) -> None:
    with pytest.raises(ParseError):
        parse_yes_no(text)


def test_supported_and_rating_parsers() -> None:
    assert parse_supported("SUPPORTED") is True and parse_supported("unsupported.") is False
    assert parse_rating("4") == 4 and parse_rating(' "1" ') == 1
    for bad in ("0", "6", "4/5", "Rating: 4", "45", ""):
        with pytest.raises(ParseError):
            parse_rating(bad)
    with pytest.raises(ParseError):
        parse_supported("SUPPORTED, mostly")


def test_attributes_json_is_strict() -> None:
    ok = {"attributes": [{"sentence": "The user cooks.", "reason": "asked", "confidence": 0.5}]}
    assert parse_attributes_json(json.dumps(ok), 3)[0]["confidence"] == 0.5
    assert parse_attributes_json('{"attributes": []}', 3) == []
    bad = [
        "```json\n" + json.dumps(ok) + "\n```",
        json.dumps({"attributes": ok["attributes"], "extra": 1}),
        json.dumps({"attributes": [{**ok["attributes"][0], "confidence": 1.5}]}),
        json.dumps({"attributes": [{**ok["attributes"][0], "confidence": True}]}),
        json.dumps({"attributes": [{**ok["attributes"][0], "confidence": "0.5"}]}),
        json.dumps({"attributes": [{**ok["attributes"][0], "sentence": ""}]}),
        json.dumps({"attributes": [{"sentence": "x", "reason": "y"}]}),
        json.dumps({"attributes": ok["attributes"] * 4}),
    ]
    for text in bad:
        with pytest.raises(ParseError):
            parse_attributes_json(text, 3)


def _answer_once_badly(request: Any) -> str:
    """Item 'good' answers YES; 'fixable' answers badly then YES; 'hopeless' never parses."""
    cid = request.custom_id.removesuffix(REPAIR_SUFFIX)
    repaired = request.custom_id.endswith(REPAIR_SUFFIX)
    return {"good": "YES", "fixable": "NO" if repaired else "Well, no", "hopeless": "hmm"}[cid]


def test_one_repair_then_a_recorded_failure(prompts: PromptSet) -> None:
    caller = ScriptedCaller(_answer_once_badly)
    requests = [
        make_request(
            prompts.render("relevance", attribute="A", prompt="P", answer_format="Say YES or NO."),
            {"max_tokens": 2},
            c,
        )
        for c in ("good", "fixable", "hopeless")
    ]
    word = {"answer_format": prompts.answer_format("yes_no", "word")}
    out = call_and_parse(
        requests,
        parse_yes_no,
        caller,
        prompts=prompts,
        repair_kind="yes_no",
        echo_chars=5,
        repair_fields=word,
    )
    assert [o.status for o in out] == ["ok", "repaired", "failed"]
    assert [o.value for o in out] == [True, False, None]
    assert len(caller.batches) == 2  # exactly one repair round
    repair = caller.batches[1][0]
    assert [r.custom_id for r in caller.batches[1]] == ["fixable#repair", "hopeless#repair"]
    assert repair.messages[:2] == requests[1].messages
    assert repair.messages[2] == {"role": "assistant", "content": "Well, [...]"}  # bounded echo
    assert "YES or NO" in repair.messages[3]["content"]
    assert repair.params == {"max_tokens": 2}
    counts = count_parse_outcomes(outcome_frame(out), "fake", "stage2_relevance")
    assert counts == {
        "model": "fake",
        "stage": "stage2_relevance",
        "n_calls": 3,
        "n_repair_calls": 2,
        "n_repaired": 1,
        "n_failed": 1,
    }


def test_no_repair_when_disabled(prompts: PromptSet) -> None:
    caller = ScriptedCaller(_answer_once_badly)
    requests = [make_request(({"role": "user", "content": "q"},), {}, "fixable")]
    out = call_and_parse(
        requests, parse_yes_no, caller, prompts=prompts, repair_kind="yes_no", repair_attempts=0
    )
    assert out[0].status == "failed" and len(caller.batches) == 1
    with pytest.raises(ValueError, match="0 or 1"):
        call_and_parse(
            requests, parse_yes_no, caller, prompts=prompts, repair_kind="yes_no", repair_attempts=2
        )


def _server_reply(body: dict[str, Any]) -> str:
    """The server: YES for the bee item; for the jazz item a ramble, then NO after a repair."""
    messages = body["messages"]
    first = messages[1]["content"]
    if "bees" in first:
        return '{"answer": "YES"}'
    if "jazz" in first:
        return '{"answer": "NO"}' if len(messages) > 2 else "I think it depends"
    return "no idea at all"


def test_relevance_step_over_http_records_then_replays(
    world: dict[str, pd.DataFrame],
    stages_cfg: StagesConfig,
    prompts: PromptSet,
    scripted_server: Any,
    tmp_path: Path,
) -> None:
    server = scripted_server(_server_reply)
    spec = fake_spec("fake-voter", server.base_url)
    store = tmp_path / "calls"
    caller = ModelCaller(
        spec, "stage2_relevance", store, "record", prompts.version, settings=llm_settings()
    )
    args = (world["relevance_items"], world["prompts"], world["attributes"], stages_cfg, prompts)
    table = steps.relevance_step(*args, caller, 7)
    assert len(table) == 18
    by_text = dict(zip(table["attribute_id"], table["parse_status"], strict=True))
    from tests.stages.conftest import aid

    assert by_text[aid("u1", 0)] == "ok"  # bees -> YES
    assert by_text[aid("u2", 2)] == "repaired"  # jazz -> NO after the repair
    assert by_text[aid("u1", 1)] == "failed"
    assert table.loc[table["parse_status"] == "failed", "vote"].isna().all()
    assert all(b["max_tokens"] == stages_cfg.stage2.vote_max_tokens for b in server.bodies)
    assert all(b["response_format"]["type"] == "json_schema" for b in server.bodies)
    repair = next(b for b in server.bodies if len(b["messages"]) > 2)
    assert '{"answer": "YES"}' in repair["messages"][-1]["content"]  # names the form asked for
    n_requests = len(server.bodies)
    assert n_requests == 18 + int((table["parse_status"] != "ok").sum())
    # replay: same table from the store, no request reaches the server
    replay = ModelCaller(
        spec, "stage2_relevance", store, "replay", prompts.version, settings=llm_settings()
    )
    again = steps.relevance_step(*args, replay, 7)
    pd.testing.assert_frame_equal(table, again)
    assert len(server.bodies) == n_requests
    # another prompt version is another key: replay misses
    with pytest.raises(ReplayMiss):
        steps.relevance_step(
            *args,
            ModelCaller(spec, "stage2_relevance", store, "replay", "v9", settings=llm_settings()),
            7,
        )
