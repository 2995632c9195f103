"""Variants and sweeps: which builds a set of overrides asks for, and where each one writes.

A *variant* is any configuration other than its dataset's default (the dataset is chosen by
the ``data`` overrides; everything else, models, prompts, stages, stats, learn, paper, the
seed, makes a variant). Its outputs go under its own folder (``analysis.paths``), named by
``run.variant`` or, by default, by the overrides that changed something, ``<key>-<value>``
joined by ``__`` (``stats.min_shared_items-30__stats.n_boot-200``: one safe folder name,
``analysis.settings.check_path_component``), so any number of variants sit beside the default
build, whose paths never change.

Outputs fall in three *tiers* by the settings they depend on (:data:`TIER_KEYS`):

* ``data``: the canonical tables, which depend on the dataset only (always the dataset's
  folder);
* ``calls``: the model calls and the stage tables built from them, which depend on the
  models, prompts, stage settings, call-store settings and the seed;
* ``analysis``: everything else (statistics, trained models, figures, numbers, paper).

A variant that changes only ``stats`` therefore reads the default build's model calls and
tables and writes its own statistics, figures and paper; a sweep's members that share a tier
share its jobs, which run once (``workflow/rules/sweep.smk``). Keys that never change an
output (:data:`NEUTRAL_KEYS`: the runtime-only ``llm`` keys, ``llm.mode``, ``llm.shards``, a
model's concurrency, key variable and server threads) make no variant, so recording calls
(``llm=record``) writes where replaying them reads.

A *sweep* is Hydra's multirun syntax in the overrides (``stats.n_boot=200,400``,
``choice(...)``, ``range(...)``) or a ``sweep:`` list in a ``--configfile``: the Cartesian
product of the swept values, one variant each
(:func:`analysis.workflow_config.expand_sweep`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException

from analysis.paths import SWEEP_RULE_SEPARATOR, BuildPaths
from analysis.settings import ConfigError, check_path_component
from analysis.workflow_config import (
    MEMBER_KEY,
    OVERRIDES_KEY,
    compose_config,
    hydra_token,
    is_neutral,
)

__all__ = [
    "SHARED_OUTPUTS",
    "output_tier",
    "SweepMember",
    "plan_sweep",
    "TIERS",
    "TIER_KEYS",
    "Variant",
    "identify",
]

#: the output tiers, upstream first
TIERS = ("data", "calls", "analysis")
#: dotted config prefixes each tier's outputs depend on (``analysis``: every key)
TIER_KEYS: dict[str, tuple[str, ...] | None] = {
    "data": ("data",),
    "calls": ("data", "models", "prompts", "stages", "llm", "run.seed"),
    "analysis": None,
}
#: outputs every variant of a dataset shares (data tier), and those every variant that leaves
#: the models, prompts, stages, llm and seed alone shares (calls tier), by their path under
#: ``results/<dataset>/`` (a folder ends in /); the model-call steps' own folders are the calls
#: tier's too (:func:`output_tier`); everything else is the build's own (analysis tier)
SHARED_OUTPUTS: dict[str, tuple[str, ...]] = {
    "data": ("tables/", "records/canonical_tables.json"),
    "calls": (
        "stage1/merged/",
        "stage1/attribute_judgments.parquet",
        "stage2/relevance_votes.parquet",
        "stage3/responses.parquet",
        "stage3/preference_ratings.parquet",
        "embeddings/",
        "parse_failures.parquet",
        "paper/call_usage.json",
        *(
            f"records/{rule}.json"
            for rule in (
                "extracted_attribute_counts",
                "parse_failures",
                "call_usage",
            )
        ),
    ),
}


def output_tier(path: str, call_folders: Sequence[str] = ()) -> str:
    """The tier of a file under ``results/<dataset>/`` (``call_folders``: the model-call steps'
    table folders, ``analysis.stages.steps.CALL_STEPS``); with its resample file, a records
    file's tier is its rule's."""
    if path.endswith(".resamples.npz"):
        path = path[: -len(".resamples.npz")] + ".json"
    shared = {
        **SHARED_OUTPUTS,
        "calls": (*SHARED_OUTPUTS["calls"], *(f"{f}/" for f in call_folders)),
    }
    for tier, outputs in shared.items():
        if any(path == o or (o.endswith("/") and path.startswith(o)) for o in outputs):
            return tier
    return "analysis"


#: the config group that chooses the dataset: its overrides pick the default a variant differs from
DATASET_GROUP = "data"
#: a derived name longer than this becomes a digest (``run.variant`` names it readably)
MAX_DERIVED_NAME = 80


def _parse(tokens: Sequence[str]) -> list[Override]:
    try:
        return OverridesParser.create().parse_overrides([hydra_token(t) for t in tokens])
    except HydraException as err:
        raise ConfigError(f"cannot parse the overrides {list(tokens)}: {err}") from err


def _in(key: str, prefix: str) -> bool:
    return key == prefix or key.startswith(prefix + ".")


def _is_dataset_override(override: Override) -> bool:
    return _in(override.key_or_group, DATASET_GROUP)


def _flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted leaf keys of a plain config tree (an empty mapping is a leaf of its own); a
    model's endpoint as its call keys see it (a loopback port is incidental:
    :func:`analysis.llm.models.normalize_base_url`)."""
    if isinstance(node, Mapping) and node:
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if prefix.startswith("models.") and prefix.endswith(".base_url") and isinstance(node, str):
        from analysis.llm.models import ModelConfigError, normalize_base_url

        try:
            return {prefix: normalize_base_url(node)}
        except ModelConfigError:
            return {prefix: node}
    return {prefix: node}


