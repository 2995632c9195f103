"""Every finding stated in the framing sections is a declared, checked claim (issue 15).

The Abstract, Introduction, Discussion and Limitations are where a paper states findings in
passing, unchecked. A comparative word (more, less, higher, lower, better, worse, exceeds,
than) marks such a sentence: outside ``\\Claim{id}{...}`` none may appear there, so a finding
is either checked on an interval at build time or not stated.
"""

from __future__ import annotations

import re

import pytest

from analysis import REPO_ROOT
from tests.paper.source_lint import matching_brace

SECTIONS = ("abstract", "introduction", "discussion", "limitations")
COMPARATIVE = re.compile(r"\b(?:more|less|higher|lower|better|worse|exceeds?|than)\b", re.I)


def _closing_brace(text: str, start: int) -> int:
    """Index of the ``}`` that closes the ``{`` at ``start``; unbalanced is an error here."""
    end = matching_brace(text, start)
    if end == len(text):
        raise ValueError(f"unbalanced braces after offset {start}")
    return end


def outside_claims(tex: str) -> str:
    """``tex`` without comments and without the arguments of every ``\\Claim{id}{...}``."""
    tex = re.sub(r"(?<!\\)%.*", "", tex)
    out, pos = [], 0
    for m in re.finditer(r"\\Claim\s*\{", tex):
        if m.start() < pos:
            continue  # a claim nested inside one already removed
        out.append(tex[pos : m.start()])
        first = _closing_brace(tex, m.end() - 1)
        second = tex.index("{", first + 1)
        pos = _closing_brace(tex, second) + 1
        out.append(" [claim] ")
    out.append(tex[pos:])
    return "".join(out)


def sentences(text: str) -> list[str]:
    flat = " ".join(text.split())
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", flat) if s.strip()]


def comparatives_outside_claims(tex: str) -> list[str]:
    return [s for s in sentences(outside_claims(tex)) if COMPARATIVE.search(s)]


@pytest.mark.parametrize("section", SECTIONS)
def test_no_comparative_sentence_outside_a_claim(section: str) -> None:
    tex = (REPO_ROOT / "paper" / "sections" / f"{section}.tex").read_text(encoding="utf-8")
    offending = comparatives_outside_claims(tex)
    assert not offending, (
        f"paper/sections/{section}.tex states a comparison outside \\Claim{{}}: declare it in "
        "paper/claims.yaml (checked on an interval) or remove it:\n  " + "\n  ".join(offending)
    )


def test_the_scan_sees_comparatives_and_skips_claims_and_comments() -> None:
    tex = (
        "Models agree \\Claim{a}{more than people do, {nested} and \\rc{k}.} with it. "
        "% a comment says more than this\n"
        "People are better at it. This sentence exceeds nothing? It is lower."
    )
    assert comparatives_outside_claims(tex) == [
        "People are better at it.",
        "This sentence exceeds nothing?",
        "It is lower.",
    ]
    assert comparatives_outside_claims("Furthermore, nothing; unless smaller.") == []
