"""The Batch API executor against a local fake batch server (files, batches, file content)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from analysis.llm.batch import BatchPending, batch_line, state_path, write_state
from analysis.llm.calls import CallError, ChatRequest, PendingCall, call_key, run_calls
from analysis.llm.keys import effective_params
from analysis.llm.models import ModelSpec
from analysis.llm.store import iter_shard, shard_path, validate_store
from analysis.settings import ClientSettings
from tests.fake_server import FakeOpenAI


@pytest.fixture
def batch_settings(fast: ClientSettings) -> ClientSettings:
    return dataclasses.replace(fast, batch_poll_s=0.01, batch_timeout_s=30)


def run_batch(model, store, settings, prompts, mode="record", **kw):
    reqs = [ChatRequest.from_prompt(p, custom_id=p) for p in prompts]
    return run_calls(
        model,
        reqs,
        stage="s",
        store=store,
        mode=mode,
        settings=settings,
        executor="batch",
        progress=False,
        **kw,
    )


def stored(store: Path) -> list[dict]:
    return [rec for _, rec in iter_shard(shard_path(store, "s", "fake-model", "0"))]


def test_batch_maps_results_back_and_stores_them_like_direct_calls(
    server: FakeOpenAI, model: ModelSpec, store: Path, batch_settings: ClientSettings
) -> None:
    server.batch_polls_to_complete = 3
    results = run_batch(model, store, batch_settings, ["b", "a", "c"])
    assert [r.text for r in results] == ["echo: b", "echo: a", "echo: c"]
    assert [r.custom_id for r in results] == ["b", "a", "c"]
    assert (
        len(server.batches) == 1
        and not state_path(shard_path(store, "s", "fake-model", "0")).exists()
    )
    (batch,) = server.batches.values()
    assert batch["endpoint"] == "/v1/chat/completions" and batch["completion_window"] == "24h"
    lines = server.files[batch["input_file_id"]]["content"].decode().splitlines()
    sent = [json.loads(x) for x in lines]
    assert {x["custom_id"] for x in sent} == {r.key for r in results}
    assert sent[0]["body"]["max_tokens"] == 32 and sent[0]["body"]["model"] == "fake-model"
    recs = stored(store)
    assert {r["executor"] for r in recs} == {"batch"} and {r["batch_id"] for r in recs} == {
        batch["id"]
    }
    assert validate_store(store).ok
    # replay reads them like any other call; a direct-mode record run makes no call
    replayed = run_calls(
        model,
        [ChatRequest.from_prompt(p) for p in ("a", "b", "c")],
        stage="s",
        store=store,
        progress=False,
        settings=batch_settings,
    )
    assert [r.text for r in replayed] == ["echo: a", "echo: b", "echo: c"]
    assert sum(server.served.values()) == 3


def test_interrupted_batch_resumes_instead_of_paying_twice(
    server: FakeOpenAI, model: ModelSpec, store: Path, batch_settings: ClientSettings
) -> None:
    server.batch_polls_to_complete = 10**6  # never finishes while the first run waits
    impatient = dataclasses.replace(batch_settings, batch_timeout_s=0.05)
    with pytest.raises(BatchPending, match="run again to resume"):
        run_batch(model, store, impatient, ["x", "y"])
    state_file = state_path(shard_path(store, "s", "fake-model", "0"))
    state = json.loads(state_file.read_text())
    assert state["batch_id"] and state["input_file_id"] and len(state["calls"]) == 2
    assert stored(store) == []
    server.batch_polls_to_complete = 1  # the provider finishes it meanwhile
    results = run_batch(model, store, batch_settings, ["x", "y"])
    assert [r.text for r in results] == ["echo: x", "echo: y"]
    assert len(server.batches) == 1 and len(server.files) == 2  # one input, one output file
    assert sum(server.served.values()) == 2 and not state_file.exists()
    assert len(stored(store)) == 2


def test_resume_after_upload_finds_the_batch_by_its_input_file(
    server: FakeOpenAI, model: ModelSpec, store: Path, batch_settings: ClientSettings
) -> None:
    """Killed after ``batches.create`` was sent but before its id was saved."""
    requests = [ChatRequest.from_prompt(p) for p in ("u", "v")]
    calls = [
        PendingCall(call_key(model, r, ""), r, effective_params(model.params, r.params))
        for r in requests
    ]
    payload = "".join(json.dumps(batch_line(model, c)) + "\n" for c in calls).encode()
    file_id = server._add_file("batch", "in.jsonl", payload)
    server.batches["batch_0001"] = {
        "id": "batch_0001",
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "input_file_id": file_id,
        "completion_window": "24h",
        "status": "validating",
        "created_at": 1,
        "output_file_id": None,
        "error_file_id": None,
    }
    state = {
        "model": "fake-model",
        "stage": "s",
        "input_file_id": file_id,
        "batch_id": None,
        "calls": [
            {
                "key": c.key,
                "messages": list(c.request.messages),
                "params": c.params,
                "sample_index": 0,
            }
            for c in calls
        ],
    }
    path = state_path(shard_path(store, "s", "fake-model", "0"))
    path.parent.mkdir(parents=True)
    write_state(path, state)
    results = run_calls(
        model,
        requests,
        stage="s",
        store=store,
        mode="record",
        settings=batch_settings,
        executor="batch",
        progress=False,
    )
    assert [r.text for r in results] == ["echo: u", "echo: v"]
    assert list(server.batches) == ["batch_0001"] and len(server.files) == 2


def test_failed_batch_lines_are_reported_not_stored_and_retried_next_run(
    server: FakeOpenAI, model: ModelSpec, store: Path, batch_settings: ClientSettings
) -> None:
    server.plan = {"bad": ["400"]}
    with pytest.raises(CallError, match=r"1 of 2 calls failed .*batch line failed \(HTTP 400\)"):
        run_batch(model, store, batch_settings, ["good", "bad"])
    assert [r["request"]["messages"][-1]["content"] for r in stored(store)] == ["good"]
    results = run_batch(model, store, batch_settings, ["good", "bad"])
    assert [r.cached for r in results] == [True, False] and results[1].text == "echo: bad"
    assert len(server.batches) == 2 and server.served["good"] == 1


def test_refresh_through_batch_appends_newer_answers(
    server: FakeOpenAI, model: ModelSpec, store: Path, batch_settings: ClientSettings
) -> None:
    run_batch(model, store, batch_settings, ["r"])
    (again,) = run_batch(model, store, batch_settings, ["r"], mode="refresh")
    assert not again.cached and server.served["r"] == 2 and len(stored(store)) == 2
