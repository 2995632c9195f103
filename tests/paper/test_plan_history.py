"""When each threshold of the analysis plan last changed, read from a real git history."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from analysis import REPO_ROOT
from analysis.paper.claims import render_margins_tex
from analysis.paper.plan_history import (
    COMMITTED,
    NO_HISTORY,
    UNCOMMITTED,
    claim_conditions,
    last_changes,
    plan_revision,
    study_margins,
)

ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="t",
    GIT_AUTHOR_EMAIL="t@example.org",
    GIT_COMMITTER_NAME="t",
    GIT_COMMITTER_EMAIL="t@example.org",
)


def git(repo: Path, *args: str, date: str = "2026-01-01T00:00:00") -> str:
    env = dict(ENV, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def claims(**thresholds: float) -> str:
    entries = [
        {"id": cid, "condition": {"key": f"k.{cid}", "field": "ci_low", "op": ">", "value": v}}
        for cid, v in thresholds.items()
    ]
    return yaml.safe_dump({"claims": entries})


def commit(repo: Path, text: str, date: str) -> str:
    (repo / "claims.yaml").write_text(text, encoding="utf-8")
    git(repo, "add", "claims.yaml")
    git(repo, "commit", "-q", "-m", "c", date=date)
    return git(repo, "rev-parse", "HEAD")[:12]


def test_each_condition_s_last_change_walks_back_through_the_history(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    first = commit(repo, claims(a=0.4, b=1.5), "2026-01-01T00:00:00")
    second = commit(repo, claims(a=0.5, b=1.5), "2026-02-01T00:00:00")
    # reformatting (another key order, flow style) changes no condition
    entries = yaml.safe_load(claims(a=0.5, b=1.5, c=0.0))["claims"]
    third = commit(
        repo, yaml.safe_dump({"claims": entries}, default_flow_style=True), "2026-03-01T00:00:00"
    )
    got = last_changes(repo, "claims.yaml", claim_conditions)
    assert got["a"].status == COMMITTED and (got["a"].commit, got["a"].date) == (
        second,
        "2026-02-01",
    )
    assert (got["b"].commit, got["b"].date) == (first, "2026-01-01")
    assert got["c"].commit == third  # appeared then
    assert got["a"].text() == f"{second} (2026-02-01)"
    rev = plan_revision(repo, ["claims.yaml"])
    assert rev == third
    # an edit not yet committed
    (repo / "claims.yaml").write_text(claims(a=0.5, b=1.2, c=0.0), encoding="utf-8")
    got = last_changes(repo, "claims.yaml", claim_conditions)
    assert got["b"].status == UNCOMMITTED and got["a"].commit == second
    assert plan_revision(repo, ["claims.yaml"]) == f"{third}+uncommitted"


def test_a_copy_without_git_says_so(tmp_path: Path) -> None:
    (tmp_path / "claims.yaml").write_text(claims(a=0.4), encoding="utf-8")
    got = last_changes(tmp_path, "claims.yaml", claim_conditions)
    assert got["a"].status == NO_HISTORY and got["a"].text() == "no git history"
    assert plan_revision(tmp_path, ["claims.yaml"]) == NO_HISTORY


def test_the_margins_table_prints_each_margin_with_its_reason_and_change(tmp_path: Path) -> None:
    study = {
        "name": "t",
        "published": {
            "share": {"margin": 0.05, "margin_reason": "five points", "fmt": ".1%"},
            "count": {"margin": 0, "margin_reason": "exact", "fmt": ",d"},
            "other": {"fmt": ".2f"},
        },
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(study), encoding="utf-8")
    history = last_changes(tmp_path, "s.yaml", study_margins)
    assert set(history) == {"share", "count"}  # an entry without a margin has none
    tex = render_margins_tex(study["published"], history)
    assert r"\emph{Last changed} \emph{no git history}:" in tex
    assert r"$\pm$5.0 points & five points \\" in tex
    assert r"$\pm$0 & exact \\" in tex
    # figures that share a margin, its reason and its change share a row
    study["published"]["count2"] = dict(study["published"]["count"])
    history["count2"] = history["count"]
    tex = render_margins_tex(study["published"], history)
    assert r"\texttt{count}, \texttt{count2} & $\pm$0 & exact" in tex


def test_the_methods_say_the_thresholds_and_margins_are_the_plan() -> None:
    """Not only the appendix: the methods' claim rule says the claims' thresholds and the
    scorecard's margins are the analysis plan, and where their dates are (issue 35)."""
    text = (REPO_ROOT / "paper/sections/methods.tex").read_text(encoding="utf-8")
    rule = text.split(r"\paragraph{The claim rule.}", 1)[1].split(r"\paragraph", 1)[0]
    rule = " ".join(rule.split())
    assert "Its thresholds and the scorecard's margins are the analysis plan" in rule
    assert r"fixed in config and dated in Appendix~\ref{app:claims} from git history" in rule
