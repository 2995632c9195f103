"""One writer for what every benchmark script publishes.

Each script owns one key of ``benchmarks/results.json`` and one marked section of
``benchmarks/README.md``; several scripts may finish at about the same time, so both writes
are read-modify-write with an atomic replace and leave the other keys and sections alone.

Every payload records the commit it was measured at (``git``: the commit and whether the
working tree had uncommitted changes), so a README figure can be traced to the code it timed.

``BENCH_OUTPUT_DIR`` (environment) sends every file a benchmark writes (``results.json``, the
README, the coverage worlds' lines, the fresh copies) to another folder: the smoke tests
(``tests/benchmarks/``) run each script there with its smallest parameters, so they never
touch the published figures.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib.metadata
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
OUTPUT_DIR = Path(os.environ.get("BENCH_OUTPUT_DIR") or BENCH_DIR)
RESULTS = OUTPUT_DIR / "results.json"
README = OUTPUT_DIR / "README.md"
#: fresh copies of the repository and simulated worlds (git-ignored under benchmarks/)
WORK_DIR = OUTPUT_DIR / ".work"


def git_state() -> dict[str, object]:
    """The commit measured, and whether the working tree had uncommitted changes (read as a
    build reads it: ``analysis.software.repository_commit``)."""
    from analysis.software import repository_commit  # the checkout's package: scripts put it first

    state = repository_commit(REPO_ROOT)
    return {"commit": state["commit"], "dirty": bool(state["uncommitted_changes"])}


def machine(packages: tuple[str, ...] = ()) -> dict[str, object]:
    """The machine and software measured on, with the 1-minute load average now (the machine
    is shared: a figure measured under load says so)."""
    cpu = "?"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    versions = {}
    for name in packages:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "cpu_model": cpu,
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "memory_gib": round(mem_kib / 1024**2, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "packages": versions,
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


#: lines of a measured command's output kept to read its summaries (pytest's, Snakemake's)
TAIL = 400


@dataclasses.dataclass(frozen=True)
class MeasuredRun:
    """A command run as a user runs it: its exit status, wall time, the CPU-seconds of every
    process it waited for, and the last :data:`TAIL` lines of its output."""

    returncode: int
    wall_seconds: float
    cpu_seconds: float
    tail: list[str]


def run_measured(command: str, env: dict[str, str] | None = None) -> MeasuredRun:
    """Run ``command`` in the checkout, echoing its output as it comes.

    CPU is user + system of the children waited for (``getrusage(RUSAGE_CHILDREN)``, as
    ``/usr/bin/time`` counts them), so every process a ``make`` starts is in it.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    tail: collections.deque[str] = collections.deque(maxlen=TAIL)
    with subprocess.Popen(
        shlex.split(command),
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            tail.append(line.rstrip("\n"))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return MeasuredRun(proc.returncode, round(wall, 1), round(cpu, 1), list(tail))


def run_context(host: dict[str, object], note: str) -> dict[str, object]:
    """What a timed run's line says of where and when it ran: the machine (``host``, read by
    :func:`machine` when the run started), the 1-minute load average at its start and end,
    when it finished, and the caller's note."""
    return {
        "machine": {k: host[k] for k in ("cpu_model", "cpus", "cpus_usable", "memory_gib")},
        "load_average_1min": {
            "start": host["load_average_1min"],
            "end": round(os.getloadavg()[0], 2),
        },
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "note": note,
    }


def read_jsonl(path: Path) -> list[dict]:
    """Every line of a benchmark's JSON-lines file, oldest first (a line that is not JSON
    names its file and line number)."""
    if not path.exists():
        return []
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise SystemExit(f"{path}: line {number} is not JSON ({err.msg})") from err
    return out


def append_jsonl(path: Path, line: dict) -> None:
    """Append one line (sorted keys) to a benchmark's JSON-lines file, as each world or run
    finishes, so an interrupted run keeps what it measured."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, sort_keys=True) + "\n")


def commit_text(git: dict[str, object] | None) -> str:
    """``abc1234`` (or ``abc1234 with uncommitted changes``): the README's words for ``git``
    (a payload written before the writer recorded commits says so)."""
    if not git or not git.get("commit"):
        return (
            "(not recorded: measured before the benchmark writer recorded commits; "
            "`git log benchmarks/results.json` names the commit that published it)"
        )
    short = str(git["commit"])[:7]
    return f"{short} with uncommitted changes" if git.get("dirty") else short


def markers(name: str) -> tuple[str, str]:
    """The README markers around the section of benchmark ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def update_results(key: str, payload: dict) -> dict:
    """Set ``results.json[key]`` (atomic replace; other keys are left as they are).

    The stored payload gets ``git`` (:func:`git_state` now) unless the script recorded it
    when it started measuring; it is returned, so the README section can name the commit.
    """
    payload = {**payload, "git": payload.get("git") or git_state()}
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[key] = payload
    tmp = RESULTS.with_suffix(f".json.{key}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, RESULTS)
    return payload


def update_readme(name: str, section: str) -> None:
    """Replace the README section of ``name`` (between its markers), or append it."""
    start, end = markers(name)
    text = README.read_text() if README.exists() else "# Benchmarks\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + section.rstrip("\n") + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    README.write_text(text)
