"""The PDF as a reader meets it (issue 36): a short paper, every glyph readable when printed,
nothing wider than the text. Measured in the PDF itself (tests/paper/pdf_layout.py).

The bundled build's checks read the session's shared build (``bundled_build``); the same
checks run on the real exports' build in tests/test_workflow_realdata.py. The helpers are
tested on small documents compiled here, each with the defect it must find.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.paper.pdf_layout import (
    main_text_pages,
    outside_text_block,
    page_fill,
    pages,
    references_page,
    small_text,
    text_block,
)

#: the main text through the limitations, and the whole PDF (pages)
MAX_MAIN_PAGES = 12
MAX_PAGES = 30
#: the smallest text a printed page can be read at (points)
MIN_TEXT_PT = 7.0
#: the least share of the text block's height a page of the main text fills (its last page
#: excepted): below it, a float that did not fit has left the page half empty
MIN_FILL = 0.8


def latex_log(pdf: Path) -> str:
    """The LaTeX log of a workflow build (``analysis.paper.compile`` keeps it in ``latex/``)."""
    return (pdf.parent / "latex" / f"{pdf.stem}.log").read_text(encoding="utf-8", errors="replace")


def layout_problems(pdf: Path) -> list[str]:
    """Everything a reader would trip over in ``pdf`` (also used on the real exports' build)."""
    problems = []
    main = main_text_pages(pdf)
    if main > MAX_MAIN_PAGES:
        problems.append(f"main text is {main} pages (at most {MAX_MAIN_PAGES})")
    total = len(pages(pdf))
    if total > MAX_PAGES:
        problems.append(f"the PDF has {total} pages (at most {MAX_PAGES})")
    small = small_text(pdf, MIN_TEXT_PT)
    by_page: dict[tuple[int, bool], list[str]] = {}
    for g in small:
        by_page.setdefault((g.page, g.in_figure), []).append(f"{g.text}@{g.size:.1f}pt")
    for (page, in_figure), glyphs in sorted(by_page.items()):
        where = "in a figure" if in_figure else "in the text or a table"
        problems.append(
            f"page {page}, {where}: {len(glyphs)} glyphs below {MIN_TEXT_PT} pt, "
            f"e.g. {' '.join(glyphs[:8])}"
        )
    block = text_block(latex_log(pdf))
    for over in outside_text_block(pdf, block):
        problems.append(f"page {over.page}: a {over.what} reaches {over.points} pt into the margin")
    for page, fill in enumerate(page_fill(pdf, block)[: main - 1], 1):
        if fill < MIN_FILL:
            problems.append(f"page {page} of the main text is {fill:.0%} full")
    return problems


@pytest.mark.slow
def test_the_bundled_paper_is_short_readable_and_within_the_text_block(
    bundled_build: Path,
) -> None:
    pdf = bundled_build / "paper" / "build" / "bundled" / "paper.pdf"
    assert layout_problems(pdf) == []


# ---------------------------------------------------------------------------------------------
# the measuring tools on documents with known defects

needs_latex = pytest.mark.skipif(
    shutil.which("pdflatex") is None, reason="pdflatex is not installed (make install-tex)"
)

DOCUMENT = r"""\documentclass[11pt]{article}
\usepackage[margin=1in,verbose]{geometry}
\usepackage{graphicx}
\begin{document}
\section{Results}
Body text at eleven points. {\tiny tiny words} and \resizebox{!}{3pt}{a shrunk box}.

\noindent\rotatebox{90}{\small turned words}
\clearpage
Second page of the main text.
\begin{figure}[h]\noindent\includegraphics{wide.pdf}\end{figure}
\section*{References}
A reference.
\clearpage
\noindent\rule{\linewidth}{0.5pt}\vfill\noindent A page filled from top to bottom.
\end{document}
"""


def wide_figure(path: Path) -> None:
    """A figure seven inches wide (the text is six and a half) with a label at 5 pt."""
    from matplotlib.backends.backend_pdf import FigureCanvasPdf
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 1.0))
    fig.text(0.1, 0.6, "readable label", fontsize=8)
    fig.text(0.1, 0.2, "small label", fontsize=5)
    FigureCanvasPdf(fig).print_pdf(str(path))


@pytest.fixture(scope="module")
def sample_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("layout")
    (folder / "doc.tex").write_text(DOCUMENT, encoding="utf-8")
    wide_figure(folder / "wide.pdf")
    for _ in range(2):
        subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
            cwd=folder,
            check=True,
            capture_output=True,
        )
    return folder / "doc.pdf"


@needs_latex
def test_the_references_heading_gives_the_pages_of_the_main_text(sample_pdf: Path) -> None:
    assert references_page(sample_pdf) == (2, False)
    assert main_text_pages(sample_pdf) == 2
    with pytest.raises(LookupError, match="no line 'Bibliography'"):
        references_page(sample_pdf, heading="Bibliography")


@needs_latex
def test_small_text_is_found_at_its_rendered_size_and_turned_text_is_measured(
    sample_pdf: Path,
) -> None:
    found = small_text(sample_pdf, MIN_TEXT_PT)
    small = "".join(g.text for g in found)
    assert "tinywords" in small  # \tiny: 6 pt in an 11-pt document
    assert "ashrunkbox" in small  # scaled down after typesetting
    assert "Body" not in small
    # inside an included figure, at the size the figure is printed
    assert "smalllabel" in "".join(g.text for g in found if g.in_figure)
    assert "readable" not in small
    # \small text turned by 90 degrees is 10 pt, not its advance width
    assert "turned" not in small


@needs_latex
def test_a_float_wider_than_the_text_is_found_with_the_block_from_the_log(
    sample_pdf: Path,
) -> None:
    block = text_block(sample_pdf.with_suffix(".log").read_text(encoding="utf-8"))
    assert block.left == pytest.approx(72.0, abs=0.5)
    assert block.right - block.left == pytest.approx(6.5 * 72, abs=0.5)
    (over,) = outside_text_block(sample_pdf, block)
    assert (over.page, over.what) == (2, "figure")
    assert over.points == pytest.approx(0.5 * 72, abs=1.0)  # half an inch into the margin
    with pytest.raises(LookupError, match="geometry"):
        text_block("no geometry here")


@needs_latex
def test_a_half_empty_page_is_told_from_a_full_one(sample_pdf: Path) -> None:
    block = text_block(sample_pdf.with_suffix(".log").read_text(encoding="utf-8"))
    # US letter, one-inch margins: the block is nine inches high, one inch below the top
    assert block.top == pytest.approx(10.0 * 72, abs=0.5)
    assert block.top - block.bottom == pytest.approx(9.0 * 72, abs=0.5)
    first, _, last = page_fill(sample_pdf, block)
    assert first < 0.3  # a heading and three lines; the page number below the block is not ink
    assert last > 0.97  # a rule at the top, a line at the foot
