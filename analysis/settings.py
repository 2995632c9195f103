"""The typed settings of a run: one dataclass per config group, the only settings types.

Why here, at the bottom: every layer reads settings, and none should pull in Hydra to do so.
This module imports neither hydra nor omegaconf; :mod:`analysis.workflow_config` registers
these classes in Hydra's ConfigStore (so composition rejects unknown keys and wrong types) and
converts the composed tree to them with ``OmegaConf.to_object``, which runs the
``__post_init__`` range checks below. Scripts turn a rule's plain ``params`` subtree into
them with :func:`from_params`.

One copy of every default: the values live in the commented YAML files under ``config/``;
the fields here carry none. (A model entry's optional keys default to ``None``, meaning
"not set": the call layer decides what an unset price or concurrency is.)
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import re
import types
import typing
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit


class ConfigError(ValueError):
    """A user override or config file is invalid; the message says which key and why."""


def did_you_mean(value: object, allowed: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for a near miss among ``allowed``, else the empty string."""
    close = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def bad_value(key: str, value: object, allowed: Iterable[object]) -> ConfigError:
    """The error for a value outside a fixed set: key, value, allowed values, a near miss."""
    allowed = [str(a) for a in allowed]
    return ConfigError(
        f"{key}={value!r} is not allowed; allowed values: {', '.join(allowed)}"
        f"{did_you_mean(value, allowed)}"
    )


def _check(ok: bool, key: str, value: object, rule: str) -> None:
    if not ok:
        raise ConfigError(f"{key}={value!r} is out of range: {rule}")


# ---------------------------------------------------------------- values that leave the config
# A config value that becomes a folder or file name, an environment variable's name, an
# endpoint, or text in a results file is checked here, once, when the config is composed: a bad
# one stops `snakemake -n` and `recenter config` before any job runs or any file is written.

#: one path component: letters, digits, '.', '_', '-', not starting with '.' or '-'
_PATH_COMPONENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")


def check_path_component(key: str, value: object) -> str:
    """``value`` as one safe folder or file name, else a ``ConfigError`` naming ``key``.

    The one check of every config value that becomes part of an output path (``data.name``,
    model names, ``prompts.version``, variant names): no separator, no ``..``, no leading dot
    or dash, no space, at most 128 characters. ``data.name=..`` would otherwise put results
    outside ``results/`` and let a rule's clean-up reach folders it does not own.
    """
    if not isinstance(value, str) or not _PATH_COMPONENT.match(value):
        shown = (
            SECRET_NOT_SHOWN if isinstance(value, str) and looks_like_secret(value) else repr(value)
        )
        raise ConfigError(
            f"{key}={shown} cannot name a folder: it becomes one component of output paths, so "
            "it must be letters, digits, '.', '_' or '-' (not starting with '.' or '-', no '/', "
            "at most 128 characters)"
        )
    return value


#: a model's name: a lowercase id, because it names a folder of the call store and of results
MODEL_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def check_model_name(key: str, value: object) -> str:
    """``value`` as a model name: one safe path component, and a lowercase id."""
    check_path_component(key, value)
    if not MODEL_NAME.match(str(value)):
        raise ConfigError(
            f"{key}: model name {value!r} must be a lowercase id ([a-z0-9._-], e.g. "
            f"{str(value).lower()!r}): it names a folder of the call store"
        )
    return str(value)


#: what an error shows instead of a value that looks like a credential
SECRET_NOT_SHOWN = "<a value that looks like an API key or token: not shown>"

