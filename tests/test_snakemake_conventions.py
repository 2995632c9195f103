"""What a Snakemake user expects of the entry point: plain ``snakemake`` from the repository root
finds ``workflow/Snakefile`` and loads ``workflow/profiles/default`` by itself (its ``api`` cap
applies to the README command), and a run that calls models declares each model's key variable
(``envvars:``), so Snakemake stops before any job when one is unset; a replay run declares none.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from tests.conftest import REPO_ROOT, assert_python_succeeds, run_snakemake

DEFAULT_PROFILE = REPO_ROOT / "workflow" / "profiles" / "default" / "config.yaml"
#: a variable no machine sets, named as a model's api_key_env by the overrides below
KEY_VARIABLE = "RECENTER_TEST_UNSET_KEY"
RECORD_WITH_KEY = f"overrides=llm=record models.smollm2-135m.api_key_env={KEY_VARIABLE}"


def _api_cap() -> str:
    resources = yaml.safe_load(DEFAULT_PROFILE.read_text(encoding="utf-8"))["resources"]
    caps = [r.split("=", 1)[1] for r in resources if r.startswith("api=")]
    assert len(caps) == 1, resources
    return caps[0]


def test_plain_snakemake_loads_the_default_profile_and_its_api_cap(workflow_copy: Path) -> None:
    """A real (tiny) run without --workflow-profile: the profile's api cap is in the log."""
    proc = run_snakemake(workflow_copy, "--cores", "1", "results/bundled/config.yaml")
    log = proc.stdout + proc.stderr
    assert "Using workflow specific profile workflow/profiles/default" in log
    assert f'Provided resources: api=Resource("api", {_api_cap()})' in log
    assert (workflow_copy / "results" / "bundled" / "config.yaml").is_file()


def test_without_the_profile_there_is_no_api_cap(workflow_copy: Path) -> None:
    """The converse, so the test above could fail: `--workflow-profile none` drops the cap."""
    proc = run_snakemake(
        workflow_copy, "--workflow-profile", "none", "--cores", "1", "results/bundled/config.yaml"
    )
    log = proc.stdout + proc.stderr
    assert "Using workflow specific profile" not in log
    assert "Provided resources: api=" not in log


def test_a_record_run_stops_on_an_unset_key_variable() -> None:
    env_has_it = KEY_VARIABLE in os.environ
    assert not env_has_it, f"{KEY_VARIABLE} must be unset for this test"
    proc = run_snakemake(
        REPO_ROOT, "-n", "results/bundled/config.yaml", "--config", RECORD_WITH_KEY, check=False
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "environment variables are requested by the workflow but undefined" in log
    assert KEY_VARIABLE in log


def test_a_record_run_with_the_key_set_and_a_replay_run_declare_no_problem() -> None:
    with_key = dict(os.environ, **{KEY_VARIABLE: "sk-test-not-a-real-key"})
    proc = run_snakemake(
        REPO_ROOT, "-n", "results/bundled/config.yaml", "--config", RECORD_WITH_KEY, env=with_key
    )
    assert "sk-test-not-a-real-key" not in proc.stdout + proc.stderr
    replay = f"overrides=models.smollm2-135m.api_key_env={KEY_VARIABLE}"
    run_snakemake(REPO_ROOT, "-n", "results/bundled/config.yaml", "--config", replay)


def test_a_script_job_gives_torch_the_threads_it_was_given(tmp_path: Path) -> None:
    """Snakemake sets ``OMP_NUM_THREADS`` for ``shell:`` jobs only; a rule script's glue does it
    for scripts, so MiniLM's torch uses the job's threads, not every core of the machine (torch
    takes at most the machine's cores, so a one-thread job is what a multi-core machine tells
    apart)."""
    code = (
        "import sys, types\n"
        "from analysis.workflow_io import rule_logging\n"
        f"job = types.SimpleNamespace(log=[{str(tmp_path / 'job.log')!r}], rule='r', threads=1)\n"
        "with rule_logging(job):\n"
        "    import torch\n"
        "    n = torch.get_num_threads()\n"
        "    sys.exit(0 if n == 1 else f'torch runs {n} threads')\n"
    )
    assert_python_succeeds(
        code, env={k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    )
