"""A call store that stops taking records (a full disk): one report naming the shard and
``ENOSPC``, no call made once a record cannot be stored, the paid-but-unstored answers
counted and named, and a rerun that makes only what is missing."""

from __future__ import annotations

import errno
import logging
from pathlib import Path

import pytest

from analysis.llm import calls as calls_mod
from analysis.llm.calls import CallError, ChatRequest, run_calls
from analysis.llm.models import ModelSpec
from analysis.llm.store import ShardWriter, iter_shard, shard_path, validate_store
from analysis.settings import ClientSettings
from tests.fake_server import FakeOpenAI

N_CALLS = 40
ROOM = 10  # records the "disk" takes before it is full


class FillingWriter(ShardWriter):
    """A shard whose disk fills after ``ROOM`` records (the write fails with ENOSPC)."""

    def append_many(self, records) -> None:
        stored = sum(1 for _ in iter_shard(self.path))
        if stored + len(records) > ROOM:
            raise OSError(errno.ENOSPC, "No space left on device")
        super().append_many(records)


def test_a_full_disk_stops_the_calls_and_is_reported_once_with_the_store_path(
    server: FakeOpenAI,
    model: ModelSpec,
    store: Path,
    fast: ClientSettings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.latency_s = 0.02  # calls overlap, as they do against a real endpoint
    requests = [ChatRequest.from_prompt(f"q{i}") for i in range(N_CALLS)]
    path = shard_path(store, "s", model.name, "0")
    with monkeypatch.context() as m:
        m.setattr(calls_mod, "ShardWriter", FillingWriter)
        with caplog.at_level(logging.ERROR), pytest.raises(CallError) as err:
            run_calls(
                model,
                requests,
                stage="s",
                store=store,
                mode="record",
                settings=fast,
                progress=False,
            )
    message = str(err.value)
    assert f"cannot store calls in {path}: No space left on device (ENOSPC)" in message
    paid = sum(server.served.values())
    stored = [rec["key"] for _, rec in iter_shard(path)]
    assert len(stored) <= ROOM and validate_store(store).ok
    # calls stopped: at most the ones in flight when the write failed were made after it
    assert paid < N_CALLS and paid <= len(stored) + 2 * model.max_concurrency
    # every paid answer is accounted for: stored, or counted and named as not stored
    unstored = err.value.unstored
    assert err.value.n_stored == len(stored) and len(stored) + len(unstored) == paid
    assert f"{len(unstored)} answers were paid for but could not be stored" in message
    assert all(key in message for key in unstored[:5]) and not set(unstored) & set(stored)
    assert err.value.not_made == N_CALLS - paid and f"{N_CALLS - paid} calls were not made" in (
        message
    )
    reports = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(reports) == 1 and "ENOSPC" in reports[0].getMessage()
    assert "file descriptor" not in caplog.text

    # space freed: the rerun makes exactly the calls that are not stored
    results = run_calls(
        model, requests, stage="s", store=store, mode="record", settings=fast, progress=False
    )
    assert all(r.error is None for r in results)
    assert sum(server.served.values()) == paid + (N_CALLS - len(stored))