#: the shapes of API keys and tokens: none may enter a config value (and so a resolved config,
#: a rule param, a record, a log line or the report); a log line showing one is redacted
SECRET_SHAPES = re.compile(
    r"""(?<![A-Za-z0-9_-])(?:
        sk-[A-Za-z0-9_-]{16,}                 # OpenAI (sk-proj-...), Anthropic (sk-ant-...), ...
      | hf_[A-Za-z0-9]{16,}                   # Hugging Face
      | gsk_[A-Za-z0-9]{16,}                  # Groq
      | xai-[A-Za-z0-9]{16,}                  # xAI
      | gh[pousr]_[A-Za-z0-9]{20,}            # GitHub
      | github_pat_[A-Za-z0-9_]{20,}          # GitHub fine-grained
      | AIza[A-Za-z0-9_-]{30,}                # Google
      | AKIA[A-Z0-9]{16}                      # AWS access key id
      | (?i:bearer)\s+[A-Za-z0-9._~+/=-]{12,}  # an Authorization header's token
    )""",
    re.VERBOSE,
)

#: the replacement of a secret-shaped value in a message or log line
REDACTED = "[REDACTED]"


def looks_like_secret(text: str) -> bool:
    """True when ``text`` holds something shaped like an API key or a bearer token."""
    return SECRET_SHAPES.search(text) is not None


def redact_secrets(text: str) -> str:
    """``text`` with every secret-shaped part replaced by ``[REDACTED]``."""
    return SECRET_SHAPES.sub(REDACTED, text)


def _strings(node: Any, key: str) -> Iterator[tuple[str, str]]:
    """(dotted key, value) of every string in a plain config tree (keys count as values)."""
    if isinstance(node, str):
        yield key, node
    elif isinstance(node, Mapping):
        for k, v in node.items():
            child = f"{key}.{k}" if key else str(k)
            yield child, str(k)
            yield from _strings(v, child)
    elif isinstance(node, list | tuple):
        for i, v in enumerate(node):
            yield from _strings(v, f"{key}[{i}]")


def check_no_secrets(tree: Mapping[str, Any]) -> None:
    """A ``ConfigError`` naming the first key whose value looks like an API key or token.

    The value is not shown. A key belongs in an environment variable whose NAME a model's
    ``api_key_env`` gives; the resolved config is written beside the results.
    """
    for key, text in _strings(tree, ""):
        if looks_like_secret(text):
            raise ConfigError(
                f"{key} holds a value that looks like an API key or token (not shown): keys "
                "never go into the config, which is written beside the results. Export the key "
                "in an environment variable and give its NAME in models.<model>.api_key_env "
                "(e.g. OPENAI_API_KEY)"
            )


#: the NAME of an environment variable (what ``api_key_env`` holds)
_ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_env_var_name(key: str, value: str) -> str:
    """``value`` as an environment variable's name, else a ``ConfigError`` that does not show
    the value (someone who typed the key itself there must not see it echoed into a log)."""
    if not _ENV_VAR_NAME.match(value) or looks_like_secret(value):
        raise ConfigError(
            f"{key} must be the NAME of an environment variable (letters, digits and '_', e.g. "
            "OPENAI_API_KEY), never the key itself; the value given is not shown"
        )
    return value


#: what a model's ``base_url`` may use
URL_SCHEMES = ("http", "https")


