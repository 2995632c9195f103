"""Calling through real HTTP against a fault-injecting server: every fault ends correctly.

Each case ends either retried and stored (exactly once) or with a clear error naming model,
stage and key, with nothing stored for it; nothing is lost, nothing is stored twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from pathlib import Path

import pytest

from analysis.llm.calls import CallError, ChatRequest, ReplayMiss, call_key, run_calls
from analysis.llm.models import ModelSpec
from analysis.llm.store import iter_shard, shard_path, validate_store
from analysis.settings import ClientSettings
from tests.fake_server import FakeOpenAI
from tests.settings_defaults import llm_settings


def stored_keys(store: Path, stage: str = "s", model: str = "fake-model") -> list[str]:
    path = shard_path(store, stage, model, "0")
    return [rec["key"] for _, rec in iter_shard(path)] if path.exists() else []


def record(model: ModelSpec, store: Path, fast: ClientSettings, *prompts: str, **kw):
    reqs = [ChatRequest.from_prompt(p, custom_id=p, params=kw.pop("params", None)) for p in prompts]
    return run_calls(
        model, reqs, stage="s", store=store, mode="record", settings=fast, progress=False, **kw
    )


@pytest.mark.parametrize(
    ("plan", "attempts"),
    [
        (["429"], 2),
        (["429", "429", "429"], 4),
        (["500"], 2),
        (["503", "500"], 3),
        (["slow:0.2"], 1),  # slow but within the timeout
        (["slow:4"], 2),  # past the 1.5 s timeout: retried
        (["truncated"], 2),
        (["nonjson"], 2),
        (["nochoices"], 2),
        (["reset"], 2),
        (["408"], 2),
    ],
)
def test_transient_faults_are_retried_and_stored_once(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings, plan, attempts
) -> None:
    server.plan = {"q": plan}
    fast = dataclasses.replace(fast, timeout_s=1.5)
    (result,) = record(model, store, fast, "q")
    assert result.text == "echo: q" and result.error is None and not result.cached
    assert server.attempts["q"] == attempts
    assert stored_keys(store) == [result.key]
    assert validate_store(store).ok
    (again,) = record(model, store, fast, "q")  # a rerun reuses it: no new attempt
    assert again.cached and server.attempts["q"] == attempts


def test_timeout_is_per_attempt_not_per_read(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    """A server dripping one byte every 0.5 s never lets a single read time out; the attempt
    must still end at ``timeout_s`` (connect to last byte), and the retry gets its own."""
    server.plan = {"q": ["drip:0.5"]}
    fast = dataclasses.replace(fast, timeout_s=2)
    start = time.perf_counter()
    (result,) = record(model, store, fast, "q")
    elapsed = time.perf_counter() - start
    assert result.text == "echo: q" and result.error is None
    assert server.attempts["q"] == 2
    assert 2 <= elapsed < 6, f"the dripping attempt took {elapsed:.1f}s, not ~2s"


def test_a_dripping_server_that_never_finishes_fails_with_a_timeout(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    server.plan = {"q": ["drip:0.5"] * 2}
    fast = dataclasses.replace(fast, timeout_s=1, max_retries=1)
    start = time.perf_counter()
    (result,) = record(model, store, fast, "q", raise_on_error=False)
    assert time.perf_counter() - start < 5
    assert result.error is not None and "timeout" in result.error
    assert "attempt 2 of 2" in result.error
    assert stored_keys(store) == []


@pytest.mark.parametrize(("action", "wait"), [("429:ra=0.3", 0.3), ("429:ms=250", 0.25)])
def test_retry_after_is_honoured(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings, action, wait
) -> None:
    server.plan = {"q": [action]}
    start = time.perf_counter()
    (result,) = record(model, store, fast, "q")
    assert time.perf_counter() - start >= wait  # our own backoff would be ~5 ms
    assert result.text == "echo: q" and server.attempts["q"] == 2


def test_a_first_failure_goes_through_the_retry_policy(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings, caplog
) -> None:
    """The first attempt runs before any retry state exists; its failure is still the retry
    policy's attempt 1: logged as such and retried."""
    server.plan = {"q": ["503"]}
    with caplog.at_level(logging.INFO, logger="analysis.llm.client"):
        (result,) = record(model, store, fast, "q")
    assert result.error is None and server.attempts["q"] == 2
    assert any("attempt 1 failed (HTTP 503" in r.getMessage() for r in caplog.records)


