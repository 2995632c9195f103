"""The paper's .tex sources: no number typed by hand, no macro or key that numbers.json lacks."""

from __future__ import annotations

import subprocess

import pytest

from analysis import REPO_ROOT
from analysis.paper import claims as C
from analysis.paper.source_check import (
    keys_guarded,
    keys_used,
)
from analysis.provenance import attach_provenance
from tests.paper.fake_records import records_by_rule
from tests.paper.source_lint import check_sources, hand_typed_numbers, table_keys


def tracked_tex() -> dict[str, str]:
    """Every hand-written .tex under paper/ (tracked or new, not ignored; never generated/)."""
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "paper"],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    files = [f for f in out if f.endswith(".tex") and not f.startswith("paper/generated/")]
    return {f: (REPO_ROOT / f).read_text(encoding="utf-8") for f in sorted(files)}


def full_fixture_keys() -> set[str]:
    keys: set[str] = set()
    for rule, recs in records_by_rule("full").items():
        keys |= set(attach_provenance(recs, rule=rule, inputs=[]))
    return keys


def test_the_paper_sources_exist() -> None:
    sources = tracked_tex()
    assert "paper/main.tex" in sources
    assert sum(f.startswith("paper/sections/") for f in sources) >= 8


def test_no_number_typed_by_hand_and_no_undefined_key_or_macro() -> None:
    sources = tracked_tex()
    claim_ids = [c.id for c in C.load_claims(REPO_ROOT / "paper" / "claims.yaml")]
    problems = check_sources(sources, full_fixture_keys(), claim_ids)
    assert not problems, "\n".join(map(str, problems))


def test_the_text_prints_numbers_through_records() -> None:
    text = "".join(tracked_tex().values())
    used = keys_used(text)
    assert {"stage2.final.kappa.human_human", "stage3.no_better_share", "data.n_users"} <= used
    # every printed key of the text is also guarded, so a dataset without it still builds
    assert used <= keys_guarded(text), used - keys_guarded(text)


@pytest.mark.parametrize(
    "line",
    [
        r"Humans agree at 0.43 on relevance.",
        r"About 58\% of attributes are accepted.",
        r"\caption{Kappa of 0.30 between people and models.}",
        r"We ran 2,000 bootstrap resamples.",
        r"\model{0.5}",
        r"In 2024 the data were collected.",
    ],
)
def test_a_number_typed_by_hand_is_found(line: str) -> None:
    findings = hand_typed_numbers("Intro.\n" + line + "\n", "paper/sections/x.tex")
    assert findings, line
    assert findings[0].path == "paper/sections/x.tex" and findings[0].line == 2


@pytest.mark.parametrize(
    "line",
    [
        r"\section{Stage 2: relevance}\label{sec:stage2}",
        r"In stage~2 and stages 1--3, stages~1 and~3 (Section~\ref{sec:s3}, Figure~\ref{fig:k1}).",
        r"As \citet{zhao2024wildchat} and \citep[p.~12]{cohen1960coefficient} show.",
        r"\includegraphics[width=0.5\textwidth]{figures/fig3.pdf}\\[2pt]",
        r"\documentclass[11pt]{article}\usepackage[margin=1in]{geometry}",
        r"\newcommand\model[1]{\textsf{#1}} \vspace{-3pt} \setlength{\tabcolsep}{4pt}",
        r"\model{SmolLM2-135M} with F1 and BM25 and sha256; \code{stage2.final}",
        r"\rc{stage2.final.kappa.human_human} and \rcci{stage1.kappa.human_human}",
        r"\begin{equation}\label{eq:1} x \tag{2} \end{equation}",
        r"% a comment with 0.43 in it",
        r"\StudyFigure[0.8\linewidth]{stage1_quality}{Caption.}",
        r"\ifdefined\pdfsuppressptexinfo\pdfsuppressptexinfo=-1\fi",
    ],
)
def test_allowed_digits_are_not_flagged(line: str) -> None:
    assert hand_typed_numbers(line) == [], line


def test_a_key_or_alias_the_records_lack_is_found() -> None:
    keys = {"stage2.final.kappa.human_human"}
    text = (
        "A \\rc{stage2.final.kappa.human_human} and \\rc{stage2.final.kappa.human_humna}.\n"
        "\\IfRecordTF{stage9.nothing}{x}{y} \\StageTwoFinalKappaHumanHuman "
        "\\StageTwoFinalKappaModelModel \\Claim{nope}{z}\n"
    )
    problems = [str(p) for p in check_sources({"x.tex": text}, keys, ["real_claim"])]
    assert any("stage2.final.kappa.human_humna" in p and "x.tex:1" in p for p in problems)
    assert any("stage9.nothing" in p for p in problems)
    assert any("StageTwoFinalKappaModelModel" in p for p in problems)
    assert not any("StageTwoFinalKappaHumanHuman" in p for p in problems)
    assert any("claim 'nope'" in p for p in problems)


def test_generated_tables_use_only_keys_of_the_records() -> None:
    numbers: dict = {}
    for rule, recs in records_by_rule("full").items():
        numbers |= attach_provenance(recs, rule=rule, inputs=[])
    keys = table_keys(numbers)
    assert keys and set(keys) <= set(numbers)
    assert "stage2.final.f1_vs_majority.bm25" in keys
