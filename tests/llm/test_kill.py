"""SIGKILL a recording run half-way and rerun it: completed calls are reused, none made twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from analysis import REPO_ROOT
from analysis.llm.calls import ChatRequest, call_key, run_calls
from analysis.llm.models import ModelSpec
from analysis.llm.store import iter_shard, shard_path, validate_store
from tests.fake_server import FakeOpenAI
from tests.settings_defaults import llm_settings

N_CALLS = 60

RECORDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from analysis.llm import ChatRequest, ModelSpec, run_calls
    from tests.settings_defaults import llm_settings

    base_url, store = sys.argv[1], Path(sys.argv[2])
    model = ModelSpec("fake-model", base_url, None, {"temperature": 0}, max_concurrency=3)
    requests = [ChatRequest.from_prompt(f"call {i}") for i in range(int(sys.argv[3]))]
    run_calls(model, requests, stage="s", store=store, mode="record", progress=False,
              settings=llm_settings(timeout_s=5, max_retries=2, backoff_base_s=0.01))
    """
)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_sigkill_half_way_then_rerun(tmp_path: Path) -> None:
    store = tmp_path / "calls"
    shard = shard_path(store, "s", "fake-model", "0")
    with FakeOpenAI(latency_s=0.04) as server:
        proc = subprocess.Popen(
            [sys.executable, "-c", RECORDER, server.base_url, str(store), str(N_CALLS)],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while _lines(shard) < N_CALLS // 3:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "recorder made no progress"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert proc.returncode == -signal.SIGKILL

        before = {rec["request"]["messages"][-1]["content"] for _, rec in iter_shard(shard)}
        assert N_CALLS // 3 <= len(before) < N_CALLS, "the kill must land half-way"
        assert validate_store(store).ok  # a torn tail at most, which is only a warning
        attempts_before = dict(server.attempts)

        model = ModelSpec("fake-model", server.base_url, None, {"temperature": 0})
        requests = [ChatRequest.from_prompt(f"call {i}") for i in range(N_CALLS)]
        results = run_calls(
            model,
            requests,
            stage="s",
            store=store,
            mode="record",
            progress=False,
            settings=llm_settings(timeout_s=5, max_retries=2, backoff_base_s=0.01),
        )

    # every call completed before the kill was reused, none was made again
    for content in before:
        assert server.attempts[content] == attempts_before[content], content
    assert all(
        r.cached
        for r, q in zip(results, requests, strict=True)
        if q.messages[-1]["content"] in before
    )
    assert [r.text for r in results] == [f"echo: call {i}" for i in range(N_CALLS)]
    # the store holds each call exactly once and validates
    keys = [rec["key"] for _, rec in iter_shard(shard)]
    assert sorted(keys) == sorted(call_key(model, q, "") for q in requests)
    report = validate_store(store)
    assert report.ok and not report.warnings, report
    assert shard.read_bytes().endswith(b"\n")
    assert all(json.loads(line) for line in shard.read_text().splitlines())
