"""The bundled world's ground truth: what each estimator of the workflow should recover.

A simulated world is a validation study only if we know what its statistics estimate. For
every estimand the simulator controls, :func:`population_truth` returns its population
value under the generative parameters, keyed by the ``numbers.json`` record key it
corresponds to. The truth of an estimand is what its *estimator* targets, not a latent
parameter: the mention delta is a difference of observed mean ratings (so generator quality
that goes with mentioning is part of it), an over-selection ratio is a ratio of two observed
yes rates, a kappa is Cohen's kappa of the two raters' population 2x2 table.

The population is the generative model over worlds (the "superpopulation" a cluster
bootstrap over users targets), so the truth does not depend on the seed: it is the same for
every world drawn from the same parameters, which is what a coverage study over fresh seeds
needs. Where the value depends on the world's design (how many judgments come from real-like
users, the mix of stage-2 item types, how many attributes a rated response adapts to), that
design is taken from a large draw of worlds from the truth's OWN seeds (``TRUTH_SEEDS``,
disjoint from the committed and benchmark seeds) and every random rating or vote is then
integrated out in closed form (quadrature for stage 1, the latent-class table for stage 2,
normal cdfs of the rounded rating for stage 3). Each entry says which of the two it is.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
from typing import Any

import numpy as np
from scipy.special import expit
from scipy.stats import norm, spearmanr

from analysis.simulation.parameters import WorldParameters
from analysis.simulation.raters import ITEM_TYPES, expected_relevance_statistics, kappa_from_rates
from analysis.simulation.simulate import World, simulate_world

#: seeds of the large draw the design-dependent truths average over (never a world's own)
TRUTH_SEEDS: tuple[int, ...] = tuple(range(900_000, 900_040))
#: Gauss-Hermite nodes for integrating the stage-1 item difficulty
_QUADRATURE_NODES = 64
_DRAWN = (
    f"large draw: the design of {len(TRUTH_SEEDS)} worlds from the truth's own seeds"
    f" {TRUTH_SEEDS[0]}-{TRUTH_SEEDS[-1]} (not this world's), every vote or rating integrated"
    " out in closed form"
)


@dataclasses.dataclass(frozen=True)
class Truth:
    """One estimand's population value and how it was obtained."""

    value: float
    how: str
    #: False for estimands whose truth cannot vary across worlds (e.g. correlations across
    #: the five fixed simulated models): outside the coverage study
    in_coverage: bool = True


# --------------------------------------------------------------------------- stage 1


def _acceptance_probability(p: WorldParameters) -> np.ndarray:
    """P(accepted) of a judgment, per (quality class, stage-1 rater): item difficulty
    integrated out (ordered logit: accepted when latent support exceeds the upper cutpoint)."""
    x, w = np.polynomial.hermite_e.hermegauss(_QUADRATURE_NODES)
    w = w / w.sum()
    means = np.asarray(p.stage1_class_means)
    half = p.stage1_leniency_spread
    leniency = np.linspace(-half, half, p.n_stage1_humans) if p.n_stage1_humans > 1 else [0.0]
    eta = p.stage1_item_sd * x
    z = means[:, None, None] + np.asarray(leniency)[None, :, None] + eta[None, None, :]
    return expit(z - p.stage1_cutpoints[1]) @ w


def _stage1(p: WorldParameters, worlds: list[World]) -> dict[str, Truth]:
    prob = _acceptance_probability(p)
    acc: dict[bool, list[float]] = {True: [], False: []}
    by_source: dict[str, list[float]] = {}
    for world in worlds:
        t = world.truth
        pj = prob[t["stage1_quality"][:, None], t["stage1_raters"]].ravel()
        real = np.repeat(t["stage1_real"], t["stage1_raters"].shape[1])
        acc[True].append(pj[real])
        acc[False].append(pj[~real])
        source = np.repeat(t["stage1_source"], t["stage1_raters"].shape[1])
        for s in np.unique(source):
            by_source.setdefault(str(s), []).append(pj[source == s])
    real_rate = float(np.concatenate(acc[True]).mean())
    synth_rate = float(np.concatenate(acc[False]).mean())
    out = {
        "stage1.acceptance_rate.overall": Truth(
            float(np.concatenate(acc[True] + acc[False]).mean()), _DRAWN
        ),
        "stage1.acceptance_rate.real": Truth(real_rate, _DRAWN),
        "stage1.acceptance_rate.synthetic": Truth(synth_rate, _DRAWN),
        "stage1.problematic_gap_real_vs_synthetic": Truth(synth_rate - real_rate, _DRAWN),
    }
    for source, parts in sorted(by_source.items()):
        out[f"stage1.acceptance_rate.{source}"] = Truth(float(np.concatenate(parts).mean()), _DRAWN)
    return out


# --------------------------------------------------------------------------- stage 2


