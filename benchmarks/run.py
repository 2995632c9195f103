"""The benchmark suite in one command: the workflow measured, plus the bootstrap and call-store
benchmarks, then one table of everything in ``benchmarks/results.json``.

    python benchmarks/run.py                       # everything (make bench)
    python benchmarks/run.py --suites workflow     # only the workflow measurements
    python benchmarks/run.py --target results/bundled/tables/relevance_votes.parquet
    python benchmarks/run.py --no-write            # print only

Workflow measurements (key ``"workflow"`` of results.json; the other scripts own theirs):
- cold: the default reproduction (``snakemake --cores N``) in a fresh copy of the repository,
  installed package, no outputs (``--cold-repeats``, default 1: it is the expensive one);
- no-op rerun: the same command again, nothing to do (target: under 5 s);
- rerun after changing one statistics setting of the default build (``stats.n_boot`` in
  ``config/stats/default.yaml`` of the copy, a new value each repeat; an override on the
  command line would build a variant beside it instead): which rules reran, checked against
  the rules that read ``stats`` and everything downstream of them in Snakemake's rule graph;
- peak memory of the cold run: the sampled sum over the process tree (target: under 2 GB),
  the largest single process (kernel-reported) and which job it was.
Times are medians of ``--repeats`` runs (default 3); ratios to the cold run are reported
because the absolute times depend on the machine and on whatever else runs on it (the load
average is recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from results_io import (
    RESULTS,
    WORK_DIR,
    commit_text,
    git_state,
    machine,
    markers,
    update_readme,
    update_results,
)
from workflow_bench import REPO_ROOT, WorkflowBench, median, run_workflow_bench

BENCH_DIR = Path(__file__).resolve().parent
WORKDIR = WORK_DIR
START, END = markers("workflow")
#: the other benchmark scripts: suite name -> script (each writes its own results.json key)
OTHER_SUITES = {"bootstrap": "bench_bootstrap.py", "callstore": "bench_callstore.py"}
DEFAULT_TARGET = ["(default: rule all, the paper PDF)"]
NOOP_TARGET_S = 5.0
PEAK_TARGET_BYTES = 2 * 1024**3
PACKAGES = (
    "snakemake",
    "hydra-core",
    "pandas",
    "numpy",
    "scipy",
    "statsmodels",
    "scikit-learn",
    "torch",
    "sentence-transformers",
    "matplotlib",
    "openai",
)


def sig(x: float, digits: int = 3) -> float:
    return float(f"{x:.{digits}g}")


def _timing(wall: list[float], cpu: list[float]) -> dict[str, object]:
    return {
        "seconds": [sig(x, 4) for x in wall],
        "median_s": sig(median(wall), 4),
        "cpu_seconds": [sig(x, 4) for x in cpu],
        "median_cpu_s": sig(median(cpu), 4),
    }


def workflow_payload(bench: WorkflowBench, env: dict, git: dict) -> dict[str, object]:
    """results.json["workflow"]: raw times, medians, ratios, rules, memory, machine."""
    cold = _timing(bench.cold_seconds, bench.cold_cpu_seconds)
    noop = _timing(bench.noop_seconds, bench.noop_cpu_seconds)
    rerun = _timing(bench.rerun_seconds, bench.rerun_cpu_seconds)
    startup = _timing(bench.startup_seconds, bench.startup_cpu_seconds)
    for part in (noop, rerun, startup):
        part["ratio_to_cold"] = sig(part["median_s"] / cold["median_s"])
        part["cpu_ratio_to_cold"] = sig(part["median_cpu_s"] / cold["median_cpu_s"])
    unexpected = sorted(set(bench.reran_rules) - set(bench.expected_rules))
    not_rerun = sorted(set(bench.expected_rules) - set(bench.reran_rules))
    return {
        "what": "snakemake in a fresh copy: cold run, no-op reruns, reruns after one stats change",
        "target": bench.target or DEFAULT_TARGET,
        "cores": bench.cores,
        "bundled_world": bench.bundled_world,
        "cold": {
            **cold,
            "jobs": bench.cold_jobs,
            "slowest_jobs_s": [[rule, s] for rule, s in bench.slowest_jobs],
        },
        "snakemake_startup": {
            "what": "snakemake --version: the interpreter importing snakemake and its plugins",
            **startup,
        },
        "noop_rerun": {
            **noop,
            "target_s": NOOP_TARGET_S,
            "meets_target": noop["median_s"] < NOOP_TARGET_S,
        },
        "stats_rerun": {
            "overrides": bench.rerun_overrides,
            **rerun,
            "rules_rerun": bench.reran_rules,
            "rules_expected": bench.expected_rules,
            "unexpected_rules": unexpected,
            "expected_but_not_rerun": not_rerun,
            "only_dependents": not unexpected and not not_rerun,
        },
        "peak_memory": {
            "process_tree_sampled_mb": round(bench.peak_tree_bytes / 1024**2),
            "largest_process_sampled": bench.largest_process[0],
            "largest_process_sampled_mb": round(bench.largest_process[1] / 1024**2),
            "largest_single_process_exact_mb": round(bench.max_single_rss_bytes / 1024**2),
            "target_mb": PEAK_TARGET_BYTES // 1024**2,
            "meets_target": bench.peak_tree_bytes < PEAK_TARGET_BYTES,
        },
        "environment": env,
        "git": git,
    }


def workflow_table(w: dict) -> list[str]:
    """The markdown table of the workflow measurements (wall and CPU medians, ratios)."""
    cold, start, noop, rr, mem = (
        w["cold"],
        w["snakemake_startup"],
        w["noop_rerun"],
        w["stats_rerun"],
        w["peak_memory"],
    )
    ok = {True: "yes", False: "**no**"}

    def row(what: str, t: dict, target: str = "", met: str = "") -> str:
        ratio = "1" if t is cold else f"{t['ratio_to_cold']:.3g}"
        cpu_ratio = "1" if t is cold else f"{t['cpu_ratio_to_cold']:.3g}"
        return (
            f"| {what} ({len(t['seconds'])}x) | {t['median_s']:.2f} s | {ratio} "
            f"| {t['median_cpu_s']:.2f} s | {cpu_ratio} | {target} | {met} |"
        )

    key = rr["overrides"][0].split("=")[0]
    return [
        "| measurement (runs) | wall, median | wall / cold | CPU, median | CPU / cold "
        "| target | met |",
        "|---|---:|---:|---:|---:|---|---|",
        row(f"cold reproduction, {cold['jobs']} jobs", cold),
        row("no-op rerun", noop, f"< {noop['target_s']:.0f} s", ok[noop["meets_target"]]),
        row("of which snakemake's own start (`snakemake --version`)", start),
        row(
            f"rerun after `{key}` changed, {len(rr['rules_rerun'])} "
            f"rule{'' if len(rr['rules_rerun']) == 1 else 's'}",
            rr,
            "only dependents",
            ok[rr["only_dependents"]],
        ),
        f"| peak memory, whole process tree (sampled RSS sum) "
        f"| {mem['process_tree_sampled_mb']:,} MB | | | | < {mem['target_mb']:,} MB "
        f"| {ok[mem['meets_target']]} |",
        f"| peak memory, largest single process (exact) "
        f"| {mem['largest_single_process_exact_mb']:,} MB | | | | | |",
        f"| largest process seen by sampling: {mem['largest_process_sampled']} "
        f"| {mem['largest_process_sampled_mb']:,} MB | | | | | |",
    ]


def readme_section(w: dict) -> str:
    """This script's section of benchmarks/README.md (between its markers)."""
    env, rr = w["environment"], w["stats_rerun"]
    target = " ".join(w["target"])
    slow = ", ".join(f"{rule} {s:.0f} s" for rule, s in w["cold"]["slowest_jobs_s"])
    lines = [
        START,
        '## The workflow (`run.py`, key `"workflow"`)',
        "",
        f"`snakemake --cores {w['cores']}` on {target} in a fresh copy of the repository "
        "(the files a clone has, no outputs; package installed), then no-op reruns, then "
        f"reruns after changing one statistics setting. Measured at commit "
        f"{commit_text(w.get('git'))} on {env['cpu_model']} "
        f"({env['cpus_usable']} usable cores, {env['memory_gib']} GiB, Python {env['python']}, "
        f"snakemake {env['packages']['snakemake']}), 1-min load average {env['load_average_1min']} "
        "at the start (the machine is shared, so compare ratios, not seconds). "
        f"Bundled world: {w['bundled_world']}.",
        "",
        *(
            [
                f"**Not the default reproduction:** target `{target}`, so this table checks "
                "the harness, not the workflow's speed. Run `make bench` (no `--target`) for "
                "the paper's reproduction.",
                "",
            ]
            if w["target"] != DEFAULT_TARGET
            else []
        ),
        *workflow_table(w),
        "",
        f"Rules rerun after `{rr['overrides'][0]}` in config/stats/default.yaml (and each later "
        "value): "
        + (", ".join(f"`{r}`" for r in rr["rules_rerun"]) or "none")
        + ". Expected (rules whose params hold `stats`, and everything downstream of them): "
        + (", ".join(f"`{r}`" for r in rr["rules_expected"]) or "none")
        + ".",
        "",
        f"A no-op rerun spends {w['snakemake_startup']['median_cpu_s']:.1f} of its "
        f"{w['noop_rerun']['median_cpu_s']:.1f} CPU seconds starting snakemake: it imports "
        "every installed executor and storage plugin to build its command line, so the "
        "`cluster` extra (the Kubernetes client library above all) adds to every start; the "
        "rest is evaluating the Snakefile (Hydra compose, the rule files' imports, the code "
        "hash of every rule, read from the sources without importing them) and checking "
        "every output's metadata.",
        "",
        f"Slowest jobs of the cold run: {slow or 'n/a'}. Peak memory is sampled every 0.2 s "
        "over snakemake and every job it runs (RSS summed, so shared pages count once per "
        "process: an upper bound); the largest single process is the kernel's exact peak "
        "(`getrusage`).",
        "",
        "Reproduce (the cold run is a full reproduction: minutes):",
        "",
        "```bash",
        "make bench                                   # = python benchmarks/run.py: all suites",
        "python benchmarks/run.py --suites workflow   # this table only",
        "python benchmarks/run.py --suites workflow --repeats 5 --cold-repeats 3",
        "python benchmarks/run.py --suites workflow --target results/bundled/config.yaml",
        "```",
        END,
    ]
    return "\n".join(lines)


