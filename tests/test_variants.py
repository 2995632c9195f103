"""Variants and sweeps (analysis/variants.py, analysis/paths.py, workflow/rules/sweep.smk): a
non-default configuration writes under its own folder and reads the default build's shared
outputs; a sweep is the Cartesian product of Hydra's multirun values, one DAG whose shared jobs
run once; a sweep over a key that changes no output is refused with the reason."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from analysis import variants
from analysis.cli import main
from analysis.paths import BuildPaths, list_variants
from analysis.settings import ConfigError
from analysis.variants import identify, plan_sweep
from analysis.workflow_config import compose_config, expand_sweep, sweep_from_snakemake
from tests.conftest import REPO_ROOT, make_workflow_copy, run_snakemake

CONFIG_DIR = REPO_ROOT / "config"


def _variant(*overrides: str):
    cfg = compose_config(list(overrides), config_dir=CONFIG_DIR)
    return identify(list(overrides), cfg, CONFIG_DIR)


def test_the_default_build_keeps_its_paths() -> None:
    v = _variant()
    assert v.name is None and v.changed == ()
    paths = v.paths()
    assert paths.numbers == "results/bundled/numbers.json"
    assert paths.pdf == "paper/build/bundled/paper.pdf"
    assert paths.figures == "figures/bundled"
    assert paths.benchmarks == "logs/bundled/benchmarks"
    assert paths.paper_generated == "paper/generated/bundled"
    # the dataset's overrides choose the dataset, not a variant
    real = _variant("data=annotation_tool", "data.root=/somewhere")
    assert real.name is None and real.paths().numbers == "results/annotation_tool/numbers.json"


def test_a_dataset_choice_alone_is_identified_without_composing_again(monkeypatch) -> None:
    """Every snakemake call identifies its build; with only the dataset chosen (the default
    and the real-data builds) the composed config is the dataset's default, and the variant is
    the one a second composition would give."""
    overrides = ["data=annotation_tool", "data.root=/somewhere"]
    cfg = compose_config(overrides, config_dir=CONFIG_DIR)
    composed = variants._dataset_default(tuple(overrides), str(CONFIG_DIR.resolve()))
    calls = []
    monkeypatch.setattr(variants, "_dataset_default", lambda *a: calls.append(a) or composed)
    fast = identify(overrides, cfg, CONFIG_DIR)
    assert calls == [] and fast.name is None and fast.changed == ()
    slow = identify([*overrides, "stats.n_boot=2000"], cfg, CONFIG_DIR)  # 2000: the default
    assert len(calls) == 1 and slow.scopes == fast.scopes and slow.changed == fast.changed


@pytest.mark.parametrize(
    "overrides",
    [
        ("prompts=v1",),
        ("llm=record",),
        ("llm.timeout_s=5", "llm.shards=3"),
        ("models.smollm2-135m.server.n_threads=1", "models.smollm2-135m.max_concurrency=3"),
    ],
)
def test_overrides_that_change_no_output_make_no_variant(overrides: tuple[str, ...]) -> None:
    """A no-op choice, the call-store mode, runtime-only keys (a local server's thread count
    among them: no part of a call key): the default build's paths, so recording calls writes
    where replaying them reads."""
    assert _variant(*overrides).name is None


def test_a_stats_variant_has_its_own_folder_and_shares_the_upstream_tiers() -> None:
    v = _variant("stats.n_boot=200", "stats.min_shared_items=30")
    assert v.name == "stats.min_shared_items-30__stats.n_boot-200"
    assert v.changed == ("stats.min_shared_items", "stats.n_boot")
    assert v.paths().numbers == (
        "results/bundled/variants/stats.min_shared_items-30__stats.n_boot-200/numbers.json"
    )
    assert v.paths().pdf.startswith("paper/build/bundled/variants/stats.min_shared_items-30__")
    # the model calls and canonical tables are the default build's
    assert v.paths("calls") == BuildPaths("bundled") == v.paths("data")


def test_a_model_or_prompt_variant_has_its_own_model_calls() -> None:
    v = _variant("models=none", "stats.n_boot=200")
    assert v.scopes["calls"] == "models-none"
    assert v.name == "models-none__stats.n_boot-200"
    assert v.scopes["data"] is None


def test_run_variant_names_a_build_and_must_be_one_safe_folder_name() -> None:
    assert _variant("run.variant=mine", "stats.n_boot=200").name == "mine"
    for bad in ("../x", ".hidden", "a/b", "a b", "a=b"):
        with pytest.raises(ConfigError, match="run.variant"):
            compose_config([f"run.variant='{bad}'"], config_dir=CONFIG_DIR)


def test_a_value_that_is_no_folder_name_gives_a_digest_name() -> None:
    v = _variant("paper.title='A: B'")
    assert re.fullmatch(r"v-[0-9a-f]{12}", v.name or "")
    assert v.name == _variant("paper.title='A: B'").name  # stable


def test_a_sweep_is_the_cartesian_product_in_the_order_given() -> None:
    members = expand_sweep(["llm=record", "stats.n_boot=200,400", "stats.min_shared_items=20,30"])
    assert members == [
        ["llm=record", "stats.n_boot=200", "stats.min_shared_items=20"],
        ["llm=record", "stats.n_boot=200", "stats.min_shared_items=30"],
        ["llm=record", "stats.n_boot=400", "stats.min_shared_items=20"],
        ["llm=record", "stats.n_boot=400", "stats.min_shared_items=30"],
    ]
    assert expand_sweep(["stats.cluster=choice(user,prompt)"]) == [
        ["stats.cluster=user"],
        ["stats.cluster=prompt"],
    ]
    # a --configfile's sweep: list, and the one-string --config form
    assert sweep_from_snakemake(
        {"overrides": ["llm=record"], "sweep": ["run.seed=range(1,3)"]}
    ) == [
        ["llm=record", "run.seed=1"],
        ["llm=record", "run.seed=2"],
    ]
    assert sweep_from_snakemake({"overrides": "stats.n_boot=5"}) == [["stats.n_boot=5"]]


@pytest.mark.parametrize(
    ("override", "reason"),
    [
        ("llm.timeout_s=5,10", "runtime-only"),
        ("llm=replay,record", "never an output"),
        ("models.smollm2-135m.max_concurrency=1,2", "never an output"),
        ("models.smollm2-135m.server.n_threads=1,2", "runtime-only"),
    ],
)
def test_a_sweep_over_a_key_that_changes_no_output_is_refused(override: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason) as err:
        expand_sweep([override])
    assert override.split("=")[0] in str(err.value)


def test_members_that_are_one_build_are_refused() -> None:
    with pytest.raises(ConfigError, match="same build"):
        plan_sweep(expand_sweep(["stats.n_boot=2000,200", "run.variant=x"]), CONFIG_DIR)


def test_the_first_member_of_a_shared_folder_defines_its_rules() -> None:
    plan = plan_sweep(expand_sweep(["models=default,none", "stats.n_boot=200,400"]), CONFIG_DIR)
    assert [(m.variant.scopes["calls"], m.owns) for m in plan] == [
        (None, ("data", "calls")),
        (None, ()),
        ("models-none", ("calls",)),
        ("models-none", ()),
    ]
    config = plan[2].module_config()
    assert config["overrides"] == ["models=none", "stats.n_boot=200"]
    assert config["sweep_member"] == {"owns": ["calls"], "prefix": "models_none_stats_n_boot_200__"}


def test_list_variants_finds_built_variants_only(tmp_path: Path) -> None:
    for name, built in (("a", True), ("b", False)):
        folder = tmp_path / BuildPaths("ds", name).results
        folder.mkdir(parents=True)
        if built:
            (folder / "config.yaml").write_text("{}\n")
    assert list_variants(tmp_path, "ds") == ["a"]


def _job_table(text: str) -> dict[str, int]:
    """Snakemake's "Job stats" table of a run's output: rule -> jobs."""
    table = re.search(r"Job stats:\n(.*?)\n\n", text + "\n\n", re.S)
    assert table is not None, text[-3000:]
    rows = [ln.split() for ln in table.group(1).splitlines()[2:]]
    return {r[0]: int(r[1]) for r in rows if len(r) == 2 and r[0] != "total"}


def _planned_outputs(*args: str) -> tuple[dict[str, int], list[str]]:
    """Job counts and every planned output of a dry run of the real workflow."""
    proc = run_snakemake(REPO_ROOT, "-n", "--forceall", *args, timeout=600)
    text = proc.stdout
    outputs = [o for line in re.findall(r"^\s+output: (.*)$", text, re.M) for o in line.split(", ")]
    return _job_table(text), outputs


def test_a_variant_dry_run_writes_only_its_folder_and_reads_the_shared_tiers() -> None:
    jobs, outputs = _planned_outputs("--config", "overrides=stats.n_boot=200")
    variant = "stats.n_boot-200"
    own = [o for o in outputs if f"/variants/{variant}/" in o]
    shared = [o for o in outputs if "/variants/" not in o]
    assert f"paper/build/bundled/variants/{variant}/paper.pdf" in own
    assert f"results/bundled/variants/{variant}/resamples.npz" in own
    assert f"results/bundled/variants/{variant}/config.yaml" in own
    # canonical tables and model calls stay the default build's; no statistic is written there
    assert "results/bundled/tables/users.parquet" in shared
    assert any(o.startswith("results/bundled/stage1/extracted/") for o in shared)
    assert not [o for o in shared if "/records/stage" in o or o.startswith(("figures/", "paper/"))]
    assert jobs["canonical_tables"] == 1


def test_a_sweep_is_one_dag_listed_per_variant_with_shared_jobs_once() -> None:
    jobs, outputs = _planned_outputs("--config", "overrides=stats.n_boot=200,400")
    prefixes = ("stats_n_boot_200__", "stats_n_boot_400__")
    for prefix in prefixes:
        assert jobs[f"{prefix}stage2_statistics"] == 1
        assert jobs[f"{prefix}paper_pdf"] == 1
    assert jobs["stats_n_boot_200__canonical_tables"] == 1
    assert "stats_n_boot_400__canonical_tables" not in jobs
    assert sum(n for job, n in jobs.items() if job.endswith("__attribute_extraction")) == 1
    for name in ("stats.n_boot-200", "stats.n_boot-400"):
        assert f"paper/build/bundled/variants/{name}/paper.pdf" in outputs
    assert len(outputs) == len(set(outputs))  # no file written by two jobs


def test_a_sweep_over_a_runtime_key_stops_before_any_job() -> None:
    proc = run_snakemake(
        REPO_ROOT, "-n", "--config", "overrides=llm.timeout_s=5,10", check=False, timeout=300
    )
    assert proc.returncode != 0
    assert "cannot sweep over llm.timeout_s" in proc.stdout + proc.stderr
    assert "runtime-only" in proc.stdout + proc.stderr


def _n_boot(repo: Path) -> int:
    """The default build's ``stats.n_boot`` (its resolved config)."""
    cfg = yaml.safe_load((repo / BuildPaths("bundled").config).read_text(encoding="utf-8"))
    return int(cfg["stats"]["n_boot"])


