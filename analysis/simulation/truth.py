"""The bundled world's ground truth: what each estimator of the workflow should recover.

A simulated world is a validation study only if we know what its statistics estimate. For
every estimand the simulator controls, :func:`world_truth` returns its value, keyed by the
``numbers.json`` record key it corresponds to. The truth of an estimand is what its
*estimator* targets, not a latent parameter: the mention delta is a difference of observed
mean ratings (so generator quality that goes with mentioning is part of it), an
over-selection ratio is a ratio of two observed yes rates, a kappa is Cohen's kappa of the
two raters' population 2x2 table.

**Random and fixed factors.** The truth integrates over every factor the study generalizes
over, and is conditional on the fixed ones, as each statistic's declared design says
(``config/stats``). Random: users, prompts, attributes and items, and people (annotators
are a sample of people, so a kappa "among people" is the expected kappa of two people drawn
from the population, not of this world's six); their effects are integrated out in closed
form or by quadrature. Fixed: the five models (the models studied), so a model's statistics
are conditional on its yes-bias as drawn in this world; the stage-2 annotators whose
majority is the study's reference label, so statistics scored against the human majority
(its rate, over-selection, precision, recall, F1 and kappa against it) are conditional on
their drawn yes-bias (``FixedFactors``), and so is stage 3, whose slots (the attributes a
response is rated on) are the ones that majority marks relevant; and the stage-3 judges'
parameters. The truth therefore changes from world to world only through those draws, and
only in stages 2 and 3.

Where a value depends on the world's design (how many judgments come from real-like users,
the mix of stage-2 item types, which responses people rate and which attributes a response
names), that design is taken from a large draw of worlds from the truth's OWN seeds
(``TRUTH_SEEDS``, disjoint from the committed and benchmark seeds) and every random effect,
vote and rating is then integrated out. Stage 3 conditions on a world's annotators through
the one thing they decide there, how many attributes of a pair are rated (its slots): the
large draw's items are weighted by the ratio of the slot count's distribution under this
world's annotators (each pair's Poisson-binomial count of majorities, from its items' latent
classes and voters) to that under the draw's own (:func:`slot_counts`). Each entry says how
it was obtained.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import os
from collections.abc import Mapping
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit, logit
from scipy.stats import norm, spearmanr

import analysis
from analysis.simulation.parameters import RANDOM_EFFECTS, WorldParameters, effect_source
from analysis.simulation.raters import (
    ITEM_TYPES,
    RaterPool,
    expected_relevance_statistics,
    kappa_from_rates,
    mean_logistic,
    normal_nodes,
    pool_yes,
)
from analysis.simulation.simulate import RATER_STREAM, draw_rater_effects, simulate_world

#: a pool with more possible rater triples than this is a crowd (see ``_world_majority``)
MAX_TRIPLES = 1000
#: seeds of the large draw the design-dependent truths average over (never a world's own)
TRUTH_SEEDS: tuple[int, ...] = tuple(range(900_000, 900_040))
_DRAWN = (
    f"large draw: the design of {len(TRUTH_SEEDS)} worlds from the truth's own seeds"
    f" {TRUTH_SEEDS[0]}-{TRUTH_SEEDS[-1]} (not this world's), every random effect (prompts,"
    " users, people), vote and rating integrated out"
)
_CONDITIONAL = "; conditional on this world's models (their drawn yes-bias: fixed factors)"
_CONDITIONAL_SLOTS = (
    "; conditional on this world's stage-2 annotators, whose majority picks the attributes a"
    " response is rated on (the large draw's items weighted by their slot count's probability"
    " under that yes-bias)"
)
_CONDITIONAL_MAJORITY = (
    "; conditional on this world's models and on its annotators, whose majority is the"
    " study's reference (their drawn yes-bias: fixed factors of the human-majority label)"
)


@dataclasses.dataclass(frozen=True)
class Truth:
    """One estimand's value and how it was obtained."""

    value: float
    how: str
    #: False for estimands the coverage study cannot judge: a correlation across the five
    #: models, whose design resamples the models every simulated world holds fixed
    in_coverage: bool = True


