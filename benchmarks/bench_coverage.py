"""Coverage of the workflow's 95% intervals over many simulated worlds (on demand, not a test).

Each world is the bundled world's generative model with a fresh seed. The script writes its
raw files, reads them with the workflow's own adapter and computes the stage-1, 2 and 3
records in process exactly as the statistics rules do with ``models=none`` (no workflow
model: only the world's simulated raters), with the simulator's own explicit-mention labels
in place of the text detector. Each estimate's interval is compared with the world's ground
truth (``analysis.simulation.truth``, the same for every seed). Per estimator it reports the
empirical coverage with its Wilson 95% Monte Carlo interval, the bias (mean estimate minus
truth) with its Monte Carlo standard error, the mean interval width, and that width over
the width a normal interval of the estimates' spread across worlds would have (above 1: the
interval is wider than the estimator varies; below 1: narrower). The summary uses
``analysis.stats.coverage`` and the committed ``truth.json``, as the paper's table does.

Resumable: one JSON line per world is appended to ``coverage_worlds.jsonl`` (seed, n_boot,
every estimate); a rerun skips seeds already there, so a later session extends R with
``--worlds`` larger than before. ``--summarize`` rebuilds results.json["coverage"] and the
README section from the lines without simulating. ``--jobs N`` runs N worlds at once in
worker processes; the lines are still written in seed order. After a change to how an
interval is computed, move the old lines away and run every world again: lines of two
versions of the statistics do not mix.

    python benchmarks/bench_coverage.py --worlds 20              # a small check
    python benchmarks/bench_coverage.py --worlds 1000 --n-boot 500 --jobs 2
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
from functools import partial
from pathlib import Path

import pandas as pd
from results_io import (
    OUTPUT_DIR,
    RESULTS,
    commit_text,
    git_state,
    markers,
    update_readme,
    update_results,
)

from analysis.data import read_dataset
from analysis.paper.validation import read_coverage_worlds, read_truth
from analysis.simulation import DEFAULT_PARAMETERS, simulate_world
from analysis.simulation.simulate import World
from analysis.simulation.write import write_files
from analysis.stages.combine import (
    combine_attribute_judgments,
    combine_preference_ratings,
    combine_relevance_votes,
    combine_responses,
)
from analysis.stats.coverage import COVERAGE_TARGET, COVERAGE_WORLDS, interval_coverage
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
#: the committed world's ground truth (the worlds share its model, so its truth)
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


def world_estimates(seed: int, cfg: StatsSettings, version: str, keys: set[str]) -> dict[str, list]:
    """[value, ci_low, ci_high] of every truth key the world's records estimate."""
    world = simulate_world(dataclasses.replace(DEFAULT_PARAMETERS, seed=seed))
    with tempfile.TemporaryDirectory() as tmp:
        write_files(world, Path(tmp))
        tables = read_dataset("annotation_tool", Path(tmp)).tables
    judgments = combine_attribute_judgments(tables["attribute_judgments"], [], version)
    votes = combine_relevance_votes(tables["relevance_votes"], [], version)
    ratings = combine_preference_ratings(tables["preference_ratings"], [], version)
    responses = combine_responses(tables["responses"], [], version)
    records = [
        *stage1_records(judgments, tables["users"], cfg),
        *stage2_statistics(votes, cfg).records,
        *stage3_records(ratings, cfg, mentions=mention_labels(world, tables), responses=responses),
    ]
    return {r.key: [r.value, r.ci_low, r.ci_high] for r in records if r.key in keys}


def done_seeds() -> set[int]:
    if not WORLDS.exists():
        return set()
    return {json.loads(line)["seed"] for line in WORLDS.read_text().splitlines() if line.strip()}


def timed_world(
    seed: int, cfg: StatsSettings, version: str, keys: set[str]
) -> tuple[dict[str, list], float]:
    """:func:`world_estimates` and the seconds it took (in a worker process)."""
    start = time.perf_counter()
    return world_estimates(seed, cfg, version, keys), time.perf_counter() - start


def run_worlds(n_worlds: int, n_boot: int, jobs: int = 1) -> None:
    """Simulate and analyse worlds FIRST_SEED.. until ``n_worlds`` lines exist (appending).

    The worlds run in ``jobs`` worker processes; each line is appended as soon as the worlds
    before it are done, so an interrupted run keeps a prefix of the seeds.
    """
    # the committed truth's keys (as summarize reads them): the population truth takes
    # longer to compute than a world takes to run
    keys = {k for k, t in read_truth(TRUTH).items() if t.get("in_coverage", True)}
    cfg = StatsSettings.from_rule_params(
        subtree(
            compose_config(["models=none", f"stats.n_boot={n_boot}"]),
            "stats",
            "run.seed",
            "stages.caveats",
        )
    )
    version = compose_config(["models=none"])["prompts"]["version"]
    have = done_seeds()
    todo = [s for s in range(FIRST_SEED, FIRST_SEED + n_worlds) if s not in have]
    print(f"{len(have)} worlds already done; {len(todo)} to go (B = {n_boot})", flush=True)
    one = partial(timed_world, cfg=cfg, version=version, keys=keys)
    commit = git_state()["commit"]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        done = zip(todo, pool.map(one, todo), strict=True)
        for i, (seed, (estimates, seconds)) in enumerate(done, 1):
            line = {"seed": seed, "n_boot": n_boot, "estimates": estimates, "commit": commit}
            with WORLDS.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, sort_keys=True) + "\n")
            print(f"world {seed}: {seconds:.1f} s ({i}/{len(todo)})", flush=True)