def check_base_url(key: str, value: str) -> str:
    """``value`` as an endpoint the call layer may send requests (and a key) to, else a
    ``ConfigError`` naming ``key``: an absolute http(s) URL with a host, no credentials in it,
    and no link-local address (169.254.0.0/16, fe80::/10: cloud metadata services answer
    there, and a request carrying a key must never reach them)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port  # a malformed port raises here
    except ValueError as err:
        raise ConfigError(f"{key}: not a URL ({err})") from None
    del port
    if parts.scheme.lower() not in URL_SCHEMES:
        raise ConfigError(
            f"{key}: scheme '{parts.scheme or '(none)'}' is not allowed; an OpenAI-compatible "
            "endpoint is an http:// or https:// URL, e.g. https://api.openai.com/v1"
        )
    if not parts.hostname:
        raise ConfigError(f"{key}: the URL has no host (e.g. http://127.0.0.1:8000/v1)")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"{key}: credentials inside the URL are not allowed (they would be written to the "
            "resolved config and logs); give the key through models.<model>.api_key_env"
        )
    try:
        address = ipaddress.ip_address(parts.hostname)
    except ValueError:
        address = None
    if address is not None and address.is_link_local:
        raise ConfigError(
            f"{key}: {parts.hostname} is a link-local address (where cloud metadata services "
            "answer); no model endpoint is there"
        )
    return value


class CiMethod(StrEnum):
    """How a bootstrap interval is read off the resamples."""

    percentile = "percentile"
    bca = "bca"


class Cluster(StrEnum):
    """The resampling unit of item bootstraps."""

    item = "item"
    user = "user"
    prompt = "prompt"


class Correction(StrEnum):
    """Multiple-comparison correction applied to every family of tests."""

    holm = "holm"
    fdr_bh = "fdr_bh"


class DesignMode(StrEnum):
    """Which resampling design the statistics use.

    ``declared``: each family's design of ``stats.designs`` (its random factors crossed, people
    resampled where the statistic is about people); ``one_way``: every statistic resamples one
    unit alone (``stats.cluster``, or the unit its caller names), the engine's one-factor path
    and the comparison a coverage study reports beside the declared designs.
    """

    declared = "declared"
    one_way = "one_way"


class Factor(StrEnum):
    """A factor of the study's data that a design can treat as random (a sample of a
    population the statistic generalizes over) or as fixed."""

    users = "users"
    prompts = "prompts"
    annotators = "annotators"
    models = "models"
    cases = "cases"
    #: the simulated worlds of the coverage study (each an independent draw of the simulation)
    worlds = "worlds"


class Strata(StrEnum):
    """A grouping the study fixed by design: resamples keep each group's number of units."""

    sources = "sources"


class LlmMode(StrEnum):
    """What the call store does on a miss."""

    replay = "replay"
    record = "record"
    refresh = "refresh"


class Executor(StrEnum):
    """How missing calls are made."""

    direct = "direct"
    batch = "batch"


class ClaimsMode(StrEnum):
    """What a claim the data do not support does to the build."""

    report = "report"
    strict = "strict"


class LabelFormat(StrEnum):
    """How YES/NO, SUPPORTED and 1-5 labels are asked for."""

    json = "json"
    word = "word"


class Learner(StrEnum):
    """The learner of a trained intervention."""

    logistic = "logistic"
    gradient_boosting = "gradient_boosting"


class ClassWeight(StrEnum):
    """Class reweighting of a classifier."""

    balanced = "balanced"
    none = "none"


class Aggregate(StrEnum):
    """How a published figure reads its record key or key glob (the claims language's names).

    ``one``: a single key; ``each``: one scorecard row per matching key (a statement about
    every model); ``min``/``max``: the matching record with the lowest/highest value (its own
    interval, so an argmin/argmax); ``mean``/``median``: over the matches (no interval).
    """

    one = "one"
    each = "each"
    min = "min"
    max = "max"
    mean = "mean"
    median = "median"


class StudyMethod(StrEnum):
    """Whether this artifact runs the method behind a published figure."""

    same = "same"
    different = "different"


class RealDataRule(StrEnum):
    """How a published figure is judged on a build from real data.

    ``rounding``: this build recomputes the figure from the study's own data by the study's
    method, so sampling error is the wrong yardstick and the estimate must round to the
    published figure. ``margin`` (also when unset): anything else (another method, another
    sample, a reading of a figure whose computation the study does not give): the equivalence
    margin decides. Simulated builds always use the margin.
    """

    rounding = "rounding"
    margin = "margin"


class ReleaseSupport(StrEnum):
    """Whether the authors' public release holds what a published figure needs."""

    yes = "yes"
    partial = "partial"
    no = "no"


class Venue(StrEnum):
    """Where the study published a figure."""

    abstract = "abstract"
    blog = "blog"
    paper = "paper"


@dataclass
class PublishedCoverage:
    """What the study's figure pooled over, counted in this dataset: fewer -> *partial*."""

    key: str
    expected: int
    unit: str
    exclude: list[str] | None = None


