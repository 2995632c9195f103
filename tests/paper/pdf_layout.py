"""What a printed reader of the PDF meets, measured in the PDF itself (issue 36).

pdfminer.six reads every glyph the PDF draws with its transformation matrix, so the size a
glyph is *rendered* at is known whatever scaled it (a figure shrunk by ``\\includegraphics``, a
table in ``\\scriptsize``, a subscript), and so is where it sits on the page. From that:

- ``references_page``: the page of the "References" heading, hence how many pages the main
  text (through the limitations) takes;
- ``small_text``: every glyph rendered below a size (7 pt: the smallest text a printed paper
  can be read at), in the text, the tables and inside the included figures alike;
- ``outside_text_block``: every glyph, image or included figure that reaches into the margin
  (a float wider than the text), with the text block read from geometry's log lines;
- ``page_fill``: how much of the text block's height a page uses, which finds the half-empty
  pages a float leaves behind when it does not fit where it is called.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pdfminer.high_level import extract_pages
from pdfminer.layout import (
    LTChar,
    LTComponent,
    LTCurve,
    LTFigure,
    LTImage,
    LTPage,
    LTTextLine,
)

#: a glyph is this much larger than the nominal size, at most, by rounding in the PDF
SIZE_TOLERANCE = 0.05
#: points a figure or image may reach past the text block before it is "wider than the text"
MARGIN_TOLERANCE = 1.0
#: points a glyph may: microtype's protrusion hangs punctuation and some letters into the
#: margin by design (about 3 pt at 11 pt); a table wider than the text goes far past this
TEXT_MARGIN_TOLERANCE = 4.0


@dataclass(frozen=True)
class Glyph:
    """One drawn character: page (1-based), rendered size in points, and where it is."""

    page: int
    text: str
    size: float
    x0: float
    x1: float
    y0: float
    y1: float
    in_figure: bool


def rendered_size(char: LTChar) -> float:
    """The size a glyph is drawn at, in points, whatever its rotation.

    pdfminer's ``size`` is the height of the glyph's box on the page, which is the font size
    only for upright text: a tick label turned by 90 degrees would report its advance width.
    With the rotation angle t of the glyph's matrix, the box's width w and height h satisfy
    w = A|cos t| + F|sin t| and h = A|sin t| + F|cos t| (A: the drawn advance, F: the drawn
    font size), which gives F. At 45 degrees the two are not separable and the smaller side
    of the box is taken (a lower bound on F is what a size floor needs: no false alarm).
    """
    a, b, _c, _d, _e, _f = char.matrix
    angle = math.atan2(b, a)
    cos, sin = abs(math.cos(angle)), abs(math.sin(angle))
    w, h = char.width, char.height
    if cos > 0.999:
        return h
    if sin > 0.999:
        return w
    det = cos * cos - sin * sin
    if abs(det) < 0.2:
        return min(w, h)
    return abs((h * cos - w * sin) / det)


def _walk(obj: LTComponent, page: int, in_figure: bool) -> Iterator[Glyph]:
    if isinstance(obj, LTChar):
        text = obj.get_text()
        if text.strip():
            yield Glyph(page, text, rendered_size(obj), obj.x0, obj.x1, obj.y0, obj.y1, in_figure)
        return
    for child in getattr(obj, "_objs", None) or ():
        yield from _walk(child, page, in_figure or isinstance(obj, LTFigure))


@cache
def _pages(pdf: Path) -> tuple[LTPage, ...]:
    return tuple(extract_pages(str(pdf)))


def pages(pdf: Path) -> tuple[LTPage, ...]:
    """The laid-out pages of ``pdf`` (read once per path and file state)."""
    return _pages(Path(pdf).resolve())


def glyphs(pdf: Path) -> list[Glyph]:
    """Every visible character of the PDF, in page order."""
    return [g for i, page in enumerate(pages(pdf), 1) for g in _walk(page, i, False)]


def _lines(obj: LTComponent) -> Iterator[LTTextLine]:
    if isinstance(obj, LTTextLine):
        yield obj
        return
    if isinstance(obj, LTFigure):  # a figure's labels are not the paper's headings
        return
    for child in getattr(obj, "_objs", None) or ():
        yield from _lines(child)


def references_page(pdf: Path, heading: str = "References") -> tuple[int, bool]:
    """``(page, at_top)``: the first page whose text has a line that is only ``heading``, and
    whether that heading is the page's first line of text (then the main text ended on the
    page before). Raises ``LookupError`` when no page has it."""
    for number, page in enumerate(pages(pdf), 1):
        lines = [line for line in _lines(page) if line.get_text().strip()]
        for line in lines:
            if line.get_text().strip() == heading:
                at_top = all(other.y1 <= line.y1 + 0.5 for other in lines)
                return number, at_top
    raise LookupError(f"{pdf}: no line '{heading}' on any page")


def main_text_pages(pdf: Path) -> int:
    """Pages of the main text: up to the references heading (that page counts unless the
    heading opens it)."""
    page, at_top = references_page(pdf)
    return page - 1 if at_top else page


def small_text(pdf: Path, minimum_pt: float = 7.0) -> list[Glyph]:
    """Every glyph drawn smaller than ``minimum_pt``."""
    return [g for g in glyphs(pdf) if g.size < minimum_pt - SIZE_TOLERANCE]


@dataclass(frozen=True)
class TextBlock:
    """Where the text of a page may be, in PDF points from the page's left and bottom edges."""

    left: float
    right: float
    bottom: float
    top: float


