"""Every registered figure has its module, generated rule, report caption and paper entry."""

from __future__ import annotations

import importlib
import re

import pytest

from analysis import REPO_ROOT
from analysis.figures.registry import STUDY_FIGURES

RULES = (REPO_ROOT / "workflow" / "rules" / "figures.smk").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(STUDY_FIGURES))
def test_figure_is_wired_end_to_end(name: str) -> None:
    figure = STUDY_FIGURES[name]
    module = importlib.import_module(f"analysis.figures.{name}")
    assert figure.draw is getattr(module, f"{name}_figure") and module.NAME == name
    assert figure.records and figure.doc
    assert (REPO_ROOT / "workflow" / "report" / f"figure_{name}.rst").is_file()


def test_figure_rules_are_generated_from_the_registry() -> None:
    """One loop over the registry writes every figure rule; no hand-written figure rule."""
    assert not re.findall(r"^rule \w+:", RULES, re.M)
    assert "for _figure_name, _figure in STUDY_FIGURES.items():" in RULES
    for part in (
        'f"{FIGURES}/{name}.{suffix}"',
        'caption=f"../report/figure_{name}.rst"',
        'sidecar=f"{FIGURES}/{_figure_name}.json"',
        "code=FIGURE_CODE",
        'f"{LOGS}/{_figure_name}_figure.log"',
        '"../scripts/figure.py"',
        'FIGURE_FILES.append(f"{FIGURES}/{_figure_name}.pdf")',
    ):
        assert part in RULES, f"figures.smk lacks {part!r}"


def _figures_in_paper_order() -> list[str]:
    """The figures the paper shows (``\\StudyFigure{name}``), in the order main.tex reads its
    sections."""
    paper = REPO_ROOT / "paper"
    main = (paper / "main.tex").read_text(encoding="utf-8")
    sections = re.findall(r"^\\input\{(sections/[\w-]+)\}", main, re.M)
    text = "".join((paper / f"{s}.tex").read_text(encoding="utf-8") for s in sections)
    return re.findall(r"\\StudyFigure(?:\[[^\]]*\])?\{(\w+)\}", text)


def _alternatives_of_one_switch(text: str, name: str) -> bool:
    """Whether every repeat of ``\\StudyFigure{name}`` is the other branch of the switch
    (``\\IfRecordTF`` / ``\\IfTableTF``) the previous one sits in: the PDF prints one of them."""
    starts = [m.start() for m in re.finditer(rf"\\StudyFigure(?:\[[^\]]*\])?\{{{name}\}}", text)]
    return all(
        "}{%" in between and "\\StudyFigure" not in between
        for between in (text[a + 1 : b] for a, b in zip(starts, starts[1:], strict=False))
    )


def test_the_registry_is_in_paper_order_and_the_paper_shows_each_figure_once() -> None:
    """The figure list comes from the registry; the paper must agree with it."""
    shown = _figures_in_paper_order()
    assert list(dict.fromkeys(shown)) == list(STUDY_FIGURES)
    paper = REPO_ROOT / "paper/sections"
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(paper.glob("*.tex")))
    twice = sorted({n for n in shown if shown.count(n) > 1})
    assert [n for n in twice if not _alternatives_of_one_switch(text, n)] == []


def test_a_figure_repeated_outside_a_switch_is_caught() -> None:
    alternatives = "\\IfRecordTF{k}{%\n\\StudyFigure{a}{one}}{%\n\\StudyFigure{a}{two}}"
    assert _alternatives_of_one_switch(alternatives, "a")
    assert not _alternatives_of_one_switch("\\StudyFigure{a}{x} text \\StudyFigure{a}{y}", "a")
    between = "\\StudyFigure{a}{x}}{%\\StudyFigure{b}{y}\\StudyFigure{a}{z}"
    assert not _alternatives_of_one_switch(between, "a")
