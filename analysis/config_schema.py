"""Structured schemas for the Hydra config groups: a typo in a key is an error, not a no-op.

Each top-level group of ``config/config.yaml`` has a dataclass here. ``validate`` merges the
composed group onto its schema, which rejects unknown keys and wrong types with the key's path.
Add a field here when you add a key to a YAML file (the YAML comment documents it for users).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omegaconf import OmegaConf


@dataclass
class DataConfig:
    name: str = "bundled"  # dataset name; part of every output path
    adapter: str = "annotation_tool"  # which adapter reads the raw files
    root: str = "data/raw/bundled"  # folder with raw files (relative to the repo, or absolute)
    simulated: bool = True  # whether the dataset is the simulated bundled world
    description: str = ""  # one line printed in the paper's data section


@dataclass
class RunConfig:
    seed: int = 20260601  # master seed; every random step derives its own seed from it
    report_only_claims: bool = False  # true: a failed claim is reported instead of stopping


@dataclass
class PaperConfig:
    title: str = ""  # paper title
    source_date_epoch: int = 0  # timestamp embedded in the PDF (determinism)
    claims_mode: str = "stop"  # stop | report: what a claim the data do not support does


@dataclass
class StatsConfig:
    n_boot: int = 2000  # bootstrap resamples for every CI
    ci_level: float = 0.95  # confidence level
    ci_method: str = "percentile"  # percentile | bca
    cluster: str = "user"  # resampling unit for item bootstraps: item | user | prompt
    multiple_comparisons: str = "holm"  # holm | fdr_bh


@dataclass
class PromptTemplate:
    system: str = ""  # system message template ($placeholders)
    user: str = ""  # user message template ($placeholders)


@dataclass
class RepairPrompts:
    yes_no: str = ""  # repair request after an unreadable YES/NO vote ($error)
    supported: str = ""  # repair request after an unreadable verifier label ($error)
    rating: str = ""  # repair request after an unreadable 1-5 rating ($error)
    attributes_json: str = ""  # repair request after malformed extraction JSON ($error)
    text: str = ""  # repair request after an unusable generated response ($error)


@dataclass
class AnswerFormat:
    word: str = ""  # the label asked for as one plain word / number
    json: str = ""  # the label asked for as a JSON object (with a response_format schema)


@dataclass
class AnswerFormats:
    yes_no: AnswerFormat = field(default_factory=AnswerFormat)  # relevance votes
    supported: AnswerFormat = field(default_factory=AnswerFormat)  # verifier labels
    rating: AnswerFormat = field(default_factory=AnswerFormat)  # judge ratings


@dataclass
class PromptsConfig:
    version: str = "v1"  # part of every call key and output path
    extraction: PromptTemplate = field(default_factory=PromptTemplate)
    verification: PromptTemplate = field(default_factory=PromptTemplate)
    relevance: PromptTemplate = field(default_factory=PromptTemplate)
    generic_response: PromptTemplate = field(default_factory=PromptTemplate)
    personalized_response: PromptTemplate = field(default_factory=PromptTemplate)
    preference_judge: PromptTemplate = field(default_factory=PromptTemplate)
    no_context_judge: PromptTemplate = field(default_factory=PromptTemplate)
    answer_formats: AnswerFormats = field(default_factory=AnswerFormats)
    repair: RepairPrompts = field(default_factory=RepairPrompts)


@dataclass
class Stage1Config:
    extractors: list[str] | None = None  # null = every model of the models group
    verifiers: list[str] | None = None  # null = every model of the models group
    max_conversations_per_model: int = 24  # cap on extraction calls per model
    max_attributes_per_model: int = 60  # cap on verification calls per model
    max_attributes_per_conversation: int = 5  # extractor's per-conversation limit
    conversation_chars: int = 1500  # conversation text shown is cut to this length
    merge_distance_threshold: float = 0.3  # cosine distance for merging a user's attributes
    extraction_max_tokens: int = 256  # output budget of one extraction call
    verification_max_tokens: int = 16  # output budget of one verifier label


@dataclass
class BaselinesConfig:
    dev_fraction: float = 0.3  # share of prompts used to choose thresholds
    bm25_k1: float = 1.5  # BM25 term-frequency saturation
    bm25_b: float = 0.75  # BM25 length normalisation


@dataclass
class Stage2Config:
    voters: list[str] | None = None  # null = every model of the models group
    max_items_per_model: int = 400  # cap on relevance items per model
    vote_max_tokens: int = 16  # output budget of one vote
    baselines: BaselinesConfig = field(default_factory=BaselinesConfig)


@dataclass
class MentionsConfig:
    lexical_threshold: float = 0.3  # content-word share in one second-person sentence
    embedding_threshold: float = 0.8  # MiniLM cosine with one second-person sentence


@dataclass
class ControlsConfig:
    no_context: bool = True  # judge without the attribute
    mismatched_profile: bool = True  # judge with another user's attribute
    swapped_order: bool = True  # judge the pair again in the other order
    max_ratings_per_judge: int = 24  # cap on items per control and judge


@dataclass
class Stage3Config:
    generators: list[str] | None = None  # null = every model of the models group
    judges: list[str] | None = None  # null = every model of the models group
    max_pairs_per_generator: int = 12  # cap on (user, prompt) pairs per generator
    generation_max_tokens: int = 160  # output budget of one response
    response_words: int = 120  # requested response length in words
    max_ratings_per_judge: int = 80  # cap on ratings per judge
    judge_max_tokens: int = 16  # output budget of one rating
    judge_response_chars: int = 1500  # each response shown to a judge is cut to this length
    mentions: MentionsConfig = field(default_factory=MentionsConfig)
    controls: ControlsConfig = field(default_factory=ControlsConfig)


@dataclass
class StagesConfig:
    repair_attempts: int = 1  # bounded repair requests per malformed output (0 or 1)
    repair_echo_chars: int = 300  # malformed output shown back in a repair, at most
    label_format: str = "json"  # json | word: how YES/NO, SUPPORTED and 1-5 labels are asked for
    caveats: dict[str, str] = field(default_factory=dict)  # model -> note for its records
    stage1: Stage1Config = field(default_factory=Stage1Config)
    stage2: Stage2Config = field(default_factory=Stage2Config)
    stage3: Stage3Config = field(default_factory=Stage3Config)


@dataclass
class GradientBoostingConfig:
    max_iter: int = 200  # boosting iterations of the gradient-boosting learner
    learning_rate: float = 0.05  # shrinkage per iteration
    max_depth: int = 3  # depth of each tree


@dataclass
class VerifierConfig:
    rounds: list[str] = field(default_factory=lambda: ["final", "pilot"])  # preference order
    learner: str = "logistic"  # logistic | gradient_boosting
    C_grid: list[float] = field(default_factory=lambda: [0.0003, 0.001, 0.003, 0.01, 0.03, 0.1])
    class_weight: str = "balanced"  # balanced | none
    use_embeddings: bool = True  # add attribute and reason MiniLM embeddings to the signals
    bootstrap_units: list[str] = field(default_factory=lambda: ["user", "item"])  # CI units


@dataclass
class RelevanceClassifierConfig:
    rounds: list[str] = field(default_factory=lambda: ["final", "pilot2"])  # rounds to train on
    learner: str = "logistic"  # logistic | gradient_boosting
    C_grid: list[float] = field(default_factory=lambda: [0.0003, 0.001, 0.003, 0.01, 0.03, 0.1])
    class_weight: str = "balanced"  # balanced | none
    bootstrap_units: list[str] = field(default_factory=lambda: ["prompt", "user", "item"])
    min_reference_items: int = 20  # fewer shared held-out items: no reference P/R/F1 for a rater


@dataclass
class RewardModelConfig:
    rounds: list[str] = field(default_factory=lambda: ["final"])  # rating rounds, preference order
    variants: list[str] = field(default_factory=lambda: ["pointwise", "pairwise", "ordinal"])
    learner: str = "logistic"  # logistic (ridge / linear ranking) | gradient_boosting (pointwise)
    ridge_alpha_grid: list[float] = field(default_factory=lambda: [100.0, 300.0, 1000.0, 3000.0])
    C_grid: list[float] = field(default_factory=lambda: [0.001, 0.003, 0.01, 0.03])  # pair/ord
    pairs_per_example: int = 4  # partners drawn per training example for the pairwise ranker
    mention_threshold: float = 0.5  # attribute-word gain above which a mention is explicit
    bootstrap_units: list[str] = field(default_factory=lambda: ["user", "item"])  # CI units
    min_ceiling_examples: int = 20  # fewer multiply-rated examples: no human-ceiling keys


@dataclass
class LearnConfig:
    n_folds: int = 5  # grouped cross-validation folds
    inner_val_fraction: float = 0.25  # share of a training fold's groups that tunes thresholds
    min_examples: int = 40  # fewer labelled examples: the model is skipped and writes no keys
    min_clusters: int = 8  # a bootstrap unit with fewer clusters falls back to the next unit
    gradient_boosting: GradientBoostingConfig = field(default_factory=GradientBoostingConfig)
    verifier: VerifierConfig = field(default_factory=VerifierConfig)
    relevance: RelevanceClassifierConfig = field(default_factory=RelevanceClassifierConfig)
    reward: RewardModelConfig = field(default_factory=RewardModelConfig)


@dataclass
class LlmConfig:
    mode: str = "replay"  # replay (offline, default) | record (call on miss) | refresh (call again)
    store: str = "data/calls"  # call-store root, relative to the repository
    executor: str = "direct"  # direct (async requests) | batch (the Batch API)
    timeout_s: float = 120.0  # per request
    max_retries: int = 6  # retries after the first attempt on 429/408/5xx/timeouts/connection
    backoff_base_s: float = 1.0  # first backoff (doubles per retry, plus jitter)
    backoff_max_s: float = 60.0  # cap of one backoff sleep
    retry_after_max_s: float = 300.0  # cap on an endpoint's Retry-After
    batch_poll_s: float = 30.0  # Batch API status poll interval
    batch_timeout_s: float = 90000.0  # stop waiting (the next run resumes the batch)
    progress: bool = True  # progress bar on stderr
    shards: int = 1  # jobs per (model-call step, model): each asks one contiguous slice


#: top-level group -> schema; groups not listed are validated by their own modules.
SCHEMAS: dict[str, type] = {
    "llm": LlmConfig,
    "data": DataConfig,
    "run": RunConfig,
    "paper": PaperConfig,
    "stats": StatsConfig,
    "learn": LearnConfig,
    "prompts": PromptsConfig,
    "stages": StagesConfig,
}


def validate(cfg: Any) -> None:
    """Check every group with a schema; raise ``ConfigError`` naming the offending key."""
    from analysis.workflow_config import ConfigError

    for group, schema in SCHEMAS.items():
        if group not in cfg:
            raise ConfigError(f"config group '{group}' is missing from config/config.yaml")
        try:
            OmegaConf.merge(OmegaConf.structured(schema), cfg[group])
        except Exception as err:  # omegaconf raises several error types; all mean a bad key
            raise ConfigError(f"config group '{group}': {err}") from err
    if int(cfg["llm"]["shards"]) < 1:
        raise ConfigError(
            f"llm.shards must be at least 1 (jobs per call set), got {cfg['llm']['shards']}"
        )
