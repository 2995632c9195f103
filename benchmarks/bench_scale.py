"""The workflow on worlds 1, 10 and 100 times the study: per-rule time and memory, growth.

    python benchmarks/bench_scale.py [--scales 1 10 100] [--cores 2] [--not-run 100]
    python benchmarks/bench_scale.py --local-from-results --slurm 10   # add a SLURM run

For each K a world is simulated (``recenter simulate --scale K``; K = 1 is the committed
world) and the workflow's data, statistics, interventions and paper rules run on it as a
dataset of its own (``data=bundled data.root=<world> data.name=sim-scale-K models=none``: no
model is called) in a fresh copy of the repository (``workflow_bench.fresh_copy``). Each
rule's wall time, CPU time and peak RSS come from its Snakemake ``benchmark:`` file
(``rule_table``); the run's total wall time and the peak memory of its whole process tree
from ``process_memory``.

Growth is the slope of log(time) and log(memory) against log(judgments) between the two
largest scales run, *net of each job's start-up*: a job's start-up time and memory are
taken as the median of the rules that do constant work (``CONSTANT_RULES``: Python, imports,
config), and subtracted per job before the ratio. ``n log n`` between those scales has the
slope ``NLOGN``; a rule above it (by more than ``TOLERANCE``, timing noise on a shared
machine) is flagged. Rules that run a local model over texts (MiniLM embeddings, the
explicit-mention detector) are reported apart, as texts per second.

``--slurm K`` runs the scale-K world through a real one-node SLURM cluster on this machine
(``tests/cluster/local_slurm.py``, as the cluster test starts it) with the workflow's SLURM
profile (per-rule ``threads``/``mem_mb``/``runtime``) and ``llm.shards``, in a fresh copy of
its own, and records its wall time beside the local run of the same K. A benchmark, not a
test. ``--local-from-results`` takes the local rows from ``results.json`` instead of running
them again, so a SLURM run can be added to the table of an earlier local session.

A scale listed with ``--not-run`` gets its command and, from the two largest scales run, a
power-law *extrapolation* of its wall time and largest process (labelled as such).

With ``--local-from-results`` the rows already in ``results.json`` are kept and only the
scales of ``--scales`` that have no row (and are not ``--not-run``) or are listed in
``--rerun`` are run.

Checking the script itself (the smoke test, tests/benchmarks/): ``--rules R ...`` runs only
those rules' record files (and what they need, plus the resolved config) instead of the whole
workflow, and a row made so says which rules it ran; ``--slurm-dry-run`` plans the ``--slurm``
runs with ``snakemake -n`` through the SLURM profile, without a cluster, and publishes nothing.
Neither is a measurement of the targets.

The time target is for the workflow without its local-model rules; with two jobs at once a
run's wall time mixes both, so each row also gives the other rules' wall times summed job by
job (their wall time if no two ran at once: an upper bound), which the target is read on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import psutil
import pyarrow.parquet as pq
from results_io import RESULTS, WORK_DIR, commit_text, git_state, update_readme, update_results
from rule_table import rule_table
from workflow_bench import REPO_ROOT, fresh_copy, jobs_run, snakemake

from analysis.variants import TIERS, Variant, identify, output_tier
from analysis.workflow_config import compose_config

WORK = WORK_DIR
#: rules whose work does not depend on the data's size: their time is a job's start-up
CONSTANT_RULES = ("resolved_config", "software_environment", "dataset_description")
#: rules that run a local model over texts, timed apart (texts/s), outside the time target
MODEL_RULES = {"text_embeddings": "embeddings", "explicit_mentions": "responses"}
#: tables whose rows are judgments (a stage-1 label, a stage-2 vote, a stage-3 rating)
JUDGMENT_TABLES = ("attribute_judgments", "relevance_votes", "preference_ratings")
TOLERANCE = 0.15
TARGET_MINUTES, TARGET_GB = 20, 8
#: the one-node cluster's flags, as tests/cluster/test_slurm.py passes them (status checks
#: after 1 s, short output wait on one machine, job logs kept)
SLURM_FLAGS = (
    "--slurm-init-seconds-before-status-checks",
    "1",
    "--slurm-keep-successful-logs",
    "--latency-wait",
    "5",
)
#: "Job 1 has been submitted with SLURM jobid 7 (log: .../slurm_logs/rule_x/7.log)."
SUBMITTED = re.compile(r"Job \d+ has been submitted with SLURM jobid (\d+) \(log: \S+?/rule_(\w+)/")


def overrides(world: Path, k: int) -> str:
    """The Hydra overrides of the scale-K dataset (simulated, own results folder, no models)."""
    return f"data=bundled data.root={world} data.name=sim-scale-{k} models=none"


def scale_build(world: Path, k: int) -> Variant:
    """Where the scale-K run writes: ``models=none`` makes it a variant of the dataset
    ``sim-scale-K`` (analysis/variants.py), so its model-call and analysis outputs sit under
    ``<kind>/sim-scale-K/variants/models-none/`` and its canonical tables under the dataset's."""
    tokens = overrides(world, k).split()
    config_dir = REPO_ROOT / "config"
    return identify(tokens, compose_config(tokens, config_dir=config_dir), config_dir)


