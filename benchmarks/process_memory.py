"""Peak memory of a command's whole process tree, sampled, with the largest job named.

Snakemake runs each rule's script as its own process (``python .snakemake/scripts/tmpXXXX.<rule
script>.py``), so sampling the tree both sums what runs at once (the figure that decides
whether the run fits a machine) and attributes each process's peak to the rule it runs.
RSS counts shared pages (libraries, torch) once per process, so the sum is an upper bound;
the sampling interval can miss a spike shorter than it. The exact peak of the single largest
process comes from ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` in the caller (see run_measured).
"""

from __future__ import annotations

import re
import resource
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

#: a rule script as Snakemake runs it: .snakemake/scripts/tmpabc123.canonical_tables.py
RULE_SCRIPT = re.compile(r"\.snakemake/scripts/tmp[^/.]+\.(\w+)\.py$")


def process_label(cmdline: list[str]) -> str:
    """What a process is, for the report: the rule script it runs, else its program."""
    for arg in cmdline:
        m = RULE_SCRIPT.search(arg)
        if m:
            return f"rule script {m.group(1)}"
    for arg in cmdline:
        name = Path(arg).name
        if name in {"snakemake", "latexmk", "pdflatex", "bibtex"}:
            return name
    return Path(cmdline[0]).name if cmdline else "?"


@dataclass
class TreeMemory:
    """Peaks seen while sampling: whole tree (sum of RSS) and per labelled process."""

    peak_tree_bytes: int = 0
    peak_by_label: dict[str, int] = field(default_factory=dict)
    samples: int = 0

    def largest(self) -> tuple[str, int]:
        if not self.peak_by_label:
            return ("?", 0)
        return max(self.peak_by_label.items(), key=lambda kv: (kv[1], kv[0]))


def _sample(root: psutil.Process, memory: TreeMemory) -> None:
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    total = 0
    for proc in procs:
        try:
            rss = proc.memory_info().rss
            label = process_label(proc.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        total += rss
        if rss > memory.peak_by_label.get(label, 0):
            memory.peak_by_label[label] = rss
    memory.peak_tree_bytes = max(memory.peak_tree_bytes, total)
    memory.samples += 1


@dataclass(frozen=True)
class Measured:
    """One finished command: exit code, wall and CPU seconds, output, and its memory."""

    returncode: int
    seconds: float
    #: user + system CPU of the command and every descendant it waited for
    cpu_seconds: float
    stdout: str
    stderr: str
    tree: TreeMemory
    #: largest resident set of any single descendant so far (exact, kernel-reported), bytes
    max_child_rss_bytes: int


def run_measured(
    cmd: list[str], cwd: Path, env: dict[str, str], interval: float = 0.2, timeout: float = 7200
) -> Measured:
    """Run ``cmd`` to completion, sampling its process tree every ``interval`` seconds."""
    memory = TreeMemory()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    done = threading.Event()

    def sampler() -> None:
        root = psutil.Process(proc.pid)
        while not done.is_set():
            _sample(root, memory)
            done.wait(interval)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        done.set()
        thread.join()
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss is in KiB on Linux; it covers every waited-for descendant (the max, not a sum)
    max_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return Measured(proc.returncode, seconds, cpu, stdout, stderr, memory, max_child)
