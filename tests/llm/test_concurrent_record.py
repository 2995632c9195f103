"""Two record runs in one checkout, sharing the call store: every shared call is paid once.

Two runs with different results folders write different shards of the same (stage, model). Each
must see the other's finished calls before making one, and a call the other run is making
right now must be waited for, not made again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from analysis import REPO_ROOT
from analysis.cli import main
from analysis.llm.store import ShardWriter, iter_store, shard_path, validate_store
from tests.fake_server import FakeOpenAI

N_CALLS = 24

RECORDER = textwrap.dedent(
    """
    import sys
    import time
    from pathlib import Path
    from analysis.llm import ChatRequest, ModelSpec, run_calls
    from tests.settings_defaults import llm_settings

    base_url, store, shard, order = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    go = Path(sys.argv[6])
    model = ModelSpec("fake-model", base_url, None, {"temperature": 0}, max_concurrency=3)
    numbers = range(int(sys.argv[5]))
    requests = [ChatRequest.from_prompt(f"call {i}") for i in numbers]
    if order == "reversed":
        requests.reverse()
    settings = llm_settings(timeout_s=10, max_retries=2)
    print("ready", flush=True)
    while not go.exists():  # both runs start calling together, however slow their start-up
        time.sleep(0.01)
    results = run_calls(model, requests, stage="s", store=store, mode="record", shard=shard,
                        progress=False, settings=settings)
    assert sorted(r.text for r in results) == sorted(f"echo: call {i}" for i in numbers)
    """
)


def test_two_record_runs_pay_each_shared_call_once(tmp_path: Path) -> None:
    store, go = tmp_path / "calls", tmp_path / "go"
    with FakeOpenAI(latency_s=0.05) as server:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", RECORDER, server.base_url, str(store), shard, order]
                + [str(N_CALLS), str(go)],
                cwd=REPO_ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for shard, order in (("a", "forward"), ("b", "reversed"))
        ]
        for run in runs:  # both imported and ready (a run started late would find no work left)
            assert run.stdout is not None and run.stdout.readline().strip() == "ready"
        go.touch()
        for run in runs:
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
    paid = {content: n for content, n in server.served.items() if n}
    assert len(paid) == N_CALLS
    assert all(n == 1 for n in paid.values()), {c: n for c, n in paid.items() if n > 1}
    report = validate_store(store)
    assert report.ok and report.n_keys == N_CALLS and report.n_records == N_CALLS, report
    assert not report.warnings, report.warnings
    assert len(list(iter_store(store))) == 2  # both runs wrote their own shard


def test_validate_reports_a_key_stored_twice(tmp_path: Path, capsys) -> None:
    store = tmp_path / "calls"
    with FakeOpenAI() as server:
        for shard in ("a", "b"):
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    RECORDER,
                    server.base_url,
                    str(store),
                    shard,
                    "forward",
                    "2",
                    str(tmp_path),  # the go signal: already there (one run at a time)
                ],
                cwd=REPO_ROOT,
                env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                check=True,
            )
    a = shard_path(store, "s", "fake-model", "a")
    b = shard_path(store, "s", "fake-model", "b")
    assert not b.exists()  # the second run found both calls stored
    with ShardWriter(b) as writer:  # plant a copy, as two unsynchronised writers used to
        writer.append_many([json.loads(a.read_text().splitlines()[0])])
    report = validate_store(store)
    assert report.ok  # a duplicate is paid twice, not wrong: a warning, like refresh's
    (warning,) = [w for w in report.warnings if "stored 2 times" in w]
    assert "a.jsonl:1" in warning and "b.jsonl:1" in warning
    assert main(["calls", "--store", str(store), "--validate"]) == 0
    err = capsys.readouterr().err
    assert "warning: s/fake-model: key " in err and "stored 2 times" in err
