"""Compose the Hydra config once and hand each rule only the plain subtree it reads.

Snakemake decides what to rerun from rule params, so every rule gets (a) the config subtree it
reads as plain containers (a ``DictConfig`` would be silently dropped from the bookkeeping) and
(b) a hash of the package modules it runs, because Snakemake cannot see edits inside a package.
"""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import functools
import hashlib
import importlib.util
import itertools
import json
import os
import re
import shlex
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hydra
import omegaconf
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException, OverrideParseException
from omegaconf import OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from analysis import REPO_ROOT, settings
from analysis.llm.models import SERVER_RUNTIME_KEYS
from analysis.settings import ConfigError
from analysis.software import CONFIG_CACHE_VARIABLE

__all__ = [
    "ConfigError",
    "call_store_root",
    "code_hash",
    "compose_config",
    "compose_typed",
    "expand_sweep",
    "overrides_from_snakemake",
    "parse_overrides",
    "model_params",
    "runtime_keys",
    "RuntimeKeys",
    "stage_models",
    "subtree",
    "sweep_from_snakemake",
]


#: the name of the root schema in Hydra's ConfigStore (first entry of config.yaml's defaults)
SCHEMA_NAME = "schema"

#: the key of Snakemake's ``--config`` / ``--configfile`` channel that holds the overrides
OVERRIDES_KEY = "overrides"
#: a ``--configfile``'s list of swept overrides (``analysis.variants.expand_sweep``)
SWEEP_KEY = "sweep"
#: set by a sweep in the config of each member's module (``workflow/rules/sweep.smk``): the
#: shared tiers whose rules the member defines, and its rules' name prefix; never set by hand
MEMBER_KEY = "sweep_member"
#: every key the channel accepts
ACCEPTED_KEYS = (OVERRIDES_KEY, SWEEP_KEY, MEMBER_KEY)


def register_schema() -> None:
    """Register :class:`analysis.settings.Config` so composition checks every group against it."""
    ConfigStore.instance().store(name=SCHEMA_NAME, node=settings.Config)


def parse_overrides(overrides: str | list[str] | None) -> list[str]:
    """Split the one-string ``--config overrides="a=b c=d"`` form into Hydra override tokens."""
    if overrides is None:
        return []
    if isinstance(overrides, list | tuple):
        return [str(o) for o in overrides]
    text = str(overrides).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].replace(",", " ")
    try:
        return shlex.split(text)
    except ValueError as err:
        raise ConfigError(
            f"cannot split overrides {settings.redact_secrets(repr(text))}: {err}. Quote a "
            "value with spaces or ':' as a whole and balance the quotes, e.g.\n"
            "  snakemake --config overrides=\"paper.title='A: B' stats.n_boot=500\"\n"
            "or list the overrides one per item in a --configfile (README 'Overriding the "
            "config')."
        ) from err


def hydra_token(token: str) -> str:
    """An override whose value holds non-ASCII characters, quoted for Hydra's lexer.

    Hydra's grammar accepts only ASCII in an unquoted value (``data.root=/data/données`` fails
    with ``LexerNoViableAltException``), and the shell has already removed the quotes a user
    typed (``overrides="data.root='/data/données'"``). Such a value is quoted here, so a path
    with any characters works as typed; a value already quoted, a list or a mapping is left as
    it is.
    """
    key, sep, value = token.partition("=")
    if not sep or value.isascii() or value[:1] in ("'", '"', "[", "{"):
        return token
    quote = "'" if "'" not in value else '"' if '"' not in value else None
    if quote is None:
        quote, value = "'", value.replace("'", "\\'")
    if value.endswith("\\"):  # a backslash before the closing quote would escape it
        value += "\\"
    return f"{key}={quote}{value}{quote}"


