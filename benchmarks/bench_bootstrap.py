"""Benchmark: bootstrap CIs of the stage-2 pairwise kappa matrix, vectorized vs a plain loop.

What is measured
    B = 10,000 cluster-bootstrap resamples (users) of the full pairwise Cohen's kappa matrix
    over 8 raters (3 humans + 5 models, 28 pairs) and its three group means, on synthetic
    binary relevance votes of the bundled world's size (~4,000 (user, prompt, attribute)
    items of 164 (user, prompt) pairs, 48 users, 41 prompts; generated here, seeded, so the
    benchmark does not depend on the workflow having run).

    * fast: :func:`analysis.stats.bootstrap.bootstrap_pairwise_kappa`: every resample's 2x2
      table of every pair from one matrix product ``counts (B x users) @ tables (users x 28*4)``.
    * two-way: the declared design of the study's kappa group means with people in them
      (``relevance_people``: users and prompts crossed, annotators deleted one at a time,
      :func:`analysis.stats.resampling.pairwise_kappa`): B resamples of each of users,
      prompts and their cells (Cameron-Gelbach-Miller), the leave-one-level-out matrices the
      annotators' clusterings read, and the intervals of the group means read by the record
      maker. Its targets: at most 5 times the one-way time of the same run, and at least
      1,000 times faster than the scikit-learn loop.
    * loop: what one writes without it: for each resample, draw the users, gather their items
      and call ``sklearn.metrics.cohen_kappa_score`` on the shared items of each pair, then
      average the blocks. It is timed on the first ``--loop-resamples`` resamples (the same
      resamples as the fast path, checked to give the same kappas) and extrapolated linearly
      to B: the loop's cost per resample does not depend on B.

Run it (it is not a test; 10-30 s with the defaults, almost all of it the timed loop)::

    python benchmarks/bench_bootstrap.py [--n-boot 10000] [--loop-resamples 50] [--seed 0]

It prints both times and the ratio and writes them under the key ``"bootstrap"`` of
``benchmarks/results.json`` (other benchmarks own the other keys) and its section of
``benchmarks/README.md``, with the commit, the machine and the load average at the start and
the end (the machine is shared: a time measured under load is inflated, the ratio less so).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))  # run from a checkout without installing

from results_io import (  # noqa: E402
    RESULTS,
    commit_text,
    git_state,
    machine,
    markers,
    update_readme,
    update_results,
)

from analysis.stats.bootstrap import bootstrap_pairwise_kappa, resample_counts  # noqa: E402
from analysis.stats.records import (  # noqa: E402
    percentile_bounds,
    read_interval,
)
from analysis.stats.resampling import Units, cell_labels, pairwise_kappa, plan  # noqa: E402
from analysis.stats.settings import StatsSettings  # noqa: E402
from analysis.workflow_config import compose_config, subtree  # noqa: E402

TARGET_SPEEDUP = 200.0
#: the declared two-way design against the one-way bootstrap and against the loop
TARGET_TWO_WAY_RATIO = 5.0
TARGET_TWO_WAY_SPEEDUP = 1000.0
START, END = markers("bootstrap")
HUMANS = ("sim-human-01", "sim-human-02", "sim-human-03")
MODELS = ("sim-llm-a", "sim-llm-b", "sim-llm-c", "sim-llm-d", "sim-llm-e")


def synthetic_stage2(seed: int) -> pd.DataFrame:
    """Binary relevance votes shaped like the study's final stage 2 (sizes, rates, kappas).

    Users have 10-40 profile attributes; each of 41 prompts is paired with 4 users (164
    pairs); every attribute of a pair's user is one item. An item is truly relevant with a
    user-specific rate (Beta(2, 8), mean 0.2); each human copies the truth with probability
    .66 and otherwise guesses (human-human kappa ~ .43); models share an over-inclusive
    latent (truth or a 35% "plausible" flag: they select 40-60%) that each copies with
    probability .8, so they agree more with each other than with people. About 1% of
    ratings are missing, so pairs differ slightly in their shared items.
    """
    rng = np.random.default_rng(seed)
    n_users, n_prompts, users_per_prompt = 48, 41, 4
    profile = rng.integers(10, 41, n_users)
    user_rate = rng.beta(2, 8, n_users)
    rows = []
    for prompt in range(n_prompts):
        for user in rng.choice(n_users, users_per_prompt, replace=False):
            for attr in range(profile[user]):
                rows.append(
                    (
                        f"u{user:02d}-p{prompt:02d}-a{attr:02d}",
                        f"u{user:02d}",
                        user,
                        f"p{prompt:02d}",
                    )
                )
    items = pd.DataFrame(rows, columns=["item", "user_id", "user_code", "prompt_id"])
    n = len(items)
    truth = rng.random(n) < user_rate[items["user_code"].to_numpy()]
    plausible = truth | (rng.random(n) < 0.35)
    votes = {}
    for h in HUMANS:
        votes[h] = np.where(rng.random(n) < 0.66, truth, rng.random(n) < 0.2)
    for k, m in enumerate(MODELS):
        votes[m] = np.where(rng.random(n) < 0.8, plausible, rng.random(n) < 0.3 + 0.05 * k)
    parts = []
    for rater, vote in votes.items():
        keep = rng.random(n) > 0.01
        parts.append(
            pd.DataFrame(
                {
                    "item": items["item"].to_numpy()[keep],
                    "rater": rater,
                    "label": vote[keep],
                    "user_id": items["user_id"].to_numpy()[keep],
                    "prompt_id": items["prompt_id"].to_numpy()[keep],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def naive_loop(
    df: pd.DataFrame, counts: np.ndarray, raters: list[str], groups: dict[str, str]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The straightforward bootstrap: per resample, per pair, scikit-learn's kappa."""
    wide = df.pivot(index="item", columns="rater", values="label").reindex(columns=raters)
    user_of = df.groupby("item")["user_id"].first().reindex(wide.index).to_numpy()
    users = np.array(sorted(set(user_of)), dtype=object)
    members = [np.flatnonzero(user_of == u) for u in users]
    values = wide.to_numpy(dtype=object)
    observed = ~pd.isna(wide).to_numpy()
    pairs = [(a, b) for a in range(len(raters)) for b in range(a + 1, len(raters))]
    kappas = np.full((len(counts), len(pairs)), np.nan)
    for r, row in enumerate(counts):
        idx = np.concatenate([np.repeat(members[c], row[c]) for c in np.flatnonzero(row)])
        for p, (a, b) in enumerate(pairs):
            shared = idx[observed[idx, a] & observed[idx, b]]
            if shared.size:
                kappas[r, p] = cohen_kappa_score(
                    values[shared, a].astype(bool), values[shared, b].astype(bool)
                )
    means = {}
    for key in ("human_human", "human_model", "model_model"):
        cols = [
            p
            for p, (a, b) in enumerate(pairs)
            if "_".join(sorted((groups[raters[a]], groups[raters[b]]))) == key
        ]
        means[key] = np.nanmean(kappas[:, cols], axis=1)
    return kappas, means


