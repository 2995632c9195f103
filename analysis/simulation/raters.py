"""How simulated people and models judge: the three stages' rater models.

Each model separates what belongs to an *item* (how good or relevant it really is, how hard
it is to judge) from what belongs to a *rater* (leniency or bias, noise), so agreement
between raters comes out of the model instead of being written in. Every model has a
closed-form (or quadrature) expectation of the statistics the study reports, which is what
the calibration solves against and what the parameter-recovery test checks.

* Stage 1 (attribute quality): an ordered-logit model. An attribute of quality class ``c``
  has latent support ``mu_c + eta_i`` (``eta_i`` ~ N(0, item_sd) is the item's difficulty,
  shared by its raters); rater ``r`` adds a leniency ``l_r`` and logistic noise, and the
  label is *rejected* / *uncertain* / *accepted* by two cutpoints.
* Stage 2 (relevance): a latent-class model. An item of type ``t`` (same domain as the
  prompt, a style attribute, an adjacent domain, unrelated) is truly relevant (``z``) with
  prevalence ``pi_t``; a share of items is *hard* (people guess); and models see items
  through a shared *LLM view* ``w`` that also lights up on plausible-looking irrelevant items.
  People vote from ``z`` (sensitivity / false-positive rate), models from ``w``; per-rater
  logit offsets are the raters' biases. Because models share ``w``, they agree with each
  other more than with people: the over-selection the study reports.
* Stage 3 (preference): ratings are rounded normal latents around 3 ("no difference"), the
  slot's personalization quality plus a rater-kind offset and a mention effect (near zero
  for people; a per-judge bias for models).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import least_squares
from scipy.special import expit, logit

from analysis.data.vocabulary import ACCEPTED, REJECTED, TOOL_STAGE1_LABELS, UNCERTAIN

# --------------------------------------------------------------------------- stage 1

QUALITY_CLASSES: tuple[str, ...] = (
    "supported",
    "speculative",
    "overgeneralized",
    "context_confused",
)
#: ordinal label order of the stage-1 model (index = latent category)
STAGE1_LABELS: tuple[str, ...] = (REJECTED, UNCERTAIN, ACCEPTED)
#: the annotation tool's spelling of each label (task-1 / task-4 files): the adapter's
#: mapping, inverted, so the simulator writes what the adapter reads
TOOL_JUDGMENT: dict[str, str] = {label: code for code, label in TOOL_STAGE1_LABELS.items()}


def draw_attribute_labels(
    class_index: np.ndarray,
    raters: np.ndarray,
    class_means: np.ndarray,
    item_sd: float,
    leniency: np.ndarray,
    cutpoints: tuple[float, float],
    rng: np.random.Generator,
    shift: np.ndarray | None = None,
) -> np.ndarray:
    """Ordinal labels (0 rejected, 1 uncertain, 2 accepted) for attributes x rater slots.

    ``class_index`` has one entry per attribute; ``raters`` is (attributes, slots) of rater
    indices into ``leniency``; ``shift`` is each attribute's user effect (zero if None).
    """
    eta = rng.normal(0.0, item_sd, size=class_index.shape[0])
    if shift is not None:
        eta = eta + shift
    latent = (
        class_means[class_index][:, None]
        + eta[:, None]
        + leniency[raters]
        + rng.logistic(size=raters.shape)
    )
    return (latent > cutpoints[0]).astype(np.int64) + (latent > cutpoints[1])


# --------------------------------------------------------------------------- stage 2

ITEM_TYPES: tuple[str, ...] = ("same_domain", "style", "adjacent", "unrelated")


#: Gauss-Hermite nodes of every normal effect integrated out (prompt, user, rater)
QUADRATURE_NODES = 24


def normal_nodes(sd: float, n: int = QUADRATURE_NODES) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights (summing to 1) integrating a function of an N(0, sd^2) effect."""
    if sd == 0:
        return np.zeros(1), np.ones(1)
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return sd * x, w / w.sum()


def mean_logistic(base_logit: np.ndarray, sd: float) -> np.ndarray:
    """E[expit(base_logit + e)] with e ~ N(0, sd^2): a probability with a normal effect."""
    x, w = normal_nodes(sd)
    return expit(np.asarray(base_logit, dtype=np.float64)[..., None] + x) @ w