@dataclass
class PublishedValue:
    """One figure the study published and the record key(s) it corresponds to.

    Exactly one of ``value`` (a point) and ``range`` (``[low, high]``, e.g. "40-60%") is
    given. The tolerance of the rounding rule is ``tolerance`` when the study's wording is
    loose ("about 20%"), else half a step of the last published digit (``precision``): counts
    are exact with ``precision: 1``. A figure this artifact computes (``method: same``) has an
    equivalence ``margin`` with its ``margin_reason``; ``unit`` names what the figure counts
    (the record's unit must be the same); ``stage`` and ``release`` place it in the
    data-support table.
    """

    quantity: str
    published: str
    where: list[Venue]
    fmt: str
    key: str
    aggregate: Aggregate
    method: StudyMethod
    unit: str
    stage: str
    release: ReleaseSupport
    release_note: str
    value: float | None = None
    range: list[float] | None = None
    precision: float | None = None
    tolerance: list[float] | None = None
    exclude: list[str] | None = None
    field: str | None = None
    same_as: str | None = None
    coverage: PublishedCoverage | None = None
    calibrates: str | None = None
    note: str | None = None
    margin: float | None = None
    margin_reason: str | None = None
    real_data_rule: RealDataRule | None = None

    def check(self, name: str) -> None:
        """Range checks naming the entry (called by :class:`StudyConfig`)."""
        where = f"study.published.{name}"
        computed = self.method == StudyMethod.same
        _check(
            not computed or (self.margin is not None and self.margin >= 0),
            f"{where}.margin",
            self.margin,
            "a figure this build computes (method: same) needs an equivalence margin >= 0",
        )
        _check(
            (self.margin is None) == (not (self.margin_reason or "").strip()),
            f"{where}.margin_reason",
            self.margin_reason,
            "a margin needs its reason (and a reason its margin)",
        )
        _check(
            computed or self.real_data_rule != RealDataRule.rounding,
            f"{where}.real_data_rule",
            self.real_data_rule,
            "the rounding rule is for figures this build recomputes by the study's method",
        )
        _check(
            self.stage in STUDY_STAGES,
            f"{where}.stage",
            self.stage,
            f"one of {', '.join(STUDY_STAGES)}",
        )
        _check(
            bool(self.unit.strip()) and bool(self.release_note.strip()),
            f"{where}.unit/release_note",
            (self.unit, self.release_note),
            "both must be non-empty",
        )
        _check(
            (self.value is None) != (self.range is None),
            f"{where}.value/range",
            (self.value, self.range),
            "give exactly one of value and range",
        )
        _check(
            (self.precision is None) != (self.tolerance is None),
            f"{where}.precision/tolerance",
            (self.precision, self.tolerance),
            "give exactly one of precision and tolerance",
        )
        for part in ("range", "tolerance"):
            pair = getattr(self, part)
            _check(
                pair is None or (len(pair) == 2 and pair[0] <= pair[1]),
                f"{where}.{part}",
                pair,
                "must be [low, high] with low <= high",
            )


#: the stages of the data-support table, in order (``data``: counts over the whole study)
STUDY_STAGES = ("data", "stage1", "stage2", "stage3")


@dataclass
class StudyConfig:
    """``study``: the published figures of the study this artifact reproduces, and where the
    statement of what the authors' public release holds comes from (``release_source``)."""

    name: str
    citation: str
    release_source: str
    published: dict[str, PublishedValue]

    def __post_init__(self) -> None:
        for name, entry in self.published.items():
            entry.check(name)
            _check(
                entry.same_as is None or entry.same_as in self.published,
                f"study.published.{name}.same_as",
                entry.same_as,
                "must name another entry of study.published",
            )


def load_study(path: Any) -> StudyConfig:
    """A ``config/study/*.yaml`` file as :class:`StudyConfig`, read without Hydra.

    Why: the simulator takes its calibration targets from the same file the scorecard reads,
    and it may not import the composition layer (``.importlinter``).
    """
    import pathlib

    import yaml

    path = pathlib.Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({err})") from err
    return from_params(StudyConfig, data, "study")


