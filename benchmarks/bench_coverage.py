"""Coverage of the workflow's 95% intervals over many simulated worlds (on demand, not a test).

Each world is the bundled world's generative model with a fresh seed: new users, prompts,
annotators and models' yes-bias, drawn with every random effect the world has
(``analysis.simulation``). The script writes its raw files, reads them with the workflow's
own adapter and computes the stage-1, 2 and 3 records in process exactly as the statistics
rules do with ``models=none`` (no workflow model: only the world's simulated raters), with
the simulator's own explicit-mention labels in place of the text detector. It computes every
record twice on the same world:

* **design**: the workflow's configuration (each statistic's declared resampling design);
* **user-only**: the same statistics with users as the only resampled factor
  (``USER_ONLY``), the design the workflow used before prompts and people were resampled.

Each interval is compared with the world's ground truth (``analysis.simulation.truth``: it
integrates over users, prompts and people and is conditional on the world's fixed factors,
its five models and the annotators whose majority is the reference label, so it is computed
per world and stored in the world's line). Per estimand the summary gives
both intervals' coverage with Wilson 95% Monte Carlo intervals, the bias (mean estimate
minus truth) with its Monte Carlo standard error, the mean width and the width over the
estimates' spread across worlds (2 z sd: above 1 the interval is wider than the estimator
varies). Pooled over estimands, coverage gets a Monte Carlo interval from resampling worlds
(the estimands of one world are not independent) and a two-sided test of 0.95.

Targets for the design's intervals (``analysis.stats.coverage.COVERAGE_TARGETS``): no
estimand's Monte Carlo interval wholly below 0.93; pooled coverage in [0.94, 0.97]; an
estimand whose Monte Carlo interval lies wholly above 0.97 only where its design is marked
conservative and its width is at most 1.25 times the estimates' spread.

Resumable: one JSON line per world is appended to ``coverage_worlds.jsonl``; a rerun skips
seeds already there, so a later session extends R with ``--worlds`` larger than before.
``--summarize`` rebuilds results.json["coverage"] and the README section from the lines
without simulating. ``--jobs N`` runs N worlds at once in worker processes; the lines are
still written in seed order. After a change to how an interval is computed or to the
simulator, move the old lines away and run every world again: lines of two versions of the
statistics or of the world do not mix (``--summarize`` refuses lines of two B).

    python benchmarks/bench_coverage.py --worlds 20              # a small check
    python benchmarks/bench_coverage.py --worlds 1000 --jobs 2   # the paper's B (stats.n_boot)
    python benchmarks/bench_coverage.py --summarize
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from functools import cache, partial
from pathlib import Path

import pandas as pd
from results_io import (
    OUTPUT_DIR,
    RESULTS,
    append_jsonl,
    git_state,
    markers,
    update_readme,
    update_results,
)

from analysis.data import read_dataset
from analysis.paper.validation import coverage_summary, read_coverage_worlds, read_truth
from analysis.simulation import DEFAULT_PARAMETERS, simulate_world
from analysis.simulation.simulate import World
from analysis.simulation.truth import FixedFactors, world_truth
from analysis.simulation.write import write_files
from analysis.stages.combine import (
    combine_attribute_judgments,
    combine_preference_ratings,
    combine_relevance_votes,
    combine_responses,
)
from analysis.stats.coverage import COVERAGE_TARGETS, COVERAGE_WORLDS
from analysis.stats.settings import StatsSettings
from analysis.stats.study_stage1 import stage1_records
from analysis.stats.study_stage2 import stage2_statistics
from analysis.stats.study_stage3 import stage3_records
from analysis.workflow_config import compose_config, subtree

BENCH_DIR = Path(__file__).resolve().parent
#: one line per world (``BENCH_OUTPUT_DIR`` moves it with the other outputs: results_io.py)
WORLDS = OUTPUT_DIR / "coverage_worlds.jsonl"
START, END = markers("coverage")
#: fresh seeds: disjoint from the committed world's (20), the calibration's (0-39) and the
#: truth's large draw (900000-)
FIRST_SEED = 10_000
#: the two configurations compared on every world: the workflow's own, and users only
DESIGN: tuple[str, ...] = ()
USER_ONLY: tuple[str, ...] = ("stats.design=one_way", "stats.cluster=user")
#: significant digits stored per number (Monte Carlo error is far larger)
DIGITS = 7
#: the committed world's truth: its keys are the estimands of the study
TRUTH = BENCH_DIR.parent / "data" / "raw" / "bundled" / "truth.json"


def mention_labels(world: World, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The simulator's own explicit-mention flag of every personalized-response slot."""
    t, p = world.truth, world.params
    pairs = world.files["extracted/task5_items.jsonl"]
    attrs = tables["attributes"]
    attrs = attrs[attrs["set"] == "stage2"].set_index(["user_id", "position"])["attribute_id"]
    prompts = tables["prompts"].set_index("prompt_index")["prompt_id"]
    users = [pairs[s]["user_id"] for s in t["stage3_all_pair"]]
    return pd.DataFrame(
        {
            "user_id": users,
            "prompt_id": [prompts[pairs[s]["prompt_index"]] for s in t["stage3_all_pair"]],
            "generator": [p.llm_names[g] for g in t["stage3_all_generator"]],
            "attribute_id": [
                attrs[(u, int(k))] for u, k in zip(users, t["stage3_all_attribute"], strict=True)
            ],
            "mentioned": t["stage3_all_named"],
        }
    )


