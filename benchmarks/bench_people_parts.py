"""Where the people's part of the stage-2 intervals goes wrong (on demand, not a test).

The coverage study (``bench_coverage.py``) found the stage-2 gaps to the human ceiling
(``vs_rest.gap_*``) over-covering with intervals much wider than their estimates vary (until
their deletion of a person kept the other people's references: ``study_stage2.paired_name``;
the committed worlds ran before that, and before a pairwise statistic's rater-pair parts
moved from the rows' variance to the people's, ``records._people``: their recorded design and
rows-only intervals are the older rules', the parts and the summary's shares are not),
and two kappa shares under-covering. Their designs add to the rows' variance (users + prompts -
user x prompt cells, Cameron, Gelbach and Miller) the people's net part: the annotators'
delete-one jackknife variance, less the user x annotator and prompt x annotator cells' and
plus the user x prompt x annotator cells' (``analysis.stats.resampling``). This benchmark
takes each such statistic apart over simulated worlds: per world it records the estimate,
the world's truth, every part's variance, the design's interval and the interval of the rows
alone (the same record maker, the annotator and rater-pair parts left out). The summary gives, per
estimand, each part's variance as a share of the estimates' error variance across worlds
(``var(estimate - truth)``: what a calibrated design's variance should come to), and both
intervals' coverage and width over the spread of the errors (``2 z sd``).

Two sets of worlds, the same seeds: the bundled world's model as generated, and the same
model without person effects (``stage2_human_offset_sd = 0``: every stage-2 annotator has the
same yes-bias). In the second set the people's true share is zero, so whatever net part the
annotator terms leave is what deleting a person leaves of the item noise, not people.

Per world, ``--relabellings`` copies of its votes whose user x prompt pairs' sets of
annotators are permuted among the pairs (:func:`relabelled`) give the annotators' jackknife a
null: what it carries of the items' noise, in either set. The summary gives its share and the
annotators' jackknife beyond it, with that excess's spread across worlds.

    python benchmarks/bench_people_parts.py --worlds 100 --jobs 2    # both sets (resumable)
    python benchmarks/bench_people_parts.py --summarize
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd
from bench_coverage import FIRST_SEED, settings, simulated
from results_io import (
    OUTPUT_DIR,
    append_jsonl,
    git_state,
    markers,
    read_jsonl,
    update_readme,
    update_results,
)
from scipy import stats as scipy_stats
from scipy.optimize import brentq
from scipy.special import gammaln

from analysis.data.vocabulary import HUMAN
from analysis.stages.combine import combine_relevance_votes
from analysis.stats import study_stage2
from analysis.stats.records import Statistic, make_records, part_variance
from analysis.stats.resampling import Resamples
from analysis.stats.settings import StatsSettings
from analysis.workflow_config import compose_config

#: one line per world and set (``BENCH_OUTPUT_DIR`` moves it with the other outputs)
WORLDS = OUTPUT_DIR / "people_parts_worlds.jsonl"
START, END = markers("people_parts")
#: the two sets of worlds: name -> the parameters set otherwise
SETS: dict[str, dict[str, float]] = {
    "generated": {},
    "no_person_effects": {"stage2_human_offset_sd": 0.0},
}
#: the round whose statistics the coverage study's truth covers
ROUND = "final"
#: the part nouns of the rows and of the people, in the order the table shows them
ROWS = ("users", "prompts", "user-prompt cells")
PEOPLE = (
    "annotators",
    "user x annotator cells",
    "prompt x annotator cells",
    "user x prompt x annotator cells",
)
#: a pairwise statistic's rater-pair clusterings and their signs in the people's net part:
#: a pair is deleted with either of its annotators, so its own deletions undo the pair
#: counted twice (``resampling.pairwise_kappa``; ``records._people`` groups them likewise)
PAIRS = {
    "rater-pairs": -1,
    "user x rater-pair cells": 1,
    "prompt x rater-pair cells": 1,
    "user x prompt x rater-pair cells": -1,
}
DIGITS = 7
#: the random stream of the relabelled copies (apart from every stream the world draws)
NULL_STREAM = 34_001
#: bootstrap resamples of a relabelled copy's row factors: only its annotators' jackknife is
#: read, which no resample enters
NULL_N_BOOT = 100


def _round(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(f"{x:.{DIGITS}g}")


def people_statistics(votes: pd.DataFrame, cfg: StatsSettings) -> list[Statistic]:
    """The round's statistics whose design deletes annotators (ceilings, scores against the
    rest and their gaps, kappa group means and their shares of the attainable kappa)."""
    rv = study_stage2.round_votes(votes, ROUND)
    rt = study_stage2.round_totals(rv, cfg)
    stats = [
        *study_stage2.human_ceiling(rv, rt),
        *study_stage2.scores_vs_rest(rv, rt),
        *study_stage2.kappa_group_means(rv, rt)[0],
        *study_stage2.attainable_agreement(rv, rt),
    ]
    return [
        s
        for s in stats
        if isinstance(s.estimate, Resamples) and any(p.cluster in PEOPLE for p in s.estimate.parts)
    ]


def relabelled(votes: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The votes with each user x prompt pair's set of human annotators moved to another
    pair (a permutation of the pairs among those with as many annotators, per round).

    Every annotator keeps its load and every pair of annotators its number of shared items;
    only who voted on which items is broken. Where people have no effects this leaves the
    votes' distribution as it was, so the annotators' jackknife of a statistic on these votes
    is what that jackknife carries of the items' noise (for the ceilings and the gaps, whose
    deletion of an annotator drops every leave-one-out entry of the items it voted on: with
    three voters the two left have no reference of at least two others)."""
    out = votes.copy()
    human = (out["rater_kind"] == HUMAN).to_numpy()
    h = out.loc[human]
    pair = (
        h["round"].astype(str)
        + "\x1f"
        + h["user_id"].astype(str)
        + "\x1f"
        + h["prompt_id"].astype(str)
    ).to_numpy()
    raters = h["rater"].astype(str).to_numpy()
    sets = pd.Series(raters).groupby(pair).agg(lambda r: tuple(sorted(set(r))))
    moved = {}
    for _, group in sets.groupby(sets.map(len)):
        for here, there in zip(group.index, group.iloc[rng.permutation(len(group))], strict=True):
            moved[here] = dict(zip(sets[here], there, strict=True))
    out.loc[human, "rater"] = [moved[p][r] for p, r in zip(pair, raters, strict=True)]
    return out