@dataclass
class DataNouns:
    """``data.nouns``: the words the paper uses for who is in a dataset.

    Why here: a figure, caption or sentence about the raters or users must say what they are in
    the build at hand (simulated raters in the bundled world, people in the authors' exports),
    so the words come from the dataset's config, never from the text or the drawing code.
    """

    #: the human raters, plural ("people"; "simulated raters")
    people: str
    #: one human rater ("person"; "simulated rater")
    person: str
    #: the dataset's users, plural ("users"; "simulated users")
    users: str
    #: the users whose histories come from real chats in the study ("WildChat users")
    chat_users: str
    #: the model raters whose votes, answers and ratings the dataset holds
    models: str

    def words(self) -> dict[str, str]:
        """Each placeholder a text may use and its words: ``{people}``, ``{person}``,
        ``{users}``, ``{chat_users}``, ``{models}``, and each capitalized for a sentence's start
        (``{People}``, ``{Models}`` ...)."""
        plain = {
            "people": self.people,
            "person": self.person,
            "users": self.users,
            "chat_users": self.chat_users,
            "models": self.models,
        }
        return plain | {k[:1].upper() + k[1:]: v[:1].upper() + v[1:] for k, v in plain.items()}

    def fill(self, text: str) -> str:
        """Plain ``text`` with its placeholders in this dataset's words."""
        for name, words in self.words().items():
            text = text.replace("{" + name + "}", words)
        return text


#: the words of a table, figure or text made without a dataset's nouns (``data.nouns``; tests,
#: notebooks): neutral, so they are true of a simulated world and of real data alike
NEUTRAL_NOUNS = DataNouns(
    people="human raters",
    person="human rater",
    users="users",
    chat_users="chat users",
    models="models",
)


@dataclass
class DataConfig:
    """``data``: which dataset, read by which adapter, from where, and what to call its parts."""

    name: str
    adapter: str
    root: str
    simulated: bool
    description: str
    models: list[str]
    #: groups of annotator ids that differ only in case yet are different people
    distinct_annotators: list[list[str]]
    #: groups of pilot attribute texts that differ only in case or space yet are different
    distinct_attributes: list[list[str]]
    #: what the paper calls the dataset's raters, users and models
    nouns: DataNouns

    def __post_init__(self) -> None:
        check_path_component("data.name", self.name)


@dataclass
class RunConfig:
    """``run``: the master seed, and the name of a variant build (``analysis.variants``)."""

    seed: int
    #: the folder name of this configuration's outputs when it is not the dataset's default
    #: (``<kind>/<dataset>/variants/<variant>``); None: a name derived from the overrides
    variant: str | None

    def __post_init__(self) -> None:
        if self.variant is not None:
            check_path_component("run.variant", self.variant)


@dataclass
class PaperConfig:
    """``paper``: title, PDF timestamp, and what an unsupported claim does."""

    title: str
    source_date_epoch: int
    claims_mode: ClaimsMode


@dataclass
class DesignSpec:
    """``stats.designs.<name>``: what one family of statistics generalizes over.

    ``random``: the factors resampled (users and prompts crossed where both are listed;
    annotators within the human group); ``strata``: a grouping whose units each resample
    keeps; ``fixed``: factor -> why the statistics are conditional on it; ``why``: what the
    random factors stand for. The method sentence of every record of the family states it.
    """

    random: list[Factor]
    strata: Strata | None
    fixed: dict[str, str]
    why: str


