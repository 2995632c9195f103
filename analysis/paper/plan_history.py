"""When did each threshold of the analysis plan last change? Read from git at build time.

The claims (``paper/claims.yaml``: each claim's condition) and the scorecard's equivalence
margins (``config/study/<name>.yaml``) are the analysis plan. A reader must be able to tell
whether a threshold moved after the real or pilot data were seen, so the claims appendix
prints, for each claim and each margin, the commit and date at which its value last changed:
walking the file's history along the main line (first parents: a merge counts as the commit
that brought a change in) back from the newest commit that touched it, the oldest commit of
the unbroken run of versions that hold today's value. A value that differs from the newest
commit's is *uncommitted*; a copy without git history (a test's copy of the repository, a
``recenter verify`` rebuild) says so instead of guessing.

Only the rule ``claims`` reads this (its param :func:`plan_revision` changes when the files'
history does), so a commit reruns that rule and the PDF, never a statistics rule.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

COMMITTED = "committed"
UNCOMMITTED = "uncommitted"
NO_HISTORY = "no git history"
#: digits of a commit id as printed
SHORT = 12

Extract = Callable[[Any], Mapping[str, Any]]


@dataclass(frozen=True)
class Change:
    """Where one value of the plan last changed: a commit and its date, or why there is none."""

    status: str
    commit: str = ""
    date: str = ""

    def text(self) -> str:
        """``abc123def456 (2026-11-27)``, ``uncommitted`` or ``no git history``."""
        if self.status == COMMITTED:
            return f"{self.commit} ({self.date})"
        return self.status

    def as_dict(self) -> dict[str, str]:
        return {"status": self.status, "commit": self.commit, "date": self.date}


def _git(repo: Path, *args: str) -> str | None:
    """A git command's output in ``repo``, or None when git or the repository is absent."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def _has_history(repo: Path) -> bool:
    top = _git(repo, "rev-parse", "--show-toplevel")
    return top is not None and Path(top.strip()).resolve() == repo.resolve()


def plan_revision(repo: Path, paths: Sequence[str]) -> str:
    """A short fingerprint of the plan files' history: the newest commit that touched them and
    whether the working tree differs. A rule param, so committing reruns rule ``claims``."""
    if not _has_history(repo):
        return NO_HISTORY
    newest = (_git(repo, "log", "-1", "--first-parent", "--format=%H", "--", *paths) or "").strip()
    dirty = (_git(repo, "status", "--porcelain", "--", *paths) or "").strip()
    return f"{newest[:SHORT] or 'none'}{'+' + UNCOMMITTED if dirty else ''}"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def last_changes(repo: Path, path: str, extract: Extract) -> dict[str, Change]:
    """``name -> Change`` for every value ``extract`` finds in the working tree's ``path``.

    ``extract`` maps the parsed YAML file to ``{name: value}`` (a claim's condition, an
    entry's margin); values are compared as canonical JSON, so a reformatted file changes
    nothing.
    """
    current = {
        k: _canonical(v)
        for k, v in extract(yaml.safe_load((repo / path).read_text(encoding="utf-8"))).items()
    }
    if not _has_history(repo):
        return {k: Change(NO_HISTORY) for k in current}
    # the main line only: a side branch's commits interleave by date with main's, and what a
    # reader needs is when a value landed on the branch the build came from
    log = (_git(repo, "log", "--first-parent", "--format=%H %cs", "--", path) or "").split("\n")
    commits = [line.split(" ") for line in log if line.strip()]
    versions: dict[str, dict[str, str]] = {}

    def version(commit: str) -> dict[str, str]:
        if commit not in versions:
            text = _git(repo, "show", f"{commit}:{path}")
            try:
                data = yaml.safe_load(text) if text is not None else None
                found = extract(data) if data is not None else {}
            except (yaml.YAMLError, AttributeError, KeyError, TypeError):
                found = {}  # an old version the extractor cannot read holds no current value
            versions[commit] = {k: _canonical(v) for k, v in found.items()}
        return versions[commit]

    out: dict[str, Change] = {}
    for name, value in current.items():
        if not commits or version(commits[0][0]).get(name) != value:
            out[name] = Change(UNCOMMITTED)
            continue
        i = 0
        while i + 1 < len(commits) and version(commits[i + 1][0]).get(name) == value:
            i += 1
        out[name] = Change(COMMITTED, commits[i][0][:SHORT], commits[i][1])
    return out


def claim_conditions(data: Any) -> dict[str, Any]:
    """``claims.yaml`` -> ``{claim id: condition}``."""
    return {str(c["id"]): c.get("condition") for c in data.get("claims", []) if "id" in c}


def study_margins(data: Any) -> dict[str, Any]:
    """A study file -> ``{entry: margin}`` for the entries that have one."""
    published = data.get("published", {}) or {}
    return {str(k): v["margin"] for k, v in published.items() if v.get("margin") is not None}


def study_file(repo: Path, study_name: str) -> str:
    """The study file (``config/study/*.yaml``, repository-relative) whose ``name`` is
    ``study_name``: the Hydra choice is not kept in the composed config, the name is."""
    for path in sorted((repo / "config" / "study").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if data.get("name") == study_name:
            return str(path.relative_to(repo))
    raise FileNotFoundError(f"no config/study/*.yaml has name: {study_name!r}")