def null_annotators(
    votes: pd.DataFrame, keys: set[str], cfg: StatsSettings, seed: int, relabellings: int
) -> dict[str, list[float]]:
    """Per statistic, the annotators' jackknife variance on ``relabellings`` relabelled copies
    of the votes (:func:`relabelled`; seeded by the world), its null expectation's draws."""
    out: dict[str, list[float]] = defaultdict(list)
    for k in range(relabellings):
        rng = np.random.default_rng([NULL_STREAM, seed, k])
        for s in people_statistics(relabelled(votes, rng), cfg):
            part = next((p for p in s.estimate.parts if p.cluster == "annotators"), None)
            if s.key in keys and part is not None:
                out[s.key].append(_round(part_variance(part)[0]))
    return out


def world_line(seed: int, name: str, n_boot: int, version: str, relabellings: int = 0) -> dict:
    """One world of set ``name``: per statistic its estimate, truth, parts and intervals."""
    _, truth, tables = simulated(seed, **SETS[name])
    votes = combine_relevance_votes(tables["relevance_votes"], [], version)
    cfg = settings(n_boot, ())
    stats = [s for s in people_statistics(votes, cfg) if s.key in truth]
    design = {r.key: r for r in make_records(stats, cfg)}
    rows_only = {
        r.key: r
        for r in make_records(
            [
                replace(
                    s,
                    estimate=replace(
                        s.estimate,
                        parts=tuple(
                            p
                            for p in s.estimate.parts
                            if p.cluster not in PEOPLE and p.cluster not in PAIRS
                        ),
                    ),
                )
                for s in stats
            ],
            cfg,
        )
    }
    # the annotators' jackknife does not depend on B: the null's copies draw few resamples
    null = null_annotators(
        votes, {s.key for s in stats}, settings(NULL_N_BOOT, ()), seed, relabellings
    )
    out = {}
    for s in stats:
        d, r = design.get(s.key), rows_only.get(s.key)
        out[s.key] = {
            "annotators_null": null.get(s.key) if relabellings else None,
            "estimate": _round(s.estimate.value),
            "truth": _round(truth[s.key].value),
            "parts": {p.cluster: _round(part_variance(p)[0]) for p in s.estimate.parts},
            "design": None if d is None else [_round(d.ci_low), _round(d.ci_high)],
            "rows_only": None if r is None else [_round(r.ci_low), _round(r.ci_high)],
        }
    return {"seed": seed, "set": name, "n_boot": n_boot, "statistics": out}