@dataclass
class StatsConfig:
    """``stats``: bootstrap and test settings shared by every estimate."""

    n_boot: int
    ci_level: float
    ci_method: CiMethod
    cluster: Cluster
    multiple_comparisons: Correction
    #: rater pairs sharing fewer items get no pairwise kappa (and leave the group means)
    min_shared_items: int
    design: DesignMode
    designs: dict[str, DesignSpec]
    #: family name -> what its tests are; every corrected family is named here
    families: dict[str, str]

    def __post_init__(self) -> None:
        _check(self.n_boot >= 1, "stats.n_boot", self.n_boot, "must be >= 1")
        for name, spec in self.designs.items():
            _check(bool(spec.random), f"stats.designs.{name}.random", spec.random, "name a factor")
            clash = sorted(set(map(str, spec.random)) & set(spec.fixed))
            _check(not clash, f"stats.designs.{name}.fixed", clash, "random or fixed, not both")
            _check(
                spec.strata is None or Factor.users in spec.random,
                f"stats.designs.{name}.strata",
                spec.strata,
                "strata group users: list users as random",
            )
        _check(
            self.min_shared_items >= 1,
            "stats.min_shared_items",
            self.min_shared_items,
            "must be >= 1",
        )
        _check(0 < self.ci_level < 1, "stats.ci_level", self.ci_level, "must lie in (0, 1)")


@dataclass
class PromptTemplate:
    system: str
    user: str


@dataclass
class RepairPrompts:
    yes_no: str
    supported: str
    rating: str
    attributes_json: str
    text: str


@dataclass
class AnswerFormat:
    word: str
    json: str


@dataclass
class AnswerFormats:
    yes_no: AnswerFormat
    supported: AnswerFormat
    rating: AnswerFormat


@dataclass
class PromptsConfig:
    """``prompts``: the templates of one version (the version enters every call key)."""

    version: str
    extraction: PromptTemplate
    verification: PromptTemplate
    relevance: PromptTemplate
    generic_response: PromptTemplate
    personalized_response: PromptTemplate
    preference_judge: PromptTemplate
    no_context_judge: PromptTemplate
    answer_formats: AnswerFormats
    repair: RepairPrompts

    def __post_init__(self) -> None:
        check_path_component("prompts.version", self.version)


def _check_caps(section: str, caps: Mapping[str, int]) -> None:
    for name, value in caps.items():
        _check(value >= 1, f"stages.{section}.{name}", value, "must be >= 1")


@dataclass
class Stage1Config:
    extractors: list[str] | None
    verifiers: list[str] | None
    max_conversations_per_model: int
    max_attributes_per_model: int
    max_attributes_per_conversation: int
    conversation_chars: int
    merge_distance_threshold: float
    extraction_max_tokens: int
    verification_max_tokens: int

    def __post_init__(self) -> None:
        _check_caps(
            "stage1",
            {
                "max_conversations_per_model": self.max_conversations_per_model,
                "max_attributes_per_model": self.max_attributes_per_model,
                "max_attributes_per_conversation": self.max_attributes_per_conversation,
            },
        )


@dataclass
class BaselinesConfig:
    dev_fraction: float
    bm25_k1: float
    bm25_b: float


@dataclass
class Stage2Config:
    voters: list[str] | None
    max_items_per_model: int
    vote_max_tokens: int
    baselines: BaselinesConfig

    def __post_init__(self) -> None:
        _check_caps("stage2", {"max_items_per_model": self.max_items_per_model})


@dataclass
class MentionsConfig:
    lexical_threshold: float
    embedding_threshold: float


@dataclass
class ControlsConfig:
    no_context: bool
    mismatched_profile: bool
    swapped_order: bool
    max_ratings_per_judge: int

    def __post_init__(self) -> None:
        _check_caps("stage3.controls", {"max_ratings_per_judge": self.max_ratings_per_judge})


@dataclass
class Stage3Config:
    generators: list[str] | None
    judges: list[str] | None
    max_pairs_per_generator: int
    generation_max_tokens: int
    response_words: int
    max_ratings_per_judge: int
    judge_max_tokens: int
    judge_response_chars: int
    mentions: MentionsConfig
    controls: ControlsConfig

    def __post_init__(self) -> None:
        _check_caps(
            "stage3",
            {
                "max_pairs_per_generator": self.max_pairs_per_generator,
                "max_ratings_per_judge": self.max_ratings_per_judge,
            },
        )