def overrides_from_snakemake(config: Mapping[str, Any]) -> list[str]:
    """The overrides of Snakemake's ``config`` dict; any other key is an error.

    ``--config`` and ``--configfile`` are only a channel for Hydra overrides: a key such as
    ``overrride=`` or ``stats: {n_boot: 500}`` would otherwise be ignored without a word.
    The overrides may hold a sweep (Hydra's multirun syntax, ``stats.n_boot=200,400``), which
    :func:`sweep_from_snakemake` expands; a configfile's ``sweep:`` list is read there too.
    """
    unknown = sorted(set(config) - set(ACCEPTED_KEYS))
    if unknown:
        raise ConfigError(
            f"snakemake config key(s) {unknown} are not accepted"
            f"{settings.did_you_mean(unknown[0], [OVERRIDES_KEY, SWEEP_KEY])}: the keys are "
            f"'{OVERRIDES_KEY}' and '{SWEEP_KEY}', e.g. --config overrides=\"stats.n_boot=500 "
            "llm=record\", or a --configfile holding 'overrides: [stats.n_boot=500, "
            "llm=record]' (and 'sweep: [stats.n_boot=200,400]' for a sweep)"
        )
    return parse_overrides(config.get(OVERRIDES_KEY))


def sweep_from_snakemake(config: Mapping[str, Any]) -> list[list[str]]:
    """The builds Snakemake's ``config`` asks for: one override list per member of its sweep
    (the Cartesian product of the swept values), or the one list of a single build."""
    overrides = overrides_from_snakemake(config)
    sweep = config.get(SWEEP_KEY) or []
    if isinstance(sweep, str):
        sweep = parse_overrides(sweep)
    if not isinstance(sweep, list | tuple):
        raise ConfigError(f"'{SWEEP_KEY}' must be a list of overrides, got {sweep!r}")
    return expand_sweep(overrides, [str(s) for s in sweep])


def _parse_hydra(tokens: list[str]) -> list[Override]:
    try:
        return OverridesParser.create().parse_overrides([hydra_token(t) for t in tokens])
    except HydraException as err:
        raise ConfigError(f"cannot parse the overrides {tokens}: {err}") from err


def _requote(value: str) -> str:
    """A swept value as one override value again (quoted where Hydra's grammar needs it)."""
    if re.fullmatch(r"[\w./:+-]*", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def expand_sweep(overrides: list[str], sweep: list[str] | None = None) -> list[list[str]]:
    """The members of a sweep: one override list per element of the Cartesian product of the
    swept values (Hydra's multirun syntax: ``a,b``, ``choice(...)``, ``range(...)``), in the
    order given; ``[overrides]`` when nothing is swept.

    A sweep over a key that changes no output (``analysis.variants.NEUTRAL_KEYS``: runtime-only
    keys, the call-store mode) is refused here with the reason: its members would be one
    build written again and again.
    """
    tokens = [*overrides, *(sweep or [])]
    parsed = _parse_hydra(tokens)
    swept = [o for o in parsed if o.is_sweep_override()]
    if not swept:
        return [tokens]
    for o in swept:
        key = o.key_or_group
        if is_neutral(key) or key == "llm":
            kind = (
                "runtime-only: it changes how a run talks to model endpoints"
                if any(key == k or k.startswith(key + ".") for k in RUNTIME_KEYS)
                or any(fnmatch.fnmatchcase(key, p) for p in MODEL_RUNTIME_KEYS)
                else "it changes how the run is carried out"
            )
            raise ConfigError(
                f"cannot sweep over {key} ({o.input_line}): {kind}, never an output, so every "
                "member of the sweep would be the same build. Sweep over settings that change "
                "results (stats.*, prompts, models, stages.*, learn.*) and set this one once."
            )
    fixed = [o.input_line for o in parsed if not o.is_sweep_override()]
    values = [[_requote(str(v)) for v in o.sweep_string_iterator()] for o in swept]
    keys = [o.get_key_element() for o in swept]
    return [
        [*fixed, *(f"{k}={v}" for k, v in zip(keys, combo, strict=True))]
        for combo in itertools.product(*values)
    ]


def _field_type(full_key: str) -> Any:
    """The declared type of a dotted key of :class:`analysis.settings.Config` (None: unknown)."""
    tp: Any = settings.Config
    for part in full_key.split("."):
        origin = typing.get_origin(tp)
        if origin in (typing.Union, types.UnionType):
            tp = next(a for a in typing.get_args(tp) if a is not type(None))
            origin = typing.get_origin(tp)
        if origin is dict:
            tp = typing.get_args(tp)[1]
        elif dataclasses.is_dataclass(tp):
            tp = typing.get_type_hints(tp).get(part)
        else:
            return None
        if tp is None:
            return None
    return tp


def _explain(err: OmegaConfBaseException) -> ConfigError:
    """A schema error as the key, the bad value and the allowed values (with a near miss)."""
    key = err.full_key or str(err.key)
    parent = key.rpartition(".")[0]
    parent_type = _field_type(parent) if parent else settings.Config
    if isinstance(err, ConfigKeyError | ConfigAttributeError) and dataclasses.is_dataclass(
        parent_type
    ):
        allowed = list(typing.get_type_hints(parent_type))
        parent = parent or "the config root"
        return ConfigError(
            f"{key} is not a config key{settings.did_you_mean(err.key, allowed)}; "
            f"keys of {parent}: {', '.join(allowed)}"
        )
    tp = _field_type(key)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return settings.bad_value(key, err.value, [m.value for m in tp])
    detail = str(err.msg).splitlines()[0] if err.msg else str(err)
    return ConfigError(f"{key}={err.value!r}: {detail}")


def _schema_error(err: BaseException) -> ConfigError | None:
    """The first settings or OmegaConf error in an exception's chain, as a ``ConfigError``."""
    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, ConfigError):
            return seen
        if isinstance(seen, OmegaConfBaseException) and (seen.full_key or seen.key):
            return _explain(seen)
        seen = seen.__cause__ or seen.__context__
    return None