def record_target(build: Variant, rule: str) -> str:
    """A rule's records file, in its tier's folder."""
    return build.paths(output_tier(f"records/{rule}.json")).record_file(rule)


def build_rule_table(copy: Path, build: Variant) -> pd.DataFrame:
    """The per-rule table over every tier's benchmark files (each tier logs where it writes)."""
    return rule_table(*sorted({copy / build.paths(tier).benchmarks for tier in TIERS}))


def command(k: int, cores: int) -> str:
    """The exact commands that reproduce one row."""
    world = f"benchmarks/.work/scale-worlds/{k}"
    sim = "" if k == 1 else f"python -m analysis.cli simulate --scale {k} --out {world} && "
    root = "data/raw/bundled" if k == 1 else f"$PWD/{world}"
    return (
        f"{sim}snakemake --workflow-profile workflow/profiles/default --cores {cores} "
        f'--config overrides="{overrides(Path(root), k)}"'
    )


def world_for(k: int) -> tuple[Path, float | None]:
    """The scale-K world (K = 1: the committed one) and the seconds it took to write."""
    if k == 1:
        return REPO_ROOT / "data" / "raw" / "bundled", 0.0
    out = WORK / "scale-worlds" / str(k)
    card = out / "README.md"
    if card.is_file() and f"--scale {k} " in card.read_text():
        return out, None  # written before (deterministic): not timed again
    if out.exists():
        shutil.rmtree(out)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "analysis.cli", "simulate", "--scale", str(k), "--out", str(out)],
        cwd=REPO_ROOT,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        check=True,
    )
    return out, time.perf_counter() - start


def rows_of(folder: Path, names: tuple[str, ...]) -> int:
    """Rows of the parquet tables ``names`` in ``folder`` (from their metadata)."""
    return sum(pq.read_metadata(folder / f"{n}.parquet").num_rows for n in names)


def texts_of(copy: Path, build: Variant, rule: str) -> int:
    """Texts a local-model rule went through (rows of what it wrote)."""
    if rule == "text_embeddings":
        embeddings = copy / build.paths("calls").result("embeddings")
        return sum(pq.read_metadata(p).num_rows for p in embeddings.glob("*.parquet"))
    return rows_of(copy / build.paths("data").result("tables"), ("responses",))