@dataclass
class CallStepCommon:
    """The ``stages`` keys every model-call step reads: answer repairs and the label form."""

    repair_attempts: int
    repair_echo_chars: int
    label_format: LabelFormat


@dataclass
class Stage1StepConfig(CallStepCommon):
    """The ``stages`` subtree a stage-1 model-call rule receives (its params hold only this, so
    a change to another stage's section reruns none of its calls)."""

    stage1: Stage1Config


@dataclass
class Stage2StepConfig(CallStepCommon):
    """The ``stages`` subtree a stage-2 model-call rule receives."""

    stage2: Stage2Config


@dataclass
class Stage3StepConfig(CallStepCommon):
    """The ``stages`` subtree a stage-3 model-call rule receives."""

    stage3: Stage3Config


@dataclass
class StagesConfig(CallStepCommon):
    """``stages``: the three stages' model-call steps, baselines, mentions and controls.

    It extends :class:`CallStepCommon`, so a whole ``stages`` tree serves wherever one step's
    subtree does (tests pass it to the step functions)."""

    caveats: dict[str, str]
    stage1: Stage1Config
    stage2: Stage2Config
    stage3: Stage3Config


#: ``stages.<section>`` of a model-call step -> the typed subtree its rule receives
CALL_STEP_CONFIGS: dict[str, type[CallStepCommon]] = {
    "stage1": Stage1StepConfig,
    "stage2": Stage2StepConfig,
    "stage3": Stage3StepConfig,
}


@dataclass
class GradientBoostingConfig:
    max_iter: int
    learning_rate: float
    max_depth: int


@dataclass
class VerifierConfig:
    rounds: list[str]
    learner: Learner
    C_grid: list[float]
    class_weight: ClassWeight
    use_embeddings: bool
    bootstrap_units: list[str]


@dataclass
class RelevanceClassifierConfig:
    rounds: list[str]
    learner: Learner
    C_grid: list[float]
    class_weight: ClassWeight
    bootstrap_units: list[str]
    min_reference_items: int


@dataclass
class RewardModelConfig:
    rounds: list[str]
    variants: list[str]
    learner: Learner
    ridge_alpha_grid: list[float]
    C_grid: list[float]
    pairs_per_example: int
    mention_threshold: float
    bootstrap_units: list[str]
    min_ceiling_examples: int


@dataclass
class LearnConfig:
    """``learn``: the trained interventions' hyperparameters."""

    n_folds: int
    inner_val_fraction: float
    min_examples: int
    min_clusters: int
    gradient_boosting: GradientBoostingConfig
    verifier: VerifierConfig
    relevance: RelevanceClassifierConfig
    reward: RewardModelConfig


@dataclass
class ClientSettings:
    """How this run talks to endpoints: timeouts, retries, backoff, Batch API polling.

    The part of ``llm`` the call layer (``analysis.llm``) receives; :class:`LlmConfig`
    extends it, so the composed ``llm`` group serves wherever client settings do. None of it
    enters a call key or a rule's params (every field is in :data:`LLM_RUNTIME_KEYS`).
    """

    #: per attempt of any request (chat or Batch API), connect to last byte
    timeout_s: float
    #: retries after the first attempt (429, 408, 5xx, timeouts, connection)
    max_retries: int
    #: first backoff; doubles per retry, plus up to this much jitter
    backoff_base_s: float
    #: cap of one backoff sleep
    backoff_max_s: float
    #: cap on an endpoint's Retry-After (a broken header cannot hang a run)
    retry_after_max_s: float
    #: seconds between Batch API status polls
    batch_poll_s: float
    #: stop waiting for a batch (state is kept: the next run resumes it)
    batch_timeout_s: float

    def __post_init__(self) -> None:
        _check(self.timeout_s > 0, "llm.timeout_s", self.timeout_s, "must be > 0")
        _check(self.max_retries >= 0, "llm.max_retries", self.max_retries, "must be >= 0")
        for key in ("backoff_base_s", "backoff_max_s"):
            _check(getattr(self, key) >= 0, f"llm.{key}", getattr(self, key), "must be >= 0")