def _stage2(p: WorldParameters, worlds: list[World]) -> dict[str, Truth]:
    model = p.relevance_model()
    n_h, n_m = p.n_stage2_humans, len(p.llm_names)
    triples = list(itertools.combinations(range(n_h), p.stage2_raters_per_item))
    triple_index = {t: i for i, t in enumerate(triples)}
    counts = np.zeros((len(ITEM_TYPES), len(triples)))
    for world in worlds:
        t = world.truth
        tri = [triple_index[tuple(int(r) for r in row)] for row in np.sort(t["stage2_raters"], 1)]
        np.add.at(counts, (t["stage2_type"], tri), 1)
    n = counts.sum()
    need = p.stage2_raters_per_item // 2 + 1
    rater_items = np.zeros(n_h)
    rater_yes = np.zeros(n_h)
    maj = 0.0
    model_yes = np.zeros(n_m)
    both = np.zeros(n_m)
    for k in range(len(ITEM_TYPES)):
        pk, hy, ly = model.class_table(np.eye(len(ITEM_TYPES))[k])
        for j, tri in enumerate(triples):
            c = counts[k, j]
            if not c:
                continue
            # P(at least `need` of the triple say yes | latent class): sum over yes-sets
            pm = np.zeros(pk.shape)
            for size in range(need, len(tri) + 1):
                for yes in itertools.combinations(tri, size):
                    term = np.ones(pk.shape)
                    for r in tri:
                        term = term * (hy[r] if r in yes else 1 - hy[r])
                    pm += term
            maj += c * float(pm @ pk)
            both += c * ((ly * pm) @ pk)
            for r in tri:
                rater_items[r] += c
                rater_yes[r] += c * float(hy[r] @ pk)
        model_yes += counts[k].sum() * (ly @ pk)
    maj_rate, rates = maj / n, model_yes / n
    joint = both / n
    out = {
        "stage2.final.relevance_rate.human": Truth(float(np.mean(rater_yes / rater_items)), _DRAWN),
        "stage2.final.relevance_rate.human_majority": Truth(maj_rate, _DRAWN),
        "stage2.final.over_selection.mean_model": Truth(float(np.mean(rates / maj_rate)), _DRAWN),
    }
    for m, name in enumerate(p.llm_names):
        out[f"stage2.final.relevance_rate.{name}"] = Truth(float(rates[m]), _DRAWN)
        out[f"stage2.final.over_selection.{name}"] = Truth(float(rates[m] / maj_rate), _DRAWN)
        out[f"stage2.final.precision_vs_majority.{name}"] = Truth(
            float(joint[m] / rates[m]), _DRAWN
        )
        out[f"stage2.final.recall_vs_majority.{name}"] = Truth(float(joint[m] / maj_rate), _DRAWN)
        out[f"stage2.final.f1_vs_majority.{name}"] = Truth(
            float(2 * joint[m] / (maj_rate + rates[m])), _DRAWN
        )
        out[f"stage2.final.kappa_vs_majority.{name}"] = Truth(
            float(kappa_from_rates(np.float64(maj_rate), rates[m], joint[m])), _DRAWN
        )
    shares = counts.sum(axis=1) / n
    expected = expected_relevance_statistics(model, shares)
    for group, key in (
        ("human_human", "kappa_human_human"),
        ("model_model", "kappa_llm_llm"),
        ("human_model", "kappa_human_llm"),
    ):
        out[f"stage2.final.kappa.{group}"] = Truth(expected[key], _DRAWN)
    return out


# --------------------------------------------------------------------------- stage 3


def _rating_pmf(mean: np.ndarray, sd: float) -> np.ndarray:
    """P(rating = 1..5) of ``clip(rint(3 + latent))`` with latent ~ N(mean, sd); (n, 5)."""
    edges = norm.cdf((np.arange(1, 5)[None, :] + 0.5 - 3.0 - mean[:, None]) / sd)
    cdf = np.concatenate([edges, np.ones((len(mean), 1))], axis=1)
    return np.diff(cdf, axis=1, prepend=0.0)


def _no_better(pmf: np.ndarray, slot_item: np.ndarray, n_items: int) -> np.ndarray:
    """P(mean rating <= 3) per item: the slots' rating distributions convolved."""
    out = np.empty(n_items)
    for i in range(n_items):
        dist = np.array([1.0])
        rows = pmf[slot_item == i]
        for row in rows:
            dist = np.convolve(dist, row)
        # dist[k] = P(sum of (rating - 1) = k); mean <= 3 <=> sum(rating - 1) <= 2 n
        out[i] = dist[: 2 * len(rows) + 1].sum()
    return out


