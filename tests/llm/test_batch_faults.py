"""Faults of the Batch API executor: a kill while storing, a torn output line, a failed batch,
stray or duplicated ``custom_id``s, a saved batch the endpoint does not know, batch prices."""

from __future__ import annotations

import dataclasses
import json
import logging
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from analysis import REPO_ROOT
from analysis.llm.batch import BatchPending, state_path
from analysis.llm.calls import CallError, ChatRequest, call_key, run_calls
from analysis.llm.models import ModelSpec
from analysis.llm.store import ShardWriter, iter_shard, shard_path, usage_summary, validate_store
from analysis.settings import ClientSettings
from tests.fake_server import FakeOpenAI


@pytest.fixture
def settings(fast: ClientSettings) -> ClientSettings:
    return dataclasses.replace(fast, batch_poll_s=0.01, batch_timeout_s=30)


def run_batch(model: ModelSpec, store: Path, settings: ClientSettings, prompts, **kw):
    reqs = [ChatRequest.from_prompt(p, custom_id=p) for p in prompts]
    return run_calls(
        model, reqs, stage="s", store=store, mode="record", settings=settings,
        executor="batch", progress=False, **kw,
    )  # fmt: skip


def shard(store: Path) -> Path:
    return shard_path(store, "s", "fake-model", "0")


def stored(store: Path) -> list[dict]:
    return [rec for _, rec in iter_shard(shard(store))] if shard(store).exists() else []


def pending_batch(server: FakeOpenAI, model, store, settings, prompts) -> dict[str, Any]:
    """Submit a batch that does not finish while the run waits; the fake's batch object."""
    server.batch_polls_to_complete = 10**6
    with pytest.raises(BatchPending):
        run_batch(model, store, dataclasses.replace(settings, batch_timeout_s=0.05), prompts)
    (batch,) = server.batches.values()
    return batch


def answer_lines(server: FakeOpenAI, batch: dict[str, Any]) -> list[dict[str, Any]]:
    """The output lines the fake would give for every line of the batch's input."""
    lines = server.files[batch["input_file_id"]]["content"].decode().splitlines()
    out = []
    for i, line in enumerate(json.loads(x) for x in lines):
        body = server.completion(line["body"], action="ok")
        out.append({"id": f"bl_{i}", "custom_id": line["custom_id"], "error": None,
                    "response": {"status_code": 200, "body": body}})  # fmt: skip
    return out


def finish_with(server: FakeOpenAI, batch: dict[str, Any], output: bytes | None, **fields) -> None:
    """Make the provider end ``batch`` with ``output`` as its output file."""
    if output is not None:
        batch["output_file_id"] = server._add_file("batch_output", "output.jsonl", output)
    batch.update({"status": "completed", **fields})