#: keys of the ``llm`` group that change how this run talks to endpoints, never what any
#: output holds: rule params leave them out, so changing one reruns nothing
LLM_RUNTIME_KEYS = (
    "executor",
    *(f.name for f in dataclasses.fields(ClientSettings)),
    "progress",
)


@dataclass
class LlmConfig(ClientSettings):
    """``llm``: call-store mode and where the store is, plus the client settings it extends."""

    mode: LlmMode
    store: str
    executor: Executor
    progress: bool
    shards: int

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.shards >= 1, "llm.shards", self.shards, "must be >= 1 (jobs per call set)")


@dataclass
class ModelSpec:
    """One entry of the ``models`` group (``analysis.llm.models.ModelSpec`` is built from it).

    Optional keys are ``None`` when a file leaves them out; the call layer fills them.
    """

    base_url: str | None = None
    api_key_env: str | None = None
    params: dict[str, Any] | None = None
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None
    price_batch_discount: float | None = None
    max_concurrency: int | None = None
    server: dict[str, Any] | None = None
    api_model: str | None = None
    description: str | None = None

    def check(self, name: str) -> None:
        """The checks of one entry that need its name (called by :class:`Config`)."""
        check_model_name(f"models.{name}", name)
        if self.api_key_env is not None:
            check_env_var_name(f"models.{name}.api_key_env", self.api_key_env)
        if self.base_url is not None:
            check_base_url(f"models.{name}.base_url", self.base_url)


@dataclass
class Config:
    """The whole composed config (``config/config.yaml`` and its groups)."""

    data: DataConfig
    run: RunConfig
    paper: PaperConfig
    stats: StatsConfig
    prompts: PromptsConfig
    stages: StagesConfig
    learn: LearnConfig
    llm: LlmConfig
    study: StudyConfig
    models: dict[str, ModelSpec]

    def __post_init__(self) -> None:
        for name, spec in self.models.items():
            spec.check(name)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _build(tp: Any, value: Any, key: str) -> Any:
    """``value`` (plain YAML data) as type ``tp``, checking keys and choices as composition does."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return None if value is None else _build(args[0], value, key)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}: expected a mapping, got {value!r}")
        hints = _hints(tp)
        unknown = sorted(set(value) - set(hints))
        if unknown:
            where = f"{key}.{unknown[0]}" if key else unknown[0]
            raise ConfigError(
                f"{where} is not a config key{did_you_mean(unknown[0], hints)}; "
                f"keys of {key or 'the config root'}: {', '.join(hints)}"
            )
        required = [
            f.name
            for f in dataclasses.fields(tp)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        missing = [k for k in required if k not in value]
        if missing:
            raise ConfigError(f"{key or 'the config'} lacks the key(s) {', '.join(missing)}")
        return tp(**{k: _build(hints[k], value[k], f"{key}.{k}" if key else k) for k in value})
    if isinstance(tp, type) and issubclass(tp, StrEnum):
        if value not in {m.value for m in tp}:
            raise bad_value(key, value, [m.value for m in tp])
        return tp(value)
    if origin is dict:
        _, item = typing.get_args(tp)
        return {k: _build(item, v, f"{key}.{k}") for k, v in dict(value).items()}
    if origin is list:
        (item,) = typing.get_args(tp)
        return [_build(item, v, f"{key}[{i}]") for i, v in enumerate(value)]
    return value


def from_params(cls: type, params: Mapping[str, Any], prefix: str) -> Any:
    """Typed settings from a rule's plain subtree, e.g. ``from_params(StatsConfig, p["stats"],
    "stats")``: the ONE way a script turns ``params`` back into settings (same checks).

    ``prefix`` is the subtree's dotted key (``""`` for the root), used in error messages.
    """
    return _build(cls, params, prefix)