@dataclass(frozen=True)
class RaterPool:
    """Logit offsets of a group of raters: the drawn raters of one world, or a population.

    A world's raters are ``offsets`` with equal weights (``population`` False); a population
    of raters (people are a sample of annotators) is quadrature nodes of N(0, sd^2) with
    their weights, so an expectation over the pool integrates the offset out.
    """

    offsets: np.ndarray
    weights: np.ndarray
    population: bool

    @classmethod
    def drawn(cls, offsets: tuple[float, ...] | np.ndarray) -> RaterPool:
        o = np.asarray(offsets, dtype=np.float64)
        return cls(o, np.full(len(o), 1 / len(o)), False)

    @classmethod
    def normal(cls, sd: float) -> RaterPool:
        x, w = normal_nodes(sd)
        return cls(x, w, True)

    def pair_mean(self, matrix: np.ndarray) -> float:
        """Mean of a pairwise statistic over two distinct raters of the pool."""
        if self.population:
            return float(self.weights @ matrix @ self.weights)
        n = len(self.offsets)
        return float((matrix.sum() - np.trace(matrix)) / (n * (n - 1)))

    def mean(self, values: np.ndarray) -> float | np.ndarray:
        """Mean over the pool's raters of per-rater values (first axis)."""
        return self.weights @ values


