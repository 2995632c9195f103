"""One look for every figure, and one way to write a figure file.

Why a single module: the study's figures appear side by side in a two-column paper, so they
share fonts, sizes, line widths and a colour-blind-safe palette (Okabe & Ito's eight colours,
distinguishable under the common colour-vision deficiencies), and every figure file is
written the same deterministic way with its provenance inside it.

Determinism: a figure file is a workflow output that a reviewer rebuilds and compares byte by
byte. :func:`save_figure` therefore writes no timestamp (PDF ``CreationDate``/``ModDate``
removed, so ``SOURCE_DATE_EPOCH`` has nothing to change), fixed ``Creator``/``Producer``
strings, a fixed ``svg.hashsalt``, and a PNG whose only text chunks are fixed or derived from
the inputs. The figure's source (rule, code, input files with sha256, record keys drawn) is
embedded in the PDF's ``Subject``/``Keywords``, in the PNG's text chunks and in a JSON
sidecar ``<name>.json`` that the paper and its audit site read.
"""

from __future__ import annotations

import contextlib
import json
import logging
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
from cycler import cycler
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from analysis.provenance import dump_json, input_hashes, repo_relative, sha256_file


def capitalized(words: str) -> str:
    """``words`` with its first letter upper case (a noun opening a label)."""
    return words[:1].upper() + words[1:]


#: Okabe & Ito (2008) colour-blind-safe palette, plus a neutral grey
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
    "grey": "#999999",
}

#: who produced a judgment: people, language models, retrieval baselines, trained models
KIND_COLOURS: dict[str, str] = {
    "human": OKABE_ITO["vermillion"],
    "model": OKABE_ITO["blue"],
    "baseline": OKABE_ITO["grey"],
    "classifier": OKABE_ITO["bluish_green"],
    "data": "#E8E8E8",
}
#: stage-1 labels, ordered from good to bad (green, orange, vermillion)
LABEL_COLOURS: dict[str, str] = {
    "accepted": OKABE_ITO["bluish_green"],
    "uncertain": OKABE_ITO["orange"],
    "rejected": OKABE_ITO["vermillion"],
}
#: stage-2 metrics against the human majority
METRIC_COLOURS: dict[str, str] = {
    "precision": OKABE_ITO["sky_blue"],
    "recall": OKABE_ITO["orange"],
    "f1": OKABE_ITO["blue"],
}
#: reference lines (neutral rating, zero effect, human ceiling)
REFERENCE_COLOUR = "#555555"
#: confidence intervals
CI_COLOUR = "#222222"
#: a sequential, colour-blind-safe and greyscale-monotone colormap (kappa matrix)
SEQUENTIAL_CMAP = "cividis"
#: cells without a value (the kappa matrix diagonal)
MISSING_COLOUR = "#FFFFFF"

#: inches: the paper's text width (US letter with one-inch margins: 8.5 - 2), and a half of it
#: with a gap, so that a pair of figures stands side by side. The paper includes a figure at its
#: natural size (``\\StudyFigure`` shrinks only one wider than the line), so the sizes below
#: are the sizes printed.
TEXT_WIDTH = 6.5
COLUMN_WIDTH = 3.2
#: the smallest text a figure may print (points): below it a printed page is hard to read
MIN_FONT_PT = 7.0
#: resolution of the PNG previews
PNG_DPI = 200
#: fixed producer strings: the version of matplotlib is not part of a figure's identity
CREATOR = "recenter (analysis.figures)"
PRODUCER = "recenter (analysis.figures.style.save_figure, matplotlib)"

#: the shared rcParams; applied while a figure is built *and* while it is saved, because
#: matplotlib reads some of them (tick labels, minus signs, font embedding) only at draw time
RC: dict[str, Any] = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],  # ships with matplotlib: identical on every machine
    "mathtext.fontset": "dejavusans",
    "font.size": 8.0,
    "axes.titlesize": 8.0,
    "axes.labelsize": 8.0,
    "xtick.labelsize": 7.0,
    "ytick.labelsize": 7.0,
    "legend.fontsize": 7.0,
    "figure.titlesize": 8.5,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "axes.titlepad": 4.0,
    "axes.prop_cycle": cycler(
        color=[OKABE_ITO[c] for c in ("blue", "orange", "bluish_green", "vermillion")]
        + [OKABE_ITO[c] for c in ("sky_blue", "reddish_purple", "yellow", "black")]
    ),
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "lines.linewidth": 1.0,
    "patch.linewidth": 0.5,
    "image.cmap": SEQUENTIAL_CMAP,
    "figure.dpi": 100,
    "savefig.dpi": PNG_DPI,
    "savefig.facecolor": "white",
    "pdf.fonttype": 42,  # embed TrueType: text stays text (searchable, editable)
    "ps.fonttype": 42,
    "pdf.compression": 6,
    "svg.hashsalt": "recenter",  # SVG ids are otherwise random per run
    "axes.unicode_minus": True,
}


@contextlib.contextmanager
def _quiet_font_subsetting() -> Iterator[None]:
    """fontTools logs every glyph it subsets at INFO; a rule's log should show the figure."""
    logger = logging.getLogger("fontTools")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def style_context() -> Iterator[None]:
    """The shared rcParams for the duration of the block (building or saving a figure)."""
    with matplotlib.rc_context(RC):
        yield


@dataclass
class FigureSource:
    """What a figure says about itself: name, caption, code and the record keys it draws."""

    name: str
    code: str  # module:function that drew it
    caption: str = ""
    records: list[str] = field(default_factory=list)
    available: bool = True
    reason: str | None = None  # why not, when ``available`` is false