def test_retry_after_is_capped(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    server.plan = {"q": ["429:ra=3600"]}
    capped = dataclasses.replace(fast, retry_after_max_s=0.05)
    start = time.perf_counter()
    record(model, store, capped, "q")
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("status", ["400", "401", "404", "422"])
def test_other_4xx_fail_at_once_with_a_clear_error(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings, status
) -> None:
    server.plan = {"bad": [status]}
    with pytest.raises(CallError) as err:
        record(model, store, fast, "good", "bad")
    key = call_key(model, ChatRequest.from_prompt("bad"), "")
    message = str(err.value)
    for part in ("fake-model", "stage s", key, f"HTTP {status}", "not retryable", "1 of 2"):
        assert part in message, part
    assert server.attempts["bad"] == 1
    good = call_key(model, ChatRequest.from_prompt("good"), "")
    assert stored_keys(store) == [good]  # the good call is stored, the failed one is not


def test_exhausted_retries_name_model_stage_key_and_attempts(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    server.plan = {"q": ["503"] * 10}
    results = record(model, store, fast, "q", "r", raise_on_error=False)
    failed, ok = results
    assert ok.text == "echo: r" and ok.error is None
    assert failed.text is None and failed.response == {}
    assert "model fake-model, stage s, key " + failed.key in failed.error
    assert "gave up after attempt 4 of 4" in failed.error and "HTTP 503" in failed.error
    assert server.attempts["q"] == 4
    assert stored_keys(store) == [ok.key]
    server.plan = {}  # the endpoint has recovered: the rerun makes only the failed call
    (again_failed, again_ok) = record(model, store, fast, "q", "r")
    assert again_ok.cached and not again_failed.cached and again_failed.text == "echo: q"
    assert server.served["r"] == 1 and sorted(stored_keys(store)) == sorted([ok.key, failed.key])


def test_invalid_content_is_stored_once_and_reported_the_same_on_replay(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    server.plan = {"j": ["badcontent"]}
    json_mode = {"response_format": {"type": "json_object"}}
    (res,) = record(model, store, fast, "j", params=json_mode)
    assert res.text == "this is not json {"
    assert (
        res.error
        == "invalid content: response_format json_object but the content is not valid JSON"
    )
    (ok,) = record(model, store, fast, "k", params=json_mode)
    assert ok.error is None and ok.text == '{"echo": "k"}'
    (replayed,) = run_calls(
        model,
        [ChatRequest.from_prompt("j", params=json_mode)],
        stage="s",
        store=store,
        progress=False,
        settings=fast,
    )
    assert replayed.cached and replayed.error == res.error and replayed.text == res.text
    assert server.served["j"] == 1 and len(stored_keys(store)) == 2


@pytest.mark.parametrize("limit", [3, 20])  # 20: spread over several HTTP clients
def test_concurrency_is_bounded_per_endpoint(
    model: ModelSpec, store: Path, fast, limit: int
) -> None:
    with FakeOpenAI(latency_s=0.05) as slow:
        spec = dataclasses.replace(model, base_url=slow.base_url, max_concurrency=limit)
        prompts = [f"p{i}" for i in range(5 * limit)]
        record(spec, store, fast, *prompts)
        assert slow.max_in_flight == limit
        assert sum(slow.served.values()) == 5 * limit


def test_client_pool_bounds_requests_in_flight_by_the_connections_it_keeps(
    fast: ClientSettings,
) -> None:
    from analysis.llm.client import ClientPool

    slots = 5

    async def scenario() -> tuple[int, int, bool]:
        pool = ClientPool("http://127.0.0.1:9/v1", "no-key-needed", fast, slots)
        leases = [pool.lease() for _ in range(slots)]  # kept: a dropped one frees its slot
        held = [await lease.__aenter__() for lease in leases]
        limit = pool.client._client._transport.limits.max_keepalive_connections
        extra = asyncio.ensure_future(pool.lease().__aenter__())
        await asyncio.sleep(0.01)
        waited = not extra.done()  # every slot is taken: the next request waits
        extra.cancel()
        await pool.close()
        return len({id(lease.client) for lease in held}), limit, waited

    clients, limit, waited = asyncio.run(scenario())
    assert clients == 1 and limit == slots and waited


def test_a_slot_serves_the_next_request_while_a_record_is_committed(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings, monkeypatch
) -> None:
    """``max_concurrency`` bounds requests in flight, not records waiting for their fsync."""
    from analysis.llm.store import ShardWriter

    append_many = ShardWriter.append_many
    second_served_before_first_stored: list[bool] = []

    def store_first_once_second_is_served(self, records) -> None:
        if any(r["request"]["messages"][-1]["content"] == "first" for r in records):
            deadline = time.monotonic() + 10  # only a guard: the old order would wait forever
            while not server.served["second"] and time.monotonic() < deadline:
                time.sleep(0.01)
            second_served_before_first_stored.append(server.served["second"] == 1)
        append_many(self, records)

    monkeypatch.setattr(ShardWriter, "append_many", store_first_once_second_is_served)
    one_slot = dataclasses.replace(model, max_concurrency=1)
    results = record(one_slot, store, fast, "first", "second")
    assert [r.error for r in results] == [None, None]
    assert second_served_before_first_stored == [True]
    assert sorted(stored_keys(store)) == sorted(r.key for r in results)
    assert server.max_in_flight == 1


def test_records_finishing_within_the_commit_window_share_one_write(tmp_path: Path) -> None:
    """A group commit waits ``delay_s`` after its first record, so calls finishing together
    share one write and fsync; each ``commit`` returns only once its record is in the file."""
    from analysis.llm.calls import GroupCommit
    from analysis.llm.store import ShardWriter

    groups: list[list[str]] = []

    class CountingWriter(ShardWriter):
        def append_many(self, records) -> None:
            groups.append([r["key"] for r in records])
            super().append_many(records)

    path = tmp_path / "s" / "m" / "0.jsonl"
    writer = CountingWriter(path)

    async def commit_after(committer: GroupCommit, key: str, wait_s: float) -> list[str]:
        await asyncio.sleep(wait_s)
        await committer.commit({"key": key, "created": "t"})
        return [rec["key"] for _, rec in iter_shard(path)]

    async def main() -> list[list[str]]:
        committer = GroupCommit(writer, delay_s=0.2)
        together = [commit_after(committer, f"k{i}", 0.02 * i) for i in range(3)]
        seen = await asyncio.gather(*together)
        seen.append(await commit_after(committer, "late", 0.0))  # after the group: its own
        return seen

    seen = asyncio.run(main())
    writer.close()
    assert groups == [["k0", "k1", "k2"], ["late"]]
    assert all(key in keys for key, keys in zip(["k0", "k1", "k2", "late"], seen, strict=True))


def test_requests_carry_no_sdk_telemetry_headers(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    """The SDK's platform headers (the user's OS, architecture, Python) and its retry count
    (0 on every retry of ours) are not sent; its own content headers are."""
    server.plan = {"q": ["500", "ok"]}  # the retry is a request too
    (result,) = record(model, store, fast, "q")
    assert result.error is None and server.attempts["q"] == 2
    assert {"content-type", "user-agent"} <= server.header_names
    assert not [h for h in server.header_names if h.startswith("x-stainless")]


def test_recording_keeps_a_fixed_set_of_tasks_and_restores_the_collector(
    model: ModelSpec, store: Path, fast: ClientSettings, monkeypatch
) -> None:
    """The tasks alive at once do not grow with the number of calls; garbage collection stays
    on while recording (with its young threshold raised) and is as before afterwards."""
    import gc

    import analysis.llm.client as client

    call_with_retries = client.call_with_retries
    tasks_alive: list[int] = []
    collector: list[tuple[bool, int, int]] = []

    async def counting(*args, **kwargs):
        tasks_alive.append(len(asyncio.all_tasks()))
        collector.append((gc.isenabled(), gc.get_threshold()[0], gc.get_freeze_count()))
        return await call_with_retries(*args, **kwargs)

    monkeypatch.setattr(client, "call_with_retries", counting)
    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    limit = 3
    spec = dataclasses.replace(model, max_concurrency=limit)
    results = record(spec, store, fast, *[f"p{i}" for i in range(8 * limit)])
    assert len(results) == 8 * limit and all(r.error is None for r in results)
    # workers (2 per slot), aiohttp's body writer per request in flight (1 per slot), the
    # group commit's flush and the run itself; one task per call would be 24 and more
    assert len(tasks_alive) == 8 * limit and max(tasks_alive) <= 3 * limit + 2
    assert all(on and young > before[1][0] and frozen > 0 for on, young, frozen in collector)
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before


def test_identical_requests_in_one_set_are_made_once(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    reqs = [ChatRequest.from_prompt("same", custom_id=f"item-{i}") for i in range(3)]
    reqs.append(ChatRequest.from_prompt("same", sample_index=1, custom_id="item-3"))
    results = run_calls(
        model, reqs, stage="s", store=store, mode="record", settings=fast, progress=False
    )
    assert [r.custom_id for r in results] == ["item-0", "item-1", "item-2", "item-3"]
    assert len({r.key for r in results}) == 2
    assert server.served["same"] == 2 and len(stored_keys(store)) == 2


def test_refresh_calls_again_and_the_newer_answer_wins(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    (first,) = record(model, store, fast, "q")
    server.plan = {"q": ["ok", "leak"]}  # the second answer differs (it mentions the header)
    (refreshed,) = run_calls(
        model,
        [ChatRequest.from_prompt("q")],
        stage="s",
        store=store,
        mode="refresh",
        settings=fast,
        progress=False,
    )
    assert not refreshed.cached and refreshed.text != first.text
    (replayed,) = run_calls(
        model, [ChatRequest.from_prompt("q")], stage="s", store=store, progress=False, settings=fast
    )
    assert replayed.text == refreshed.text
    assert stored_keys(store) == [first.key, first.key]  # the old answer stays (it was paid)


def test_replay_miss_fails_closed_with_count_key_and_command(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    record(model, store, fast, "a")
    reqs = [ChatRequest.from_prompt(p) for p in ("a", "b", "c", "c")]
    before = sum(server.attempts.values())
    with pytest.raises(ReplayMiss) as err:
        run_calls(
            model,
            reqs,
            stage="s",
            store=store,
            progress=False,
            overrides="data=annotation_tool llm=replay",
            settings=fast,
        )
    message = str(err.value)
    missing_b = call_key(model, reqs[1], "")
    assert message.startswith("ReplayMiss: 2 calls missing for fake-model/s")
    assert f"e.g. key {missing_b}" in message
    assert 'snakemake --cores all --config overrides="data=annotation_tool llm.mode=record"' in (
        message
    )
    assert err.value.missing == [missing_b, call_key(model, reqs[2], "")]
    assert sum(server.attempts.values()) == before  # replay never calls


def test_replay_needs_no_server_and_no_key(
    model: ModelSpec, store: Path, fast: ClientSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI() as temporary:
        spec = dataclasses.replace(model, base_url=temporary.base_url)
        recorded = record(spec, store, fast, "a", "b")
    # endpoint gone, key variable unset: replay still answers
    spec = dataclasses.replace(spec, api_key_env="RECENTER_UNSET_KEY_VAR")
    monkeypatch.delenv("RECENTER_UNSET_KEY_VAR", raising=False)
    spec_same_key = dataclasses.replace(spec, api_key_env=None)
    replayed = run_calls(
        spec_same_key,
        [ChatRequest.from_prompt(p) for p in ("a", "b")],
        stage="s",
        store=store,
        progress=False,
        settings=fast,
    )
    assert [r.text for r in replayed] == [r.text for r in recorded]
    assert [r.response for r in replayed] == [r.response for r in recorded]
    assert all(r.cached for r in replayed)


def test_record_with_a_missing_key_variable_says_which(
    model: ModelSpec, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECENTER_UNSET_KEY_VAR", raising=False)
    spec = dataclasses.replace(model, api_key_env="RECENTER_UNSET_KEY_VAR")
    with pytest.raises(RuntimeError, match="RECENTER_UNSET_KEY_VAR is not set"):
        run_calls(
            spec,
            [ChatRequest.from_prompt("x")],
            stage="s",
            store=store,
            mode="record",
            progress=False,
            settings=llm_settings(),
        )


def test_run_calls_works_inside_a_running_event_loop(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    async def inside() -> list:
        return record(model, store, fast, "x")

    (result,) = asyncio.run(inside())
    assert result.text == "echo: x"


def test_progress_bar_reports_done_cached_failed(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings, capsys
) -> None:
    record(model, store, fast, "a")
    server.plan = {"b": ["400"]}
    run_calls(
        model,
        [ChatRequest.from_prompt(p) for p in ("a", "b", "c")],
        stage="s",
        store=store,
        mode="record",
        settings=fast,
        progress=True,
        raise_on_error=False,
    )
    err = capsys.readouterr().err
    assert "fake-model/s" in err and "call/s" in err
    assert "cached=1" in err and "done=1" in err and "failed=1" in err