def summarize() -> dict:
    """Coverage, its Wilson interval, bias and width per estimator, from the world lines.

    The same function and the same truth file as the paper's validation table
    (``analysis.paper.validation.coverage_records``), so the two cannot disagree.
    """
    truth = read_truth(TRUTH)
    worlds = read_coverage_worlds(WORLDS)
    lines = [json.loads(x) for x in WORLDS.read_text().splitlines() if x.strip()]
    rows = {}
    for key, t in truth.items():
        if not t.get("in_coverage", True) or key not in worlds:
            continue
        cov = interval_coverage(worlds[key], float(t["value"]))
        rows[key] = {
            "truth": float(t["value"]),
            "worlds": cov.worlds,
            "covered": cov.covered,
            "coverage": cov.coverage,
            "coverage_mc_low": cov.mc_low,
            "coverage_mc_high": cov.mc_high,
            "bias": cov.bias,
            "bias_mc_se": cov.bias_mc_se,
            "mean_ci_width": cov.mean_ci_width,
            "width_to_spread": cov.width_to_spread,
            "verdict": cov.verdict,
        }
    return {
        "worlds": len(lines),
        "n_boot": sorted({ln["n_boot"] for ln in lines}),
        "seeds": [min(ln["seed"] for ln in lines), max(ln["seed"] for ln in lines)],
        # the commits the worlds ran at (lines written before the lines recorded it: None)
        "world_commits": dict(
            sorted(Counter(ln.get("commit") or "not recorded" for ln in lines).items())
        ),
        "target": list(COVERAGE_TARGET),
        "mc_interval": "Wilson 95% interval of the coverage proportion",
        "estimators": rows,
    }


def readme_section(res: dict) -> str:
    env = res["environment"]
    findings = [k for k, r in res["estimators"].items() if r["verdict"] != "ok"]
    lines = [
        START,
        "## Coverage of the 95% intervals over simulated worlds (`bench_coverage.py`)",
        "",
        f"R = {res['worlds']} worlds of the bundled world's model with fresh seeds"
        f" {res['seeds'][0]}-{res['seeds'][1]}, B = {', '.join(map(str, res['n_boot']))}"
        " bootstrap resamples per interval; statistics computed in process as the rules do"
        " with `models=none` and the simulator's own mention labels; truth from"
        " `analysis.simulation.truth` (`data/raw/bundled/truth.json`). Coverage is the share"
        " of worlds whose interval holds the truth, with its Wilson 95% Monte Carlo interval;"
        f" target: no interval wholly outside [{COVERAGE_TARGET[0]}, {COVERAGE_TARGET[1]}]."
        f" Machine: {env['cpus']}"
        f" shared CPUs, python {env['python']}, 1-min load average"
        f" {env['load_average_1min_at_start']} at the start of the last call"
        + (" (which only summarized)." if env["summarize_only"] else f" ({env['wall_hours']} h).")
        + " Worlds by the commit they ran at: "
        + ", ".join(
            f"{commit[:7] if commit != 'not recorded' else commit} {n}"
            for commit, n in res["world_commits"].items()
        )
        + f"; summarized at {commit_text(res.get('git'))}."
        + (f" {res['note']}" if res["note"] else ""),
        "",
        "```bash",
        "python benchmarks/bench_coverage.py --worlds 1000 --n-boot 500 --jobs 2   # resumable",
        "python benchmarks/bench_coverage.py --summarize                  # results + this table",
        "```",
        "",
        "| estimator | truth | worlds | coverage [MC 95%] | bias (MC se) | mean CI width"
        " | width / spread |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for key, r in res["estimators"].items():
        flag = "" if r["verdict"] == "ok" else f" **{r['verdict']}**"
        se = "" if r["bias_mc_se"] is None else f" ({r['bias_mc_se']:.4f})"
        ratio = "" if r.get("width_to_spread") is None else f"{r['width_to_spread']:.2f}"
        lines.append(
            f"| `{key}` | {r['truth']:.4g} | {r['worlds']} | {r['coverage']:.3f}"
            f" [{r['coverage_mc_low']:.3f}, {r['coverage_mc_high']:.3f}]{flag} |"
            f" {r['bias']:+.4f}{se} | {r['mean_ci_width']:.4f} | {ratio} |"
        )
    lines += [
        "",
        "Findings (Monte Carlo interval wholly outside the target): "
        + (", ".join(f"`{k}`" for k in findings) if findings else "none")
        + ".",
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--worlds", type=int, default=COVERAGE_WORLDS, help="R: worlds in all (resumes)"
    )
    parser.add_argument("--n-boot", type=int, default=500, help="bootstrap resamples per CI")
    parser.add_argument("--summarize", action="store_true", help="only rebuild the summary")
    parser.add_argument("--jobs", type=int, default=1, help="worlds run at once (processes)")
    parser.add_argument("--note", default="", help="a sentence for the README (e.g. why R < 1000)")
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
    for key, r in res["estimators"].items():
        print(
            f"{key:60s} cover {r['coverage']:.3f} [{r['coverage_mc_low']:.3f},"
            f" {r['coverage_mc_high']:.3f}] bias {r['bias']:+.4f} {r['verdict']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
