"""Every number that shapes the bundled world, in one frozen, documented dataclass.

The data card (``data/raw/bundled/README.md``) lists each field with its value and its
``doc`` metadata, so a reader sees the whole generative model without reading code. Sizes
match the study. The stage-2 values marked *[calibrated]* are the output of
``calibration.calibrate_default_relevance`` (rounded; a test keeps them in step); the
stage-1 class mixes and the stage-3 offsets were set by hand against the expectations and
checked over many seeds (``calibration.SAMPLING_SD``), so the study's published figures hold
in expectation and, for the committed seed, within sampling error.
Tuples indexed "per model" follow ``llm_names``; "per class" follows
``raters.QUALITY_CLASSES``; "per item type" follows ``raters.ITEM_TYPES``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from analysis import REPO_ROOT
from analysis.settings import load_study
from analysis.simulation.raters import RelevanceModel

#: the file of the study's published figures (Hydra group ``study``); the scorecard reads it too
STUDY_FILE = REPO_ROOT / "config" / "study" / "published.yaml"


def _p(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


def _published_count(name: str) -> int:
    """A size the study published (entry ``name`` of the study file): the world matches it."""
    return int(load_study(STUDY_FILE).published[name].value)


@dataclass(frozen=True)
class WorldParameters:
    """The bundled world's generative model (see the module docstring and the data card)."""

    # ------------------------------------------------------------------ general
    seed: int = _p(
        20,
        "seed of every random draw (numpy PCG64, one stream per part); the committed"
        " world's is calibration.representative_seed over seeds 0-39 (the most typical)",
    )
    llm_names: tuple[str, ...] = _p(
        ("sim-llm-a", "sim-llm-b", "sim-llm-c", "sim-llm-d", "sim-llm-e"),
        "the five simulated LLMs: stage-2 voters, stage-3 generators and stage-3 judges",
    )
    human_prefix: str = _p("sim-human-", "simulated annotators are named <prefix>01, 02, ...")

    # ------------------------------------------------------------------ users, conversations
    n_wildchat_users: int = _p(60, "real-like users (source sim-wildchat)")
    synthetic_benchmarks: tuple[str, ...] = _p(
        ("cupid", "prefeval", "personalens"),
        "synthetic-benchmark stand-ins; their users have source sim-<benchmark>",
    )
    n_users_per_benchmark: int = _p(10, "users per synthetic benchmark")
    n_wildchat_conversations: int = _p(
        _published_count("conversations"), "conversations of the real-like users, in all"
    )
    synthetic_conversations_per_user: tuple[int, int] = _p(
        (5, 8), "conversations per synthetic user (inclusive range)"
    )
    interest_domains_per_user: tuple[int, int] = _p(
        (3, 5), "life domains a user talks about (inclusive range, out of 16)"
    )
    attributes_per_user: tuple[int, int] = _p(
        (12, 48), "bounds on a user's merged attributes (counts are drawn, then adjusted)"
    )

    # ------------------------------------------------------------------ stage 1
    n_stage1_attributes: int = _p(1983, "merged attributes judged in stage 1 (all users)")
    stage1_raters_per_attribute: int = _p(3, "people judging each stage-1 attribute")
    n_stage1_humans: int = _p(9, "stage-1 annotator pool (each user goes to 3 of them)")
    quality_mix_real: tuple[float, ...] = _p(
        (0.44, 0.13, 0.34, 0.09),
        "P(quality class) of a real-like user's attribute, per class",
    )
    quality_mix_synthetic: tuple[float, ...] = _p(
        (0.76, 0.12, 0.11, 0.01),
        "P(quality class) of a synthetic user's attribute: persona-driven chats mislead less",
    )
    style_share: float = _p(0.15, "share of supported attributes about communication style")
    interest_phrasing_share: float = _p(
        0.4, 'share of supported attributes phrased "is interested in <topic>"'
    )
    stage1_class_means: tuple[float, ...] = _p(
        (3.17, 0.75, -0.67, -1.60),
        "latent support of an attribute per quality class (ordered-logit location)",
    )
    stage1_item_sd: float = _p(1.0, "sd of an attribute's difficulty (shared by its raters)")
    stage1_user_sd: float = _p(
        0.3,
        "sd of a user's shift of all their attributes' latent support [stated: the pilot's"
        " five users cannot separate it from sampling noise]",
    )
    stage1_leniency_sd: float = _p(
        0.88,
        "sd of an annotator's leniency (logit), drawn per world [from data: the pilot's"
        " eight stage-1 annotators, effect_sizes.stage1_leniency_sd]",
    )
    stage1_cutpoints: tuple[float, float] = _p(
        (-1.0, 1.0), "ordered-logit cutpoints: rejected | uncertain | accepted"
    )
    stage1_note_rate: float = _p(0.35, "P(an annotator writes a note | not accepted)")
    stage1_flag_reason_mix: tuple[tuple[float, float, float], ...] = _p(
        ((0.10, 0.05, 0.85), (0.55, 0.05, 0.40), (0.88, 0.03, 0.09), (0.04, 0.88, 0.08)),
        "P(flag reason = overgeneralization, task-context confusion, other) of a"
        " non-accepted judgment without a note, per class (with a note: the note's reason)",
    )
    confidence_by_class: tuple[tuple[float, float], ...] = _p(
        ((0.85, 0.10), (0.55, 0.12), (0.80, 0.12), (0.88, 0.08)),
        "extractor confidence of an original attribute, (mean, sd) per class, clipped to"
        " [0.1, 1]: overgeneralized and confused claims are stated confidently",
    )
    originals_by_class: tuple[tuple[int, int], ...] = _p(
        ((1, 3), (1, 2), (1, 1), (1, 1)),
        "pre-merge originals per merged attribute (inclusive range) per class",
    )
    merge_confidence_bonus: float = _p(
        0.05, "merged confidence = mean of originals + this per extra original (max 1)"
    )

    # ------------------------------------------------------------------ stage 2
    n_stage2_users: int = _p(47, "real-like users whose profiles are matched to prompts")
    n_prompts: int = _p(41, "new prompts (the study used LIMA; here: project-written)")
    users_per_prompt: int = _p(4, "users paired with each prompt")
    n_stage2_items: int = _p(3973, "(user, prompt, attribute) items over all pairs")
    n_stage2_humans: int = _p(6, "stage-2 annotator pool (each pair goes to 3 of them)")
    stage2_raters_per_item: int = _p(3, "people judging each stage-2 item")
    prompt_in_user_domain: float = _p(
        0.85, "P(a pair's prompt comes from one of the user's own domains)"
    )
    relevance_prevalence: tuple[float, ...] = _p(
        (0.75, 0.45, 0.25, 0.01),
        "P(attribute truly matters for the prompt) per item type",
    )
    hard_item_rate: float = _p(0.12, "P(an item is hard for people to judge)")
    hard_item_yes: float = _p(0.35, "P(a person says yes) on a hard, plausible item")
    human_sensitivity: float = _p(0.6933, "P(person says yes | relevant, easy) [calibrated]")
    human_false_positive: float = _p(
        0.4267, "P(person says yes | irrelevant but plausible to the LLM view) [calibrated]"
    )
    human_false_positive_far: float = _p(0.01, "P(person says yes | implausible item)")
    human_type_shift: tuple[float, ...] = _p(
        (0.5, 0.5, 0.0, -2.0),
        "logit shift of a person's yes on irrelevant (plausible) items per item type",
    )
    stage2_human_offset_sd: float = _p(
        0.62,
        "sd of a person's yes-bias (logit), drawn per world [from data: the pilot's four"
        " annotators on shared items, effect_sizes.human_offset_sd]",
    )
    prompt_relevance_sd: float = _p(
        1.31,
        "sd of a prompt's logit shift of how often its attributes truly matter [from data:"
        " the spread of the final round's per-prompt majority rate, effect_sizes]",
    )
    user_relevance_sd: float = _p(
        1.94,
        "sd of a user's logit shift of how often their attributes truly matter [from data:"
        " the spread of the final round's per-user majority rate, effect_sizes]",
    )
    prompt_difficulty_sd: float = _p(
        2.06,
        "sd of a prompt's logit shift of the LLM view on irrelevant items: how misleading it"
        " is [from data: the spread of the models' per-prompt yes rate on majority-no items,"
        " effect_sizes]",
    )
    llm_view_given_relevant: float = _p(0.97, "P(LLM view lights up | relevant)")
    llm_view_given_irrelevant: float = _p(
        0.3617, "P(LLM view lights up | irrelevant), at type shift 0 [calibrated]"
    )
    llm_view_type_shift: tuple[float, ...] = _p(
        (1.5, 0.8, 0.8, -1.0),
        "logit shift of the line above per item type: models over-read topical links",
    )
    llm_yes_given_view: float = _p(0.9195, "P(model says yes | view lit) [calibrated]")
    llm_yes_given_no_view: float = _p(0.1293, "P(model says yes | view dark) [calibrated]")
    llm_offset_sd: float = _p(
        0.44,
        "sd of a model's yes-bias (logit), drawn per world; the truth is conditional on the"
        " draw (the five models are fixed) [from data: the pilot's four models on shared"
        " items, effect_sizes.model_offset_sd]",
    )

    # ------------------------------------------------------------------ stage 3
    n_stage3_ratings: int = _p(
        _published_count("judgments_stage3"),
        "human preference ratings (one per item x relevant attribute)",
    )
    n_stage3_humans: int = _p(8, "stage-3 annotator pool (one person rates each item)")
    generator_quality: tuple[float, ...] = _p(
        (0.05, -0.20, 0.25, -0.15, 0.05),
        "mean personalization quality per generator (latent, 0 = no better than generic)",
    )
    response_quality_sd: float = _p(0.41, "sd of a response's quality around its generator's")
    prompt_quality_sd: float = _p(
        0.2,
        "sd of a prompt's shift of every response's quality (some prompts personalize"
        " better) [stated: the study's stage-3 ratings are not public]",
    )
    user_quality_sd: float = _p(
        0.2,
        "sd of a user's shift of the quality of responses personalized for them [stated]",
    )
    slot_quality_sd: float = _p(0.5, "sd of one attribute slot's quality within a response")
    human_rating_offset: float = _p(0.03, "people's rating offset on the latent scale")
    human_rating_noise: float = _p(0.8, "sd of a person's rating noise (latent scale)")
    stage3_severity_sd: float = _p(
        0.25,
        "sd of a stage-3 annotator's severity (rating offset, latent scale), drawn per world"
        " [stated: the study's stage-3 ratings are not public]",
    )
    human_mention_effect: float = _p(0.03, "rating uplift people give an explicit mention")
    generator_mention_rate: tuple[float, ...] = _p(
        (0.70, 0.55, 0.40, 0.25, 0.045),
        "P(a generator's personalized response names its attributes explicitly)",
    )
    mention_slot_rate: float = _p(
        0.9, "P(an attribute is named | the response names attributes; at least one is)"
    )
    judge_offset: tuple[float, ...] = _p(
        (0.8, 0.6, 0.7, 0.5, 0.6), "per-judge rating offset: judges are more favourable"
    )
    judge_quality_weight: float = _p(0.6, "how much judges see the slot's real quality")
    judge_rating_noise: float = _p(0.7, "sd of a judge's rating noise (latent scale)")
    judge_mention_effect: tuple[float, ...] = _p(
        (0.75, 0.40, 0.60, 0.20, -0.42),
        "per-judge rating uplift for an explicit mention (the last judge penalizes it)",
    )
    full_profile_max_attributes: int = _p(
        3, "attributes a full-profile response adapts to (from the model's own yes votes)"
    )

    def __post_init__(self) -> None:
        n_llm = len(self.llm_names)
        for name in (
            "generator_quality",
            "generator_mention_rate",
            "judge_offset",
            "judge_mention_effect",
        ):
            if len(getattr(self, name)) != n_llm:
                raise ValueError(f"WorldParameters.{name}: needs one value per model ({n_llm})")
        for name in ("quality_mix_real", "quality_mix_synthetic"):
            mix = np.asarray(getattr(self, name))
            if mix.shape != (4,) or (mix < 0).any() or abs(mix.sum() - 1) > 1e-9:
                raise ValueError(f"WorldParameters.{name}: four probabilities summing to 1")
        reasons = np.asarray(self.stage1_flag_reason_mix)
        if reasons.shape != (4, 3) or (reasons < 0).any() or (abs(reasons.sum(1) - 1) > 1e-9).any():
            raise ValueError(
                "WorldParameters.stage1_flag_reason_mix: per class, three probabilities"
                " summing to 1"
            )
        if self.n_stage2_users > self.n_wildchat_users:
            raise ValueError("WorldParameters.n_stage2_users: more than n_wildchat_users")
        if self.n_prompts * self.users_per_prompt < self.n_stage2_users:
            raise ValueError("WorldParameters.n_prompts: too few pairs for every stage-2 user")
        if self.stage2_raters_per_item > self.n_stage2_humans:
            raise ValueError("WorldParameters.stage2_raters_per_item: more than the pool")
        if self.stage1_raters_per_attribute > self.n_stage1_humans:
            raise ValueError("WorldParameters.stage1_raters_per_attribute: more than the pool")

    @property
    def n_pairs(self) -> int:
        """(user, prompt) pairs of stage 2."""
        return self.n_prompts * self.users_per_prompt

    def relevance_model(
        self, human_offsets: tuple[float, ...] = (), llm_offsets: tuple[float, ...] = ()
    ) -> RelevanceModel:
        """The stage-2 rater model these parameters define, with one world's raters if given."""
        return RelevanceModel(
            prevalence=self.relevance_prevalence,
            hard_rate=self.hard_item_rate,
            hard_yes=self.hard_item_yes,
            human_sensitivity=self.human_sensitivity,
            human_false_positive=self.human_false_positive,
            human_false_positive_far=self.human_false_positive_far,
            human_type_shift=self.human_type_shift,
            llm_view_given_relevant=self.llm_view_given_relevant,
            llm_view_given_irrelevant=self.llm_view_given_irrelevant,
            llm_view_type_shift=self.llm_view_type_shift,
            llm_yes_given_view=self.llm_yes_given_view,
            llm_yes_given_no_view=self.llm_yes_given_no_view,
            prevalence_sd=float(np.hypot(self.prompt_relevance_sd, self.user_relevance_sd)),
            plausibility_sd=self.prompt_difficulty_sd,
            human_offset_sd=self.stage2_human_offset_sd,
            llm_offset_sd=self.llm_offset_sd,
            human_offsets=tuple(float(x) for x in human_offsets),
            llm_offsets=tuple(float(x) for x in llm_offsets),
        )

    def with_relevance_model(self, model: RelevanceModel) -> WorldParameters:
        """A copy whose stage-2 free probabilities come from ``model`` (e.g. a calibration)."""
        return dataclasses.replace(
            self,
            human_sensitivity=round(model.human_sensitivity, 4),
            human_false_positive=round(model.human_false_positive, 4),
            llm_view_given_irrelevant=round(model.llm_view_given_irrelevant, 4),
            llm_yes_given_view=round(model.llm_yes_given_view, 4),
            llm_yes_given_no_view=round(model.llm_yes_given_no_view, 4),
        )

    def describe(self) -> list[tuple[str, Any, str]]:
        """(name, value, meaning) of every parameter, in declaration order."""
        return [
            (f.name, getattr(self, f.name), f.metadata["doc"]) for f in dataclasses.fields(self)
        ]


