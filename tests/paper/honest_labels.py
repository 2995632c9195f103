"""What a simulated build may not say: simulated users called "real", a figure or table
without "simulated" (issue 14, "Honest labels in a simulated build")."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

#: "real" that does not describe simulated users: real people / models / data (what the build
#: is not), the study's own data, and the project's real exercise model
ALLOWED_REAL = re.compile(
    r"real(?:\\_|-like|-data| people| person| model| data| exports| annotation| but"
    r"| chat histories from| users come from WildChat| \(chat-history users)",
    re.I,
)
REAL = re.compile(r"\breal\b", re.I)
#: record keys and link targets in generated LaTeX (``\rc{data.n_users.real}``): names, not prose
KEY_ARGS = re.compile(
    r"\\(?:rc\w*|hyperlink|hypertarget|texttt|code)\{[^}]*\}|\bclaim:\w+|\brec:[\w.:+-]+"
)


def real_labels(text: str) -> list[str]:
    """Each use of "real" in ``text`` that is not an allowed phrase, with its context."""
    text = KEY_ARGS.sub(" ", text)
    hits = []
    for m in REAL.finditer(text):
        if not ALLOWED_REAL.match(text, m.start()):
            hits.append(text[max(0, m.start() - 40) : m.end() + 40].replace("\n", " "))
    return hits


#: a dotted record key inside prose (``stage1.acceptance_rate.real``): a name, not a label
DOTTED_KEY = re.compile(r"\b[\w-]+(?:\.[\w-]+)+")


def method_problems(numbers: dict[str, dict]) -> list[str]:
    """Method texts of a simulated build's records (the provenance appendix prints them)."""
    return [
        f"{key}: {hit}"
        for key, rec in sorted(numbers.items())
        for hit in real_labels(DOTTED_KEY.sub(" ", str(rec.get("method") or "")))
    ]


def table_problems(generated: Path) -> list[str]:
    """Tables of a simulated build: each carries "simulated" and names no user "real"."""
    problems = []
    for tex in sorted((generated / "tables").glob("*.tex")):
        # which tables have rows, what the release supports: definitions, not tables
        if tex.name in ("present.tex", "release_support.tex"):
            continue
        text = tex.read_text(encoding="utf-8")
        if "simulated" not in text.lower():
            problems.append(f"{tex.name}: no 'simulated' note")
        problems += [f"{tex.name}: {hit}" for hit in real_labels(text)]
    claims = generated / "claims.tex"
    if claims.is_file():
        problems += [f"claims.tex: {hit}" for hit in real_labels(claims.read_text("utf-8"))]
    return problems


def pdf_caption_problems(pdf: Path) -> list[str]:
    """Every figure caption of the PDF says "simulated" and calls nobody real."""
    if shutil.which("pdftotext") is None:
        return []
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    problems = []
    # table notes are checked in the generated sources (table_problems); here the figures
    for m in re.finditer(r"^(Figure) \d+: (.*?)(?:\n\s*\n|\f)", text, re.M | re.S):
        caption = " ".join(m.group(2).split())
        if "simulated" not in caption.lower():
            problems.append(f"caption without 'simulated': {m.group(1)} {caption[:80]}")
        problems += [f"caption: {hit}" for hit in real_labels(caption)]
    if not problems and "Figure 1:" not in text:
        problems.append("no figure caption found in the PDF text")
    return problems