def read_lines() -> list[dict]:
    return read_jsonl(WORLDS)


def run(n_worlds: int, n_boot: int, jobs: int, sets: list[str], relabellings: int) -> None:
    """Worlds FIRST_SEED.. of ``sets`` until each has ``n_worlds`` lines (appending)."""
    version = compose_config(["models=none"])["prompts"]["version"]
    have = {(ln["set"], ln["seed"]) for ln in read_lines()}
    todo = [
        (name, s)
        for name in sets
        for s in range(FIRST_SEED, FIRST_SEED + n_worlds)
        if (name, s) not in have
    ]
    print(f"{len(have)} worlds done; {len(todo)} to go (B = {n_boot})", flush=True)
    one = partial(_timed, n_boot=n_boot, version=version, relabellings=relabellings)
    commit = git_state()["commit"]
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else nullcontext() as pool:
        results = pool.map(one, todo) if pool is not None else map(one, todo)
        for i, (line, seconds) in enumerate(results, 1):
            line["commit"] = commit
            append_jsonl(WORLDS, line)
            print(f"{line['set']} {line['seed']}: {seconds:.1f} s ({i}/{len(todo)})", flush=True)


def _timed(
    task: tuple[str, int], n_boot: int, version: str, relabellings: int
) -> tuple[dict, float]:
    start = time.perf_counter()
    name, seed = task
    return world_line(seed, name, n_boot, version, relabellings), time.perf_counter() - start


def _covered(ci: list | None, truth: float) -> bool:
    return ci is not None and None not in ci and ci[0] <= truth <= ci[1]


def width_df(cv: float) -> float | None:
    """The degrees of freedom of a variance estimate whose t interval's widths spread across
    worlds as ``cv`` says: a width is proportional to ``s``, and ``s / sigma`` is
    ``chi_nu / sqrt(nu)``, whose coefficient of variation falls as ``nu`` grows (about
    ``1 / sqrt(2 nu)``). None where no ``nu`` between 0.5 and 10,000 gives ``cv``."""

    def cv_of(nu: float) -> float:
        mean = math.exp(0.5 * math.log(2.0 / nu) + gammaln((nu + 1) / 2) - gammaln(nu / 2))
        return math.sqrt(max(1.0 / mean**2 - 1.0, 0.0))

    lo, hi = 0.5, 1e4
    if not cv_of(hi) < cv < cv_of(lo):
        return None
    return float(brentq(lambda nu: cv_of(nu) - cv, lo, hi))


