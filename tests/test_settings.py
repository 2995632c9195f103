"""The typed settings: every config error fails at composition naming key, value and choices;
the Snakemake config channel takes overrides only; runtime-only keys stay out of rule params."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from analysis import settings
from analysis.seeds import SeedScheme, derive_seed
from analysis.variants import identify
from analysis.workflow_config import (
    RUNTIME_KEYS,
    ConfigError,
    compose_config,
    compose_typed,
    overrides_from_snakemake,
    parse_overrides,
    subtree,
)
from tests.conftest import REPO_ROOT, run_snakemake


@pytest.mark.parametrize(
    ("override", "needles"),
    [
        ("stats.ci_method=bcaa", ["stats.ci_method", "'bcaa'", "percentile, bca", "'bca'?"]),
        ("stats.cluster=users", ["stats.cluster", "'users'", "item, user, prompt", "'user'?"]),
        ("stats.ci_level=1.5", ["stats.ci_level", "1.5", "(0, 1)"]),
        ("llm.mode=recrod", ["llm.mode", "'recrod'", "replay, record, refresh", "'record'?"]),
        ("paper.claims_mode=stopp", ["paper.claims_mode", "'stopp'", "report, strict"]),
        ("paper.claims_mode=strictt", ["paper.claims_mode", "report, strict", "'strict'?"]),
        ("stats.n_boot=-5", ["stats.n_boot", "-5", ">= 1"]),
        ("llm.timeout_s=0", ["llm.timeout_s", "> 0"]),
        ("llm.max_retries=-1", ["llm.max_retries", ">= 0"]),
        ("llm.backoff_base_s=-1", ["llm.backoff_base_s", "-1", ">= 0"]),
        ("llm.backoff_max_s=-0.5", ["llm.backoff_max_s", "-0.5", ">= 0"]),
        ("llm.shards=0", ["llm.shards", ">= 1"]),
        ("stages.stage2.max_items_per_model=0", ["stages.stage2.max_items_per_model", ">= 1"]),
        ("stats.nboot=5", ["stats.nboot", "'n_boot'?"]),
        ("+stats.nboot=5", ["stats.nboot", "'n_boot'?"]),
        ("learn.verifier.learner=logistc", ["learn.verifier.learner", "'logistic'?"]),
    ],
)
def test_bad_values_fail_at_composition_naming_key_value_and_choices(
    override: str, needles: list[str]
) -> None:
    with pytest.raises(ConfigError) as err:
        compose_config([override])
    for needle in needles:
        assert needle in str(err.value), (needle, str(err.value))


def test_a_misspelled_key_in_a_models_file_fails_at_composition(tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config_dir)
    (config_dir / "models" / "typo.yaml").write_text(
        "my-model:\n  base_url: http://127.0.0.1:8000/v1\n  api_modle: Qwen/Qwen2.5-7B\n"
    )
    with pytest.raises(ConfigError) as err:
        compose_config(["models=typo"], config_dir=config_dir)
    assert "models.my-model.api_modle" in str(err.value)
    assert "'api_model'?" in str(err.value)


def test_composition_gives_typed_settings_and_plain_dicts() -> None:
    typed, plain = compose_typed()
    assert isinstance(typed, settings.Config)
    assert typed.stats.ci_method is settings.CiMethod.percentile
    assert typed.paper.claims_mode is settings.ClaimsMode.report
    assert type(plain["stats"]["ci_method"]) is str  # rule params stay plain and hashable
    assert set(typed.models) == set(plain["models"])


def test_settings_types_carry_no_defaults() -> None:
    """One copy of every default: the YAML files. Entries of open-ended lists (a model, a
    published figure) may leave optional keys out; those default to None ("not set"), never
    to a value."""
    entries = (settings.ModelSpec, settings.PublishedValue, settings.PublishedCoverage)
    for cls in vars(settings).values():
        if not dataclasses.is_dataclass(cls):
            continue
        for field in dataclasses.fields(cls):
            if cls in entries and field.default is None:
                continue
            assert field.default is dataclasses.MISSING, (cls.__name__, field.name)
            assert field.default_factory is dataclasses.MISSING, (cls.__name__, field.name)


def test_from_params_checks_a_rules_subtree_like_composition() -> None:
    stats = compose_config()["stats"]
    typed = settings.from_params(settings.StatsConfig, stats, "stats")
    assert typed.n_boot == stats["n_boot"]
    with pytest.raises(ConfigError, match="stats lacks the key"):
        settings.from_params(settings.StatsConfig, {"n_boot": 5}, "stats")
    with pytest.raises(ConfigError, match="stats.nboot is not a config key"):
        settings.from_params(settings.StatsConfig, {**stats, "nboot": 5}, "stats")
    with pytest.raises(ConfigError, match="'bca'"):
        settings.from_params(settings.StatsConfig, {**stats, "ci_method": "bcaa"}, "stats")


def test_the_snakemake_config_channel_takes_only_overrides() -> None:
    with pytest.raises(ConfigError) as err:
        overrides_from_snakemake({"overrride": "stats.n_boot=5"})
    assert "'overrride'" in str(err.value) and "'overrides'?" in str(err.value)
    with pytest.raises(ConfigError, match="--configfile"):
        overrides_from_snakemake({"stats": {"n_boot": 500}})
    # a --configfile holding a list of overrides
    assert overrides_from_snakemake({"overrides": ["stats.n_boot=500", "paper.title='A: B'"]}) == [
        "stats.n_boot=500",
        "paper.title='A: B'",
    ]
    assert overrides_from_snakemake({}) == []


def test_a_quoting_problem_says_how_to_quote() -> None:
    with pytest.raises(ConfigError) as err:
        parse_overrides("paper.title='A: B stats.n_boot=5")
    assert "No closing quotation" in str(err.value)
    assert "overrides=\"paper.title='A: B'" in str(err.value)
    assert parse_overrides("paper.title='A: B' stats.n_boot=5") == [
        "paper.title=A: B",
        "stats.n_boot=5",
    ]


def test_an_unparsable_override_token_says_how_to_quote() -> None:
    with pytest.raises(ConfigError, match="Quote a value with spaces"):
        compose_config(["paper.title='A: B"])


def test_a_model_entry_may_leave_optional_keys_out(tmp_path: Path) -> None:
    from analysis.llm.models import models_from_config

    config_dir = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config_dir)
    (config_dir / "models" / "hosted.yaml").write_text(
        "my-model:\n  base_url: http://127.0.0.1:8000/v1\n  api_key_env: null\n"
    )
    cfg = compose_config(["models=hosted"], config_dir=config_dir)
    assert cfg["models"]["my-model"]["max_concurrency"] is None  # listed, unset
    spec = models_from_config(cfg["models"])["my-model"]
    assert (spec.max_concurrency, spec.price_input_per_mtok, spec.description) == (4, 0.0, "")
    assert spec.params == {} and spec.api_model is None


def test_rule_params_leave_runtime_only_keys_out() -> None:
    cfg = compose_config()
    llm = subtree(cfg, "llm")["llm"]
    assert {"mode", "store", "shards"} <= set(llm)
    assert not {f"llm.{k}" for k in llm} & RUNTIME_KEYS
    assert {"llm.timeout_s", "llm.progress", "llm.executor", "llm.max_retries"} <= RUNTIME_KEYS
    with pytest.raises(ConfigError, match="runtime-only"):
        subtree(cfg, "llm.timeout_s")


def test_the_client_settings_are_the_llm_groups_runtime_keys() -> None:
    # the call layer receives the composed llm group itself: no second settings type, and
    # every client setting stays out of rule params (so out of every call key)
    llm = compose_typed()[0].llm
    assert isinstance(llm, settings.ClientSettings)
    client = {f.name for f in dataclasses.fields(settings.ClientSettings)}
    assert client | {"executor", "progress"} == set(settings.LLM_RUNTIME_KEYS)
    assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(settings.LlmConfig))
    with pytest.raises(ConfigError, match="llm.backoff_max_s"):
        dataclasses.replace(llm, backoff_max_s=-1)


def test_the_two_seed_schemes_keep_every_callers_draws() -> None:
    # values of the former stages.selection.derive_seed and learn.settings.derive_seed
    assert derive_seed(20260601, "stage3.controls.bootstrap", scheme=SeedScheme.stages) == (
        1757385829
    )
    assert derive_seed(20260601, "stage1.verifier", scheme=SeedScheme.learn) == 1567476119


def test_snakemake_rejects_a_stray_config_key_and_accepts_an_overrides_file(
    workflow_copy: Path,
) -> None:
    proc = run_snakemake(
        workflow_copy, "-n", "--config", "overrride=stats.n_boot=5", check=False, timeout=300
    )
    assert proc.returncode != 0
    assert "overrride" in proc.stdout + proc.stderr and "overrides" in proc.stdout + proc.stderr
    overrides = workflow_copy / "overrides.yaml"
    overrides.write_text("overrides:\n  - stats.n_boot=123\n  - \"paper.title='A: B'\"\n")
    # a variant: its config goes to its own folder (a digest name: 'A: B' names no folder)
    tokens = ["stats.n_boot=123", "paper.title='A: B'"]
    config_dir = workflow_copy / "config"
    target = identify(tokens, compose_config(tokens, config_dir=config_dir), config_dir)
    run_snakemake(
        workflow_copy, target.paths().config, "--cores", "1", "--configfile", str(overrides)
    )
    text = (workflow_copy / target.paths().config).read_text()
    assert "n_boot: 123" in text and "title: 'A: B'" in text
