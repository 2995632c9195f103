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

from dataclasses import dataclass

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


def evenly_spread(n: int, half_width: float) -> np.ndarray:
    """``n`` offsets evenly spaced in [-half_width, half_width] (one per rater; mean 0)."""
    if n == 1:
        return np.zeros(1)
    return np.linspace(-half_width, half_width, n)


def draw_attribute_labels(
    class_index: np.ndarray,
    raters: np.ndarray,
    class_means: np.ndarray,
    item_sd: float,
    leniency: np.ndarray,
    cutpoints: tuple[float, float],
    rng: np.random.Generator,
) -> np.ndarray:
    """Ordinal labels (0 rejected, 1 uncertain, 2 accepted) for attributes x rater slots.

    ``class_index`` has one entry per attribute; ``raters`` is (attributes, slots) of rater
    indices into ``leniency``.
    """
    eta = rng.normal(0.0, item_sd, size=class_index.shape[0])
    latent = (
        class_means[class_index][:, None]
        + eta[:, None]
        + leniency[raters]
        + rng.logistic(size=raters.shape)
    )
    return (latent > cutpoints[0]).astype(np.int64) + (latent > cutpoints[1])


# --------------------------------------------------------------------------- stage 2

ITEM_TYPES: tuple[str, ...] = ("same_domain", "style", "adjacent", "unrelated")


