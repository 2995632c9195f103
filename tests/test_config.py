"""The Hydra config: composed once, overridable, strict about unknown keys, hashed per rule."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
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
    model_params,
    parse_overrides,
    runtime_keys,
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


def test_a_models_runtime_keys_are_no_rule_params_and_the_job_adds_them_back() -> None:
    """Issue 37: a model's server threads made a new variant and reran its jobs; its key
    variable, concurrency and server threads are runtime-only, so a model-call rule's params
    leave them out and the job reads this run's from the config composed again."""
    overrides = ["models.smollm2-135m.server.n_threads=3", "models.smollm2-135m.max_concurrency=5"]
    cfg = compose_config(overrides)
    spec = cfg["models"]["smollm2-135m"]
    params = model_params(cfg, "smollm2-135m")
    assert params == model_params(compose_config(), "smollm2-135m")  # nothing to rerun
    assert {"api_key_env", "max_concurrency"}.isdisjoint(params)
    assert (
        "n_threads" not in params["server"] and params["server"]["file"] == spec["server"]["file"]
    )
    runtime = runtime_keys({"overrides": " ".join(overrides)}, REPO_ROOT / "config")
    assert runtime.with_runtime_model_keys("smollm2-135m", params) == spec
    assert runtime.models["smollm2-135m"]["server"] == {"n_threads": 3}


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
    """A variant's resolved config and overrides sit beside its own results (the default
    build's folder is left alone)."""
    variant = workflow_copy / "results/bundled/variants/stats.n_boot-123"
    run_snakemake(
        workflow_copy,
        "results/bundled/variants/stats.n_boot-123/config.yaml",
        "--cores",
        "1",
        "--config",
        "overrides=stats.n_boot=123",
        timeout=300,
    )
    assert "n_boot: 123" in (variant / "config.yaml").read_text()
    described = (variant / "variant.yaml").read_text()
    assert "- stats.n_boot=123" in described and "variant: stats.n_boot-123" in described
    assert not (workflow_copy / "results/bundled/config.yaml").exists()


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


# ---------------------------------------------------------------- values that leave the config

#: one planted value of each credential shape (none is a real key)
SECRET_SHAPES = {
    "openai": "sk-proj-4fJ9aXc2Lm7QeR1tYu8IoP3s",
    "anthropic": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm",
    "huggingface": "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
    "groq": "gsk_Q1w2E3r4T5y6U7i8O9p0AsDfGhJk",
    "github": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",
    "google": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "bearer": "Bearer eyJhbGciOiJIUzI1NiJ9.payload",
}


def _refused(overrides: list[str]) -> str:
    with pytest.raises(ConfigError) as err:
        compose_config(overrides)
    assert err.value.__cause__ is None  # a chained error would print the value in a traceback
    return str(err.value)


@pytest.mark.parametrize(
    "value", ["..", "../../outside", "a/b", "a\\b", ".hidden", "-rf", "two words", "", "x" * 129]
)
def test_a_path_component_is_one_safe_component(value: str) -> None:
    from analysis.settings import check_path_component

    with pytest.raises(ConfigError, match="data.name=.* cannot name a folder"):
        check_path_component("data.name", value)


def test_safe_component_accepts_the_shipped_names() -> None:
    from analysis.settings import check_path_component

    for name in ("bundled", "annotation_tool", "sim-scale-10", "v1", "smollm2-135m", "gpt-5.4"):
        assert check_path_component("data.name", name) == name


@pytest.mark.parametrize(
    ("override", "key"),
    [("data.name=..", "data.name"), ("prompts.version=../v1", "prompts.version")],
)
def test_values_that_become_folder_names_are_refused_at_composition(
    override: str, key: str
) -> None:
    """``data.name=..`` put outputs outside results/ and let the paper build's clean-up reach
    paper/ itself: every value that becomes a folder name is checked when the config is
    composed (model names below, variant names by the same ``check_path_component``)."""
    message = _refused([override])
    assert f"{key}=" in message and "cannot name a folder" in message


@pytest.mark.parametrize("name", ["../evil", "a/b", ".hidden", "Upper-Case", ""])
def test_a_model_name_is_a_safe_lowercase_component(name: str) -> None:
    from analysis import settings

    plain = compose_config()
    plain["models"] = {name: {"base_url": "http://127.0.0.1:8000/v1"}}
    with pytest.raises(ConfigError, match=f"models.{re.escape(name)}"):
        settings.from_params(settings.Config, plain, "")