def run_scale(copy: Path, k: int, cores: int, rules: list[str] | None = None) -> dict:
    """Simulate, run and measure the scale-K dataset in ``copy``: the whole workflow, or only
    ``rules``' record files and the resolved config (a check of the script, not a row to
    publish as the scale's)."""
    world, sim_s = world_for(k)
    name = f"sim-scale-{k}"
    for folder in (f"results/{name}", f"logs/{name}", f"paper/build/{name}"):
        shutil.rmtree(copy / folder, ignore_errors=True)
    build = scale_build(world, k)
    targets = [build.paths().config, *(record_target(build, r) for r in rules)] if rules else []
    load, git = os.getloadavg(), git_state()
    run = snakemake(
        copy,
        "--workflow-profile",
        "workflow/profiles/default",
        "--cores",
        str(cores),
        *targets,
        "--config",
        f"overrides={overrides(world, k)}",
    )
    table = build_rule_table(copy, build)
    n = rows_of(copy / build.paths("data").result("tables"), JUDGMENT_TABLES)
    constant = table.loc[[r for r in CONSTANT_RULES if r in table.index]]
    per_job = table.assign(
        wall_per_job=table["wall_s"] / table["jobs"], cpu_per_job=table["cpu_s"] / table["jobs"]
    )
    models = {
        rule: {
            "wall_s": float(table.loc[rule, "wall_s"]),
            "texts": texts_of(copy, build, rule),
            "texts_per_s": round(
                texts_of(copy, build, rule) / max(table.loc[rule, "wall_s"], 1e-9), 1
            ),
            "max_rss_mb": float(table.loc[rule, "max_rss_mb"]),
        }
        for rule in MODEL_RULES
        if rule in table.index
    }
    is_model = table.index.isin(list(MODEL_RULES))
    return {
        "k": k,
        "git": git,
        "only_rules": list(rules or []),
        "judgments": n,
        "simulate_s": None if sim_s is None else round(sim_s, 1),
        "total_wall_s": round(run.seconds, 1),
        "total_cpu_s": round(run.cpu_seconds, 1),
        "model_rules_wall_s": round(float(table.loc[is_model, "wall_s"].sum()), 1),
        "other_rules_wall_s": round(float(table.loc[~is_model, "wall_s"].sum()), 1),
        "peak_tree_rss_mb": round(run.tree.peak_tree_bytes / 2**20, 1),
        "largest_process_rss_mb": round(run.max_child_rss_bytes / 2**20, 1),
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "startup_s": float(statistics.median(constant["wall_s"] / constant["jobs"])),
        "startup_rss_mb": float(statistics.median(constant["max_rss_mb"])),
        "rules": {
            rule: {
                "jobs": int(row["jobs"]),
                "wall_s": float(row["wall_s"]),
                "cpu_s": float(row["cpu_s"]),
                "max_rss_mb": float(row["max_rss_mb"]),
            }
            for rule, row in per_job.iterrows()
        },
        "model_rules": models,
        "command": command(k, cores),
    }


def plan_slurm(k: int, jobs: int, shards: int, rules: list[str]) -> dict:
    """The ``--slurm`` run of scale K planned, not run: ``snakemake -n`` through the SLURM
    profile with the same flags and targets in a fresh copy (no cluster is started), and the
    jobs per rule it would submit."""
    world, _ = world_for(k)
    build = scale_build(world, k)
    targets = [record_target(build, rule) for rule in rules]
    copy = fresh_copy(WORK / "scale-slurm-copy")
    run = snakemake(
        copy,
        "-n",
        "--workflow-profile",
        "workflow/profiles/slurm",
        *SLURM_FLAGS,
        "--jobs",
        str(jobs),
        *targets,
        "--config",
        f"overrides={overrides(world, k)} llm.shards={shards}",
    )
    planned = jobs_run(run.stdout + run.stderr)
    if not planned:
        raise RuntimeError(f"the SLURM dry run of K = {k} planned no job:\n{run.stdout[-3000:]}")
    return {"k": k, "dry_run": True, "targets": targets or "the whole workflow", "jobs": planned}


