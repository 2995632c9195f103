"""Compose the Hydra config once and hand each rule only the plain subtree it reads.

Snakemake decides what to rerun from rule params, so every rule gets (a) the config subtree it
reads as plain containers (a ``DictConfig`` would be silently dropped from the bookkeeping) and
(b) a hash of the package modules it runs, because Snakemake cannot see edits inside a package.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from analysis import REPO_ROOT

_PACKAGE = "analysis"


class ConfigError(ValueError):
    """A user override or config file is invalid; the message says which key and why."""


def parse_overrides(overrides: str | list[str] | None) -> list[str]:
    """Split the one-string ``--config overrides="a=b c=d"`` form into Hydra override tokens."""
    if overrides is None:
        return []
    if isinstance(overrides, list | tuple):
        return [str(o) for o in overrides]
    text = str(overrides).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].replace(",", " ")
    return shlex.split(text)


def compose_config(
    overrides: str | list[str] | None = None, config_dir: Path | None = None
) -> dict[str, Any]:
    """Compose ``config/config.yaml`` with overrides and return it fully resolved as plain dicts.

    Hydra keeps the composed config in struct mode and validates it against the structured
    schemas registered by :mod:`analysis.config_schema`, so an unknown key fails here with the
    key's name instead of being ignored somewhere downstream.
    """
    from analysis import config_schema

    config_dir = (config_dir or REPO_ROOT / "config").resolve()
    tokens = parse_overrides(overrides)
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
            cfg = compose(config_name="config", overrides=tokens)
        resolved = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
        config_schema.validate(resolved)
    except (HydraException, OmegaConfBaseException) as err:
        raise ConfigError(
            f"invalid configuration (overrides: {tokens or 'none'}): {err}\n"
            "Keys and groups are listed in config/; see README 'Overriding the config'."
        ) from err
    assert isinstance(resolved, dict)
    return resolved


def subtree(cfg: dict[str, Any], *paths: str) -> dict[str, Any]:
    """Return the parts of the config a rule reads, keyed by their dotted path."""
    out: dict[str, Any] = {}
    for path in paths:
        node: Any = cfg
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                raise ConfigError(f"config key '{path}' does not exist (failed at '{part}')")
            node = node[part]
        out[path] = node
    return out


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