@pytest.mark.parametrize("shape", sorted(SECRET_SHAPES))
def test_every_credential_shape_is_recognized_and_never_shown(shape: str) -> None:
    from analysis.settings import check_env_var_name, check_no_secrets, redact_secrets

    secret = SECRET_SHAPES[shape]
    tree = {"paper": {"title": f"note {secret} end"}, "models": {"m": {"api_key_env": "K"}}}
    with pytest.raises(ConfigError, match="paper.title holds a value that looks like") as err:
        check_no_secrets(tree)
    assert secret.split()[-1][:12] not in str(err.value)
    with pytest.raises(ConfigError, match="api_key_env must be the NAME") as err:
        check_env_var_name("models.m.api_key_env", secret)
    assert secret.split()[-1][:12] not in str(err.value)
    assert redact_secrets(f"x {secret} y") == "x [REDACTED] y"


def test_ordinary_text_is_not_taken_for_a_key() -> None:
    from analysis.settings import looks_like_secret

    for text in ("task-specific prompts", "risk-assessment-of-the-user", "hf_small", "Bearer of"):
        assert not looks_like_secret(text), text


def test_a_key_typed_into_api_key_env_is_refused_at_composition_without_showing_it() -> None:
    secret = SECRET_SHAPES["huggingface"]  # a valid variable name: refused for its shape
    message = _refused([f"models.smollm2-135m.api_key_env={secret}"])
    assert "models.smollm2-135m.api_key_env" in message and secret[3:] not in message


@pytest.mark.parametrize(
    ("override", "key"),
    [
        (f"paper.title='Our study {SECRET_SHAPES['openai']}'", "paper.title"),
        (f"+models.smollm2-135m.params.user='{SECRET_SHAPES['bearer']}'", "params.user"),
    ],
)
def test_a_value_shaped_like_a_key_is_refused_anywhere_in_the_config(
    override: str, key: str
) -> None:
    """Whatever key it is typed into, a credential never reaches the resolved config, a rule
    param, a record or the report: composition refuses it, naming the key, not the value."""
    message = _refused([override])
    assert key in message and "looks like an API key or token" in message
    assert not any(v.split()[-1][:12] in message for v in SECRET_SHAPES.values())


def test_an_environment_variable_name_is_accepted() -> None:
    cfg = compose_config(["models.smollm2-135m.api_key_env=OPENAI_API_KEY"])
    assert cfg["models"]["smollm2-135m"]["api_key_env"] == "OPENAI_API_KEY"


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("file:///etc/passwd", "scheme 'file'"),
        ("ftp://example.org/v1", "scheme 'ftp'"),
        ("127.0.0.1:8000/v1", "scheme"),
        ("http://169.254.169.254/latest", "link-local"),
        ("http://[fe80::1]/v1", "link-local"),
        ("https://user:pw@api.example.org/v1", "credentials"),
        ("http:///v1", "no host"),
    ],
)
def test_a_base_url_other_than_an_http_endpoint_is_refused(url: str, needle: str) -> None:
    from analysis.settings import check_base_url

    with pytest.raises(ConfigError, match=needle):
        check_base_url("models.m.base_url", url)


def test_base_urls_are_checked_at_composition() -> None:
    message = _refused(["models.smollm2-135m.base_url='file:///etc/passwd'"])
    assert "models.smollm2-135m.base_url: scheme 'file'" in message
    good = "https://api.openai.com/v1"
    cfg = compose_config([f"models.smollm2-135m.base_url='{good}'"])
    assert cfg["models"]["smollm2-135m"]["base_url"] == good


def test_snakemake_refuses_a_planted_key_before_any_job_and_never_prints_it(
    workflow_copy: Path,
) -> None:
    secret = SECRET_SHAPES["openai"]
    proc = run_snakemake(
        workflow_copy,
        "-n",
        "--config",
        f"overrides=llm=record models.smollm2-135m.api_key_env={secret}",
        check=False,
        timeout=300,
    )
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "models.smollm2-135m.api_key_env" in output and secret[3:] not in output
    assert not (workflow_copy / "results" / "bundled" / "config.yaml").exists()
    logs = [p for p in (workflow_copy / ".snakemake").rglob("*") if p.is_file()]
    assert all(secret[3:].encode() not in p.read_bytes() for p in logs)