@cache
def settings(n_boot: int, overrides: tuple[str, ...]) -> StatsSettings:
    """The statistics rules' settings with ``models=none``, B and ``overrides``.

    Built once per process and configuration, as a rule builds its settings once: composing
    the Hydra config took about a third of a world's time when it was redone per world."""
    cfg = compose_config(["models=none", f"stats.n_boot={n_boot}", *overrides])
    return StatsSettings.from_rule_params(subtree(cfg, "stats", "run.seed", "stages.caveats"))


def _round(x: float | None) -> float | None:
    return None if x is None else float(f"{x:.{DIGITS}g}")


def simulated(seed: int, **changes: float) -> tuple[World, dict, dict[str, pd.DataFrame]]:
    """World ``seed`` of the bundled world's model (``changes``: parameters set otherwise),
    its truth, and its raw files as the workflow's adapter reads them."""
    world = simulate_world(dataclasses.replace(DEFAULT_PARAMETERS, seed=seed, **changes))
    truth = world_truth(world.params, FixedFactors.of_world(world.truth))
    with tempfile.TemporaryDirectory() as tmp:
        write_files(world, Path(tmp))
        tables = read_dataset("annotation_tool", Path(tmp)).tables
    return world, truth, tables


def world_line(seed: int, n_boot: int, version: str, keys: set[str]) -> dict:
    """One world: its truth and both configurations' [value, ci_low, ci_high] per estimand."""
    world, truth, tables = simulated(seed)
    judgments = combine_attribute_judgments(tables["attribute_judgments"], [], version)
    votes = combine_relevance_votes(tables["relevance_votes"], [], version)
    ratings = combine_preference_ratings(tables["preference_ratings"], [], version)
    responses = combine_responses(tables["responses"], [], version)
    mentions = mention_labels(world, tables)
    intervals = {}
    for name, overrides in (("design", DESIGN), ("user_only", USER_ONLY)):
        cfg = settings(n_boot, overrides)
        records = [
            *stage1_records(judgments, tables["users"], cfg),
            *stage2_statistics(votes, cfg).records,
            *stage3_records(ratings, cfg, mentions=mentions, responses=responses),
        ]
        intervals[name] = {
            r.key: [_round(r.value), _round(r.ci_low), _round(r.ci_high)]
            for r in records
            if r.key in keys
        }
    return {
        "seed": seed,
        "n_boot": n_boot,
        "truth": {k: _round(truth[k].value) for k in sorted(keys)},
        "intervals": intervals,
    }


def done_seeds() -> set[int]:
    if not WORLDS.exists():
        return set()
    return {json.loads(line)["seed"] for line in WORLDS.read_text().splitlines() if line.strip()}


def timed_world(seed: int, n_boot: int, version: str, keys: set[str]) -> tuple[dict, float]:
    """:func:`world_line` and the seconds it took (in a worker process)."""
    start = time.perf_counter()
    return world_line(seed, n_boot, version, keys), time.perf_counter() - start


def run_worlds(n_worlds: int, n_boot: int, jobs: int = 1) -> None:
    """Simulate and analyse worlds FIRST_SEED.. until ``n_worlds`` lines exist (appending).

    The worlds run in ``jobs`` worker processes; each line is appended as soon as the worlds
    before it are done, so an interrupted run keeps a prefix of the seeds.
    """
    # the committed truth's keys: computing a truth needs the large draw (once per process)
    keys = {k for k, t in read_truth(TRUTH).items() if t.get("in_coverage", True)}
    version = compose_config(["models=none"])["prompts"]["version"]
    have = done_seeds()
    todo = [s for s in range(FIRST_SEED, FIRST_SEED + n_worlds) if s not in have]
    print(f"{len(have)} worlds already done; {len(todo)} to go (B = {n_boot})", flush=True)
    one = partial(timed_world, n_boot=n_boot, version=version, keys=keys)
    commit = git_state()["commit"]
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else nullcontext() as pool:
        results = pool.map(one, todo) if pool is not None else map(one, todo)
        for i, (seed, (line, seconds)) in enumerate(zip(todo, results, strict=True), 1):
            line["commit"] = commit
            append_jsonl(WORLDS, line)
            print(f"world {seed}: {seconds:.1f} s ({i}/{len(todo)})", flush=True)


def summarize() -> dict:
    """Coverage of both configurations per estimand and pooled, from the world lines.

    The same function as the paper's validation records
    (``analysis.paper.validation.coverage_summary``), so the two cannot disagree.
    """
    lines = [json.loads(x) for x in WORLDS.read_text().splitlines() if x.strip()]
    return {
        **coverage_summary(read_coverage_worlds(WORLDS)),
        # the commits the worlds ran at
        "world_commits": dict(
            sorted(Counter(ln.get("commit") or "not recorded" for ln in lines).items())
        ),
    }