def compose_typed(
    overrides: str | list[str] | None = None, config_dir: Path | None = None
) -> tuple[settings.Config, dict[str, Any]]:
    """Compose ``config/config.yaml`` with overrides: the typed settings and the plain tree.

    The root defaults list starts with the registered schema, so Hydra checks every key and
    type while composing; ``OmegaConf.to_object`` then runs the range checks. Every problem
    is a :class:`ConfigError` naming the key, here, before any job starts. No value may look
    like an API key or token (``settings.check_no_secrets``), and no message shows one.
    """
    register_schema()
    config_dir = (config_dir or REPO_ROOT / "config").resolve()
    tokens = [hydra_token(t) for t in parse_overrides(overrides)]
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
            cfg = compose(config_name="config", overrides=tokens)
        plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True, enum_to_str=True)
        settings.check_no_secrets(plain)
        typed = OmegaConf.to_object(cfg)
        # a forced append (`+stats.nboot=5`) slips past struct mode; the schema walk does not
        settings.from_params(settings.Config, plain, "")
    except OverrideParseException as err:
        raise ConfigError(
            settings.redact_secrets(
                f"cannot parse the overrides {tokens}: {err}\nQuote a value with spaces or ':' "
                "as a whole with balanced quotes, e.g. paper.title='A: B' (README 'Overriding "
                "the config')."
            )
        ) from None
    except (HydraException, OmegaConfBaseException, ConfigError) as err:
        explained = _schema_error(err) or ConfigError(str(err))
        raise ConfigError(
            settings.redact_secrets(
                f"invalid configuration (overrides: {tokens or 'none'}): {explained}\n"
                "Keys and groups are listed in config/; see README 'Overriding the config'."
            )
        ) from None
    assert isinstance(typed, settings.Config) and isinstance(plain, dict)
    return typed, plain


