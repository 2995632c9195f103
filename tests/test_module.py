"""The workflow as a Snakemake module of another workflow, and with ``--directory``: repository
files are found from the Snakefile's folder, outputs go relative to the working directory, rule
names come from the host's ``use rule ... as``, the host hands its overrides over in the
module's ``config`` (docs/cluster.md "Using recenter as a module")."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, make_workflow_copy, run_snakemake

HOST = """
module recenter:
    snakefile: "{snakefile}"
    config: {{"overrides": ["stats.n_boot=50"]}}


use rule * from recenter as recenter_*


rule all:
    default_target: True
    input:
        rules.recenter_all.input,
"""
VARIANT = "stats.n_boot-50"


def _host(tmp_path: Path) -> Path:
    host = tmp_path / "host"
    host.mkdir()
    snakefile = REPO_ROOT / "workflow" / "Snakefile"
    (host / "Snakefile").write_text(HOST.format(snakefile=snakefile), encoding="utf-8")
    return host


def test_a_host_workflow_imports_it_by_path_renames_its_rules_and_runs_a_target(
    tmp_path: Path,
) -> None:
    host = _host(tmp_path)
    proc = run_snakemake(host, "-n", timeout=300)
    jobs = set(re.findall(r"^(?:local)?rule (\w+):", proc.stdout, re.M))
    assert {"recenter_paper_pdf", "recenter_canonical_tables", "recenter_stage2_statistics"} <= jobs
    assert all(job.startswith("recenter_") or job == "all" for job in jobs), jobs
    outputs = [
        o for line in re.findall(r"^\s+output: (.*)$", proc.stdout, re.M) for o in line.split(", ")
    ]
    assert f"paper/build/bundled/variants/{VARIANT}/paper.pdf" in outputs
    inputs = [
        i for line in re.findall(r"^\s+input: (.*)$", proc.stdout, re.M) for i in line.split(", ")
    ]
    # the repository's files are read where they are (relative to the host), outputs are the host's
    (items,) = {i for i in inputs if i.endswith("data/raw/bundled/extracted/task4_items.jsonl")}
    assert (host / items).resolve() == REPO_ROOT / "data/raw/bundled/extracted/task4_items.jsonl"
    assert all(not o.startswith(("/", "..")) for o in outputs)

    config = f"results/bundled/variants/{VARIANT}/config.yaml"
    run_snakemake(host, "--cores", "1", config, timeout=600)
    assert "n_boot: 50" in (host / config).read_text()
    assert not (REPO_ROOT / config).exists()


def test_it_runs_from_another_working_directory_with_directory(tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    snakefile = str(REPO_ROOT / "workflow" / "Snakefile")
    run_snakemake(
        tmp_path,
        "-s",
        snakefile,
        "--directory",
        str(work),
        "--cores",
        "1",
        "results/bundled/config.yaml",
        timeout=600,
    )
    assert (work / "results/bundled/config.yaml").is_file()
    assert (work / "results/bundled/variant.yaml").is_file()
    assert not (tmp_path / "results").exists()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.slow
def test_a_module_from_a_repository_at_a_ref_runs_from_its_tree(tmp_path: Path) -> None:
    """``git+file:`` is the offline stand-in for ``github(...)``: the module's files come from a
    repository at a commit, not from a folder, and the workflow writes that commit's tree under
    the host's .snakemake/ and runs from it. (``--rerun-triggers input params``: Snakemake 9.27
    fails on the mtime of a ``git+file:`` rule script, docs/cluster.md.)"""
    repo = make_workflow_copy(tmp_path / "repo")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-qm", "x")
    commit = _git(repo, "rev-parse", "HEAD")
    host = tmp_path / "host"
    host.mkdir()
    source = f"git+file://{repo}/workflow/Snakefile@{commit}"
    (host / "Snakefile").write_text(HOST.format(snakefile=source), encoding="utf-8")
    config = f"results/bundled/variants/{VARIANT}/config.yaml"
    run_snakemake(host, config, "--cores", "1", "--rerun-triggers", "input", "params", timeout=600)
    assert "n_boot: 50" in (host / config).read_text()
    (tree,) = (host / ".snakemake" / "recenter-source").iterdir()
    assert (tree / "analysis" / "variants.py").is_file() and not (tree / ".git").exists()