def run_slurm(k: int, jobs: int, shards: int, rules: list[str]) -> dict:
    """The scale-K world through a one-node SLURM cluster on localhost, in a copy of its own.

    ``rules``: build only these rules' record files (and what they need), and the same
    targets locally in another copy for the side-by-side wall time; empty: the whole workflow
    (beside the local row of the same K). The cluster is the cluster test's
    (``tests/cluster/local_slurm.py``: installs SLURM and munge if missing, needs root); it
    is stopped whatever happens. Each submitted job must be
    COMPLETED in the scheduler's job-completion log. CPU time is not comparable with the local
    run: the jobs are children of slurmd, not of snakemake, so only wall time is recorded.
    """
    sys.path.insert(0, str(REPO_ROOT))
    from tests.cluster.local_slurm import ensure_packages, start_cluster, stop_cluster

    world, _ = world_for(k)
    build = scale_build(world, k)
    targets = [record_target(build, rule) for rule in rules]
    config = ("--config", f"overrides={overrides(world, k)} llm.shards={shards}")
    local = None
    if targets:
        local_copy = fresh_copy(WORK / "scale-slurm-local-copy")
        local_load = os.getloadavg()
        local_run = snakemake(
            local_copy,
            "--workflow-profile",
            "workflow/profiles/default",
            "--cores",
            "2",
            *targets,
            *config,
        )
        local = {
            "wall_s": round(local_run.seconds, 1),
            "load_before": [round(x, 2) for x in local_load],
            "load_after": [round(x, 2) for x in os.getloadavg()],
        }
    copy = fresh_copy(WORK / "scale-slurm-copy")
    ensure_packages()
    cluster = start_cluster()
    try:
        load, git = os.getloadavg(), git_state()
        run = snakemake(
            copy,
            "--workflow-profile",
            "workflow/profiles/slurm",
            *SLURM_FLAGS,
            "--jobs",
            str(jobs),
            *targets,
            *config,
        )
        submitted = dict(SUBMITTED.findall(run.stdout + run.stderr))
        finished = cluster.completed_jobs()
    finally:
        stop_cluster(cluster)
        shutil.rmtree(cluster.root, ignore_errors=True)
    states = Counter(finished.get(job, {}).get("JobState", "missing") for job in submitted)
    if set(states) != {"COMPLETED"}:
        raise RuntimeError(f"SLURM jobs not all COMPLETED: {dict(states)}")
    return {
        "k": k,
        "git": git,
        "judgments": rows_of(copy / build.paths("data").result("tables"), JUDGMENT_TABLES),
        "targets": targets or "the whole workflow",
        "local_same_targets": local,
        "total_wall_s": round(run.seconds, 1),
        "slurm_jobs": len(submitted),
        "slurm_rules": dict(sorted(Counter(submitted.values()).items())),
        "job_states": dict(states),
        "jobs_at_once": jobs,
        "llm_shards": shards,
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "command": (
            f"{command(k, 2).split(' snakemake ')[0]} snakemake --workflow-profile "
            f"workflow/profiles/slurm {' '.join(SLURM_FLAGS)} --jobs {jobs} "
            f"{''.join(t + ' ' for t in targets)}"
            f'--config overrides="{overrides(Path(f"$PWD/benchmarks/.work/scale-worlds/{k}"), k)} '
            f'llm.shards={shards}" (on a cluster started by tests/cluster/local_slurm.py)'
        ),
    }


def extrapolate(a: dict, b: dict, k: int) -> dict:
    """Power-law extrapolation to scale ``k`` of wall time and memory from runs ``a``, ``b``.

    Judgments grow in proportion to K, so the exponent is taken in K. An estimate, never a
    measurement: it assumes the slope between the two largest runs holds further out.
    """
    span = math.log(b["k"] / a["k"])
    out = {"k": k, "from": [a["k"], b["k"]]}
    for key in ("total_wall_s", "largest_process_rss_mb", "peak_tree_rss_mb"):
        slope = math.log(b[key] / a[key]) / span
        out[key] = round(b[key] * (k / b["k"]) ** slope, 0)
        out[f"{key}_slope"] = round(slope, 2)
    return out


