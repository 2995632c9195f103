"""The workflow measured: a cold reproduction in a fresh copy, no-op reruns, reruns after one
statistics setting changed, and the run's peak memory.

A fresh copy is made by ``recenter verify``'s ``copy_sources``, as the tests make one (the files a
clone would have: tracked plus untracked-but-not-ignored, without any outputs, with
``../shared`` linked beside it), under ``benchmarks/.work/`` (git-ignored). The copy's own
package is imported (``PYTHONPATH``), as in the tests, so the copy is what runs.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml
from process_memory import Measured, run_measured

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run from a checkout without installing

from analysis.paper.verify import copy_sources  # noqa: E402

BUNDLED_WORLD = Path("data/raw/bundled")
STATS_KEY = "stats.n_boot"


def fresh_copy(dest: Path) -> Path:
    """A clean copy of the repository at ``dest`` (replaced if present), ../shared beside it."""
    if dest.exists():
        shutil.rmtree(dest)
    copy_sources(REPO_ROOT, dest)
    shared, link = REPO_ROOT.parent / "shared", dest.parent / "shared"
    if shared.is_dir() and not link.exists():
        link.symlink_to(shared)
    return dest


def copy_env(copy: Path) -> dict[str, str]:
    """The environment of a run in ``copy``: its own package, offline models."""
    return dict(os.environ, PYTHONPATH=str(copy), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")


def ensure_bundled_world(copy: Path) -> str:
    """'committed' if the copy has the bundled world, else write it (deterministic) and say so."""
    if (copy / BUNDLED_WORLD / "extracted" / "task5_items.jsonl").is_file():
        return "committed"
    cmd = [sys.executable, "-m", "analysis.cli", "simulate", "--out", str(BUNDLED_WORLD)]
    proc = subprocess.run(cmd, cwd=copy, env=copy_env(copy), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed in {copy}:\n{proc.stderr[-3000:]}")
    return "not committed: written by `recenter simulate` before timing"


def snakemake(copy: Path, *args: str) -> Measured:
    """One measured snakemake run in ``copy``; a failure raises with the end of its output."""
    run = run_measured(["snakemake", *args], cwd=copy, env=copy_env(copy))
    if run.returncode != 0:
        raise RuntimeError(
            f"snakemake {' '.join(args)} failed ({run.returncode}) in {copy}:\n"
            f"{run.stdout[-3000:]}\n{run.stderr[-5000:]}"
        )
    return run


def jobs_run(output: str) -> Counter[str]:
    """Rule -> jobs, from the 'Job stats' table a run prints first (empty: nothing to do)."""
    table = re.search(r"Job stats:\n(.*?)\n\n", output + "\n\n", re.S)
    if table is None:
        return Counter()
    rows = (ln.split() for ln in table.group(1).splitlines()[2:])
    return Counter({row[0]: int(row[1]) for row in rows if len(row) == 2 and row[0] != "total"})


_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")


def job_seconds(output: str) -> list[tuple[str, float]]:
    """(rule, seconds) per finished job from the log stamps (1 s resolution), slowest first."""
    stamp: datetime | None = None
    pending: str | None = None
    started: dict[str, tuple[str, datetime]] = {}
    out: list[tuple[str, float]] = []
    for line in output.splitlines():
        m = _STAMP.match(line.strip())
        if m:
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
            continue
        m = re.match(r"^(?:local)?rule (\w+):$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^\s+jobid: (\d+)$", line)
        if m and pending and stamp:
            started[m.group(1)] = (pending, stamp)
            pending = None
            continue
        m = re.match(r"^Finished jobid: (\d+) \(Rule: (\w+)\)", line)
        if m and stamp and m.group(1) in started:
            rule, begin = started.pop(m.group(1))
            out.append((rule, (stamp - begin).total_seconds()))
    return sorted(out, key=lambda rs: (-rs[1], rs[0]))


def _rule_blocks(copy: Path) -> dict[str, str]:
    blocks = {}
    for smk in [
        copy / "workflow" / "Snakefile",
        *sorted((copy / "workflow" / "rules").glob("*.smk")),
    ]:
        for rule, body in re.findall(
            r"^rule (\w+):\n(.*?)(?=^\S|\Z)", smk.read_text(), re.M | re.S
        ):
            blocks[rule] = body
    return blocks


def rules_reading(copy: Path, key: str) -> set[str]:
    """Rules whose params hold the config key (a ``subtree(CFG, ...)`` covering it, or all CFG)."""
    out = set()
    for rule, body in _rule_blocks(copy).items():
        # the whole config: cfg=CFG, or every group by name (rule resolved_config)
        if re.search(r"cfg=CFG\b|subtree\(CFG, \*sorted\(CFG\)\)", body):
            out.add(rule)
        for args in re.findall(r"subtree\(CFG,([^)]*)\)", body):
            for arg in re.findall(r"\"([\w.]+)\"", args):
                if key == arg or key.startswith(arg + ".") or arg.startswith(key + "."):
                    out.add(rule)
    return out


def rule_graph(copy: Path, target: list[str]) -> dict[str, set[str]]:
    """Rule -> the rules that read its outputs (Snakemake's --rulegraph of ``target``)."""
    proc = subprocess.run(
        ["snakemake", *target, "--rulegraph", "dot"],
        cwd=copy,
        env=copy_env(copy),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"snakemake --rulegraph failed in {copy}:\n{proc.stderr[-3000:]}")
    names = dict(re.findall(r"^\s*(\d+)\[label = \"(\w+)\"", proc.stdout, re.M))
    graph: dict[str, set[str]] = {name: set() for name in names.values()}
    for src, dst in re.findall(r"^\s*(\d+) -> (\d+)", proc.stdout, re.M):
        graph[names[src]].add(names[dst])
    return graph


def dependents(graph: dict[str, set[str]], roots: set[str]) -> set[str]:
    """``roots`` (those in the graph) and every rule downstream of them."""
    seen, todo = set(), [r for r in roots if r in graph]
    while todo:
        rule = todo.pop()
        if rule not in seen:
            seen.add(rule)
            todo.extend(graph[rule])
    return seen


def config_value(copy: Path, key: str) -> int:
    """The default of a key of the stats group (config/stats/default.yaml)."""
    group, name = key.split(".", 1)
    return int(yaml.safe_load((copy / "config" / group / "default.yaml").read_text())[name])


def median(values: list[float]) -> float:
    return float(statistics.median(values))


@dataclass
class WorkflowBench:
    """What one benchmark session measured (seconds, bytes), ready for results.json."""

    target: list[str]
    cores: int
    bundled_world: str = ""
    cold_seconds: list[float] = field(default_factory=list)
    cold_cpu_seconds: list[float] = field(default_factory=list)
    cold_jobs: int = 0
    slowest_jobs: list[tuple[str, float]] = field(default_factory=list)
    startup_seconds: list[float] = field(default_factory=list)
    startup_cpu_seconds: list[float] = field(default_factory=list)
    noop_seconds: list[float] = field(default_factory=list)
    noop_cpu_seconds: list[float] = field(default_factory=list)
    noop_jobs: int = 0
    rerun_seconds: list[float] = field(default_factory=list)
    rerun_cpu_seconds: list[float] = field(default_factory=list)
    rerun_overrides: list[str] = field(default_factory=list)
    reran_rules: list[str] = field(default_factory=list)
    expected_rules: list[str] = field(default_factory=list)
    peak_tree_bytes: int = 0
    largest_process: tuple[str, int] = ("?", 0)
    max_single_rss_bytes: int = 0


def run_workflow_bench(
    workdir: Path,
    target: list[str],
    cores: int,
    cold_repeats: int,
    repeats: int,
    log=print,
) -> WorkflowBench:
    """Cold runs (each in a fresh copy), then no-op reruns and stats-change reruns in the last."""
    bench = WorkflowBench(target=target, cores=cores)
    base = ["--cores", str(cores), *target]
    copy = workdir / "repo"
    for i in range(cold_repeats):
        fresh_copy(copy)
        bench.bundled_world = ensure_bundled_world(copy)
        log(f"cold run {i + 1}/{cold_repeats}: snakemake {' '.join(base)} in {copy}")
        run = snakemake(copy, *base)
        bench.cold_seconds.append(run.seconds)
        bench.cold_cpu_seconds.append(run.cpu_seconds)
        bench.cold_jobs = sum(jobs_run(run.stdout + run.stderr).values())
        bench.slowest_jobs = job_seconds(run.stdout + run.stderr)[:5]
        if run.tree.peak_tree_bytes > bench.peak_tree_bytes:
            bench.peak_tree_bytes = run.tree.peak_tree_bytes
            bench.largest_process = run.tree.largest()
        # kernel-reported, exact: the largest single process of the cold runs so far
        bench.max_single_rss_bytes = run.max_child_rss_bytes
        log(f"  {run.seconds:.1f} s, {bench.cold_jobs} jobs")

    for _ in range(repeats):
        # the floor of any rerun: the interpreter importing snakemake and its plugins
        run = snakemake(copy, "--version")
        bench.startup_seconds.append(run.seconds)
        bench.startup_cpu_seconds.append(run.cpu_seconds)
    for i in range(repeats):
        run = snakemake(copy, *base)
        jobs = sum(jobs_run(run.stdout + run.stderr).values())
        if jobs:
            raise RuntimeError(f"no-op rerun {i + 1} ran {jobs} jobs:\n{run.stdout[-3000:]}")
        bench.noop_seconds.append(run.seconds)
        bench.noop_cpu_seconds.append(run.cpu_seconds)
        log(f"no-op rerun {i + 1}/{repeats}: {run.seconds:.2f} s")

    default = config_value(copy, STATS_KEY)
    bench.expected_rules = sorted(
        dependents(rule_graph(copy, target), rules_reading(copy, STATS_KEY))
    )
    reran: set[str] = set()
    # The default build's setting changes in its config file: an override on the command line
    # would build a variant beside the default build (analysis/variants.py), not rerun it.
    group, name = STATS_KEY.split(".", 1)
    config_file = copy / "config" / group / "default.yaml"
    original = config_file.read_text(encoding="utf-8")
    for i in range(repeats):
        override = f"{STATS_KEY}={default + i + 1}"
        config_file.write_text(
            re.sub(rf"^{name}: *\d+", f"{name}: {default + i + 1}", original, count=1, flags=re.M),
            encoding="utf-8",
        )
        run = snakemake(copy, *base)
        rules = set(jobs_run(run.stdout + run.stderr))
        if i and rules != reran:
            raise RuntimeError(f"stats rerun {i + 1} ran {sorted(rules)}, not {sorted(reran)}")
        reran = rules
        bench.rerun_seconds.append(run.seconds)
        bench.rerun_cpu_seconds.append(run.cpu_seconds)
        bench.rerun_overrides.append(override)
        log(f"rerun with {override}: {run.seconds:.1f} s, rules {sorted(rules)}")
    config_file.write_text(original, encoding="utf-8")
    bench.reran_rules = sorted(reran)
    return bench