class StudyFigure(Figure):
    """A matplotlib ``Figure`` that carries its :class:`FigureSource` (``fig.study``).

    Built without ``pyplot`` (no global figure registry), so a rule or test can make many
    figures without leaking them and without choosing a GUI backend.
    """

    def __init__(self, study: FigureSource, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study


def new_figure(
    name: str, code: str, *, width: float, height: float, caption: str = ""
) -> StudyFigure:
    """An empty figure of the given size (inches) with constrained layout, in the shared style."""
    with style_context():
        return StudyFigure(
            FigureSource(name=name, code=code, caption=caption),
            figsize=(width, height),
            layout="constrained",
        )


def placeholder_figure(
    name: str,
    code: str,
    *,
    title: str,
    reason: str,
    caption: str = "",
    width: float = COLUMN_WIDTH,
    height: float = 1.5,
) -> StudyFigure:
    """A clearly labelled panel for a figure the dataset cannot support, so the paper builds.

    It says ``not available in this dataset: <reason>`` in the figure itself, and its
    :class:`FigureSource` is marked unavailable so the sidecar says ``available: false``.
    """
    fig = new_figure(name, code, width=width, height=height, caption=caption)
    fig.study.available = False
    fig.study.reason = reason
    with style_context():
        ax = fig.add_subplot()
        ax.set_axis_off()
        ax.add_patch(
            FancyBboxPatch(
                (0.02, 0.04),
                0.96,
                0.92,
                boxstyle="round,pad=0,rounding_size=0.03",
                transform=ax.transAxes,
                facecolor="#F4F4F4",
                edgecolor=REFERENCE_COLOUR,
                linestyle="--",
                linewidth=0.8,
                gid="placeholder",
            )
        )
        wrapped = "\n".join(textwrap.wrap(reason, width=max(30, int(width * 14))))
        ax.text(
            0.5,
            0.5,
            f"{title}\n\nnot available in this dataset:\n{wrapped}",
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=8,
            color="#333333",
            gid="placeholder-text",
        )
    return fig


def _inputs_with_hashes(inputs: Sequence[Any]) -> list[dict[str, str]]:
    """``[{path, sha256}]`` sorted by path; a path is hashed, a ready ``{path, sha256}`` kept.

    Paths are hashed by ``analysis.provenance.input_hashes``, as records' inputs are; a figure
    input that is not a file is an error here (a sidecar must not silently drop a source).
    """
    ready: list[dict[str, str]] = []
    paths: list[Path] = []
    for item in inputs:
        if isinstance(item, Mapping):
            if "path" not in item or "sha256" not in item:
                raise ValueError(f"figure input {item!r} needs fields 'path' and 'sha256'")
            ready.append({"path": str(item["path"]), "sha256": str(item["sha256"])})
            continue
        path = Path(str(item))
        if not path.is_file():
            raise FileNotFoundError(f"figure input {path} does not exist; cannot hash it")
        paths.append(path)
    return sorted(ready + input_hashes(paths), key=lambda r: r["path"])


def sidecar_path(pdf_path: Path | str) -> Path:
    """Where the JSON sidecar of a figure goes: next to the PDF, ``<name>.json``."""
    return Path(pdf_path).with_suffix(".json")


def save_figure(
    fig: StudyFigure,
    pdf_path: Path | str,
    png_path: Path | str,
    provenance: Mapping[str, Any],
    sidecar: Path | str | None = None,
) -> dict[str, Any]:
    """Write the vector PDF, the PNG preview and the JSON sidecar; return the sidecar.

    ``provenance`` holds ``rule`` (required), ``inputs`` (paths to hash, or ready
    ``{path, sha256}`` dicts) and optionally ``code`` (defaults to the drawing function),
    ``dataset`` and ``config``. Record keys, caption and availability come from ``fig.study``.
    Output is byte-identical for identical figures and inputs (no timestamps anywhere).
    """
    study = fig.study
    rule = str(provenance.get("rule") or "")
    if not rule:
        raise ValueError(f"save_figure({study.name}): provenance needs a non-empty 'rule'")
    core: dict[str, Any] = {
        "figure": study.name,
        "rule": rule,
        "code": str(provenance.get("code") or study.code),
        "inputs": _inputs_with_hashes(list(provenance.get("inputs") or [])),
        "records": sorted(set(study.records)),
        "available": bool(study.available),
    }
    if not study.available:
        core["reason"] = study.reason or "not stated"
    keywords = json.dumps(core, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    subject = f"recenter figure {study.name}: rule {rule}, code {core['code']}"
    pdf_path, png_path = Path(pdf_path), Path(png_path)
    for path in (pdf_path, png_path):
        path.parent.mkdir(parents=True, exist_ok=True)
    with style_context(), _quiet_font_subsetting():
        fig.savefig(
            pdf_path,
            format="pdf",
            metadata={
                "Title": study.name,
                "Author": "recenter",
                "Subject": subject,
                "Keywords": keywords,
                "Creator": CREATOR,
                "Producer": PRODUCER,
                "CreationDate": None,
                "ModDate": None,
            },
        )
        fig.savefig(
            png_path,
            format="png",
            dpi=PNG_DPI,
            metadata={
                "Software": CREATOR,
                "Title": study.name,
                "Description": subject,
                "Comment": keywords,
            },
        )
    out = dict(core)
    out["caption"] = study.caption
    if "dataset" in provenance:
        out["dataset"] = provenance["dataset"]
    if "config" in provenance:
        out["config"] = provenance["config"]
    out["files"] = [
        {"path": repo_relative(p), "sha256": sha256_file(p)} for p in (pdf_path, png_path)
    ]
    dump_json(out, sidecar if sidecar is not None else sidecar_path(pdf_path))
    return out