def summarize(lines: list[dict]) -> dict:
    """Per set and estimand: each part's variance over the error variance, the people's net
    part, and both intervals' coverage and width over the errors' spread."""
    z = float(scipy_stats.norm.ppf(0.975))
    by_set: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for line in lines:
        for key, row in line["statistics"].items():
            by_set[line["set"]][key].append(row)
    out: dict[str, dict] = {}
    for name, stats in sorted(by_set.items()):
        out[name] = {}
        for key, every in sorted(stats.items()):
            # a world whose estimate is undefined has no record: counted, not in the shares
            rows = [r for r in every if r["estimate"] is not None and r["truth"] is not None]
            err = np.array([r["estimate"] - r["truth"] for r in rows])
            # fewer than two worlds, or no spread: no shares or widths (the rows stay)
            v = float(np.var(err, ddof=1)) if err.size >= 2 else math.nan
            v = v if v > 0 else math.nan

            def share(noun: str, rows=rows, v=v) -> float | None:
                vals = [r["parts"].get(noun) for r in rows]
                vals = [x for x in vals if x is not None]
                return _round(float(np.mean(vals)) / v) if vals and v > 0 else None

            parts = {noun: share(noun) for noun in (*ROWS, *PEOPLE, *PAIRS)}
            # the annotators' jackknife on relabelled votes (its item noise), in the worlds
            # that ran it, and what the annotators' jackknife has beyond it, with its spread
            nulls = [
                (r["parts"]["annotators"], float(np.mean(r["annotators_null"])))
                for r in rows
                if r.get("annotators_null") and r["parts"].get("annotators") is not None
            ]
            excess = np.array([a - n for a, n in nulls]) / v if nulls and v > 0 else None
            signs = (1, -1, -1, 1)
            people = [parts[n] for n in PEOPLE]
            # a rater-pair part the statistic does not have (not a pairwise one) counts 0
            pairs = sum(sign * (parts[n] or 0.0) for n, sign in PAIRS.items())
            row = {
                "worlds": len(rows),
                "undefined_worlds": len(every) - len(rows),
                "parts": parts,
                # a rows' part the design does not have counts 0
                "rows": _round(
                    sum(s * (parts[n] or 0.0) for s, n in zip((1, 1, -1), ROWS, strict=True))
                )
                if v > 0
                else None,
                "people_net": None
                if None in people
                else _round(sum(s * x for s, x in zip(signs, people, strict=True)) + pairs),
                "rater_pairs": _round(pairs) if any(parts[n] is not None for n in PAIRS) else None,
                "null_worlds": len(nulls),
                "annotators_null": _round(float(np.mean([n for _, n in nulls])) / v)
                if excess is not None
                else None,
                "annotators_beyond_null": None if excess is None else _round(float(excess.mean())),
                "annotators_beyond_null_sd": None
                if excess is None or excess.size < 2
                else _round(float(excess.std(ddof=1))),
            }
            for which in ("design", "rows_only"):
                cis = [r[which] for r in rows if r[which] and None not in r[which]]
                widths = [hi - lo for lo, hi in cis]
                cv = float(np.std(widths, ddof=1) / np.mean(widths)) if len(widths) > 2 else None
                row[which] = {
                    # how much the widths vary across worlds, and the df that spread implies
                    # (beside the df the records read their t quantile with)
                    "width_cv": None if cv is None else _round(cv),
                    "width_df": None if not cv else _round(width_df(cv)),
                    "coverage": _round(
                        float(np.mean([_covered(r[which], r["truth"]) for r in rows]))
                    ),
                    "width_to_spread": _round(float(np.mean(widths)) / (2 * z * math.sqrt(v)))
                    if widths and v > 0
                    else None,
                }
            out[name][key] = row
    return out


def _changes(name: str) -> str:
    """How a set's worlds differ from the bundled world's model, in words."""
    changes = ", ".join(f"{k} = {v}" for k, v in SETS[name].items())
    return changes or "the bundled world's parameters"


def _df_cell(df: float | None) -> str:
    return "" if df is None else f"{df:.1f}"


