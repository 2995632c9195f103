"""A local model server that dies during a run stops the run at once, saying how it died.

A llama.cpp build compiled for another CPU dies with SIGILL on its first completion, and the
OOM killer sends SIGKILL; before, every pending call waited out its retries against the dead
port (minutes) and ended as a "timeout" that never said the server was gone.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from analysis.llm.calls import ChatRequest, LocalServerDied, run_calls
from analysis.llm.client import call_with_retries, make_client
from analysis.llm.failures import CallError
from analysis.llm.local_server import describe_exit, free_port
from analysis.llm.models import ModelSpec
from analysis.llm.store import load_index, shard_path
from tests.llm.test_smollm2 import needs_model, smol  # noqa: F401 (a fixture)
from tests.settings_defaults import llm_settings


def test_describe_exit_names_the_signal_and_what_it_means() -> None:
    assert describe_exit(3) == "exited with code 3"
    sigill = describe_exit(-signal.SIGILL)
    assert sigill.startswith("was killed by SIGILL (illegal instruction): ")
    assert "does not match this CPU" in sigill and "make local-llm" in sigill
    assert describe_exit(-signal.SIGKILL).startswith("was killed by SIGKILL (killed): ")
    assert describe_exit(-signal.SIGTERM) == "was killed by SIGTERM (terminated)"


def test_a_refused_connection_is_reported_as_refused_not_as_a_timeout(smol: ModelSpec) -> None:  # noqa: F811
    """The aiohttp transport turns a refused connection into the client's APITimeoutError."""
    settings = llm_settings(max_retries=0)

    async def one_call() -> None:
        url = f"http://127.0.0.1:{free_port()}/v1"
        client = make_client(url, "none", settings, max_concurrency=1)
        try:
            await call_with_retries(
                client,
                smol,
                [{"role": "user", "content": "hi"}],
                {},
                stage="refused",
                key="k" * 64,
                settings=settings,
            )
        finally:
            await client.close()

    with pytest.raises(CallError) as err:
        asyncio.run(one_call())
    assert "connection refused" in str(err.value)
    assert "timeout" not in str(err.value)


def _own_server_pid() -> int | None:
    """The llama.cpp server process this test process started, if it runs."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"llama_cpp.server" in argv and int(stat[1]) == os.getpid() and stat[0] != "Z":
            return int(entry.name)
    return None


@pytest.mark.slow
@pytest.mark.timeout(180)
@needs_model
@pytest.mark.parametrize("sig", [signal.SIGILL, signal.SIGKILL], ids=["SIGILL", "SIGKILL"])
def test_a_server_killed_mid_run_fails_the_pending_calls_within_seconds(
    smol: ModelSpec,  # noqa: F811
    tmp_path: Path,
    sig: signal.Signals,
) -> None:
    store = tmp_path / "calls"
    requests = [
        ChatRequest.from_prompt(f"Write {i} words about rivers.", params={"max_tokens": 48})
        for i in range(30)
    ]
    shard = shard_path(store, "death", smol.name, "0")
    killed: dict[str, float] = {}

    def kill_after_the_first_answer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if shard.is_file() and shard.read_bytes().count(b"\n") >= 1:
                pid = _own_server_pid()
                if pid is not None:
                    killed["at"] = time.monotonic()
                    os.kill(pid, sig)
                    return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_after_the_first_answer, daemon=True)
    killer.start()
    with pytest.raises(LocalServerDied) as err:
        run_calls(
            smol,
            requests,
            stage="death",
            store=store,
            mode="record",
            progress=False,
            prompt_version="test",
            settings=llm_settings(),
        )
    reported = time.monotonic()
    killer.join(5)
    assert "at" in killed, "the server was never killed: no call was answered"
    assert reported - killed["at"] < 10, f"reported {reported - killed['at']:.1f}s after the kill"
    message = str(err.value)
    assert f"was killed by {sig.name} (" in message
    assert "its log ends with:" in message
    assert "timeout" not in message and "gave up after" not in message
    if sig == signal.SIGILL:
        assert "illegal instruction" in message and "make local-llm" in message
    # the calls answered before the kill are stored and valid; nothing for the rest
    stored = load_index(store, "death", smol.name)
    assert 1 <= len(stored) < len(requests)
    assert f"{len(requests) - len(stored)} of {len(requests)} calls" in message
    assert _own_server_pid() is None, "the dead server's process was not reaped"