#: a statistics variant whose change to stage 2 is cheap to build: the kappa group means keep
#: fewer rater pairs, drawn on the same resamples as the default build's
STAGE2_VARIANT = ("stats.min_shared_items=800", "stats.min_shared_items-800")


def test_a_variant_built_beside_the_default_reruns_only_its_own_jobs_and_diffs_paired(
    bundled_build: Path, tmp_path: Path
) -> None:
    """On a copy of the shared build: a stats variant's stage-2 records are built with the
    default build's model calls and tables (one job, nothing upstream reruns, nothing of the
    default build is written), and ``recenter diff`` pairs the two on the same resamples of
    the same designs: every unchanged key by +0 [+0, +0], crossed designs included. The
    variant keeps fewer human rater pairs, so the kappa means it moves average over another
    rater-pair subset of the same resampled data: those are paired too, their annotators'
    and rater pairs' deletions matched by name (the hand checks of such a change are
    tests/paper/test_diff.py's)."""
    override, name = STAGE2_VARIANT
    repo = make_workflow_copy(tmp_path / "repo")
    for kept in ("results/bundled", ".snakemake/metadata"):
        shutil.copytree(bundled_build / kept, repo / kept)
    default = BuildPaths("bundled")
    variant = BuildPaths("bundled", name)
    before = {p: p.stat().st_mtime_ns for p in (repo / default.results).rglob("*") if p.is_file()}

    target = variant.record_file("stage2_statistics")
    proc = run_snakemake(repo, "--cores", "1", target, "--config", f"overrides={override}")
    jobs = _job_table(proc.stdout + "\n\n" + proc.stderr)
    assert jobs == {"stage2_statistics": 1}, jobs
    written = {p for p in (repo / default.results).rglob("*") if p.is_file()} - set(before)
    assert all(f"/variants/{name}/" in str(p) for p in written), written
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())

    out = tmp_path / "diff.json"
    args = [str(repo / default.record_file("stage2_statistics")), str(repo / target)]
    assert main(["diff", *args, "--format", "json", "--output", str(out)]) == 1
    doc = json.loads(out.read_text(encoding="utf-8"))
    rows = {k["key"]: k for k in doc["keys"]}
    paired = [k for k in rows.values() if k["paired"]]
    assert paired, doc["summary"]
    assert all(k["ci"] == [0.0, 0.0] for k in paired if k["status"] == "same")
    assert "stage2.final.over_selection.mean_model" in {k["key"] for k in paired}  # crossed
    moved = [k for k in rows.values() if k["status"] == "changed"]
    assert moved, doc["summary"]
    for k in moved:
        assert k["paired"] and k["ci"] is not None, k
        assert "rater-pairs: " in k["note"] and "matched by name" in k["note"], k
        assert k["n_resamples"] == _n_boot(repo), k