def sig(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def two_way(df: pd.DataFrame, groups: dict[str, str], settings: StatsSettings) -> dict:
    """The declared design's kappa group means (people resampled) and their intervals."""
    long = df.assign(
        users=df["user_id"],
        prompts=df["prompt_id"],
        cells=cell_labels(df["user_id"].to_numpy(), df["prompt_id"].to_numpy()),
    )
    per_item = long.drop_duplicates("item")
    units = Units(
        n=len(per_item),
        users=per_item["user_id"].to_numpy(dtype=object),
        prompts=per_item["prompt_id"].to_numpy(dtype=object),
        annotators=HUMANS,
    )
    boot = pairwise_kappa(
        plan(settings, "relevance_people", units),
        long,
        groups=groups,
        raters=sorted(groups),
        categories=[False, True],
    )
    means = {}
    for key, res in boot.group_means.items():
        iv = read_interval(res, settings, None, len(per_item)).interval
        means[key] = {"estimate": sig(iv.value), "ci_low": sig(iv.low), "ci_high": sig(iv.high)}
    return means


def readme_section(res: dict) -> str:
    """This script's section of benchmarks/README.md, from its results.json payload."""
    env = res["environment"]
    means = res["group_means_95ci"]
    lines = [
        START,
        '## Bootstrap of the pairwise kappa matrix (`bench_bootstrap.py`, key `"bootstrap"`)',
        "",
        f"B = {res['n_boot']:,} cluster-bootstrap resamples (by user) of the full stage-2 "
        f"pairwise Cohen's kappa matrix ({res['n_raters']} raters, {res['n_pairs']} pairs) and "
        "its three group means (human-human, human-model, model-model), on seeded synthetic "
        f"binary relevance votes of the bundled world's size ({res['n_items']:,} items, "
        f"{res['n_clusters']} users, {res['n_ratings']:,} ratings, ~1% missing), generated by "
        "the script itself.",
        "",
        "- **vectorized**: `analysis.stats.bootstrap.bootstrap_pairwise_kappa`: all resamples' "
        "2x2 tables of all pairs from one matrix product (resample counts B x users @ per-user "
        "tables users x pairs·4), then kappa on the (B, pairs, 2, 2) tables at once. Includes "
        "building the tables from the long DataFrame; the best of "
        f"{res.get('fast_repeats', 3)} runs.",
        "- **loop**: per resample, gather the drawn users' items and call scikit-learn's "
        f"`cohen_kappa_score` on each pair's shared items, then average the blocks. Timed on "
        f"the first {res['loop_resamples_timed']} resamples (the same resamples; the script "
        f"checks both give the same kappas, max difference {res['max_abs_difference']:.0e}) "
        f"and **extrapolated linearly** to B = {res['n_boot']:,}.",
        "",
        f"Measured at commit {commit_text(res.get('git'))} on {env['cpu_model']} "
        f"({env['cpus_usable']} usable of {env['cpus']} cores, Python {env['python']}, numpy "
        f"{env['packages']['numpy']}, scikit-learn {env['packages']['scikit-learn']}); 1-min "
        f"load average {env['load_average_1min']} at the start and "
        f"{env['load_average_1min_at_end']} at the end"
        + (f" ({res['note']})" if res.get("note") else "")
        + ". The machine is shared: load inflates both times, the ratio less.",
        "",
        f"| method | seconds (B = {res['n_boot']:,}) |",
        "|---|---:|",
        f"| vectorized (one matrix product) | {res['fast_seconds']} |",
        f"| scikit-learn loop ({res['loop_resamples_timed']} resamples timed: "
        f"{res['loop_seconds_timed']} s), extrapolated | {res['loop_seconds_extrapolated']:,} |",
        f"| **speedup** | **~{res['speedup']:,.0f}x** (target >= {res['target_speedup']:.0f}x: "
        f"{'met' if res['meets_target'] else '**not met**'}) |",
        f"| two-way design (users x prompts crossed, annotators deleted; intervals read) | "
        f"{res['two_way_seconds']} |",
        f"| **two-way / one-way** | **{res['two_way_vs_one_way']:.2f}x** (target <= "
        f"{res['target_two_way_ratio']:.0f}x: "
        f"{'met' if res['two_way_ratio_met'] else '**not met**'}) |",
        f"| **two-way speedup over the loop** | **~{res['two_way_speedup']:,.0f}x** (target >= "
        f"{res['target_two_way_speedup']:,.0f}x: "
        f"{'met' if res['two_way_speedup_met'] else '**not met**'}) |",
        "",
        "The two-way row is the design the study's kappa group means with people in them "
        "declare (`stats.designs.relevance_people`): B resamples of each of users, prompts "
        "and user x prompt cells (Cameron-Gelbach-Miller's two-way cluster variance), the "
        "leave-one-level-out matrices, every annotator clustering (delete one annotator, or "
        "its part of a user, prompt or cell), and each group mean's interval read by the "
        "record maker; its group means: "
        + "; ".join(
            f"{key.replace('_', '-')} {m['estimate']} [{m['ci_low']}, {m['ci_high']}]"
            for key, m in res["two_way_group_means_95ci"].items()
        )
        + ".",
        "",
        "Group means with their 95% percentile intervals (a check that both paths bootstrap "
        "the same statistic, not a study result): "
        + "; ".join(
            f"{key.replace('_', '-')} {m['estimate']} [{m['ci_low']}, {m['ci_high']}]"
            for key, m in means.items()
        )
        + ".",
        "",
        "Run it (10-30 s, almost all of it the timed loop):",
        "",
        "```bash",
        'python benchmarks/bench_bootstrap.py                 # key "bootstrap" + this section',
        "python benchmarks/bench_bootstrap.py --loop-resamples 200 --no-write  # a longer loop",
        "```",
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-boot", type=int, default=10_000)
    parser.add_argument("--loop-resamples", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="fast path runs; best is kept")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--note", default="", help="a sentence for the README (e.g. the load)")
    parser.add_argument(
        "--readme-only", action="store_true", help="rewrite the README section from results.json"
    )
    args = parser.parse_args(argv)
    if args.readme_only:
        update_readme("bootstrap", readme_section(json.loads(RESULTS.read_text())["bootstrap"]))
        return 0
    git, env = git_state(), machine(("numpy", "pandas", "scikit-learn"))

    df = synthetic_stage2(args.seed)
    groups = {**dict.fromkeys(HUMANS, "human"), **dict.fromkeys(MODELS, "model")}
    raters = sorted(groups)
    n_items = df["item"].nunique()
    n_users = df["user_id"].nunique()

    fast_times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        res = bootstrap_pairwise_kappa(
            df, groups=groups, cluster="user_id", n_boot=args.n_boot, seed=args.seed
        )
        fast_times.append(time.perf_counter() - t0)
    fast = min(fast_times)

    n_loop = min(args.loop_resamples, args.n_boot)
    counts = resample_counts(n_users, args.n_boot, args.seed)[:n_loop]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns on a one-class resample
        t0 = time.perf_counter()
        loop_kappas, loop_means = naive_loop(df, counts, raters, groups)
        loop_timed = time.perf_counter() - t0
    loop_full = loop_timed * args.n_boot / n_loop
    diff = np.nanmax(np.abs(loop_kappas - res.matrix.replicates[:n_loop]))
    for key, vals in loop_means.items():
        diff = max(diff, np.nanmax(np.abs(vals - res.group_means[key].replicates[:n_loop])))
    if not diff < 1e-9:
        raise SystemExit(f"fast and loop bootstraps disagree (max |diff| = {diff:.3g})")
    speedup = loop_full / fast

    means = {}
    for key, gm in res.group_means.items():
        low, high = percentile_bounds(gm, 0.95, "percentile")
        means[key] = {"estimate": sig(gm.estimate), "ci_low": sig(low), "ci_high": sig(high)}
    config = compose_config([f"stats.n_boot={args.n_boot}", f"run.seed={args.seed}"])
    settings = StatsSettings.from_rule_params(subtree(config, "stats", "run.seed"))
    two_way_times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        two_way_means = two_way(df, groups, settings)
        two_way_times.append(time.perf_counter() - t0)
    two_way_seconds = min(two_way_times)

    print(
        f"synthetic stage 2: {n_items} items, {len(df)} ratings, {len(raters)} raters "
        f"({len(res.pairs)} pairs), {n_users} users (clusters), B = {args.n_boot}"
    )
    print(f"{'method':<44}{'seconds':>12}")
    print(f"{'vectorized (one matrix product)':<44}{fast:>12.3f}")
    print(f"{f'sklearn loop, {n_loop} resamples timed':<44}{loop_timed:>12.2f}")
    print(f"{f'sklearn loop, extrapolated to B={args.n_boot}':<44}{loop_full:>12.1f}")
    print(
        f"speedup: {speedup:,.0f}x (target >= {TARGET_SPEEDUP:.0f}x); "
        f"max |fast - loop| on the timed resamples: {diff:.1e}"
    )
    print(
        f"{'two-way design (users x prompts, annotators)':<44}{two_way_seconds:>12.3f}  "
        f"{two_way_seconds / fast:.2f}x the one-way time (target <= {TARGET_TWO_WAY_RATIO:.0f}x), "
        f"{loop_full / two_way_seconds:,.0f}x the loop (target >= {TARGET_TWO_WAY_SPEEDUP:,.0f}x)"
    )
    for key, m in means.items():
        print(f"  {key:<12} {m['estimate']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}]")

    env["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
    result = {
        "what": "cluster bootstrap (users) of the 8-rater pairwise Cohen's kappa matrix "
        "and its group means; vectorized vs per-resample sklearn loop (extrapolated)",
        "n_boot": args.n_boot,
        "seed": args.seed,
        "n_items": int(n_items),
        "n_ratings": int(len(df)),
        "n_raters": len(raters),
        "n_pairs": len(res.pairs),
        "n_clusters": int(n_users),
        "fast_seconds": sig(fast),
        "fast_repeats": args.repeats,
        "loop_resamples_timed": n_loop,
        "loop_seconds_timed": sig(loop_timed),
        "loop_seconds_extrapolated": sig(loop_full),
        "speedup": sig(speedup, 3),
        "target_speedup": TARGET_SPEEDUP,
        "meets_target": bool(speedup >= TARGET_SPEEDUP),
        "max_abs_difference": float(f"{diff:.1e}"),
        "group_means_95ci": means,
        "two_way_seconds": sig(two_way_seconds),
        "two_way_vs_one_way": sig(two_way_seconds / fast, 3),
        "target_two_way_ratio": TARGET_TWO_WAY_RATIO,
        "two_way_ratio_met": bool(two_way_seconds / fast <= TARGET_TWO_WAY_RATIO),
        "two_way_speedup": sig(loop_full / two_way_seconds, 3),
        "target_two_way_speedup": TARGET_TWO_WAY_SPEEDUP,
        "two_way_speedup_met": bool(loop_full / two_way_seconds >= TARGET_TWO_WAY_SPEEDUP),
        "two_way_group_means_95ci": two_way_means,
        "environment": env,
        "git": git,
        "note": args.note,
    }
    if not args.no_write:
        update_readme("bootstrap", readme_section(update_results("bootstrap", result)))
        print(f"wrote key 'bootstrap' of {RESULTS} and its section of the README")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