def summary_table(data: dict) -> list[str]:
    """One line per suite in results.json: its headline figure."""
    rows = ["| suite | headline |", "|---|---|"]
    if "workflow" in data:
        w = data["workflow"]
        rows.append(
            f"| workflow | cold {w['cold']['median_s']:.1f} s; no-op "
            f"{w['noop_rerun']['median_s']:.2f} s; "
            f"stats rerun {w['stats_rerun']['median_s']:.1f} s "
            f"({len(w['stats_rerun']['rules_rerun'])} rules rerun); peak "
            f"{w['peak_memory']['process_tree_sampled_mb']:,} MB |"
        )
    if "bootstrap" in data:
        b = data["bootstrap"]
        rows.append(
            f"| bootstrap | B={b.get('n_boot')}: {b.get('fast_seconds')} s vectorized, "
            f"speedup {b.get('speedup')}x |"
        )
    if "callstore" in data:
        c = data["callstore"]
        replay = c.get("replay", {})
        best = max(c.get("record", []), key=lambda r: r.get("calls_per_second", 0), default={})
        rows.append(
            f"| callstore | replay {replay.get('replay_calls_per_second_end_to_end')} calls/s "
            f"of {replay.get('n_calls')}; record {best.get('calls_per_second')} calls/s "
            f"(concurrency {best.get('concurrency')}, {c.get('record_latency_s')} s latency) |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suites",
        default="workflow,bootstrap,callstore",
        help="comma-separated: workflow, bootstrap, callstore (default: all)",
    )
    parser.add_argument("--target", nargs="*", default=[], help="snakemake targets (default: all)")
    parser.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeats", type=int, default=3, help="no-op and stats reruns (3)")
    parser.add_argument("--cold-repeats", type=int, default=1, help="cold runs (1)")
    parser.add_argument("--workdir", type=Path, default=WORKDIR, help="where copies are made")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--readme-only",
        action="store_true",
        help="measure nothing: rewrite the README section from results.json['workflow']",
    )
    args = parser.parse_args(argv)
    if args.readme_only:
        update_readme("workflow", readme_section(json.loads(RESULTS.read_text())["workflow"]))
        return 0
    suites = [s.strip() for s in args.suites.split(",") if s.strip()]
    unknown = set(suites) - {"workflow", *OTHER_SUITES}
    if unknown or args.repeats < 1 or args.cold_repeats < 1:
        parser.error(f"unknown suites {sorted(unknown)} or repeats < 1")

    if "workflow" in suites:
        env, git = machine(PACKAGES), git_state()
        started = time.perf_counter()
        bench = run_workflow_bench(
            args.workdir, args.target, args.cores, args.cold_repeats, args.repeats
        )
        payload = workflow_payload(bench, env, git)
        payload["environment"]["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
        payload["total_benchmark_s"] = round(time.perf_counter() - started)
        print("\n".join(workflow_table(payload)))
        print(json.dumps(payload["stats_rerun"], indent=1))
        if not args.no_write:
            update_results("workflow", payload)
            update_readme("workflow", readme_section(payload))
    for suite in suites:
        if suite in OTHER_SUITES:
            cmd = [sys.executable, str(BENCH_DIR / OTHER_SUITES[suite])]
            if args.no_write:
                cmd.append("--no-write")
            print(f"\n$ {' '.join(cmd)}", flush=True)
            if subprocess.run(cmd, cwd=REPO_ROOT).returncode != 0:
                print(f"{suite} benchmark failed", file=sys.stderr)
                return 1
    if RESULTS.exists():
        print("\n" + "\n".join(summary_table(json.loads(RESULTS.read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