def growth(a: dict, b: dict) -> dict:
    """Per rule: slopes of time and memory in judgments between runs ``a`` and ``b``."""
    ratio = math.log(b["judgments"] / a["judgments"])
    nlogn = math.log(b["judgments"] * math.log(b["judgments"])) - math.log(
        a["judgments"] * math.log(a["judgments"])
    )
    out = {}
    for rule, rb in b["rules"].items():
        ra = a["rules"].get(rule)
        # a rule that ran a different number of jobs (e.g. more shards) has no comparable time
        if ra is None or rule in CONSTANT_RULES or ra["jobs"] != rb["jobs"]:
            continue
        ta = ra["wall_s"] - ra["jobs"] * a["startup_s"]
        tb = rb["wall_s"] - rb["jobs"] * b["startup_s"]
        ma, mb = ra["max_rss_mb"] - a["startup_rss_mb"], rb["max_rss_mb"] - b["startup_rss_mb"]
        time_slope = math.log(tb / ta) / ratio if ta > 0.5 and tb > 0 else None
        mem_slope = math.log(mb / ma) / ratio if ma > 20 and mb > 0 else None
        out[rule] = {
            "time_slope": None if time_slope is None else round(time_slope, 2),
            "memory_slope": None if mem_slope is None else round(mem_slope, 2),
            "above_nlogn": bool(time_slope is not None and time_slope > nlogn / ratio + TOLERANCE),
        }
    return {"between": [a["k"], b["k"]], "nlogn_slope": round(nlogn / ratio, 3), "rules": out}


def machine() -> dict:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "processor": platform.processor() or platform.machine(),
    }


def target_line(r: dict) -> str:
    """The targets read on one run: the non-model rules' summed time and the largest process."""
    summed, largest = r["other_rules_wall_s"], r["largest_process_rss_mb"]
    time_met = "met" if summed < TARGET_MINUTES * 60 else "not met"
    memory_met = "met" if largest < TARGET_GB * 1024 else "not met"
    return (
        f"Targets at K = {r['k']}: every rule but the local-model ones, their wall times summed "
        f"job by job (what they take one at a time: an upper bound on their wall time), {summed} s "
        f"(target {TARGET_MINUTES * 60} s: {time_met}); the largest process {largest} MB "
        f"(target {TARGET_GB * 1024} MB: {memory_met}). The whole workflow, local-model rules "
        f"included ({r['model_rules_wall_s']} s of their jobs), took {r['total_wall_s']} s wall "
        f"with two jobs at once."
    )


def slurm_rows(payload: dict) -> list[tuple[str, dict]]:
    """(K, row) of the SLURM runs in ``payload``."""
    return list((payload.get("slurm") or {}).items())