_GEOMETRY = re.compile(r"^\* \\(?P<name>[a-z]+)=(?P<pt>-?[\d.]+)pt", re.M)
_NEEDED = (
    "paperheight",
    "hoffset",
    "voffset",
    "oddsidemargin",
    "topmargin",
    "headheight",
    "headsep",
    "textwidth",
    "textheight",
)


def text_block(latex_log: str) -> TextBlock:
    """The text block from geometry's ``verbose`` lines in the LaTeX log (``* \\textwidth=...``):
    left edge = 1 in + \\hoffset + \\oddsidemargin, top edge = 1 in + \\voffset + \\topmargin
    + \\headheight + \\headsep below the paper's top (TeX's origin), in big points."""
    found = {m["name"]: float(m["pt"]) for m in _GEOMETRY.finditer(latex_log)}
    missing = set(_NEEDED) - set(found)
    if missing:
        raise LookupError(
            f"the LaTeX log has no geometry lines for {sorted(missing)} "
            "(main.tex loads geometry with the option verbose)"
        )
    bp = 72.0 / 72.27  # TeX points -> PDF points
    left = 72.0 + (found["hoffset"] + found["oddsidemargin"]) * bp
    below_top = 72.0 + bp * (
        found["voffset"] + found["topmargin"] + found["headheight"] + found["headsep"]
    )
    top = found["paperheight"] * bp - below_top
    return TextBlock(
        left=left,
        right=left + found["textwidth"] * bp,
        bottom=top - found["textheight"] * bp,
        top=top,
    )


@dataclass(frozen=True)
class Overhang:
    """Something drawn past the text block: what, on which page, by how many points."""

    page: int
    what: str
    points: float


def _boxes(obj: LTComponent) -> Iterator[tuple[str, LTComponent]]:
    if isinstance(obj, LTFigure | LTImage):
        yield ("figure" if isinstance(obj, LTFigure) else "image", obj)
        return
    if isinstance(obj, LTChar):
        if obj.get_text().strip():
            yield (f"text {obj.get_text()!r}", obj)
        return
    for child in getattr(obj, "_objs", None) or ():
        yield from _boxes(child)


def outside_text_block(pdf: Path, block: TextBlock) -> list[Overhang]:
    """Every included figure and image that reaches left or right of the text block by more
    than :data:`MARGIN_TOLERANCE`, and every glyph by more than
    :data:`TEXT_MARGIN_TOLERANCE` (one entry per page and kind, the largest)."""
    worst: dict[tuple[int, str], float] = {}
    for number, page in enumerate(pages(pdf), 1):
        for what, box in _boxes(page):
            over = max(block.left - box.x0, box.x1 - block.right)
            kind = "text" if what.startswith("text") else what
            limit = TEXT_MARGIN_TOLERANCE if kind == "text" else MARGIN_TOLERANCE
            if over > limit and over > worst.get((number, kind), 0.0):
                worst[(number, kind)] = over
    return [Overhang(p, k, round(v, 1)) for (p, k), v in sorted(worst.items())]


def _drawn(obj: LTComponent) -> Iterator[LTComponent]:
    """Everything that puts ink on a page: glyphs, figures, images, lines and rules."""
    if isinstance(obj, LTChar):
        if obj.get_text().strip():
            yield obj
        return
    if isinstance(obj, LTFigure | LTImage | LTCurve):  # LTLine and LTRect are curves
        yield obj
        return
    for child in getattr(obj, "_objs", None) or ():
        yield from _drawn(child)


def page_fill(pdf: Path, block: TextBlock) -> list[float]:
    """Per page, the share of the text block's height between the highest and the lowest ink
    inside it (the page number in the footer is below the block, so not counted). A float page
    centres its floats, so the extent, not the lowest point, is what tells a full page."""
    height = block.top - block.bottom
    fills = []
    for page in pages(pdf):
        inside = [
            box
            for box in _drawn(page)
            if box.y1 > block.bottom - 1.0 and box.y0 < block.top + 1.0 and box.height < height
        ]
        if not inside:
            fills.append(0.0)
            continue
        top = min(block.top, max(box.y1 for box in inside))
        bottom = max(block.bottom, min(box.y0 for box in inside))
        fills.append(round((top - bottom) / height, 3))
    return fills