def compose_config(
    overrides: str | list[str] | None = None, config_dir: Path | None = None
) -> dict[str, Any]:
    """The composed, checked config as plain dicts (what rule params carry).

    Composition costs about two CPU-seconds, paid again by every ``snakemake`` call (dry runs
    included); where ``CONFIG_CACHE_VARIABLE`` names a folder, a config composed once is read
    from there (:func:`stored_config_path`). Only a composition that passed every check is
    stored, so a bad override fails the same way every time.
    """
    folder = os.environ.get(CONFIG_CACHE_VARIABLE)
    if not folder:
        return compose_typed(overrides, config_dir)[1]
    path = stored_config_path(Path(folder), overrides, config_dir)
    if path.is_file():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None  # a torn or foreign file: compose again and replace it
        if isinstance(stored, dict):
            return stored
    plain = compose_typed(overrides, config_dir)[1]
    text = json.dumps(plain, ensure_ascii=False)
    if json.loads(text) != plain:  # e.g. a key that is no string: JSON would change it
        return plain
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return plain


def stored_config_path(
    folder: Path, overrides: str | list[str] | None, config_dir: Path | None
) -> Path:
    """Where a composed config is stored in a shared folder: a digest of everything that
    decides it: every file of the config folder (path and bytes), the override tokens, the
    source of the code that composes and checks (this module and what it imports) and the
    versions of Hydra, OmegaConf and Python."""
    config_dir = (config_dir or REPO_ROOT / "config").resolve()
    digest = hashlib.sha256()
    for path in sorted(p for p in config_dir.rglob("*") if p.is_file()):
        digest.update(path.relative_to(config_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    versions = [hydra.__version__, omegaconf.__version__, sys.version]
    digest.update(json.dumps([parse_overrides(overrides), versions]).encode())
    digest.update(code_hash(__name__).encode())
    return folder / f"{digest.hexdigest()}.json"


#: dotted keys that never enter rule params: they change how a run talks to endpoints, never
#: what an output holds, so changing one must rerun nothing
RUNTIME_KEYS = frozenset(f"llm.{k}" for k in settings.LLM_RUNTIME_KEYS)


#: a model's keys that change how its endpoint is reached or served, never what it answers
#: (glob patterns; none is part of its call key: ``ModelSpec.identity``)
MODEL_RUNTIME_KEYS = frozenset(
    {
        "models.*.api_key_env",
        "models.*.max_concurrency",
        *(f"models.*.server.{k}" for k in SERVER_RUNTIME_KEYS),
    }
)


#: keys that change no output (glob patterns of dotted keys): they make no variant
#: (``analysis.variants``), and a sweep over one is refused
NEUTRAL_KEYS = frozenset(
    {*RUNTIME_KEYS, *MODEL_RUNTIME_KEYS, "llm.mode", "llm.shards", "run.variant"}
)


def is_neutral(key: str) -> bool:
    """Whether a dotted key (or a key under it) changes no output (:data:`NEUTRAL_KEYS`)."""
    return any(
        fnmatch.fnmatchcase(key, p) or fnmatch.fnmatchcase(key, p + ".*") for p in NEUTRAL_KEYS
    )


def _is_runtime(path: str) -> bool:
    """Whether a dotted key is runtime-only: an ``llm`` one or a model's (how it is reached)."""
    return path in RUNTIME_KEYS or any(fnmatch.fnmatchcase(path, p) for p in MODEL_RUNTIME_KEYS)


def _drop_runtime(node: Any, path: str) -> Any:
    if not isinstance(node, dict):
        return node
    return {
        k: _drop_runtime(v, f"{path}.{k}" if path else k)
        for k, v in node.items()
        if not _is_runtime(f"{path}.{k}" if path else k)
    }


def _only_runtime(node: Mapping[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in node.items():
        key = f"{path}.{k}"
        if _is_runtime(key):
            out[k] = v
        elif isinstance(v, Mapping) and (kept := _only_runtime(v, key)):
            out[k] = kept
    return out


def _merged(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = (
            _merged(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else v
        )
    return out


def model_params(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    """One model's spec as a model-call rule's params: its runtime-only keys left out
    (:data:`MODEL_RUNTIME_KEYS`: key variable, concurrency, server threads), so changing one
    reruns nothing; the job adds this run's back with :func:`with_runtime_model_keys`."""
    return _drop_runtime(cfg["models"][name], f"models.{name}")


def subtree(cfg: dict[str, Any], *paths: str) -> dict[str, Any]:
    """Return the parts of the config a rule reads, keyed by their dotted path.

    Runtime-only keys (:data:`RUNTIME_KEYS`, :data:`MODEL_RUNTIME_KEYS`) are left out, so they
    rerun nothing; the model-call jobs read them with :func:`runtime_keys`.
    """
    out: dict[str, Any] = {}
    for path in paths:
        if path in RUNTIME_KEYS:
            raise ConfigError(f"config key '{path}' is runtime-only and never a rule param")
        node: Any = cfg
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                raise ConfigError(f"config key '{path}' does not exist (failed at '{part}')")
            node = node[part]
        out[path] = _drop_runtime(node, path)
    return out


@dataclass(frozen=True)
class RuntimeKeys:
    """This run's runtime-only keys, for a model-call job: the ``llm`` ones by name, and each
    model's (:data:`MODEL_RUNTIME_KEYS`) as a subtree of its spec."""

    llm: dict[str, Any]
    models: dict[str, dict[str, Any]]

    def with_runtime_model_keys(self, name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        """A model's spec from rule params (:func:`model_params`) with this run's runtime keys."""
        return _merged(spec, self.models.get(name, {}))


def runtime_keys(
    snakemake_config: Mapping[str, Any], config_dir: Path | None = None
) -> RuntimeKeys:
    """The runtime-only keys of this run, for a model-call job.

    They are kept out of rule params (:data:`RUNTIME_KEYS`, :data:`MODEL_RUNTIME_KEYS`), so a
    job reads them by composing the run's config again from Snakemake's ``config`` (the same
    overrides the Snakefile saw).
    """
    # a sweep's members share them (a sweep over one is refused): the first member's serve all
    cfg = compose_config(sweep_from_snakemake(snakemake_config)[0], config_dir)
    return RuntimeKeys(
        llm={k: cfg["llm"][k] for k in settings.LLM_RUNTIME_KEYS},
        models={
            name: _only_runtime(spec, f"models.{name}") for name, spec in cfg["models"].items()
        },
    )


#: the storage provider whose prefix is a path every job mounts (a claim on Kubernetes)
SHARED_PATH_PROVIDER = "fs"


def call_store_root(
    cfg: Mapping[str, Any], storage_provider: str | None, storage_prefix: str | None
) -> str | None:
    """The call store that model-call jobs use when files move through a storage provider.

    The store is written as calls complete (each record fsynced, so a failed or killed job
    keeps every call it paid for), not declared as a rule output: an output is deleted before
    its job runs, is never stored when the job fails, and can not also be the input that a
    resumed run or a replay reads. So on a cluster without a shared file system (Kubernetes,
    sources unpacked in each pod) the jobs use the store on the shared claim itself,
    ``<prefix>/<llm.store>``, in every mode: record appends there, replay only reads the
    same files. ``None`` (the store beside the sources) for a run without a storage provider
    or with an absolute ``llm.store``. A provider whose prefix is no mounted path (s3, gcs)
    cannot hold an appended store: recording with one is an error, replay reads the sources'.
    """
    store = str(cfg["llm"]["store"])
    if storage_provider is None or Path(store).is_absolute():
        return None
    if storage_provider != SHARED_PATH_PROVIDER:
        if cfg["llm"]["mode"] == settings.LlmMode.replay:
            return None
        raise ConfigError(
            f"llm.mode={cfg['llm']['mode']} with the '{storage_provider}' storage provider: "
            "recorded calls would stay in the job's pod and be lost. Record where every job "
            f"reaches the call store: the '{SHARED_PATH_PROVIDER}' provider on a shared claim, "
            "an absolute llm.store on a file system every job mounts, or a local or SLURM run "
            "(docs/cluster.md 'Recording calls on a cluster')."
        )
    if not storage_prefix:
        raise ConfigError(
            f"the '{SHARED_PATH_PROVIDER}' storage provider needs --default-storage-prefix "
            "(the folder on the shared claim that holds the repository)"
        )
    return str(Path(storage_prefix).absolute() / store)


def stage_models(cfg: Mapping[str, Any], stage: str, role: str) -> list[str]:
    """Models of one step: ``stages.<stage>.<role>``, or every model of ``models`` when null."""
    configured = sorted(cfg["models"] or {})
    chosen = cfg["stages"][stage][role]
    if chosen is None:
        return configured
    unknown = sorted(set(chosen) - set(configured))
    if unknown:
        raise ConfigError(
            f"stages.{stage}.{role} names {unknown}, which are not in the models group "
            f"(configured: {configured})"
        )
    return sorted(chosen)


def _locate(module: str) -> tuple[Path, bool] | None:
    """(source path, is a package) of a module, found on disk without importing anything.

    ``importlib.util.find_spec("a.b")`` imports package ``a`` first, and the Snakefile would
    then import every library the hashed packages use (scipy, openai, ...) at each parse.
    Only the top-level package is looked up; submodules are files under its folder.
    """
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None:
        return None
    if spec.submodule_search_locations is None:
        return (Path(spec.origin), False) if not rest and spec.origin else None
    for location in spec.submodule_search_locations:
        path = Path(location).joinpath(*rest)
        if (path / "__init__.py").is_file():
            return path / "__init__.py", True
        if rest and path.with_suffix(".py").is_file():
            return path.with_suffix(".py"), False
    return None


@functools.cache
def _module_files(module: str, *, whole_package: bool = True) -> tuple[Path, ...]:
    found = _locate(module)
    if found is None:
        raise ConfigError(f"code_hash: no module named '{module}'")
    path, is_package = found
    if is_package and whole_package:
        return tuple(sorted(path.parent.rglob("*.py")))
    return (path,)


#: ``import analysis.x`` and ``from analysis.x import a, b`` (also parenthesised, multi-line)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(analysis(?:\.\w+)*)", re.M)
_FROM_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+(analysis(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M
)


@functools.cache
def _project_imports(path: Path) -> frozenset[str]:
    """Package modules a source file imports (``import analysis.x``, ``from analysis.x ...``).

    Read with regular expressions, not ``ast``: the Snakefile hashes every rule's code at
    each parse (a no-op rerun included), and this is an order of magnitude faster. An import
    statement quoted in a docstring at the start of a line only adds a file to the hash (a
    possible extra rerun, never a missed one). Cached: rules share most of their modules.
    """
    text = path.read_text(encoding="utf-8")
    found = set(_IMPORT.findall(text))
    for module, names in _FROM_IMPORT.findall(text):
        found.add(module)
        for name in names.strip("()").replace("\n", " ").split(","):
            name = name.split("#")[0].split(" as ")[0].strip()
            # `from analysis.stats import bootstrap` names a module, not only a symbol
            if name and _locate(f"{module}.{name}") is not None:
                found.add(f"{module}.{name}")
    return frozenset(found)


def code_files(*modules: str) -> list[Path]:
    """Source files of ``modules`` and, transitively, of every package module they import.

    Following imports means a rule names only the module it calls, yet an edit to a helper
    that module uses still reruns the rule, and an edit elsewhere does not.
    """
    seen: set[Path] = set()
    requested = set(modules)
    pending = list(modules)
    visited: set[str] = set()
    while pending:
        module = pending.pop()
        if module in visited:
            continue
        visited.add(module)
        # A package named by the rule counts whole; one merely imported counts by its __init__.
        for path in _module_files(module, whole_package=module in requested):
            resolved = path.resolve()
            if resolved in seen:
                continue
            seen.add(resolved)
            pending.extend(sorted(_project_imports(resolved) - visited))
    return sorted(seen)


def code_hash(*modules: str) -> str:
    """sha256 over the source of the given modules and the package modules they import.

    Packages include every submodule. Paths enter the hash relative to the repository so the
    value is the same on every machine.
    """
    digest = hashlib.sha256()
    for path in code_files(*modules):
        try:
            rel = path.relative_to(REPO_ROOT)
        except ValueError:
            rel = Path(path.name)
        digest.update(str(rel).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