@dataclass(frozen=True)
class RelevanceModel:
    """Everything that decides a stage-2 vote; see the module docstring.

    Items carry two normal logit effects: ``prevalence_sd`` (a prompt's and a user's shift of
    how often an attribute truly matters, combined) and ``plausibility_sd`` (a prompt's shift
    of how often the LLM view lights up on an irrelevant item: how misleading the prompt is).
    People's and models' yes-bias offsets are drawn per world from N(0, human_offset_sd^2)
    and N(0, llm_offset_sd^2); ``human_offsets`` / ``llm_offsets`` are one world's draws
    (empty for the population model that calibration and truth integrate over).
    """

    prevalence: tuple[float, ...]  # P(z=1 | item type) at zero effects, in ITEM_TYPES order
    hard_rate: float  # P(item is hard for people)
    hard_yes: float  # P(a person says yes | hard item the LLM view finds plausible)
    human_sensitivity: float  # P(yes | z=1, easy), before the rater's offset
    human_false_positive: float  # P(yes | z=0, w=1, easy), before the rater's offset
    human_false_positive_far: float  # P(yes | z=0, w=0): an implausible item, hard or not
    human_type_shift: tuple[float, ...]  # logit shift of a person's yes on irrelevant items
    llm_view_given_relevant: float  # P(w=1 | z=1)
    llm_view_given_irrelevant: float  # P(w=1 | z=0) at type shift 0 and zero effect
    llm_view_type_shift: tuple[float, ...]  # logit shift of the line above per item type
    llm_yes_given_view: float  # P(model says yes | w=1), before the model's offset
    llm_yes_given_no_view: float  # P(model says yes | w=0), before the model's offset
    prevalence_sd: float = 0.0  # sd of an item's logit prevalence shift (prompt + user)
    plausibility_sd: float = 0.0  # sd of a prompt's logit shift of the LLM view (irrelevant)
    human_offset_sd: float = 0.0  # sd of a person's logit yes-bias
    llm_offset_sd: float = 0.0  # sd of a model's logit yes-bias
    human_offsets: tuple[float, ...] = ()  # one world's people
    llm_offsets: tuple[float, ...] = ()  # one world's models

    def class_table(self, type_shares: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Latent classes (type, z, hard, w): probabilities and each class's base logits.

        The item effects are integrated out: P(z | type) and P(w | z = 0, type) are means of
        the logistic over their normal effects (the two effects are independent, so the
        class probabilities factor). Returns ``(p, human_base, llm_base)``, each of shape
        (C,): a rater's P(yes) in a class is ``expit(base + offset)``.
        """
        t, z, h, w = (a.ravel() for a in np.meshgrid(range(4), (0, 1), (0, 1), (0, 1)))
        prev = mean_logistic(logit(np.asarray(self.prevalence)), self.prevalence_sd)[t]
        view0 = mean_logistic(
            logit(self.llm_view_given_irrelevant) + np.asarray(self.llm_view_type_shift),
            self.plausibility_sd,
        )[t]
        p_view = np.where(z == 1, self.llm_view_given_relevant, view0)
        p = (
            np.asarray(type_shares)[t]
            * np.where(z == 1, prev, 1 - prev)
            * np.where(h == 1, self.hard_rate, 1 - self.hard_rate)
            * np.where(w == 1, p_view, 1 - p_view)
        )
        base_h = logit(self.human_base(z == 1, h == 1, w == 1, t))
        base_l = logit(np.where(w == 1, self.llm_yes_given_view, self.llm_yes_given_no_view))
        return p, base_h, base_l

    def draw_items(
        self,
        item_types: np.ndarray,
        rng: np.random.Generator,
        prevalence_shift: np.ndarray | None = None,
        plausibility_shift: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each item's truth ``z``, hardness and LLM view ``w`` (boolean arrays).

        The shifts are each item's logit effects (its prompt's and user's; zero if None).
        """
        n = item_types.shape[0]
        e = np.zeros(n) if prevalence_shift is None else prevalence_shift
        d = np.zeros(n) if plausibility_shift is None else plausibility_shift
        z = rng.random(n) < expit(logit(np.asarray(self.prevalence))[item_types] + e)
        hard = rng.random(n) < self.hard_rate
        view0 = expit(
            logit(self.llm_view_given_irrelevant)
            + np.asarray(self.llm_view_type_shift)[item_types]
            + d
        )
        w = rng.random(n) < np.where(z, self.llm_view_given_relevant, view0)
        return z, hard, w

    def human_base(
        self, z: np.ndarray, hard: np.ndarray, w: np.ndarray, item_type: np.ndarray
    ) -> np.ndarray:
        """A person's P(yes) before their offset.

        People err on items that look plausible (the LLM view is lit), more so when the
        attribute is topically close to the prompt (``human_type_shift``), and almost never
        on implausible ones.
        """
        plausible = z | w
        shift = np.where(z, 0.0, np.asarray(self.human_type_shift)[item_type])
        easy = np.where(z, self.human_sensitivity, self.human_false_positive)
        base = expit(logit(np.where(hard, self.hard_yes, easy)) + shift)
        return np.where(plausible, base, self.human_false_positive_far)

    def human_yes_probability(
        self,
        z: np.ndarray,
        hard: np.ndarray,
        w: np.ndarray,
        item_type: np.ndarray,
        rater: np.ndarray,
    ) -> np.ndarray:
        """P(yes) of person ``rater`` (index into human_offsets) on each item."""
        base = self.human_base(z, hard, w, item_type)
        return expit(logit(base) + np.asarray(self.human_offsets)[rater])

    def llm_yes_probability(self, w: np.ndarray, model: int) -> np.ndarray:
        """P(yes) of model ``model`` (index into llm_offsets) on each item."""
        base = np.where(w, self.llm_yes_given_view, self.llm_yes_given_no_view)
        return expit(logit(base) + self.llm_offsets[model])

    def human_pool(self) -> RaterPool:
        """People as the population the study generalizes to (their offsets integrated)."""
        return RaterPool.normal(self.human_offset_sd)

    def llm_pool(self, fixed: bool = True) -> RaterPool:
        """The models: this world's five (fixed) or, for calibration, their population."""
        if fixed and self.llm_offsets:
            return RaterPool.drawn(self.llm_offsets)
        return RaterPool.normal(self.llm_offset_sd)


def kappa_from_rates(p_a: np.ndarray, p_b: np.ndarray, p11: np.ndarray) -> np.ndarray:
    """Cohen's kappa of two binary raters from their yes rates and joint yes rate."""
    observed = 1 - p_a - p_b + 2 * p11
    chance = p_a * p_b + (1 - p_a) * (1 - p_b)
    return (observed - chance) / (1 - chance)


def kappa_max_from_rates(p_a: np.ndarray, p_b: np.ndarray) -> np.ndarray:
    """The largest Cohen's kappa two binary raters with these yes rates can reach: the kappa
    of the table with the same marginals and as much agreement as they allow."""
    chance = p_a * p_b + (1 - p_a) * (1 - p_b)
    attainable = np.minimum(p_a, p_b) + np.minimum(1 - p_a, 1 - p_b)
    return (attainable - chance) / (1 - chance)


def pool_yes(pool: RaterPool, base: np.ndarray) -> np.ndarray:
    """P(yes) of each rater of ``pool`` in each latent class: shape (raters, classes)."""
    return expit(np.asarray(base)[None, :] + pool.offsets[:, None])


def expected_relevance_statistics(
    model: RelevanceModel, type_shares: np.ndarray, fixed_models: bool = False
) -> dict[str, float]:
    """Population values of the stage-2 statistics the study reports.

    Kappas are group means of the pairwise Cohen's kappa matrix (human-human,
    model-model, human-model), as in the paper's rater x rater figure, each pair's kappa
    taken from its population 2x2 table (items and their effects integrated out). People
    are integrated over their population; models too for calibration (``fixed_models``
    False: the figures hold in expectation over worlds), or held at this world's drawn
    offsets for the truth (the five models are the models studied).
    """
    p, base_h, base_l = model.class_table(type_shares)
    humans, models = model.human_pool(), model.llm_pool(fixed=fixed_models)
    hy, ly = pool_yes(humans, base_h), pool_yes(models, base_l)
    rate_h, rate_l = hy @ p, ly @ p
    hh = kappa_from_rates(rate_h[:, None], rate_h[None, :], (hy * p) @ hy.T)
    ll = kappa_from_rates(rate_l[:, None], rate_l[None, :], (ly * p) @ ly.T)
    hl = kappa_from_rates(rate_h[:, None], rate_l[None, :], (hy * p) @ ly.T)
    # the attainable kappa of each pair, and the share of it the pair reaches (issue 35)
    hh_max = kappa_max_from_rates(rate_h[:, None], rate_h[None, :])
    ll_max = kappa_max_from_rates(rate_l[:, None], rate_l[None, :])
    hl_max = kappa_max_from_rates(rate_h[:, None], rate_l[None, :])
    return {
        "human_yes_rate": float(humans.mean(rate_h)),
        "llm_yes_rate": float(models.mean(rate_l)),
        "kappa_human_human": humans.pair_mean(hh),
        "kappa_llm_llm": models.pair_mean(ll),
        "kappa_human_llm": float(humans.weights @ hl @ models.weights),
        "kappa_max_human_human": humans.pair_mean(hh_max),
        "kappa_max_llm_llm": models.pair_mean(ll_max),
        "kappa_max_human_llm": float(humans.weights @ hl_max @ models.weights),
        "kappa_share_human_human": humans.pair_mean(hh / hh_max),
        "kappa_share_llm_llm": models.pair_mean(ll / ll_max),
        "kappa_share_human_llm": float(humans.weights @ (hl / hl_max) @ models.weights),
    }


#: the statistics ``calibrate_relevance`` solves for, in its parameter order
RELEVANCE_TARGET_KEYS: tuple[str, ...] = (
    "human_yes_rate",
    "llm_yes_rate",
    "kappa_human_human",
    "kappa_llm_llm",
    "kappa_human_llm",
)
#: the free probabilities of the calibration, in its parameter order
RELEVANCE_FREE: tuple[str, ...] = (
    "human_sensitivity",
    "human_false_positive",
    "llm_view_given_irrelevant",
    "llm_yes_given_view",
    "llm_yes_given_no_view",
)


def calibrate_relevance(
    template: RelevanceModel, type_shares: np.ndarray, targets: dict[str, float]
) -> RelevanceModel:
    """Solve the five free probabilities of ``template`` so the expectations hit ``targets``.

    Free: human sensitivity and false-positive rate, the LLM view's rate on irrelevant
    items, and the models' yes rates with and without the view (all on the logit scale).
    Everything else (prevalence, hardness, effects, offset sds, type shifts) stays as given;
    expectations are over worlds (people and models integrated). Raises ``ValueError`` when
    the targets cannot be reached within 0.005.
    """
    goal = np.array([targets[k] for k in RELEVANCE_TARGET_KEYS])

    def build(x: np.ndarray) -> RelevanceModel:
        return replace(
            template, **{k: float(v) for k, v in zip(RELEVANCE_FREE, expit(x), strict=True)}
        )

    def residual(x: np.ndarray) -> np.ndarray:
        stats = expected_relevance_statistics(build(x), type_shares)
        return np.array([stats[k] for k in RELEVANCE_TARGET_KEYS]) - goal

    start = logit(np.array([getattr(template, k) for k in RELEVANCE_FREE]))
    fit = least_squares(residual, start, bounds=(-8, 8), xtol=1e-12, ftol=1e-12)
    worst = float(np.abs(residual(fit.x)).max())
    if worst > 0.005:
        raise ValueError(
            f"relevance targets {targets} are out of reach of this model "
            f"(closest miss {worst:.3f}); change prevalence, hardness, effects or offsets"
        )
    return build(fit.x)


# --------------------------------------------------------------------------- stage 3


def rating_from_latent(latent: np.ndarray) -> np.ndarray:
    """A 1-5 rating (3 = no difference) from a latent centred on 0."""
    return np.clip(np.rint(3.0 + latent), 1, 5).astype(np.int64)