def readme_section(res: dict) -> str:
    lines = [
        START,
        "## Where the people's part of the stage-2 intervals goes (`bench_people_parts.py`)",
        "",
        f"Stage-2 statistics whose design deletes annotators, over {res['worlds']} worlds per"
        f" set (seeds from {FIRST_SEED}), B = {res['n_boot']}; the worlds ran at (commit:"
        " worlds) "
        + ", ".join(f"{c[:7]}: {n}" for c, n in res["world_commits"].items())
        + ". Each part's mean variance over the estimates' error"
        " variance across worlds (`var(estimate - truth)`; a calibrated design's parts sum to about"
        " 1): the rows (users + prompts - cells), the annotators' jackknife and its three cell "
        "clusterings, a pairwise statistic's rater pairs (- rater pairs + user x pair + prompt x "
        "pair - user x prompt x pair: a pair is deleted with either of its annotators), and the "
        "people's net part (annotators - user x annotator - prompt x annotator + user x prompt x "
        "annotator, plus the rater pairs); then the coverage of the design's interval and of the "
        "rows' alone, each with its mean width over the errors' spread (2 z sd), and how much the "
        "design's widths vary across worlds: their coefficient of variation and the degrees of "
        "freedom of a variance estimate whose t interval's widths vary that much (`width_df`; "
        "compare the df the records' methods give: where the widths imply fewer, the variance "
        "estimate is noisier than its t quantile allows)."
        " In the worlds without person effects the people's true share is zero: the net part"
        ' there is what deleting a person leaves of the item noise. "Annotators, items'
        " relabelled\": the annotators' jackknife on copies of a world's votes whose user x"
        " prompt pairs' sets of annotators are permuted among the pairs (each annotator keeps its"
        " load, each pair of annotators its shared items; `--relabellings` copies per world), its"
        " mean over the error variance: what that jackknife carries of the items' noise;"
        ' "beyond it": the annotators\' jackknife less that, with its sd across worlds (in the'
        " worlds that ran the copies, counted per set).",
        "",
        "```bash",
        "python benchmarks/bench_people_parts.py --worlds 100 --jobs 2  # resumable",
        "python benchmarks/bench_people_parts.py --summarize",
        "```",
    ]
    for name, stats in res["sets"].items():
        lines += [
            "",
            f"**{name.replace('_', ' ')}** ({_changes(name)}; relabelled copies in"
            f" {max((r['null_worlds'] for r in stats.values()), default=0)} worlds)",
            "",
            "| estimand | rows | annotators | user x ann. | prompt x ann. | user x prompt x ann."
            " | rater pairs | people net | annotators, items relabelled | annotators beyond it (sd)"
            " | design: coverage, width | design: widths' cv (df) | rows only: coverage, width |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for key, r in stats.items():
            p = r["parts"]

            def cell(x: float | None) -> str:
                return "" if x is None else f"{x:.2f}"

            undefined = f" (undefined in {r['undefined_worlds']})" if r["undefined_worlds"] else ""
            lines.append(
                f"| `{key}`{undefined} | {cell(r['rows'])} | "
                + " | ".join(cell(p[n]) for n in PEOPLE)
                + f" | {cell(r.get('rater_pairs'))} | {cell(r['people_net'])} |"
                f" {cell(r.get('annotators_null'))} |"
                f" {cell(r.get('annotators_beyond_null'))}"
                f" ({cell(r.get('annotators_beyond_null_sd'))})"
                f" | {r['design']['coverage']:.3f},"
                f" {cell(r['design']['width_to_spread'])} | {cell(r['design']['width_cv'])}"
                f" ({_df_cell(r['design']['width_df'])}) | {r['rows_only']['coverage']:.3f},"
                f" {cell(r['rows_only']['width_to_spread'])} |"
            )
    lines.append(END)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", type=int, default=100, help="worlds per set (resumes)")
    parser.add_argument(
        "--n-boot",
        type=int,
        default=int(compose_config()["stats"]["n_boot"]),
        help="bootstrap resamples (default: the paper's stats.n_boot)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="worlds run at once (processes)")
    parser.add_argument(
        "--sets", nargs="+", choices=sorted(SETS), default=list(SETS), help="which worlds"
    )
    parser.add_argument(
        "--relabellings",
        type=int,
        default=4,
        help="relabelled copies per world for the annotators' jackknife's item noise (0: none)",
    )
    parser.add_argument("--summarize", action="store_true", help="only rebuild the summary")
    args = parser.parse_args(argv)
    git = git_state()  # before this call writes anything
    if not args.summarize:
        run(args.worlds, args.n_boot, args.jobs, args.sets, args.relabellings)
    lines = read_lines()
    n_boot = sorted({ln["n_boot"] for ln in lines})
    if len(n_boot) > 1:
        raise SystemExit(f"{WORLDS}: lines of several B ({n_boot}); move the old ones away")
    counts = {name: n for name in SETS if (n := sum(ln["set"] == name for ln in lines))}
    res = update_results(
        "people_parts",
        {
            "worlds": min(counts.values(), default=0),
            "n_boot": n_boot[0] if n_boot else None,
            "sets": summarize(lines),
            # the commit whose statistics ran each line, with its number of lines
            "world_commits": dict(sorted(Counter(ln["commit"] for ln in lines).items())),
            "git": git,
        },
    )
    update_readme("people_parts", readme_section(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