def _stage3(p: WorldParameters, worlds: list[World]) -> dict[str, Truth]:
    n_m = len(p.llm_names)
    human, judges, named, gen, no_better = [], [], [], [], []
    mentioned_slots, slots = np.zeros(n_m), np.zeros(n_m)
    r = p.mention_slot_rate
    k = np.arange(1, 6)
    sd_q = float(np.hypot(p.response_quality_sd, p.slot_quality_sd))
    sd_h = float(np.hypot(p.human_rating_noise, sd_q))
    for world in worlds:
        t = world.truth
        q, nm = t["stage3_slot_quality"], t["stage3_slot_named"]
        g = t["stage3_item_generator"][t["stage3_slot_item"]]
        # means: the slot's quality (generator mean + response + slot effect, normal) is
        # integrated out too, so only which generator and whether named come from the draw
        mean_q = np.asarray(p.generator_quality)[g]
        human.append(
            _rating_pmf(p.human_rating_offset + mean_q + p.human_mention_effect * nm, sd_h) @ k
        )
        judges.append(
            np.stack(
                [
                    _rating_pmf(
                        p.judge_offset[j]
                        + p.judge_quality_weight * mean_q
                        + p.judge_mention_effect[j] * nm,
                        float(np.hypot(p.judge_rating_noise, p.judge_quality_weight * sd_q)),
                    )
                    @ k
                    for j in range(n_m)
                ],
                axis=1,
            )
        )
        named.append(nm)
        gen.append(g)
        # no-better share: one response's slots share its quality, so condition on the drawn
        # qualities and integrate out only the rating noise
        pmf_h = _rating_pmf(
            p.human_rating_offset + q + p.human_mention_effect * nm, p.human_rating_noise
        )
        no_better.append(_no_better(pmf_h, t["stage3_slot_item"], len(t["stage3_item_generator"])))
        # every pair's personalized response adapts to its human-majority relevant attributes;
        # with n of them, each is named with P = rate * (r + (1 - r)^n / n) (at least one is)
        n_rel = np.bincount(t["stage2_pair"], weights=t["stage2_majority"]).astype(int)
        n_rel = n_rel[n_rel > 0]
        for m in range(n_m):
            mentioned_slots[m] += p.generator_mention_rate[m] * (r * n_rel + (1 - r) ** n_rel).sum()
            slots[m] += n_rel.sum()
    eh, ej = np.concatenate(human), np.concatenate(judges)
    nm, g = np.concatenate(named).astype(bool), np.concatenate(gen)
    out = {
        "stage3.no_better_share": Truth(float(np.concatenate(no_better).mean()), _DRAWN),
        "stage3.mean_rating.human": Truth(float(eh.mean()), _DRAWN),
        "stage3.mention_delta.human": Truth(float(eh[nm].mean() - eh[~nm].mean()), _DRAWN),
    }
    rates, deltas = {}, {}
    for m, name in enumerate(p.llm_names):
        out[f"stage3.mean_rating.{name}"] = Truth(float(eh[g == m].mean()), _DRAWN)
        out[f"stage3.judge_mean_rating.{name}"] = Truth(float(ej[:, m].mean()), _DRAWN)
        out[f"stage3.judge_minus_human.{name}"] = Truth(float((ej[:, m] - eh).mean()), _DRAWN)
        deltas[name] = float(ej[nm, m].mean() - ej[~nm, m].mean())
        rates[name] = float(mentioned_slots[m] / slots[m])
        out[f"stage3.mention_delta.{name}"] = Truth(deltas[name], _DRAWN)
        out[f"stage3.mention_rate.{name}"] = Truth(rates[name], _DRAWN)
    rho = spearmanr([rates[k] for k in p.llm_names], [deltas[k] for k in p.llm_names]).statistic
    out["stage3.mention_habit_vs_bias.spearman"] = Truth(
        float(rho),
        _DRAWN + "; across the 5 fixed simulated models, so the same in every world",
        in_coverage=False,
    )
    return out


# --------------------------------------------------------------------------- the whole truth


@functools.lru_cache(maxsize=4)
def population_truth(params: WorldParameters) -> dict[str, Truth]:
    """Every controlled estimand's population value, by numbers.json key (sorted).

    Depends on ``params`` but not on its seed (the large draw uses ``TRUTH_SEEDS``); cached,
    since writing a world and a coverage study ask for it repeatedly (~1 s per drawn world).
    """
    base = dataclasses.replace(params, seed=0)
    if base != params:
        return population_truth(base)
    worlds = [simulate_world(dataclasses.replace(params, seed=s)) for s in TRUTH_SEEDS]
    out = {**_stage1(params, worlds), **_stage2(params, worlds), **_stage3(params, worlds)}
    return dict(sorted(out.items()))


#: significant digits of a truth value in truth.json (Monte Carlo error is far larger)
DIGITS = 6


def truth_document(params: WorldParameters) -> dict[str, Any]:
    """truth.json's content: what the file is, then one entry per estimand."""
    return {
        "about": (
            "Ground truth of this simulated world: the population value, under the generative"
            " parameters (analysis/simulation/parameters.py), of each estimand the simulator"
            " controls, keyed by its numbers.json record key. It is what the estimator targets"
            " (e.g. a mention delta is a difference of observed mean ratings), not a latent"
            " parameter. The same for every seed of these parameters. Written by"
            " analysis/simulation/truth.py; `how` says whether a value is a closed form or"
            " comes from a large draw of the same model from the truth's own seeds;"
            " `in_coverage` is false where the truth cannot vary across worlds."
        ),
        "estimands": {
            key: {
                "how": t.how,
                "in_coverage": t.in_coverage,
                "value": float(f"{t.value:.{DIGITS}g}"),
            }
            for key, t in population_truth(params).items()
        },
    }


def truth_json(params: WorldParameters) -> str:
    """truth.json as text: sorted keys, fixed float precision, ``\\n`` line ends."""
    return json.dumps(truth_document(params), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