def changed_keys(cfg: Mapping[str, Any], default: Mapping[str, Any]) -> list[str]:
    """Dotted keys whose value differs between two resolved configs (neutral keys left out)."""
    a, b = _flatten(cfg), _flatten(default)
    return sorted(
        k
        for k in set(a) | set(b)
        if (k not in a or k not in b or a[k] != b[k]) and not is_neutral(k)
    )


@functools.lru_cache(maxsize=16)
def _dataset_default(tokens: tuple[str, ...], config_dir: str) -> str:
    """The dataset's default config (only its ``data`` overrides), as canonical JSON (cached:
    every member of a sweep composes the same one)."""
    cfg = compose_config(list(tokens), config_dir=Path(config_dir))
    return json.dumps(cfg, sort_keys=True, default=str)


def _tier_changes(changed: Sequence[str], tier: str) -> list[str]:
    prefixes = TIER_KEYS[tier]
    if prefixes is None:
        return list(changed)
    return [k for k in changed if any(_in(k, p) for p in prefixes)]


#: joins a changed key and its value, and the items of a derived variant name
NAME_KEY_VALUE, NAME_ITEMS = "-", "__"


def _derived_name(overrides: Sequence[Override], changed: Sequence[str], cfg: Mapping) -> str:
    """``<key>-<value>`` of each override that changed one of ``changed``, sorted and joined
    by ``__``; a digest of the changed values where that is no safe, short folder name."""
    parts, explained = [], set()
    for o in overrides:
        hits = {k for k in changed if _in(k, o.key_or_group)}
        if hits:
            parts.append(f"{o.key_or_group}{NAME_KEY_VALUE}{o.get_value_element_as_str()}")
            explained |= hits
    name = NAME_ITEMS.join(sorted(parts))
    try:
        ok = explained == set(changed) and len(name) <= MAX_DERIVED_NAME
        ok = ok and check_path_component("run.variant", name) == name
    except ConfigError:
        ok = False
    if ok:
        return name
    flat = _flatten(cfg)
    blob = json.dumps({k: flat.get(k) for k in changed}, sort_keys=True, default=str)
    return "v-" + hashlib.sha256(blob.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Variant:
    """One build: its dataset, its overrides, and each tier's variant folder (None: default)."""

    dataset: str
    overrides: tuple[str, ...]
    #: tier -> the variant name of that tier's outputs (None: the dataset's default folder)
    scopes: Mapping[str, str | None]
    #: dotted keys that differ from the dataset's default (neutral keys left out)
    changed: tuple[str, ...]

    @property
    def name(self) -> str | None:
        """The variant's name (its analysis outputs' folder); None for the default build."""
        return self.scopes["analysis"]

    def paths(self, tier: str = "analysis") -> BuildPaths:
        """Where this build's outputs of one tier go."""
        return BuildPaths(self.dataset, self.scopes[tier])

    @property
    def label(self) -> str:
        return self.paths().label

    def describe(self) -> dict[str, Any]:
        """The build as ``variant.yaml`` states it (plain data)."""
        return {
            "dataset": self.dataset,
            "variant": self.name,
            # the overrides that change outputs: a runtime-only key, the call-store mode or
            # the shards leave the build (and this file) as they are
            "overrides": [
                o.input_line
                for o in _parse(self.overrides)
                if not (is_neutral(o.key_or_group) or o.key_or_group == "llm")
            ],
            "changed": list(self.changed),
            "folders": {tier: self.paths(tier).results for tier in TIERS},
            "logs": {tier: self.paths(tier).logs for tier in TIERS},
        }


def identify(overrides: Sequence[str], cfg: Mapping[str, Any], config_dir: Path) -> Variant:
    """The variant the (already composed and checked) ``cfg`` of ``overrides`` is."""
    parsed = _parse(overrides)
    dataset_tokens = tuple(o.input_line for o in parsed if _is_dataset_override(o))
    if len(dataset_tokens) == len(parsed):
        # only the dataset is chosen: ``cfg`` is its default (composing it again costs about
        # a second of every snakemake call, dry runs included)
        default = json.loads(json.dumps(cfg, sort_keys=True, default=str))
    else:
        default = json.loads(_dataset_default(dataset_tokens, str(Path(config_dir).resolve())))
    changed = changed_keys(cfg, default)
    others = [o for o in parsed if not _is_dataset_override(o)]
    scopes: dict[str, str | None] = {}
    for tier in TIERS:
        in_tier = _tier_changes(changed, tier)
        scopes[tier] = _derived_name(others, in_tier, cfg) if in_tier else None
    explicit = cfg["run"].get("variant")
    if explicit:
        scopes["analysis"] = explicit
    return Variant(
        dataset=str(cfg["data"]["name"]),
        overrides=tuple(overrides),
        scopes=scopes,
        changed=tuple(changed),
    )


@dataclass(frozen=True)
class SweepMember:
    """One build of a sweep, as ``workflow/rules/sweep.smk`` loads it: a module of the workflow."""

    variant: Variant
    #: the shared tiers whose rules this member defines (the first member of each tier scope)
    owns: tuple[str, ...]
    #: Snakemake's name of the member's module, and the prefix of its rules' names
    module: str
    prefix: str

    def module_config(self) -> dict[str, Any]:
        """The config the member's module gets: its overrides, what it owns, its rule prefix."""
        return {
            OVERRIDES_KEY: list(self.variant.overrides),
            MEMBER_KEY: {"owns": list(self.owns), "prefix": self.prefix},
        }


def _identifier(name: str) -> str:
    """A variant's name as a rule-name prefix (a Python identifier, no ``__`` inside)."""
    return re.sub(r"[\W_]+", "_", name).strip("_") or "default"


def plan_sweep(members: Sequence[Sequence[str]], config_dir: Path) -> list[SweepMember]:
    """Every member's variant, and which member defines each shared tier's rules.

    Members that share a tier's folder share its jobs: only the first of them defines the
    rules (two rules writing one file would be ambiguous), the others read its outputs. Two
    members that are one build (the same analysis folder) are an error naming both.
    """
    planned: list[SweepMember] = []
    owners: dict[tuple[str, str], int] = {}
    seen: dict[str, list[str]] = {}
    for i, overrides in enumerate(members):
        cfg = compose_config(list(overrides), config_dir=config_dir)
        variant = identify(list(overrides), cfg, config_dir)
        label = variant.label
        if label in seen:
            raise ConfigError(
                f"sweep members {seen[label]} and {list(overrides)} are the same build "
                f"({label}); every member must change something of its own (run.variant names "
                "one build, so it cannot name a sweep's members)"
            )
        seen[label] = list(overrides)
        owns = []
        for tier in TIERS[:-1]:
            key = (tier, variant.paths(tier).label)
            if owners.setdefault(key, i) == i:
                owns.append(tier)
        ident = _identifier(variant.name or variant.dataset)
        planned.append(
            SweepMember(variant, tuple(owns), f"member_{i}", ident + SWEEP_RULE_SEPARATOR)
        )
    return planned
