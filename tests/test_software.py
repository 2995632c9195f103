"""The software record of a build: complete, byte-stable, and differences are named."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from analysis.software import (
    COMMIT_VARIABLE,
    UNKNOWN_COMMIT,
    commit_label,
    commit_sentence,
    installed_software,
    repository_commit,
    software_differences,
)
from tests.conftest import checkout_commit, run_snakemake


def test_installed_software_names_the_packages_tex_and_os() -> None:
    sw = installed_software()
    for name in ("snakemake", "pandas", "statsmodels", "hydra-core", "torch"):
        assert name in sw["packages"], name
    assert sw["python"].startswith("3.11")
    assert sw["os"]
    assert "torch" in sw["outside_lock"]
    assert len(sw["outside_lock"]["torch"]["record_sha256"]) == 64
    if sw["tex"] is not None:
        assert "TeX" in sw["tex"]


def test_installed_software_is_byte_stable() -> None:
    a = json.dumps(installed_software(), sort_keys=True)
    b = json.dumps(installed_software(), sort_keys=True)
    assert a == b


def test_differences_name_each_changed_package_and_build() -> None:
    built = {
        "python": "3.11.7",
        "packages": {"pandas": "3.1.1", "scipy": "1.16.0"},
        "outside_lock": {"torch": {"version": "2.13.0+cpu", "record_sha256": "a" * 64}},
    }
    now = {
        "python": "3.11.7",
        "packages": {"pandas": "3.1.2", "scipy": "1.16.0", "extra": "1"},
        "outside_lock": {"torch": {"version": "2.13.0+cpu", "record_sha256": "b" * 64}},
    }
    diff = software_differences(built, now)
    assert any("pandas" in d and "3.1.1" in d and "3.1.2" in d for d in diff)
    assert any(d.startswith("package extra") for d in diff)
    assert any("torch" in d and "different build" in d for d in diff)
    assert not any("scipy" in d for d in diff)
    assert software_differences(built, built) == []


def _write_env(root, dataset: str, software: dict) -> None:
    path = root / "results" / dataset / "environment.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(software), encoding="utf-8")


def test_verify_warns_when_the_verifying_software_differs(tmp_path) -> None:
    from analysis.paper.verify import software_warnings

    built = installed_software()
    built["packages"] = {**built["packages"], "pandas": "0.0.1"}
    _write_env(tmp_path, "d", built)
    warnings = software_warnings("d", tmp_path)
    assert len(warnings) == 1 and "pandas" in warnings[0] and "0.0.1" in warnings[0]
    assert "missing" in software_warnings("other", tmp_path)[0]


def test_trace_names_the_software(tmp_path) -> None:
    from analysis.paper.trace import software_summary

    sw = installed_software()
    _write_env(tmp_path, "d", sw)
    summary = software_summary("d", tmp_path)
    assert summary["file"] == "results/d/environment.json"
    assert summary["python"] == sw["python"] and summary["n_packages"] == len(sw["packages"])
    assert "torch" in summary["outside_lock"]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_the_commit_is_read_from_git_with_the_trees_state(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(COMMIT_VARIABLE, raising=False)
    assert repository_commit(tmp_path) == {
        "commit": UNKNOWN_COMMIT,
        "uncommitted_changes": None,
        "source": "no git checkout",
    }
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    clean = repository_commit(tmp_path)
    assert len(clean["commit"]) == 40 and clean["uncommitted_changes"] is False
    assert commit_label(clean) == clean["commit"]
    (tmp_path / "b.py").write_text("y = 2\n")  # a new module is a change too
    dirty = repository_commit(tmp_path)
    assert dirty["commit"] == clean["commit"] and dirty["uncommitted_changes"] is True
    assert commit_label(dirty) == f"{clean['commit']}-dirty"
    assert commit_sentence(dirty) == f"commit {clean['commit'][:12]} (with uncommitted changes)"
    # a copy's copier says which commit it copied, and that wins over any git around it
    monkeypatch.setenv(COMMIT_VARIABLE, "abc123-dirty")
    assert repository_commit(tmp_path) == {
        "commit": "abc123",
        "uncommitted_changes": True,
        "source": COMMIT_VARIABLE,
    }
    assert "unknown commit" in commit_sentence({"commit": UNKNOWN_COMMIT})


def test_the_build_records_its_commit_and_a_new_commit_reruns_nothing(
    bundled_build: Path,
) -> None:
    """environment.json, the PDF's title page and `recenter trace` name the commit; a build
    told another commit (as after `git commit`) has nothing to do."""
    from analysis.paper.trace import software_summary

    expected = checkout_commit()
    sw = json.loads((bundled_build / "results" / "bundled" / "environment.json").read_text())
    assert commit_label(sw["repository"]) == expected
    assert sw["repository"]["source"] == COMMIT_VARIABLE
    summary = software_summary("bundled", bundled_build)
    assert summary["commit"] == expected.removesuffix("-dirty")
    page = subprocess.run(
        ["pdftotext", "-l", "1", str(bundled_build / "paper/build/bundled/paper.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"from {commit_sentence(sw['repository'])}" in " ".join(page.split())
    dry = run_snakemake(bundled_build, "-n", env={**os.environ, COMMIT_VARIABLE: "0" * 40}).stdout
    assert "Nothing to be done" in dry, dry[-2000:]
