"""The Hydra config: composed once, overridable, strict about unknown keys, hashed per rule."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from analysis.provenance import config_hash
from analysis.workflow_config import (
    ConfigError,
    _project_imports,
    code_files,
    code_hash,
    compose_config,
    parse_overrides,
    subtree,
)
from tests.conftest import REPO_ROOT, run_snakemake


def test_default_config_has_every_group_as_plain_dicts() -> None:
    cfg = compose_config()
    for group in ("data", "models", "prompts", "stages", "llm", "stats", "learn", "paper", "run"):
        assert group in cfg, group
    assert cfg["data"]["name"] == "bundled"
    assert type(cfg["stats"]) is dict


def test_override_string_is_split_like_the_readme_shows() -> None:
    assert parse_overrides("data=annotation_tool stats.n_boot=500") == [
        "data=annotation_tool",
        "stats.n_boot=500",
    ]
    assert parse_overrides("[stats.n_boot=5,stats.cluster=prompt]") == [
        "stats.n_boot=5",
        "stats.cluster=prompt",
    ]
    cfg = compose_config("data=annotation_tool stats.n_boot=500")
    assert cfg["stats"]["n_boot"] == 500
    assert cfg["data"]["name"] == "annotation_tool"


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("stats.nboot=5", "stats.nboot"),  # typo of an existing key
        ("+stats.nboot=5", "nboot"),  # forced append is caught by the schema
        ("stats.n_boot=many", "n_boot"),  # wrong type
        ("data=no_such_dataset", "no_such_dataset"),  # unknown group option
    ],
)
def test_bad_overrides_fail_naming_the_key(override: str, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        compose_config(override)
    assert needle in str(err.value)


def test_subtree_is_keyed_by_path_and_rejects_missing_keys() -> None:
    cfg = compose_config()
    sub = subtree(cfg, "stats", "run.seed")
    assert set(sub) == {"stats", "run.seed"}
    assert sub["run.seed"] == cfg["run"]["seed"]
    with pytest.raises(ConfigError, match="stats.nope"):
        subtree(cfg, "stats.nope")


def test_config_hash_ignores_key_order_but_not_values() -> None:
    assert config_hash({"a": 1, "b": 2}) == config_hash({"b": 2, "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})


def test_code_hash_changes_with_the_module_source(tmp_path: Path, monkeypatch) -> None:
    pkg = tmp_path / "probe_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "stat.py").write_text("def f():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = code_hash("probe_pkg")
    assert before == code_hash("probe_pkg")
    (pkg / "stat.py").write_text("def f():\n    return 2\n")
    sys.modules.pop("probe_pkg", None)
    assert code_hash("probe_pkg") != before
    with pytest.raises(ConfigError):
        code_hash("probe_pkg_does_not_exist")


def test_code_hash_follows_package_imports_but_not_siblings() -> None:
    files = {str(p.relative_to(REPO_ROOT)) for p in code_files("analysis.stats.study_stage3")}
    assert "analysis/stats/study_stage3.py" in files
    assert "analysis/stats/bootstrap.py" in files  # imported: its edits rerun stage-3 statistics
    assert "analysis/stats/study_stage2.py" not in files  # a sibling: its edits do not
    assert "analysis/llm/calls.py" not in files


def test_snakemake_rejects_an_unknown_key_with_a_clear_message(workflow_copy: Path) -> None:
    proc = run_snakemake(
        workflow_copy, "-n", "--config", "overrides=stats.nboot=5", check=False, timeout=300
    )
    assert proc.returncode != 0
    assert "stats.nboot" in proc.stdout + proc.stderr


def test_resolved_config_is_written_next_to_the_results(workflow_copy: Path) -> None:
    run_snakemake(
        workflow_copy,
        "results/bundled/config.yaml",
        "--cores",
        "1",
        "--config",
        "overrides=stats.n_boot=123",
        timeout=300,
    )
    text = (workflow_copy / "results/bundled/config.yaml").read_text()
    assert "n_boot: 123" in text


def _imports_by_parser(path: Path) -> set[str]:
    """The project modules a file imports, as Python's own parser reads them."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "analysis")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "analysis":
            found.add(node.module)
            if importlib.util.find_spec(node.module).submodule_search_locations:  # a package
                found.update(
                    f"{node.module}.{a.name}"
                    for a in node.names
                    if importlib.util.find_spec(f"{node.module}.{a.name}") is not None
                )
    return found


def test_code_hash_reads_the_same_imports_as_the_python_parser() -> None:
    files = sorted((REPO_ROOT / "analysis").rglob("*.py"))
    assert len(files) > 50
    differ = {
        str(p.relative_to(REPO_ROOT)): _imports_by_parser(p) ^ _project_imports(p) for p in files
    }
    assert not {k: v for k, v in differ.items() if v}
