"""The execution profiles resolve the whole workflow, and every job carries the resources a
cluster scheduler needs: a dry run per profile (default, slurm, kubernetes) of the default
target lists every job with its resources after the profile's defaults are applied.

Kubernetes cannot run here (no cluster); its dry run is the check that the profile, the
executor plugin and the fs storage provider resolve every job. The storage prefix is pointed
at a copy of the repository, standing in for the clone on the shared claim the profile expects.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT, make_workflow_copy, run_snakemake

pytestmark = pytest.mark.slow

PROFILES = ("default", "slurm", "kubernetes")
#: what a rule script calls to make model calls (analysis.stages / analysis.llm call layer)
MODEL_CALL_MARKERS = ("run_model_step(", "run_calls(")
#: a job block of a dry run: "rule name:" (or "localrule name:") up to its blank line
JOB_BLOCK = re.compile(r"^(?:local)?rule (\w+):\n(.*?)(?:\n\n|\n(?=\S)|\Z)", re.M | re.S)


@dataclass(frozen=True)
class DryRun:
    """One profile's dry run: the jobs (rule, resources) and the job-stats total."""

    profile: str
    output: str
    jobs: list[tuple[str, dict[str, str]]]
    total: int


def _parse_dry_run(profile: str, output: str) -> DryRun:
    jobs = []
    for rule, body in JOB_BLOCK.findall(output):
        line = re.search(r"^\s*resources: (.*)$", body, re.M)
        pairs = (item.split("=", 1) for item in line.group(1).split(", ")) if line else ()
        jobs.append((rule, {k: v for k, v in pairs}))
    stats = re.search(r"^total\s+(\d+)$", output, re.M)
    return DryRun(profile, output, jobs, int(stats.group(1)) if stats else 0)


def _dry_run(workdir: Path, profile: str) -> DryRun | str:
    """The parsed dry run, or (if snakemake failed) a message with the start of its error."""
    args = ["-n", "--workflow-profile", f"workflow/profiles/{profile}"]
    if profile == "kubernetes":
        args += ["--default-storage-prefix", str(workdir)]
    proc = run_snakemake(workdir, *args, timeout=600, check=False)
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        error = re.search(r"^\w*(Exception|Error)\b.*", output, re.M | re.S)
        shown = error.group(0) if error else output[-2000:]
        return f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{shown[:2500]}"
    return _parse_dry_run(profile, output)


@pytest.fixture(scope="module")
def dry_run_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, DryRun | str]:
    """A dry run of the default target under each profile, in one fresh copy (run together)."""
    copy = make_workflow_copy(tmp_path_factory.mktemp("profiles") / "repo")
    with ThreadPoolExecutor(max_workers=len(PROFILES)) as pool:
        runs = {p: pool.submit(_dry_run, copy, p) for p in PROFILES}
        return {p: run.result() for p, run in runs.items()}


def _run_of(results: dict[str, DryRun | str], profile: str) -> DryRun:
    """One profile's dry run; a profile whose dry run failed fails its tests (only those)."""
    run = results[profile]
    if isinstance(run, str):
        pytest.fail(f"{profile}: {run}", pytrace=False)
    return run


