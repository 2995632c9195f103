"""One resolver finds the working copy: the nearest folder holding workflow/Snakefile."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis import REPO_ROOT, repo_root


def test_the_package_resolves_to_the_copy_holding_it() -> None:
    assert (REPO_ROOT / "workflow" / "Snakefile").is_file()
    assert (REPO_ROOT / "analysis" / "__init__.py").is_file()
    assert repo_root() == REPO_ROOT


def test_a_rule_script_folder_resolves_to_its_own_copy(tmp_path: Path) -> None:
    """A reviewer's fresh copy resolves to itself, wherever ``analysis`` was imported from."""
    scripts = tmp_path / "copy" / "workflow" / "scripts"
    scripts.mkdir(parents=True)
    (scripts.parent / "Snakefile").write_text("")
    assert repo_root(scripts) == (tmp_path / "copy").resolve()
    assert repo_root(tmp_path / "copy") == (tmp_path / "copy").resolve()


def test_a_folder_outside_any_copy_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no workflow/Snakefile"):
        repo_root(tmp_path)