def _cell(row: dict) -> str:
    flag = "" if row["verdict"] == "ok" else f" **{row['verdict']}**"
    return f"{row['coverage']:.3f} [{row['mc_low']:.3f}, {row['mc_high']:.3f}]{flag}"


def readme_section(res: dict) -> str:
    env = res["environment"]
    pooled = res["pooled"]
    lines = [
        START,
        "## Coverage of the 95% intervals over simulated worlds (`bench_coverage.py`)",
        "",
        f"R = {res['worlds']} worlds of the bundled world's model with fresh seeds"
        f" {res['seeds'][0]}-{res['seeds'][1]}, B = {', '.join(map(str, res['n_boot']))}"
        " bootstrap resamples per interval; statistics computed in process as the rules do"
        " with `models=none` and the simulator's own mention labels, twice per world: with"
        " each statistic's declared design and with users as the only resampled factor; truth"
        " per world from `analysis.simulation.truth` (random factors integrated out, the five"
        " models conditioned on). Coverage is the share of worlds whose interval holds the"
        " truth, with its Wilson 95% Monte Carlo interval; pooled coverage over estimands has"
        " a percentile interval from resampling worlds. Targets for the design's intervals:"
        f" no estimand's Monte Carlo interval wholly below {COVERAGE_TARGETS.floor};"
        f" pooled in [{COVERAGE_TARGETS.pooled[0]}, {COVERAGE_TARGETS.pooled[1]}]; wholly above"
        f" {COVERAGE_TARGETS.ceiling} only for a design marked conservative whose width is at"
        f" most {COVERAGE_TARGETS.conservative_width} times the estimates' spread."
        f" Machine: {env['cpus']} shared CPUs, python {env['python']}, 1-min load average"
        f" {env['load_average_1min_at_start']} at the start of the last call"
        + (" (which only summarized)." if env["summarize_only"] else f" ({env['wall_hours']} h).")
        + " Produced at (the commit whose simulator and statistics ran each world line, with"
        " its number of worlds; summarizing runs neither): "
        + ", ".join(
            f"{commit[:7] if commit != 'not recorded' else commit} {n}"
            for commit, n in res["world_commits"].items()
        )
        + "."
        + (f" {res['note']}" if res["note"] else ""),
        "",
        "```bash",
        "python benchmarks/bench_coverage.py --worlds 1000 --jobs 2  # resumable; B: stats.n_boot",
        "python benchmarks/bench_coverage.py --summarize             # results + this table",
        "```",
        "",
        f"Pooled over {pooled['design']['estimands']} estimands: design"
        f" {_cell(pooled['design'])} (test of 0.95: p = {pooled['design']['p_vs_nominal']:.3g});"
        f" users only {_cell(pooled['user_only'])}"
        f" (p = {pooled['user_only']['p_vs_nominal']:.3g}). Targets met:"
        f" {'yes' if res['targets_met'] else 'no'}"
        + (f" ({'; '.join(res['target_misses'])})" if res["target_misses"] else "")
        + ".",
        "",
        "| estimand | users only [MC 95%] | design [MC 95%] | bias (MC se) | design width"
        " / spread |",
        "|---|---|---|---:|---:|",
    ]
    for key, r in res["estimands"].items():
        d, u = r["design"], r["user_only"]
        se = "" if d["bias_mc_se"] is None else f" ({d['bias_mc_se']:.4f})"
        ratio = "" if d["width_to_spread"] is None else f"{d['width_to_spread']:.2f}"
        lines.append(f"| `{key}` | {_cell(u)} | {_cell(d)} | {d['bias']:+.4f}{se} | {ratio} |")
    lines += [END]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--worlds", type=int, default=COVERAGE_WORLDS, help="R: worlds in all (resumes)"
    )
    parser.add_argument(
        "--n-boot",
        type=int,
        default=int(compose_config()["stats"]["n_boot"]),
        help="bootstrap resamples per CI (default: the paper's stats.n_boot)",
    )
    parser.add_argument("--summarize", action="store_true", help="only rebuild the summary")
    parser.add_argument("--jobs", type=int, default=1, help="worlds run at once (processes)")
    parser.add_argument("--note", default="", help="a sentence for the README (when, load, why)")
    args = parser.parse_args(argv)
    start = time.time()
    load = os.getloadavg()[0]
    if not args.summarize:
        run_worlds(args.worlds, args.n_boot, args.jobs)
    res = summarize()
    old = json.loads(RESULTS.read_text()).get("coverage", {}) if RESULTS.exists() else {}
    res["environment"] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        # of this call: with --summarize the worlds ran earlier (--note says how and where)
        "load_average_1min_at_start": round(load, 2),
        "wall_hours": round((time.time() - start) / 3600, 2),
        "summarize_only": args.summarize,
    }
    res["note"] = args.note or old.get("note", "")
    update_readme("coverage", readme_section(update_results("coverage", res)))
    for key, r in res["estimands"].items():
        print(f"{key:60s} users only {_cell(r['user_only'])}  design {_cell(r['design'])}")
    print("pooled", res["pooled"], "targets met:", res["targets_met"], res["target_misses"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
