"""The study's published figures have one home: ``config/study/published.yaml``.

The scorecard compares against that file and the simulator calibrates to it; a second typed
copy (a constant in code, a sentence in the docs, a literal in the paper) would drift from it
unseen. Only figures distinctive enough to search for are checked: counts of four or more
digits and values with three or more decimals (0.30 or 2-3 could be anything).
"""

from __future__ import annotations

import re
from pathlib import Path

from analysis import REPO_ROOT
from analysis.settings import load_study

STUDY_FILE = REPO_ROOT / "config" / "study" / "published.yaml"
#: where a second copy would be typed by hand (generated outputs are not searched)
SEARCHED = (
    "analysis/**/*.py",
    "workflow/**/*.py",
    "workflow/**/*.smk",
    "workflow/Snakefile",
    "paper/*.tex",
    "docs/**/*.md",
    "README.md",
    "config/**/*.yaml",
)


def distinctive_spellings() -> dict[str, str]:
    """Spelling -> the study-file entry it copies, for every searchable published figure."""
    out: dict[str, str] = {}
    for name, entry in load_study(STUDY_FILE).published.items():
        if entry.value is None:
            continue
        value = entry.value
        if float(value).is_integer() and abs(value) >= 1000:
            out[f"{int(value)}"] = name
            out[f"{int(value):,}"] = name
        elif not float(value).is_integer():
            text = repr(float(value))
            if len(text.split(".")[1]) >= 3:
                out[text] = name
                out[f"{float(value) * 100:.1f}%"] = name
    return out


def searched_files() -> list[Path]:
    files = {p for pattern in SEARCHED for p in REPO_ROOT.glob(pattern) if p.is_file()}
    return sorted(files - {STUDY_FILE})


def test_the_search_covers_the_study_figures() -> None:
    spellings = distinctive_spellings()
    assert {"0.243", "5,949", "18969"} <= set(spellings)
    assert len(searched_files()) > 50


def test_no_published_figure_is_typed_outside_the_study_file() -> None:
    spellings = distinctive_spellings()
    pattern = re.compile(
        r"(?<![\d.,])(" + "|".join(re.escape(s) for s in spellings) + r")(?![\d]|,\d|\.\d)"
    )
    copies = [
        f"{path.relative_to(REPO_ROOT)}:{n}: {m.group(1)} (entry {spellings[m.group(1)]})"
        for path in searched_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for m in pattern.finditer(line)
    ]
    assert not copies, "published figures typed outside config/study/published.yaml:\n" + "\n".join(
        copies
    )