#: the random effects of the world: parameter (an sd) -> (factor, what it shifts); the
#: truth integrates over every one of them (the models' offsets excepted: it is conditional
#: on their draw, the five models being fixed)
RANDOM_EFFECTS: dict[str, tuple[str, str]] = {
    "stage1_user_sd": ("users", "stage-1 latent support of the user's attributes"),
    "stage1_leniency_sd": ("people (stage 1)", "an annotator's leniency"),
    "prompt_relevance_sd": ("prompts", "logit P(an attribute matters), stage 2"),
    "user_relevance_sd": ("users", "logit P(an attribute matters), stage 2"),
    "prompt_difficulty_sd": ("prompts", "logit P(the LLM view lights up | irrelevant)"),
    "stage2_human_offset_sd": ("people (stage 2)", "a person's logit yes-bias"),
    "llm_offset_sd": ("models (fixed: the truth is conditional)", "a model's logit yes-bias"),
    "prompt_quality_sd": ("prompts", "stage-3 response quality"),
    "user_quality_sd": ("users", "stage-3 response quality"),
    "stage3_severity_sd": ("people (stage 3)", "an annotator's rating offset"),
}


def effect_source(params: WorldParameters, name: str) -> str:
    """Where an effect's size comes from: "data" or "stated" (its doc's bracketed mark)."""
    doc = next(f.metadata["doc"] for f in dataclasses.fields(params) if f.name == name)
    return "data" if "[from data" in doc else "stated"


DEFAULT_PARAMETERS = WorldParameters()


def study_targets(path: Path = STUDY_FILE) -> dict[str, float]:
    """Calibration statistic -> the published figure it targets, in the file's order.

    One source for the simulator and the scorecard: an entry of ``config/study/*.yaml`` with
    ``calibrates`` names the statistic of :mod:`analysis.simulation.calibration` it sets; a
    published range ("40-60%") targets its midpoint.
    """
    out: dict[str, float] = {}
    for entry in load_study(path).published.values():
        if entry.calibrates is None:
            continue
        if entry.value is not None:
            out[entry.calibrates] = float(entry.value)
        else:
            low, high = entry.range or (0.0, 0.0)
            out[entry.calibrates] = (float(low) + float(high)) / 2
    return out


#: the study's published figures the default parameters are calibrated to (../shared/STUDY.md)
STUDY_TARGETS: dict[str, float] = study_targets()