@dataclasses.dataclass(frozen=True)
class Design:
    """What the truths need from the large draw: the worlds' designs, none of their votes."""

    #: stage 1, one entry per judgment: the attribute's quality class and its user's source
    stage1_quality: np.ndarray
    stage1_source: np.ndarray
    #: stage 2: the share of items of each type, and of (type, rater triple) among items:
    #: which of the pool's people vote together (sorted index triples, ``stage2_triples``)
    stage2_type_shares: np.ndarray
    stage2_triple_shares: np.ndarray
    stage2_triples: tuple[tuple[int, ...], ...]
    #: stage 2, one entry per item (attribute of a user-prompt pair, pairs numbered across
    #: worlds, in order): its pair, its voters, a person's yes logit before their offset (the
    #: item's latent class) and P(its people's majority says yes) under the drawing world's
    #: own annotators: how many of a pair's attributes another world's annotators would mark
    #: relevant follows from them (:func:`slot_counts`)
    stage2_item_pair: np.ndarray
    stage2_item_raters: np.ndarray
    stage2_item_base: np.ndarray
    stage2_item_own_majority: np.ndarray
    #: stage 3, one entry per rated slot: its item (numbered across worlds), the item's
    #: generator, whether the response names the attribute
    stage3_slot_item: np.ndarray
    stage3_slot_generator: np.ndarray
    stage3_slot_named: np.ndarray


#: names a folder where large draws are kept between processes (a test session draws the same
#: one in several: about 25 CPU-s each); unset in a reproduction
TRUTH_CACHE_VARIABLE = "RECENTER_TRUTH_CACHE"


def stored_design_path(folder: Path, params: WorldParameters) -> Path:
    """Where the large draw of ``params`` is stored in a shared folder: a digest of everything
    that decides it: the parameters, the truth's seeds, NumPy's version and the source of the
    analysis package (the simulator and what it imports)."""
    digest = hashlib.sha256()
    blob = [dataclasses.asdict(params), TRUTH_SEEDS, np.__version__]
    digest.update(json.dumps(blob, sort_keys=True, default=repr).encode())
    package = Path(analysis.__file__).parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return folder / f"{digest.hexdigest()}.npz"


@functools.lru_cache(maxsize=4)
def large_draw_design(params: WorldParameters) -> Design:
    """The design of the worlds of ``TRUTH_SEEDS`` (~1 s per world; cached per parameters, and
    read from the folder ``TRUTH_CACHE_VARIABLE`` names when one is set)."""
    folder = os.environ.get(TRUTH_CACHE_VARIABLE)
    if not folder:
        return _drawn_design(params)
    path = stored_design_path(Path(folder), params)
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as stored:
                fields = {f.name: stored[f.name] for f in dataclasses.fields(Design)}
            triples = fields["stage2_triples"]
            fields["stage2_triples"] = tuple(tuple(int(i) for i in row) for row in triples)
            return Design(**fields)
        except (OSError, ValueError, KeyError):
            pass  # a torn or foreign file: draw again and replace it
    design = _drawn_design(params)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial.npz")
    triples = np.array(design.stage2_triples, dtype=np.int64).reshape(
        len(design.stage2_triples), params.stage2_raters_per_item
    )
    np.savez(partial, **{**dataclasses.asdict(design), "stage2_triples": triples})
    os.replace(partial, path)
    return design


def _drawn_design(params: WorldParameters) -> Design:
    """The large draw itself."""
    q1, s1, types, items, gens, named = [], [], [], [], [], []
    pair2, raters2, base2, own2 = [], [], [], []
    model = params.relevance_model()
    # which people vote together matters only for a small pool (a crowd is all but random)
    small = comb(params.n_stage2_humans, params.stage2_raters_per_item) <= MAX_TRIPLES
    triples = tuple(
        itertools.combinations(range(params.n_stage2_humans), params.stage2_raters_per_item)
        if small
        else ()
    )
    triple_index = {t: i for i, t in enumerate(triples)}
    triple_counts = np.zeros((len(ITEM_TYPES), len(triples)))
    offset = pairs = 0
    for seed in TRUTH_SEEDS:
        t = simulate_world(dataclasses.replace(params, seed=seed)).truth
        slots = t["stage1_raters"].shape[1]
        q1.append(np.repeat(t["stage1_quality"], slots))
        s1.append(np.repeat(t["stage1_source"], slots))
        types.append(t["stage2_type"])
        if small:
            rows = np.sort(t["stage2_raters"], 1)
            which = [triple_index[tuple(int(r) for r in row)] for row in rows]
            np.add.at(triple_counts, (t["stage2_type"], which), 1)
        items.append(t["stage3_slot_item"] + offset)
        offset += len(t["stage3_item_generator"])
        gens.append(t["stage3_item_generator"][t["stage3_slot_item"]])
        named.append(t["stage3_slot_named"])
        base = logit(
            model.human_base(t["stage2_z"], t["stage2_hard"], t["stage2_w"], t["stage2_type"])
        )
        pair2.append(t["stage2_pair"] + pairs)
        raters2.append(t["stage2_raters"])
        base2.append(base)
        own2.append(_majority_yes(base, t["stage2_raters"], t["stage2_human_offsets"]))
        n_pairs = int(t["stage2_pair"].max()) + 1
        pairs += n_pairs
    all_types = np.concatenate(types)
    return Design(
        stage1_quality=np.concatenate(q1),
        stage1_source=np.concatenate(s1),
        stage2_type_shares=np.bincount(all_types, minlength=len(ITEM_TYPES)) / len(all_types),
        stage2_triple_shares=triple_counts / max(triple_counts.sum(), 1.0),
        stage2_triples=triples,
        stage3_slot_item=np.concatenate(items),
        stage3_slot_generator=np.concatenate(gens),
        stage2_item_pair=np.concatenate(pair2),
        stage2_item_raters=np.concatenate(raters2),
        stage2_item_base=np.concatenate(base2),
        stage2_item_own_majority=np.concatenate(own2),
        stage3_slot_named=np.concatenate(named).astype(bool),
    )