def _rule_scripts() -> dict[str, tuple[str, Path]]:
    """Rule name -> (its rule file, its script), read from workflow/rules/*.smk."""
    out = {}
    for smk in sorted((REPO_ROOT / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        for rule, body in re.findall(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", text, re.M | re.S):
            script = re.search(r"script:\s*\n?\s*\"([^\"]+)\"", body)
            if script:
                out[rule] = (smk.name, (smk.parent / script.group(1)).resolve())
    return out


def _model_call_rules() -> set[str]:
    """The model-call rules: generated from the registry of model-call steps."""
    from analysis.stages.steps import CALL_STEPS

    return set(CALL_STEPS)


def _other_rules_calling_models() -> set[str]:
    """Hand-written rules whose script calls a model through the call layer (there must be none:
    every model call goes through a registered step)."""
    return {
        rule
        for rule, (_, script) in _rule_scripts().items()
        if any(marker in script.read_text() for marker in MODEL_CALL_MARKERS)
    }


@pytest.fixture(scope="module")
def all_rules() -> set[str]:
    """Every rule of the workflow, as `snakemake --list-rules` names them."""
    proc = run_snakemake(REPO_ROOT, "--list-rules", timeout=300)
    # a rule line starts in column 0; wrapped docstring lines are indented
    return {ln.split()[0] for ln in proc.stdout.splitlines() if ln[:1].strip()}


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_dry_run_resolves_every_job_of_the_workflow(
    dry_run_results: dict[str, DryRun | str], profile: str
) -> None:
    run = _run_of(dry_run_results, profile)
    assert run.total > 1 and len(run.jobs) == run.total, (
        f"{profile}: {len(run.jobs)} job blocks, job stats total {run.total}\n{run.output[-3000:]}"
    )


def test_every_rule_is_part_of_the_default_run(
    dry_run_results: dict[str, DryRun | str], all_rules: set[str]
) -> None:
    """A rule the default target never reaches is neither run by `make paper` nor scheduled
    on a cluster: it is dead code, or an output the paper should depend on and does not."""
    in_dag = {rule for rule, _ in _run_of(dry_run_results, "default").jobs}
    missing = sorted(all_rules - in_dag)
    assert not missing, f"rules with no job in the default target's DAG: {missing}"


def test_profiles_agree_on_the_jobs(dry_run_results: dict[str, DryRun | str]) -> None:
    jobs = {p: sorted(rule for rule, _ in _run_of(dry_run_results, p).jobs) for p in PROFILES}
    assert jobs["slurm"] == jobs["default"] == jobs["kubernetes"]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_job_gets_memory_and_runtime(
    dry_run_results: dict[str, DryRun | str], profile: str
) -> None:
    lacking = sorted(
        {
            rule
            for rule, res in _run_of(dry_run_results, profile).jobs
            if not res.get("mem_mb", "").isdigit() or not res.get("runtime", "").isdigit()
        }
    )
    assert not lacking, f"{profile}: jobs without mem_mb or runtime after defaults: {lacking}"


@pytest.mark.parametrize("profile", PROFILES)
def test_model_calls_and_only_they_hold_the_api_resource(
    dry_run_results: dict[str, DryRun | str], profile: str
) -> None:
    model_rules = _model_call_rules()
    assert model_rules, "the registry of model-call steps is empty"
    assert not _other_rules_calling_models(), _other_rules_calling_models()
    model_script = (REPO_ROOT / "workflow" / "scripts" / "model_calls.py").read_text()
    assert any(marker in model_script for marker in MODEL_CALL_MARKERS)
    jobs = _run_of(dry_run_results, profile).jobs
    assert model_rules <= {rule for rule, _ in jobs}, "model-call rules missing from the DAG"
    wrong = sorted({rule for rule, res in jobs if (res.get("api") == "1") != (rule in model_rules)})
    assert not wrong, (
        f"{profile}: api=1 must be held by exactly the model-call rules {sorted(model_rules)}; "
        f"wrong: {wrong}"
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_caps_concurrent_model_calls(profile: str) -> None:
    settings = yaml.safe_load(
        (REPO_ROOT / "workflow/profiles" / profile / "config.yaml").read_text()
    )
    caps = dict(item.split("=", 1) for item in settings.get("resources", []))
    assert int(caps.get("api", 0)) >= 1, f"{profile}: no global `api` resource in `resources`"
    defaults = dict(item.split("=", 1) for item in settings.get("default-resources", []))
    assert {"mem_mb", "runtime"} <= defaults.keys(), f"{profile}: {defaults}"
    if profile != "default":
        assert settings["executor"] == profile