def to_bytes(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


def test_kill_while_storing_results_does_not_duplicate_them_on_resume(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings, monkeypatch
) -> None:
    prompts = ["a", "b", "c", "d"]
    batch = pending_batch(server, model, store, settings, prompts)
    finish_with(server, batch, to_bytes(answer_lines(server, batch)))
    real_append, seen = ShardWriter.append, []

    def killed_after_two(self, record):
        if len(seen) == 2:
            raise KeyboardInterrupt("killed while storing batch results")
        real_append(self, record)
        seen.append(record["key"])

    monkeypatch.setattr(ShardWriter, "append", killed_after_two)
    with pytest.raises(KeyboardInterrupt):
        run_batch(model, store, settings, prompts)
    monkeypatch.undo()
    assert len(stored(store)) == 2 and state_path(shard(store)).exists()
    results = run_batch(model, store, settings, prompts)
    assert [r.text for r in results] == [f"echo: {p}" for p in prompts]
    keys = [rec["key"] for rec in stored(store)]
    assert sorted(keys) == sorted({r.key for r in results}) and len(keys) == 4
    assert not state_path(shard(store)).exists() and len(server.batches) == 1
    assert usage_summary(store)["calls"].tolist() == [4]


def tear_line_2(content: bytes) -> bytes:
    lines = content.split(b"\n")
    lines[1] = lines[1][:40]
    return b"\n".join(lines)


def test_torn_output_line_names_batch_file_and_line_stores_the_rest_and_is_retried(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings
) -> None:
    prompts = ["p", "q", "r"]
    server.batch_output_edit = tear_line_2
    with pytest.raises(CallError) as failed:
        run_batch(model, store, settings, prompts)
    (batch,) = server.batches.values()
    message = str(failed.value)
    assert f"batch {batch['id']}, file {batch['output_file_id']} line 2: not JSON" in message
    assert "1 of 3 calls failed" in message
    assert len(stored(store)) == 2 and not state_path(shard(store)).exists()
    server.batch_output_edit = None
    results = run_batch(model, store, settings, prompts)  # the rerun retries the lost call
    assert [r.cached for r in results] == [True, False, True] and results[1].text == "echo: q"
    assert len(stored(store)) == 3 and validate_store(store).ok


def test_torn_line_while_resuming_is_logged_and_its_call_made_again(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings, caplog
) -> None:
    batch = pending_batch(server, model, store, settings, ["p", "q"])
    finish_with(server, batch, tear_line_2(to_bytes(answer_lines(server, batch))))
    server.batch_polls_to_complete = 1
    with caplog.at_level(logging.ERROR, logger="analysis.llm.batch"):
        results = run_batch(model, store, settings, ["p", "q"])
    assert [r.text for r in results] == ["echo: p", "echo: q"]
    assert any(
        f"{batch['id']}, file {batch['output_file_id']} line 2" in m for m in caplog.messages
    )
    assert len(server.batches) == 2 and len(stored(store)) == 2


def test_a_failed_batch_shows_its_own_errors(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings
) -> None:
    server.batch_errors = {"object": "list", "data": [
        {"code": "model_not_found", "message": "The model fake-model does not exist", "line": 1}
    ]}  # fmt: skip
    with pytest.raises(CallError, match=r"failed.*model_not_found.*fake-model does not exist"):
        run_batch(model, store, settings, ["f"])


def test_unknown_and_duplicated_custom_ids_warn_and_never_overwrite(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings, caplog
) -> None:
    batch = pending_batch(server, model, store, settings, ["x", "y"])
    lines = answer_lines(server, batch)
    impostor = json.loads(json.dumps(lines[0]))
    impostor["response"]["body"]["choices"][0]["message"]["content"] = "a later duplicate"
    stray = {**lines[1], "custom_id": "not-a-call-of-this-batch"}
    finish_with(server, batch, to_bytes([lines[0], stray, impostor, lines[1]]))
    with caplog.at_level(logging.WARNING, logger="analysis.llm.batch"):
        results = run_batch(model, store, settings, ["x", "y"])
    assert [r.text for r in results] == ["echo: x", "echo: y"]
    assert len(stored(store)) == 2
    assert any("not-a-call-of-this-batch" in m and "unknown custom_id" in m
               for m in caplog.messages)  # fmt: skip
    assert any("duplicated custom_id" in m and lines[0]["custom_id"] in m for m in caplog.messages)


def test_a_saved_batch_the_endpoint_does_not_know_says_to_discard_the_state(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings
) -> None:
    batch = pending_batch(server, model, store, settings, ["z"])
    del server.batches[batch["id"]]  # e.g. the state was committed and resumed elsewhere
    state = state_path(shard(store))
    with pytest.raises(CallError, match=r"HTTP 404") as failed:
        run_batch(model, store, settings, ["z"])
    assert "discard" in str(failed.value) and str(state) in str(failed.value)


def test_batch_state_files_are_not_committed() -> None:
    for name in ("data/calls/stage2/gpt-x/0.batch.json", "data/calls/s/m/3.batch.json.tmp"):
        ignored = subprocess.run(["git", "check-ignore", "-q", name], cwd=REPO_ROOT, check=False)
        assert ignored.returncode == 0, f"{name} is not git-ignored"
    kept = subprocess.run(["git", "check-ignore", "-q", "data/calls/s/m/0.jsonl"], cwd=REPO_ROOT)
    assert kept.returncode == 1


def test_batch_calls_are_priced_with_the_batch_discount(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings
) -> None:
    cheap = dataclasses.replace(model, price_batch_discount=0.5)
    run_batch(cheap, store, settings, ["m"])
    run_calls(cheap, [ChatRequest.from_prompt("n")], stage="s", store=store, mode="record",
              settings=settings, progress=False)  # fmt: skip
    by_prompt = {r["request"]["messages"][-1]["content"]: r for r in stored(store)}

    def full(rec: dict) -> float:  # $1/M prompt tokens, $2/M completion tokens
        return (rec["usage"]["prompt_tokens"] * 1.0 + rec["usage"]["completion_tokens"] * 2.0) / 1e6

    assert by_prompt["n"]["cost_usd"] == pytest.approx(full(by_prompt["n"]))
    assert by_prompt["m"]["cost_usd"] == pytest.approx(full(by_prompt["m"]) * 0.5)
    total = full(by_prompt["n"]) + full(by_prompt["m"]) * 0.5
    assert usage_summary(store)["cost_usd"].sum() == pytest.approx(total)
    assert call_key(cheap, ChatRequest.from_prompt("n"), "") == call_key(
        model, ChatRequest.from_prompt("n"), ""
    )  # a price is not part of the call's identity


def test_batch_requests_carry_no_sdk_platform_headers(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings
) -> None:
    """The Batch API client, like the chat one, does not tell the endpoint the user's OS,
    architecture or Python (``SDK_PLATFORM_HEADERS``)."""
    from analysis.llm.client import SDK_PLATFORM_HEADERS

    (result,) = run_batch(model, store, settings, ["p"])
    assert result.error is None and len(server.batches) == 1
    assert {"content-type", "user-agent"} <= server.header_names
    assert not {h.lower() for h in SDK_PLATFORM_HEADERS} & server.header_names


@pytest.mark.parametrize("op", ["upload", "create", "list", "poll", "download"])
def test_every_batch_request_is_under_the_per_attempt_deadline(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings, op: str
) -> None:
    """Issue 16: the batch's file and batch requests had only the per-read timeout, so a
    server dripping one byte every 0.5 s held an upload, poll or download for minutes. Each
    attempt ends at ``timeout_s`` (connect to last byte) and the retry gets its own deadline;
    a create retried after a timeout finds the batch it made instead of submitting another."""
    server.op_plan = {op: ["drip:0.5"]}
    settings = dataclasses.replace(settings, timeout_s=2)
    start = time.perf_counter()
    results = run_batch(model, store, settings, ["a", "b"])
    elapsed = time.perf_counter() - start
    assert [r.text for r in results] == ["echo: a", "echo: b"]
    # the retry of a create lists batches first and finds the one the dripped create made
    retried = "list" if op == "create" else op
    assert server.op_requests[retried] >= 2, f"the dripped {op} was not retried"
    assert 2 <= elapsed < 8, f"the dripped {op} took {elapsed:.1f}s, not ~2s"
    assert len(server.batches) == 1 and len(stored(store)) == 2


def test_a_batch_download_that_never_finishes_fails_with_a_timeout_and_keeps_the_state(
    server: FakeOpenAI, model: ModelSpec, store: Path, settings: ClientSettings
) -> None:
    server.op_plan = {"download": ["drip:0.5"] * 2}
    settings = dataclasses.replace(settings, timeout_s=1, max_retries=1)
    start = time.perf_counter()
    with pytest.raises(CallError, match=r"download batch file: timeout"):
        run_batch(model, store, settings, ["a"])
    assert time.perf_counter() - start < 6
    assert stored(store) == [] and state_path(shard(store)).exists()
    assert [r.text for r in run_batch(model, store, settings, ["a"])] == ["echo: a"]
    assert len(server.batches) == 1  # the rerun resumed the paid batch
