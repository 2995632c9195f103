"""A job that started the local model server is SIGKILLed: the server dies with it, no log stays.

A scheduler or OOM kill gives the job no chance to run its ``finally``; the server must still not
outlive it (re-parented to init, ~620 MB, and a rerun would start a second one beside it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from analysis import REPO_ROOT
from tests.llm.test_smollm2 import needs_model

JOB = textwrap.dedent(
    """
    import dataclasses, sys, time
    from analysis.llm.local_server import local_server
    from analysis.llm.models import model_from_config
    from analysis.workflow_config import compose_config

    spec = model_from_config("smollm2-135m", compose_config()["models"]["smollm2-135m"])
    spec = dataclasses.replace(spec, server={**spec.server, "n_threads": 1})
    with local_server(spec) as server:
        print(server.base_url, flush=True)
        time.sleep(600)
    """
)


def _server_pids(port: str) -> list[int]:
    """Processes whose command line serves ``--port port`` (the llama.cpp server of the job)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"llama_cpp.server" in argv and port.encode() in argv and state != "Z":
            pids.append(int(entry.name))
    return pids


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux")
@needs_model
def test_sigkilled_job_leaves_no_server_and_no_log(tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    job = subprocess.Popen(
        [sys.executable, "-c", JOB],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "TMPDIR": str(tmpdir)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert job.stdout is not None
        url = job.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"job did not start the server: {url!r}"
        port = url.rsplit(":", 1)[1].split("/")[0]
        assert _server_pids(port), "the server process was not found while the job ran"
        os.kill(job.pid, signal.SIGKILL)
        job.wait(10)
        deadline = time.monotonic() + 5
        while _server_pids(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        leftover = _server_pids(port)
        for pid in leftover:
            os.kill(pid, signal.SIGKILL)
        assert not leftover, f"server {leftover} outlived its SIGKILLed job"
        assert sorted(p.name for p in tmpdir.iterdir()) == [], "the server's log stayed behind"
    finally:
        if job.poll() is None:
            job.kill()
            job.wait(10)