@dataclass(frozen=True)
class RelevanceModel:
    """Everything that decides a stage-2 vote; see the module docstring."""

    prevalence: tuple[float, ...]  # P(z=1 | item type), in ITEM_TYPES order
    hard_rate: float  # P(item is hard for people)
    hard_yes: float  # P(a person says yes | hard item the LLM view finds plausible)
    human_sensitivity: float  # P(yes | z=1, easy), before the rater's offset
    human_false_positive: float  # P(yes | z=0, w=1, easy), before the rater's offset
    human_false_positive_far: float  # P(yes | z=0, w=0): an implausible item, hard or not
    human_type_shift: tuple[float, ...]  # logit shift of a person's yes on irrelevant items
    human_offsets: tuple[float, ...]  # per-person logit bias
    llm_view_given_relevant: float  # P(w=1 | z=1)
    llm_view_given_irrelevant: float  # P(w=1 | z=0) at type shift 0
    llm_view_type_shift: tuple[float, ...]  # logit shift of the line above per item type
    llm_yes_given_view: float  # P(model says yes | w=1), before the model's offset
    llm_yes_given_no_view: float  # P(model says yes | w=0), before the model's offset
    llm_offsets: tuple[float, ...]  # per-model logit bias

    def class_table(self, type_shares: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Latent classes (type, z, hard, w): probabilities and every rater's P(yes).

        Returns ``(p, human_yes, llm_yes)`` with ``p`` of shape (C,), ``human_yes`` of shape
        (n_humans, C) and ``llm_yes`` of shape (n_models, C).
        """
        t, z, h, w = (a.ravel() for a in np.meshgrid(range(4), (0, 1), (0, 1), (0, 1)))
        prev = np.asarray(self.prevalence)[t]
        view0 = expit(
            logit(self.llm_view_given_irrelevant) + np.asarray(self.llm_view_type_shift)[t]
        )
        p_view = np.where(z == 1, self.llm_view_given_relevant, view0)
        p = (
            np.asarray(type_shares)[t]
            * np.where(z == 1, prev, 1 - prev)
            * np.where(h == 1, self.hard_rate, 1 - self.hard_rate)
            * np.where(w == 1, p_view, 1 - p_view)
        )
        base_h = self._human_base(z == 1, h == 1, w == 1, t)
        base_l = np.where(w == 1, self.llm_yes_given_view, self.llm_yes_given_no_view)
        human_yes = expit(logit(base_h)[None, :] + np.asarray(self.human_offsets)[:, None])
        llm_yes = expit(logit(base_l)[None, :] + np.asarray(self.llm_offsets)[:, None])
        return p, human_yes, llm_yes

    def draw_items(
        self, item_types: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each item's truth ``z``, hardness and LLM view ``w`` (boolean arrays)."""
        n = item_types.shape[0]
        z = rng.random(n) < np.asarray(self.prevalence)[item_types]
        hard = rng.random(n) < self.hard_rate
        view0 = expit(
            logit(self.llm_view_given_irrelevant) + np.asarray(self.llm_view_type_shift)[item_types]
        )
        w = rng.random(n) < np.where(z, self.llm_view_given_relevant, view0)
        return z, hard, w

    def _human_base(
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
        base = self._human_base(z, hard, w, item_type)
        return expit(logit(base) + np.asarray(self.human_offsets)[rater])

    def llm_yes_probability(self, w: np.ndarray, model: int) -> np.ndarray:
        """P(yes) of model ``model`` (index into llm_offsets) on each item."""
        base = np.where(w, self.llm_yes_given_view, self.llm_yes_given_no_view)
        return expit(logit(base) + self.llm_offsets[model])


def kappa_from_rates(p_a: np.ndarray, p_b: np.ndarray, p11: np.ndarray) -> np.ndarray:
    """Cohen's kappa of two binary raters from their yes rates and joint yes rate."""
    observed = 1 - p_a - p_b + 2 * p11
    chance = p_a * p_b + (1 - p_a) * (1 - p_b)
    return (observed - chance) / (1 - chance)


def _mean_offdiag(m: np.ndarray) -> float:
    n = m.shape[0]
    return float((m.sum() - np.trace(m)) / (n * (n - 1)))


def expected_relevance_statistics(
    model: RelevanceModel, type_shares: np.ndarray
) -> dict[str, float]:
    """Population values of the stage-2 statistics the study reports.

    Kappas are group means of the pairwise Cohen's kappa matrix (human-human,
    model-model, human-model), as in the paper's rater x rater figure.
    """
    p, hy, ly = model.class_table(type_shares)
    rate_h, rate_l = hy @ p, ly @ p
    hh = kappa_from_rates(rate_h[:, None], rate_h[None, :], (hy * p) @ hy.T)
    ll = kappa_from_rates(rate_l[:, None], rate_l[None, :], (ly * p) @ ly.T)
    hl = kappa_from_rates(rate_h[:, None], rate_l[None, :], (hy * p) @ ly.T)
    return {
        "human_yes_rate": float(rate_h.mean()),
        "llm_yes_rate": float(rate_l.mean()),
        "llm_yes_rate_min": float(rate_l.min()),
        "llm_yes_rate_max": float(rate_l.max()),
        "kappa_human_human": _mean_offdiag(hh),
        "kappa_llm_llm": _mean_offdiag(ll),
        "kappa_human_llm": float(hl.mean()),
    }


#: the statistics ``calibrate_relevance`` solves for, in its parameter order
RELEVANCE_TARGET_KEYS: tuple[str, ...] = (
    "human_yes_rate",
    "llm_yes_rate",
    "kappa_human_human",
    "kappa_llm_llm",
    "kappa_human_llm",
)


def calibrate_relevance(
    template: RelevanceModel, type_shares: np.ndarray, targets: dict[str, float]
) -> RelevanceModel:
    """Solve the five free probabilities of ``template`` so the expectations hit ``targets``.

    Free: human sensitivity and false-positive rate, the LLM view's rate on irrelevant
    items, and the models' yes rates with and without the view (all on the logit scale).
    Everything else (prevalence, hardness, offsets, type shifts) stays as given. Raises
    ``ValueError`` when the targets cannot be reached within 0.005.
    """
    goal = np.array([targets[k] for k in RELEVANCE_TARGET_KEYS])

    def build(x: np.ndarray) -> RelevanceModel:
        s, f, v, a, b = (float(v) for v in expit(x))
        return RelevanceModel(
            prevalence=template.prevalence,
            hard_rate=template.hard_rate,
            hard_yes=template.hard_yes,
            human_sensitivity=s,
            human_false_positive=f,
            human_false_positive_far=template.human_false_positive_far,
            human_type_shift=template.human_type_shift,
            human_offsets=template.human_offsets,
            llm_view_given_relevant=template.llm_view_given_relevant,
            llm_view_given_irrelevant=v,
            llm_view_type_shift=template.llm_view_type_shift,
            llm_yes_given_view=a,
            llm_yes_given_no_view=b,
            llm_offsets=template.llm_offsets,
        )

    def residual(x: np.ndarray) -> np.ndarray:
        stats = expected_relevance_statistics(build(x), type_shares)
        return np.array([stats[k] for k in RELEVANCE_TARGET_KEYS]) - goal

    start = logit(
        np.array(
            [
                template.human_sensitivity,
                template.human_false_positive,
                template.llm_view_given_irrelevant,
                template.llm_yes_given_view,
                template.llm_yes_given_no_view,
            ]
        )
    )
    fit = least_squares(residual, start, bounds=(-8, 8), xtol=1e-12, ftol=1e-12)
    worst = float(np.abs(residual(fit.x)).max())
    if worst > 0.005:
        raise ValueError(
            f"relevance targets {targets} are out of reach of this model "
            f"(closest miss {worst:.3f}); change prevalence, hardness or offsets"
        )
    return build(fit.x)


# --------------------------------------------------------------------------- stage 3


def rating_from_latent(latent: np.ndarray) -> np.ndarray:
    """A 1-5 rating (3 = no difference) from a latent centred on 0."""
    return np.clip(np.rint(3.0 + latent), 1, 5).astype(np.int64)