def _count_distribution(p: np.ndarray) -> np.ndarray:
    """P(k successes), k = 0..n, of each row's n independent trials with probabilities ``p``
    (rows, n) -> (rows, n + 1): the Poisson-binomial distribution, trial by trial."""
    rows, n = p.shape
    count = np.zeros((rows, n + 1))
    count[:, 0] = 1.0
    for j in range(n):
        shifted = np.concatenate([np.zeros((rows, 1)), count[:, :-1]], axis=1)
        count = count * (1 - p[:, j, None]) + shifted * p[:, j, None]
    return count


def _majority_yes(base: np.ndarray, raters: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """P(each item's people's majority says yes), given its latent class (``base``: a person's
    yes logit before their offset) and its voters' ``offsets``."""
    yes = expit(base[:, None] + np.asarray(offsets, dtype=np.float64)[raters])  # (items, k)
    return _count_distribution(yes)[:, raters.shape[1] // 2 + 1 :].sum(axis=1)


def _relevant_counts(design: Design, majority_yes: np.ndarray) -> np.ndarray:
    """P(a pair has n majority-relevant attributes), n = 0, 1, ..., over the large draw's pairs
    (each pair's own Poisson-binomial distribution, averaged)."""
    pair = design.stage2_item_pair
    sizes = np.bincount(pair)
    position = np.arange(len(pair)) - np.concatenate([[0], np.cumsum(sizes)[:-1]])[pair]
    padded = np.zeros((len(sizes), int(sizes.max())))
    padded[pair, position] = majority_yes
    return _count_distribution(padded).mean(axis=0)


def slot_counts(design: Design, human_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(a pair has n relevant attributes) for a world whose stage-2 annotators have
    ``human_offsets``, the weight of each of the large draw's stage-3 items).

    A pair's relevant attributes are its slots: every stage-3 item of the pair is rated on
    them. Given how many there are, nothing else of an item (its quality, its generator, which
    slots its response names) depends on the annotators; so the large draw's items,
    reweighted by the ratio of the two distributions of their slot count, this world's to
    the large draw's own, stand for this world's (post-stratification on the count).
    """
    target = _relevant_counts(
        design,
        _majority_yes(design.stage2_item_base, design.stage2_item_raters, human_offsets),
    )
    own = _relevant_counts(design, design.stage2_item_own_majority)
    n_slots = np.bincount(design.stage3_slot_item)
    weights = target[n_slots] / own[n_slots]
    return target, weights / weights.mean()


# --------------------------------------------------------------------------- stage 1


def _stage1_category_probabilities(p: WorldParameters, shared_sd: float, leniency: np.ndarray):
    """P(rejected, uncertain, accepted) per (class, shared-effect node, leniency node).

    The attribute's difficulty and its user's effect are one normal (``shared_sd``); the
    rater's leniency is the last axis' nodes; logistic noise as in the ordered logit.
    """
    eta, w_eta = normal_nodes(shared_sd)
    x = (
        np.asarray(p.stage1_class_means)[:, None, None]
        + eta[None, :, None]
        + leniency[None, None, :]
    )
    low, high = p.stage1_cutpoints
    rejected = expit(low - x)
    accepted = expit(x - high)
    return np.stack([rejected, 1 - rejected - accepted, accepted], axis=-1), w_eta


def _stage1(p: WorldParameters, design: Design) -> dict[str, Truth]:
    shared_sd = float(np.hypot(p.stage1_item_sd, p.stage1_user_sd))
    total_sd = float(np.sqrt(shared_sd**2 + p.stage1_leniency_sd**2))
    accept = mean_logistic(
        np.asarray(p.stage1_class_means) - p.stage1_cutpoints[1], total_sd
    )  # per class: item, user and rater integrated out
    pj = accept[design.stage1_quality]
    source = design.stage1_source
    real = source == "sim-wildchat"
    out = {
        "stage1.acceptance_rate.overall": Truth(float(pj.mean()), _DRAWN),
        "stage1.acceptance_rate.real": Truth(float(pj[real].mean()), _DRAWN),
        "stage1.acceptance_rate.synthetic": Truth(float(pj[~real].mean()), _DRAWN),
        "stage1.problematic_gap_real_vs_synthetic": Truth(
            float(pj[~real].mean() - pj[real].mean()), _DRAWN
        ),
    }
    for s in np.unique(source):
        out[f"stage1.acceptance_rate.{s}"] = Truth(float(pj[source == s].mean()), _DRAWN)
    # agreement between two people drawn from the population, over the judgments' class mix
    mix = np.bincount(design.stage1_quality, minlength=len(p.stage1_class_means)) / len(pj)
    raters = RaterPool.normal(p.stage1_leniency_sd)
    probs, w_eta = _stage1_category_probabilities(p, shared_sd, raters.offsets)
    table = np.einsum("c,e,ceia,cejb->ijab", mix, w_eta, probs, probs)
    observed = np.einsum("ijaa->ij", table)
    row, col = table.sum(axis=3), table.sum(axis=2)
    chance = np.einsum("ija,ija->ij", row, col)
    out["stage1.kappa.human_human"] = Truth(
        raters.pair_mean((observed - chance) / (1 - chance)), _DRAWN
    )
    pooled = np.einsum("c,e,i,ceia->a", mix, w_eta, raters.weights, probs)
    disagreement = 1 - raters.pair_mean(observed)
    out["stage1.alpha.human"] = Truth(
        float(1 - disagreement / (1 - (pooled**2).sum())),
        _DRAWN + " (large-sample Krippendorff's alpha: 1 - within / pooled disagreement)",
    )
    return out


# --------------------------------------------------------------------------- stage 2


def _majority(q: np.ndarray, raters: int) -> np.ndarray:
    """P(more than half of ``raters`` people say yes) when each says yes with P ``q``."""
    need = raters // 2 + 1
    return sum(comb(raters, k) * q**k * (1 - q) ** (raters - k) for k in range(need, raters + 1))


def _world_majority(
    p: WorldParameters, design: Design, base_h: np.ndarray, human_offsets: np.ndarray
) -> np.ndarray:
    """P(the item's people's majority says yes) per latent class, for this world's people.

    Each item's voters are a triple of the pool (in the large draw's proportions per item
    type), each voting with its own offset: the majority of the study's annotators, the
    reference the declared design holds fixed.
    """
    t_of_class = np.meshgrid(range(4), (0, 1), (0, 1), (0, 1))[0].ravel()
    yes = expit(base_h[None, :] + np.asarray(human_offsets)[:, None])  # (people, classes)
    if not design.stage2_triples:  # a crowd: an item's voters are as good as random draws
        return _majority(yes.mean(axis=0), p.stage2_raters_per_item)
    out = np.zeros(len(base_h))
    type_share = design.stage2_triple_shares.sum(axis=1)
    for j, triple in enumerate(design.stage2_triples):
        voters = np.broadcast_to(np.asarray(triple), (len(base_h), len(triple)))
        pm = _majority_yes(base_h, voters, human_offsets)
        weight = design.stage2_triple_shares[t_of_class, j] / type_share[t_of_class]
        out += weight * pm
    return out


def _table_scores(yes: np.ndarray, ref_yes: np.ndarray, ref_no: np.ndarray, p: np.ndarray):
    """Kappa and F1 (reference as truth) of raters ``yes`` (R, C) against a reference.

    ``ref_yes`` / ``ref_no`` are the reference's P(yes) / P(no) per class (their sum is the
    P(the reference is defined)); items without a reference are left out, as ties are.
    """
    defined = float((p * (ref_yes + ref_no)).sum())
    t11 = (yes * p * ref_yes).sum(axis=1) / defined
    t10 = (yes * p * ref_no).sum(axis=1) / defined
    t01 = ((1 - yes) * p * ref_yes).sum(axis=1) / defined
    rate, ref = t11 + t10, t11 + t01
    kappa = kappa_from_rates(rate, ref, t11)
    f1 = 2 * t11 / (2 * t11 + t10 + t01)
    return kappa, f1


def _stage2(
    p: WorldParameters, design: Design, llm_offsets: np.ndarray, human_offsets: np.ndarray
) -> dict[str, Truth]:
    model = p.relevance_model(llm_offsets=tuple(llm_offsets))
    probs, base_h, base_l = model.class_table(design.stage2_type_shares)
    humans, models = model.human_pool(), model.llm_pool(fixed=True)
    hy, ly = pool_yes(humans, base_h), pool_yes(models, base_l)
    q = humans.mean(hy)  # P(a person drawn at random says yes), per class
    # the human-majority label is the study's reference: conditional on this world's people
    maj = _world_majority(p, design, base_h, human_offsets)
    maj_rate = float(maj @ probs)
    rates = ly @ probs
    joint = (ly * maj) @ probs
    how = _DRAWN + _CONDITIONAL
    how_majority = _DRAWN + _CONDITIONAL_MAJORITY
    out = {
        "stage2.final.relevance_rate.human": Truth(float(humans.mean(hy @ probs)), _DRAWN),
        "stage2.final.relevance_rate.human_majority": Truth(maj_rate, how_majority),
        "stage2.final.over_selection.mean_model": Truth(
            float(np.mean(rates / maj_rate)), how_majority
        ),
    }
    for m, name in enumerate(p.llm_names):
        out[f"stage2.final.relevance_rate.{name}"] = Truth(float(rates[m]), how)
        scores = {
            "over_selection": rates[m] / maj_rate,
            "precision_vs_majority": joint[m] / rates[m],
            "recall_vs_majority": joint[m] / maj_rate,
            "f1_vs_majority": 2 * joint[m] / (maj_rate + rates[m]),
            "kappa_vs_majority": kappa_from_rates(np.float64(maj_rate), rates[m], joint[m]),
        }
        for score, value in scores.items():
            out[f"stage2.final.{score}.{name}"] = Truth(float(value), how_majority)
    kappas = expected_relevance_statistics(model, design.stage2_type_shares, fixed_models=True)
    groups = {
        "human_human": kappas["kappa_human_human"],
        "model_model": kappas["kappa_llm_llm"],
        "human_model": kappas["kappa_human_llm"],
    }
    for group, value in groups.items():
        out[f"stage2.final.kappa.{group}"] = Truth(value, _DRAWN if group == "human_human" else how)
    # issue 35: the attainable kappa of each group's pairs and the share of it they reach
    names = {"human_human": "human_human", "model_model": "llm_llm", "human_model": "human_llm"}
    shares = {g: kappas[f"kappa_share_{n}"] for g, n in names.items()}
    for group, n in names.items():
        kind = _DRAWN if group == "human_human" else how
        out[f"stage2.final.kappa_max.{group}"] = Truth(kappas[f"kappa_max_{n}"], kind)
        out[f"stage2.final.kappa_share_of_max.{group}"] = Truth(shares[group], kind)
    for a, b in (
        ("human_human", "human_model"),
        ("model_model", "human_human"),
        ("model_model", "human_model"),
    ):
        out[f"stage2.final.kappa_diff.{a}_minus_{b}"] = Truth(groups[a] - groups[b], how)
        out[f"stage2.final.kappa_share_of_max_diff.{a}_minus_{b}"] = Truth(
            shares[a] - shares[b], how
        )
    # leave-one-out: a person's reference is the other two people of the item when they agree
    others = p.stage2_raters_per_item - 1
    ref_yes, ref_no = q**others, (1 - q) ** others
    h_kappa, h_f1 = _table_scores(hy, ref_yes, ref_no, probs)
    ceiling = {"kappa": float(humans.mean(h_kappa)), "f1": float(humans.mean(h_f1))}
    for score, value in ceiling.items():
        out[f"stage2.final.ceiling.{score}_human_vs_rest"] = Truth(value, _DRAWN)
    m_kappa, m_f1 = _table_scores(ly, ref_yes, ref_no, probs)
    for m, name in enumerate(p.llm_names):
        for score, values in (("kappa", m_kappa), ("f1", m_f1)):
            out[f"stage2.final.vs_rest.{score}.{name}"] = Truth(float(values[m]), how)
            out[f"stage2.final.vs_rest.gap_{score}.{name}"] = Truth(
                float(values[m] - ceiling[score]), how
            )
    return out


# --------------------------------------------------------------------------- stage 3


def _rating_pmf(mean: np.ndarray, sd: float) -> np.ndarray:
    """P(rating = 1..5) of ``clip(rint(3 + latent))`` with latent ~ N(mean, sd); (..., 5)."""
    mean = np.asarray(mean, dtype=np.float64)
    edges = norm.cdf((np.arange(1, 5) + 0.5 - 3.0 - mean[..., None]) / sd)
    cdf = np.concatenate([edges, np.ones(mean.shape + (1,))], axis=-1)
    return np.diff(cdf, axis=-1, prepend=0.0)


def _share_no_better(
    slot_mean: np.ndarray, slot_item: np.ndarray, shared_sd: float, slot_sd: float
) -> np.ndarray:
    """P(an item's mean rating <= 3) per item: slots share one normal effect per item."""
    return _shares_by_tie_rule(slot_mean, slot_item, shared_sd, slot_sd)[0]


def _shares_by_tie_rule(
    slot_mean: np.ndarray, slot_item: np.ndarray, shared_sd: float, slot_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """P(an item's mean rating <= 3) and P(it is exactly 3) per item (the tie rule's split:
    worse = the first minus the second); slots share one normal effect per item.

    Given the shared effect (quadrature nodes), the slots' ratings are independent; their
    sum's distribution is convolved slot by slot, items with the same number of slots at once.
    """
    nodes, weights = normal_nodes(shared_sd)
    counts = np.bincount(slot_item)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    out = np.empty(len(counts))
    equal = np.empty(len(counts))
    for n in np.unique(counts):
        items = np.flatnonzero(counts == n)
        means = slot_mean[starts[items][:, None] + np.arange(n)]  # (items, n)
        pmf = _rating_pmf(means[:, :, None] + nodes[None, None, :], slot_sd)  # (i, n, k, 5)
        dist = np.zeros((len(items), len(nodes), 4 * n + 1))
        dist[:, :, 0] = 1.0
        for s in range(n):
            live = 4 * s + 1  # the sum of s slots' (rating - 1) lies in 0..4 s: the rest is 0
            new = np.zeros_like(dist)
            for k in range(5):
                new[:, :, k : k + live] += dist[:, :, :live] * pmf[:, s, :, k, None]
            dist = new
        # dist[..., j] = P(sum of (rating - 1) = j); mean <= 3 <=> sum(rating - 1) <= 2 n
        out[items] = dist[:, :, : 2 * n + 1].sum(axis=2) @ weights
        equal[items] = dist[:, :, 2 * n] @ weights
    return out, equal


def _within_generator(
    expected: np.ndarray, named: np.ndarray, generator: np.ndarray, weights: np.ndarray
) -> float:
    """The mention effect compared within each generator, pooled over the generators with both
    kinds of slot by Cochran-Mantel-Haenszel weights ``n_m n_u / (n_m + n_u)``, as the record
    ``stage3.mention_delta_within_generator`` pools it (the weights scale with the counts, so
    the large draw's weighted counts give the same pooled value as one world's expected
    counts)."""
    num = den = 0.0
    for gen in np.unique(generator):
        on, off = (generator == gen) & named, (generator == gen) & ~named
        n_m, n_u = float(weights[on].sum()), float(weights[off].sum())
        if n_m and n_u:
            weight = n_m * n_u / (n_m + n_u)
            num += weight * (
                np.average(expected[on], weights=weights[on])
                - np.average(expected[off], weights=weights[off])
            )
            den += weight
    return num / den


@dataclasses.dataclass(frozen=True)
class _Stage3Expectations:
    """Each slot's expected rating and each item's chance of a mean above or at 3, over the
    large draw's slots and items with every random effect and rating integrated out: what a
    world's truths average with its items' weights (:func:`slot_counts`)."""

    human_slot: np.ndarray
    human_no_better: np.ndarray
    human_equal: np.ndarray
    #: (models, slots) and (models, items): each model as a judge
    judge_slot: np.ndarray
    judge_better: np.ndarray


@functools.lru_cache(maxsize=4)
def _stage3_expectations(p: WorldParameters) -> _Stage3Expectations:
    design = large_draw_design(p)
    k = np.arange(1, 6)
    nm, g = design.stage3_slot_named, design.stage3_slot_generator
    mean_q = np.asarray(p.generator_quality)[g]
    # the response's quality is shared by its slots: its prompt's, its user's and its own
    shared_q = float(
        np.sqrt(p.prompt_quality_sd**2 + p.user_quality_sd**2 + p.response_quality_sd**2)
    )
    human_mean = p.human_rating_offset + mean_q + p.human_mention_effect * nm
    human_shared = float(np.hypot(shared_q, p.stage3_severity_sd))  # one person per item
    human_slot = float(np.hypot(p.slot_quality_sd, p.human_rating_noise))
    no_better, equal = _shares_by_tie_rule(
        human_mean, design.stage3_slot_item, human_shared, human_slot
    )
    w = p.judge_quality_weight
    judge_shared = w * shared_q
    judge_sd = float(np.hypot(w * p.slot_quality_sd, p.judge_rating_noise))
    judge_slot, judge_better = [], []
    for m in range(len(p.llm_names)):
        judge_mean = p.judge_offset[m] + w * mean_q + p.judge_mention_effect[m] * nm
        judge_slot.append(_rating_pmf(judge_mean, float(np.hypot(judge_shared, judge_sd))) @ k)
        judge_better.append(
            1 - _share_no_better(judge_mean, design.stage3_slot_item, judge_shared, judge_sd)
        )
    return _Stage3Expectations(
        human_slot=_rating_pmf(human_mean, float(np.hypot(human_shared, human_slot))) @ k,
        human_no_better=no_better,
        human_equal=equal,
        judge_slot=np.stack(judge_slot),
        judge_better=np.stack(judge_better),
    )


def _stage3(p: WorldParameters, design: Design, human_offsets: np.ndarray) -> dict[str, Truth]:
    """Stage 3's truths for a world whose stage-2 annotators have ``human_offsets``: their
    majority picks the attributes a response is rated on (fixed, as the reference label of
    stage 2 is), so the large draw's items are reweighted to it (:func:`slot_counts`)."""
    e = _stage3_expectations(p)
    counts, w_item = slot_counts(design, human_offsets)
    w_slot = w_item[design.stage3_slot_item]
    nm, g = design.stage3_slot_named, design.stage3_slot_generator

    def slots(x: np.ndarray, on: np.ndarray | None = None) -> float:
        on = np.ones(len(x), dtype=bool) if on is None else on
        return float(np.average(x[on], weights=w_slot[on]))

    def items(x: np.ndarray) -> float:
        return float(np.average(x, weights=w_item))

    how = _DRAWN + _CONDITIONAL_SLOTS
    eh = e.human_slot
    human_better = 1 - items(e.human_no_better)
    out = {
        "stage3.no_better_share": Truth(items(e.human_no_better), how),
        "stage3.worse_share": Truth(items(e.human_no_better - e.human_equal), how),
        "stage3.equal_share": Truth(items(e.human_equal), how),
        "stage3.human_better_share": Truth(human_better, how),
        "stage3.mean_rating.human": Truth(slots(eh), how),
        "stage3.mention_delta.human": Truth(slots(eh, nm) - slots(eh, ~nm), how),
        "stage3.mention_delta_within_generator.human": Truth(
            _within_generator(eh, nm, g, w_slot), how
        ),
    }
    # every pair's personalized response adapts to its human-majority relevant attributes;
    # with n of them, each is named with P = rate * (r + (1 - r)^n / n)
    n = np.arange(len(counts))
    r = p.mention_slot_rate
    named_share = float(np.sum((counts * (r * n + (1 - r) ** n))[1:]) / np.sum((counts * n)[1:]))
    rates, deltas = {}, {}
    for m, name in enumerate(p.llm_names):
        ej = e.judge_slot[m]
        better = items(e.judge_better[m])
        out[f"stage3.mean_rating.{name}"] = Truth(slots(eh, g == m), how)
        out[f"stage3.judge_mean_rating.{name}"] = Truth(slots(ej), how)
        out[f"stage3.judge_minus_human.{name}"] = Truth(slots(ej - eh), how)
        out[f"stage3.judge_better_share.{name}"] = Truth(better, how)
        out[f"stage3.judge_better_share_minus_human.{name}"] = Truth(better - human_better, how)
        deltas[name] = slots(ej, nm) - slots(ej, ~nm)
        rates[name] = p.generator_mention_rate[m] * named_share
        out[f"stage3.mention_delta.{name}"] = Truth(deltas[name], how)
        out[f"stage3.mention_delta_within_generator.{name}"] = Truth(
            _within_generator(ej, nm, g, w_slot), how
        )
        out[f"stage3.mention_rate.{name}"] = Truth(rates[name], how)
    rho = spearmanr([rates[x] for x in p.llm_names], [deltas[x] for x in p.llm_names]).statistic
    out["stage3.mention_habit_vs_bias.spearman"] = Truth(
        float(rho),
        how + "; across the 5 fixed simulated models, the factor its design resamples",
        in_coverage=False,
    )
    return out


# --------------------------------------------------------------------------- the whole truth


def _base(params: WorldParameters) -> WorldParameters:
    """The parameters without their seed (the large draw and its truths do not depend on it)."""
    return dataclasses.replace(params, seed=0)


@dataclasses.dataclass(frozen=True)
class FixedFactors:
    """What the truth is conditional on: the world's models and its stage-2 annotators.

    The five models are the models studied; the stage-2 annotators' majority is the study's
    reference label (the declared design holds it fixed for the statistics scored against
    it, and for stage 3, rated on the attributes it marks relevant). Both drawn per world
    (``World.truth``: ``llm_offsets``, ``stage2_human_offsets``).
    """

    llm: tuple[float, ...]
    stage2_human: tuple[float, ...]

    @classmethod
    def of_world(cls, truth: Mapping[str, np.ndarray]) -> FixedFactors:
        """The fixed factors of a simulated world (from its ``World.truth``)."""
        return cls(
            tuple(float(x) for x in truth["llm_offsets"]),
            tuple(float(x) for x in truth["stage2_human_offsets"]),
        )

    @classmethod
    def of_params(cls, params: WorldParameters) -> FixedFactors:
        """The fixed factors the world of ``params`` draws (its seed's rater stream)."""
        raters = draw_rater_effects(params, np.random.default_rng([params.seed, RATER_STREAM]))
        return cls(
            tuple(float(x) for x in raters.llm), tuple(float(x) for x in raters.stage2_human)
        )


def world_truth(params: WorldParameters, fixed: FixedFactors | None = None) -> dict[str, Truth]:
    """Every controlled estimand's truth in the world of ``params``, by numbers.json key.

    ``fixed``: the world's fixed factors (default: as the world of ``params.seed`` draws
    them). Everything else integrates over the random factors and is the same for every
    seed; the large draw behind it is cached (~1 s per drawn world, once per process).
    """
    base = _base(params)
    fixed = FixedFactors.of_params(params) if fixed is None else fixed
    design = large_draw_design(base)
    stage2 = _stage2(base, design, np.asarray(fixed.llm), np.asarray(fixed.stage2_human))
    out = {
        **_stage1(base, design),
        **stage2,
        **_stage3(base, design, np.asarray(fixed.stage2_human)),
    }
    return dict(sorted(out.items()))


#: significant digits of a truth value in truth.json (Monte Carlo error is far larger)
DIGITS = 6


def truth_document(params: WorldParameters, fixed: FixedFactors | None = None) -> dict[str, Any]:
    """truth.json's content: what the file is, the world's fixed factors, every estimand."""
    fixed = FixedFactors.of_params(params) if fixed is None else fixed
    return {
        "about": (
            "Ground truth of this simulated world: the value, under the generative parameters"
            " (analysis/simulation/parameters.py), of each estimand the simulator controls,"
            " keyed by its numbers.json record key. It is what the estimator targets (e.g. a"
            " mention delta is a difference of observed mean ratings), not a latent parameter."
            " It integrates over the random factors (users, prompts, items, people) and is"
            " conditional on the fixed ones: the five models, and for the statistics scored"
            " against the human majority and for stage 3 (rated on the attributes it marks"
            " relevant) the annotators whose majority it is (their drawn yes-bias:"
            " `fixed_factors`). Written by analysis/simulation/truth.py; `how` says how each"
            " value was obtained; `in_coverage` is false where the coverage study cannot judge"
            " the estimand."
        ),
        "random_effects": {
            name: {
                "factor": factor,
                "shifts": what,
                "sd": getattr(params, name),
                "size_from": effect_source(params, name),
            }
            for name, (factor, what) in RANDOM_EFFECTS.items()
        },
        "fixed_factors": {
            "llm_offsets": {
                name: float(f"{x:.{DIGITS}g}")
                for name, x in zip(params.llm_names, fixed.llm, strict=True)
            },
            "stage2_human_offsets": [float(f"{x:.{DIGITS}g}") for x in fixed.stage2_human],
        },
        "estimands": {
            key: {
                "how": t.how,
                "in_coverage": t.in_coverage,
                "value": float(f"{t.value:.{DIGITS}g}"),
            }
            for key, t in world_truth(params, fixed).items()
        },
    }


def truth_json(params: WorldParameters, fixed: FixedFactors | None = None) -> str:
    """truth.json as text: sorted keys, fixed float precision, ``\\n`` line ends."""
    doc = truth_document(params, fixed)
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