def test_rule_logs_redact_every_credential_shape(tmp_path: Path) -> None:
    """A key that reaches a log line some other way (an endpoint's echo, a data file) is shown
    as [REDACTED] in the rule's log."""
    import logging
    from types import SimpleNamespace

    from analysis.workflow_io import rule_logging

    smk = SimpleNamespace(threads=1, log=[str(tmp_path / "rule.log")], rule="demo")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        with rule_logging(smk) as log:
            for shape, secret in SECRET_SHAPES.items():
                log.info("endpoint said %s: %s", shape, secret)
    finally:
        root.handlers, root.level = handlers, level
    text = (tmp_path / "rule.log").read_text()
    assert text.count("[REDACTED]") == len(SECRET_SHAPES)
    assert not any(secret.split()[-1] in text for secret in SECRET_SHAPES.values())


@pytest.mark.parametrize(
    "typed",
    [
        "data=annotation_tool data.root=/data/données/annotation-tool",
        "data=annotation_tool data.root='/data/données/annotation-tool'",  # quotes, as suggested
        'data=annotation_tool data.root="/data/données/annotation-tool"',
    ],
)
def test_a_data_root_with_non_ascii_characters_composes_as_typed(typed: str) -> None:
    """Hydra's lexer refused any non-ASCII character in an unquoted value, and the shell had
    removed the quotes its error suggested; such a value is now quoted for Hydra."""
    cfg = compose_config(typed)
    assert cfg["data"]["root"] == "/data/données/annotation-tool"


def test_non_ascii_values_are_quoted_for_hydra_only_when_needed() -> None:
    from analysis.workflow_config import hydra_token

    assert hydra_token("data.root=/plain/path") == "data.root=/plain/path"
    assert hydra_token("data.root=/données") == "data.root='/données'"
    assert hydra_token("data.root=/l'été") == 'data.root="/l\'été"'
    assert hydra_token("data.root='/données'") == "data.root='/données'"
    assert hydra_token("stages.stage2.voters=[modèle]") == "stages.stage2.voters=[modèle]"


def test_a_shared_config_folder_serves_a_composed_config_and_never_a_stale_or_failed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CONFIG_CACHE_VARIABLE``: a config composed once is read back (the suite's many
    snakemake calls compose it once); another override, an edited config file or edited
    composing code is another digest; a failed composition stores nothing; a torn file is
    composed again and replaced."""
    import shutil

    from analysis.software import CONFIG_CACHE_VARIABLE
    from analysis.workflow_config import compose_typed, stored_config_path

    folder = tmp_path / "cache"
    monkeypatch.setenv(CONFIG_CACHE_VARIABLE, str(folder))
    config_dir = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config_dir)
    fresh = compose_typed("stats.n_boot=500", config_dir)[1]
    assert compose_config("stats.n_boot=500", config_dir) == fresh  # composed and stored
    path = stored_config_path(folder, "stats.n_boot=500", config_dir)
    assert sorted(folder.iterdir()) == [path]
    path.write_text('{"read": "from the folder"}')  # what is stored is what is served
    assert compose_config("stats.n_boot=500", config_dir) == {"read": "from the folder"}
    path.write_text('{"torn')
    assert compose_config("stats.n_boot=500", config_dir) == fresh
    assert json.loads(path.read_text()) == fresh

    # every input of composition is in the digest
    assert stored_config_path(folder, "stats.n_boot=501", config_dir) != path
    stats = config_dir / "stats" / "default.yaml"
    stats.write_text(stats.read_text() + "\n# an edit\n")
    assert stored_config_path(folder, "stats.n_boot=500", config_dir) != path
    monkeypatch.setattr("analysis.workflow_config.code_hash", lambda *m: "another composing code")
    assert stored_config_path(folder, "stats.n_boot=500", config_dir) != path

    # a bad override fails every time and leaves nothing behind
    monkeypatch.undo()
    monkeypatch.setenv(CONFIG_CACHE_VARIABLE, str(folder))
    before = sorted(folder.iterdir())
    for _ in range(2):
        with pytest.raises(ConfigError, match="n_boot"):
            compose_config("stats.n_boot=-3", config_dir)
    assert sorted(folder.iterdir()) == before
