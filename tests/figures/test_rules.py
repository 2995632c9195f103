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


def test_the_registry_is_in_paper_order_and_the_paper_shows_each_figure_once() -> None:
    """The figure list comes from the registry; the paper must agree with it."""
    assert _figures_in_paper_order() == list(STUDY_FIGURES)
