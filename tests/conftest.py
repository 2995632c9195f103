"""Shared fixtures: the repository root, the real annotation-tool data, workflow copies."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from analysis import REPO_ROOT

REAL_DATA = (REPO_ROOT.parent / "shared" / "data" / "annotation-tool").resolve()
#: outputs of a run; never copied into a fresh workflow copy
GENERATED = ("results", "logs", ".snakemake", "paper/build", "paper/generated")


@pytest.fixture(scope="session")
def real_data_root() -> Path:
    """The authors' real exports; tests that need them skip (with this reason) where absent."""
    if not (REAL_DATA / "extracted" / "task5_items.jsonl").is_file():
        pytest.skip(f"real annotation-tool data not found at {REAL_DATA} (CI always has it)")
    return REAL_DATA


def source_files(root: Path = REPO_ROOT) -> list[str]:
    """Files a fresh clone would have: tracked plus untracked-but-not-ignored ones."""
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    return sorted(f for f in out if (root / f).is_file() and not f.startswith(GENERATED))


def make_workflow_copy(dest: Path) -> Path:
    """Copy the repository's source files to ``dest`` (a fresh clone, without any outputs)."""
    for rel in source_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / rel, target)
    # ../shared beside the copy, as in a CI checkout, so data.root=../shared/... resolves
    shared = REPO_ROOT.parent / "shared"
    if shared.is_dir() and not (dest.parent / "shared").exists():
        (dest.parent / "shared").symlink_to(shared)
    return dest


@pytest.fixture
def workflow_copy(tmp_path: Path) -> Path:
    return make_workflow_copy(tmp_path / "repo")


def run_snakemake(
    workdir: Path,
    *args: str,
    timeout: int = 1500,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the real snakemake CLI in ``workdir`` (environment ``env``, default this process's)."""
    # The copy's own package is imported, so a code edit in the copy is what the workflow sees.
    env = dict(
        os.environ if env is None else env,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=str(workdir),
    )
    proc = subprocess.run(
        ["snakemake", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({proc.returncode}):\n"
            f"{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


def fake_models_group(work: Path, name: str, base_url: str) -> str:
    """Add a models group to a workflow copy: one model served by the fake OpenAI-compatible
    server at ``base_url`` (analysis/llm/fake_server.py); returns the override selecting it."""
    spec = {
        name: {
            "description": "the fake OpenAI-compatible test server (echoes; not a model)",
            "base_url": base_url,
            "api_key_env": None,
            "params": {"temperature": 0.0, "max_tokens": 16},
            "price_input_per_mtok": 1.0,
            "price_output_per_mtok": 2.0,
            "max_concurrency": 2,
        }
    }
    (work / "config" / "models" / "fakeserver.yaml").write_text(yaml.safe_dump(spec))
    return "models=fakeserver"