def section(payload: dict) -> str:
    """The README section: one row per scale, the slowest rules, growth, model throughput."""
    runs, lines = payload["runs"], ["<!-- scale:start -->", "## Scale: 1, 10, 100 times the study"]
    lines += [
        "",
        "`python benchmarks/bench_scale.py` (no model calls; a fresh copy; "
        f"{payload['machine']['cpus']} CPUs, {payload['machine']['memory_gb']} GB, "
        f"{payload['machine']['platform']}). Load averages (1, 5, 15 min) before and after each "
        f"run are given. Targets: K = 100 under {TARGET_MINUTES} min without the local-model "
        f"rules, with peak memory under {TARGET_GB} GB on 2 cores; no rule growing faster than "
        "n log n in judgments.",
        "",
        "| K | judgments | simulate s | workflow wall s | CPU s | local-model rules s "
        "| other rules summed s | peak tree RSS MB | largest process MB | load before "
        "| load after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for k in payload["scales"]:
        r = runs.get(str(k))
        if r is None:
            lines.append(f"| {k} | not run | | | | | | | | | |")
            continue
        sim = "not timed (world written before)" if r["simulate_s"] is None else r["simulate_s"]
        only = r.get("only_rules")
        label = f"{k} (only {', '.join(only)}: not the scale's row)" if only else k
        lines.append(
            f"| {label} | {r['judgments']} | {sim} | {r['total_wall_s']} | {r['total_cpu_s']} "
            f"| {r['model_rules_wall_s']} | {r['other_rules_wall_s']} | {r['peak_tree_rss_mb']} "
            f"| {r['largest_process_rss_mb']} | {r['load_before']} | {r['load_after']} |"
        )
    biggest = runs[str(max(int(k) for k in runs))]
    measured = [("K = " + k, r) for k, r in sorted(runs.items(), key=lambda kv: int(kv[0]))]
    measured += [
        (f"SLURM K = {k}", r) for k, r in sorted(slurm_rows(payload), key=lambda kv: int(kv[0]))
    ]
    lines += [
        "",
        "Measured at commit: "
        + "; ".join(f"{what} {commit_text(r.get('git'))}" for what, r in measured)
        + ".",
        "",
        target_line(biggest),
        "",
        "Commands: "
        + "; ".join(
            f"K = {r['k']}: `{r['command']}`" for r in sorted(runs.values(), key=lambda v: v["k"])
        ),
    ]
    slurm = payload.get("slurm") or {}
    if slurm:
        lines += [
            "",
            "Through a one-node SLURM cluster on this machine (`--slurm K`; "
            "tests/cluster/local_slurm.py, the workflow's SLURM profile with its per-rule "
            "threads/mem_mb/runtime): wall time beside the local run of the same K.",
            "",
            "| K | targets | judgments | SLURM jobs (all COMPLETED) | jobs at once | llm.shards "
            "| SLURM wall s | local wall s, same targets | load before | load after |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for k, r in sorted(slurm.items(), key=lambda kv: int(kv[0])):
            same = r.get("local_same_targets")
            local = same["wall_s"] if same else runs.get(k, {}).get("total_wall_s", "not run")
            what = r["targets"] if isinstance(r["targets"], str) else ", ".join(r["targets"])
            lines.append(
                f"| {k} | {what} | {r['judgments']} | {r['slurm_jobs']} | {r['jobs_at_once']} "
                f"| {r['llm_shards']} | {r['total_wall_s']} | {local} | {r['load_before']} "
                f"| {r['load_after']} |"
            )
        lines += ["", "Command: `" + "`; `".join(r["command"] for r in slurm.values()) + "`"]
    for k in payload["not_run"]:
        lines += ["", f"K = {k} was not run here; its command: `{command(k, payload['cores'])}`"]
        est = (payload.get("extrapolated") or {}).get(str(k))
        if est:
            lines += [
                "",
                f"**Extrapolation, not a measurement** (power law in K through the K = "
                f"{est['from'][0]} and K = {est['from'][1]} rows above, model rules included): "
                f"K = {k} would take about {est['total_wall_s']:.0f} s of workflow wall time "
                f"(slope {est['total_wall_s_slope']}), a largest process of about "
                f"{est['largest_process_rss_mb']:.0f} MB (slope "
                f"{est['largest_process_rss_mb_slope']}) and a process tree of about "
                f"{est['peak_tree_rss_mb']:.0f} MB, under the same load.",
            ]
    top = sorted(biggest["rules"].items(), key=lambda kv: -kv[1]["wall_s"])[:10]
    lines += [
        "",
        f"Slowest rules at K = {biggest['k']} (wall s, peak RSS MB; start-up per job "
        f"{biggest['startup_s']:.1f} s):",
        "",
        "| rule | jobs | wall s | CPU s | peak RSS MB |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {rule} | {v['jobs']} | {v['wall_s']} | {v['cpu_s']} | {v['max_rss_mb']} |"
        for rule, v in top
    ]
    g = payload.get("growth")
    if g:
        flagged = [r for r, v in g["rules"].items() if v["above_nlogn"]]
        slopes = sorted(
            ((r, v) for r, v in g["rules"].items() if v["time_slope"] is not None),
            key=lambda kv: -kv[1]["time_slope"],
        )[:8]
        lines += [
            "",
            f"Growth between K = {g['between'][0]} and K = {g['between'][1]} (slope of log time "
            f"in log judgments, net of start-up; n log n is {g['nlogn_slope']}): "
            + ("rules above it: " + ", ".join(flagged) if flagged else "no rule above it")
            + ".",
            "",
            "| rule | time slope | memory slope |",
            "|---|---|---|",
        ]
        lines += [f"| {r} | {v['time_slope']} | {v['memory_slope']} |" for r, v in slopes]
    model_rows = [(r["k"], rule, v) for r in runs.values() for rule, v in r["model_rules"].items()]
    if model_rows:
        lines += [
            "",
            "Local-model rules (outside the time target): texts per second (rows written; the "
            "embedder encodes each distinct text once)",
            "",
            "| K | rule | texts | wall s | texts/s | peak RSS MB |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {k} | {rule} | {v['texts']} | {v['wall_s']} | {v['texts_per_s']} "
            f"| {v['max_rss_mb']} |"
            for k, rule, v in sorted(model_rows, key=lambda row: (row[0], row[1]))
        ]
    for note in payload.get("notes", []):
        lines += ["", note]
    lines.append("<!-- scale:end -->")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--not-run", type=int, nargs="*", default=[], help="listed, not run")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--slurm", type=int, nargs="*", default=[], help="scales run on SLURM")
    parser.add_argument("--slurm-jobs", type=int, default=2, help="SLURM jobs at once")
    parser.add_argument("--shards", type=int, default=2, help="llm.shards of the SLURM run")
    parser.add_argument(
        "--slurm-rules", nargs="*", default=[], help="only these rules' records (default: all)"
    )
    parser.add_argument(
        "--local-from-results", action="store_true", help="local rows from results.json"
    )
    parser.add_argument(
        "--rerun", type=int, nargs="*", default=[], help="with --local-from-results: run again"
    )
    parser.add_argument("--note", action="append", default=[], help="a sentence for the README")
    parser.add_argument(
        "--rules",
        nargs="*",
        default=[],
        help="local runs: only these rules' record files (checks the script; default: all)",
    )
    parser.add_argument(
        "--slurm-dry-run",
        action="store_true",
        help="plan the --slurm runs with snakemake -n (no cluster); publishes nothing for them",
    )
    args = parser.parse_args(argv)
    previous = json.loads(RESULTS.read_text()).get("scale", {}) if RESULTS.exists() else {}
    runs: dict[str, dict] = {}
    slurm: dict[str, dict] = {}
    if args.local_from_results:
        runs, slurm = dict(previous.get("runs", {})), dict(previous.get("slurm") or {})
    to_run = [
        k for k in args.scales if k not in args.not_run and (str(k) not in runs or k in args.rerun)
    ]
    if to_run:
        copy = fresh_copy(WORK / "scale-copy")
        for k in to_run:
            runs[str(k)] = run_scale(copy, k, args.cores, args.rules)
            publish(args, runs, slurm)  # after every scale, so a long run leaves what it measured
    for k in args.slurm:
        if args.slurm_dry_run:
            print(json.dumps(plan_slurm(k, args.slurm_jobs, args.shards, args.slurm_rules)))
            continue
        slurm[str(k)] = run_slurm(k, args.slurm_jobs, args.shards, args.slurm_rules)
        publish(args, runs, slurm)
    if not args.slurm or args.slurm_dry_run:
        publish(args, runs, slurm)
    ran = sorted(int(k) for k in runs)
    print(pd.DataFrame(runs[str(ran[-1])]["rules"]).T.sort_values("wall_s").tail(12))


def publish(args: argparse.Namespace, runs: dict[str, dict], slurm: dict[str, dict]) -> None:
    """Write results.json key ``scale`` and the README section from the runs so far."""
    ran = sorted(int(k) for k in runs)
    not_run = [k for k in args.scales if str(k) not in runs]
    last_two = [runs[str(k)] for k in ran[-2:]]
    payload = {
        "machine": machine(),
        "cores": args.cores,
        "scales": args.scales,
        "not_run": not_run,
        "runs": runs,
        "growth": growth(*last_two) if len(ran) >= 2 else None,
        "extrapolated": (
            {str(k): extrapolate(*last_two, k) for k in not_run if k > ran[-1]}
            if len(ran) >= 2
            else {}
        ),
        "slurm": slurm,
        "notes": args.note,
    }
    update_results("scale", payload)
    update_readme("scale", section(payload))


if __name__ == "__main__":
    main()
