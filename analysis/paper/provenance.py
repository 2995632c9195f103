r"""The appendix "Where every number comes from", and the figures' provenance.

One row per record key the paper prints (found by scanning the text, the generated tables and
the claims appendix), with its value and CI, method, rule, input files with short sha256,
config keys, code location and the call-store shards behind it. Each row carries
``\hypertarget{rec:<key>}`` so every ``\rc{key}`` in the text jumps to it.

Figures get rows too (``\hypertarget{figrec:<stem>}``), built from the figure files the figure
rules register in ``FIGURE_FILES`` and, where present, their JSON sidecars
(``<figure>.json`` or ``<figure>.<ext>.json``: rule, inputs with sha256, code, record keys).
``figures.tex`` maps each figure stem to its file and defines ``\StudyFigure``, whose
caption links to the row.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.paper.latex import escape_latex, escape_number, texttt
from analysis.paper.macros import display_ci, display_value
from analysis.provenance import sha256_file, short_sha

#: at most this many config entries per row; the rest is summarised by the subtree's hash
MAX_CONFIG_ENTRIES = 10
#: a rule with more input files than this (a scaled-up world's thousands of annotation files,
#: which would overflow TeX's line buffer) shows its first MAX_INPUTS_SHOWN and the sha256 of
#: the whole list; a study-sized world's rules list every file
MAX_INPUT_ENTRIES = 60
MAX_INPUTS_SHOWN = 10
#: figure formats, in order of preference for the PDF
FIGURE_FORMATS = (".pdf", ".png", ".jpg", ".jpeg")


def flatten_config(node: Any, prefix: str = "") -> list[tuple[str, str]]:
    """``[(dotted key, value text)]`` of a config subtree, sorted."""
    if isinstance(node, Mapping):
        out: list[tuple[str, str]] = []
        for k in sorted(node, key=str):
            out += flatten_config(node[k], f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(node, list):
        text = json.dumps(node, sort_keys=True, default=str)
        return [(prefix, text if len(text) <= 40 else text[:37] + "...")]
    return [(prefix, json.dumps(node, default=str) if isinstance(node, str) else str(node))]


def _inputs_text(inputs: Sequence[Mapping[str, str]]) -> str:
    if not inputs:
        return "none"
    shown = inputs if len(inputs) <= MAX_INPUT_ENTRIES else inputs[:MAX_INPUTS_SHOWN]
    text = "; ".join(
        f"{texttt(i['path'])}~(\\texttt{{{short_sha(i.get('sha256', ''))}}})" for i in shown
    )
    if len(shown) < len(inputs):
        listed = json.dumps([[i["path"], i.get("sha256", "")] for i in inputs]).encode()
        digest = short_sha(hashlib.sha256(listed).hexdigest())
        text += (
            f"; \\ldots\\ ({len(inputs) - len(shown):,d} more, each with its sha256 in the "
            f"record) [sha256 of the list \\texttt{{{digest}}}]"
        )
    return text


def _config_text(rec: Mapping[str, Any]) -> str:
    entries = flatten_config(rec.get("config") or {})
    if not entries:
        return "none"
    shown = [f"{texttt(k)}={escape_latex(v)}" for k, v in entries[:MAX_CONFIG_ENTRIES]]
    more = len(entries) - len(shown)
    text = "; ".join(shown)
    if more > 0:
        text += f"; \\ldots\\ ({more} more)"
    if rec.get("config_sha256"):
        text += f" [sha256 \\texttt{{{short_sha(rec['config_sha256'])}}}]"
    return text


def _calls_text(rec: Mapping[str, Any]) -> str:
    calls = rec.get("calls") or {}
    if not calls:
        return "none"
    total = sum(int(n) for n in calls.values())
    parts = [f"{texttt(shard)}~({int(n):,d})" for shard, n in sorted(calls.items())]
    return f"{total:,d} calls: " + "; ".join(parts)


def provenance_signature(rec: Mapping[str, Any]) -> str:
    """Records written together (same rule, inputs, config and calls) share one block."""
    return json.dumps(
        [rec.get("rule"), rec.get("inputs"), rec.get("config_sha256"), rec.get("calls")],
        sort_keys=True,
        default=str,
    )


def block_header(block_id: str, rec: Mapping[str, Any]) -> str:
    """The shared part of a block: rule, inputs with short sha256, config, model calls."""
    parts = [
        f"\\textbf{{Rule}} {texttt(rec.get('rule', '--'))}",
        f"\\textit{{inputs:}} {_inputs_text(rec.get('inputs') or [])}",
        f"\\textit{{config:}} {_config_text(rec)}",
        f"\\textit{{model calls:}} {_calls_text(rec)}",
    ]
    body = "\\newline ".join(parts)
    return (
        f"\\multicolumn{{3}}{{@{{}}p{{\\linewidth}}@{{}}}}{{\\raisebox{{1.5ex}}"
        f"{{\\hypertarget{{{block_id}}}{{}}}}{body}}} \\\\"
    )


def record_row(key: str, rec: Mapping[str, Any], block_id: str) -> str:
    """One row: the key (link target), value with CI and n, method, code, and its block."""
    value = escape_number(display_value(rec))
    ci = display_ci(rec)
    if ci is not None:
        value += f" [{escape_number(ci[0])}, {escape_number(ci[1])}]"
    if rec.get("n") is not None:
        value += f"\\newline $n={int(rec['n']):,d}$".replace(",", "{,}")
    method = escape_latex(rec.get("method", "")) or "--"
    extra = ""
    if rec.get("seed") is not None:
        extra = f"; seed {escape_latex(str(rec['seed']))}"
    where = (
        f"\\textit{{code:}} {texttt(rec.get('code', '--'))}{extra}; "
        f"\\hyperlink{{{block_id}}}{{rule {texttt(rec.get('rule', '--'))}}}"
    )
    return (
        f"\\raisebox{{1.5ex}}{{\\hypertarget{{rec:{key}}}{{}}}}{texttt(key)} & "
        f"{value} & {method}\\newline {where} \\\\"
    )


@dataclass
class FigureInfo:
    """One figure: the files registered for it and what its sidecar says about its source."""

    stem: str
    files: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def paper_file(self) -> str | None:
        """The file the PDF includes (vector PDF first, then PNG previews)."""
        for ext in FIGURE_FORMATS:
            for f in self.files:
                if f.lower().endswith(ext):
                    return f
        return None

    @property
    def keys(self) -> list[str]:
        keys = self.meta.get("keys") or self.meta.get("records") or []
        return sorted(str(k) for k in keys) if isinstance(keys, list) else []


def _sidecar(path: Path) -> dict[str, Any]:
    for candidate in (path.with_suffix(".json"), path.with_name(path.name + ".json")):
        if candidate.is_file() and candidate != path:
            try:
                data = json.loads(candidate.read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                raise ValueError(f"{candidate}: figure sidecar is not valid JSON ({err})") from err
            return data if isinstance(data, dict) else {}
    return {}


def collect_figures(figure_files: Iterable[str], root: Path) -> list[FigureInfo]:
    """Group registered figure files by stem and read their sidecars (JSON files are skipped)."""
    by_stem: dict[str, FigureInfo] = {}
    for f in sorted(str(x) for x in figure_files):
        if f.endswith(".json"):
            continue
        stem = Path(f).stem
        info = by_stem.setdefault(stem, FigureInfo(stem))
        info.files.append(f)
        if not info.meta and (root / f).is_file():
            info.meta = _sidecar(root / f)
    return [by_stem[s] for s in sorted(by_stem)]


def _normalise_inputs(raw: Any) -> list[dict[str, str]]:
    if isinstance(raw, Mapping):
        return [{"path": str(k), "sha256": str(v)} for k, v in sorted(raw.items())]
    if isinstance(raw, list):
        out = []
        for item in raw:
            if isinstance(item, Mapping) and "path" in item:
                out.append({"path": str(item["path"]), "sha256": str(item.get("sha256", ""))})
            elif isinstance(item, str):
                out.append({"path": item, "sha256": ""})
        return out
    return []


def figure_row(fig: FigureInfo, root: Path) -> str:
    """One row of the figures table: files with hashes, rule, inputs, code, records used."""
    files = []
    for f in fig.files:
        sha = sha256_file(root / f) if (root / f).is_file() else ""
        files.append(f"{texttt(f)}~(\\texttt{{{short_sha(sha)}}})" if sha else texttt(f))
    meta = fig.meta
    chain = [
        ("files", "; ".join(files)),
        ("rule", texttt(meta["rule"]) if meta.get("rule") else "--"),
        ("code", texttt(meta["code"]) if meta.get("code") else "--"),
        ("inputs", _inputs_text(_normalise_inputs(meta.get("inputs")))),
    ]
    if meta.get("available") is False:
        reason = escape_latex(str(meta.get("reason") or "not stated"))
        chain.append(("available", f"no: drawn as a labelled empty panel ({reason})"))
    if fig.keys:
        chain.append(
            ("records", ", ".join(f"\\hyperlink{{rec:{k}}}{{{texttt(k)}}}" for k in fig.keys))
        )
    right = "\\newline ".join(f"\\textit{{{name}:}} {text}" for name, text in chain)
    return (
        f"\\raisebox{{1.5ex}}{{\\hypertarget{{figrec:{fig.stem}}}{{}}}}"
        f"{texttt(fig.stem)} & {right} \\\\"
    )


_RECORD_HEAD = [
    r"\begingroup\scriptsize\raggedright",
    r"\begin{longtable}{@{}p{0.27\linewidth}p{0.17\linewidth}p{0.5\linewidth}@{}}",
    r"\toprule",
    r"Key & Value [CI] & Method and code \\",
    r"\midrule\endhead",
    r"\bottomrule\endfoot",
]
_FIGURE_HEAD = [
    r"\begingroup\scriptsize\raggedright",
    r"\begin{longtable}{@{}p{0.2\linewidth}p{0.76\linewidth}@{}}",
    r"\toprule",
    r"Figure & Where it comes from \\",
    r"\midrule\endhead",
    r"\bottomrule\endfoot",
]


def render_provenance_tex(
    numbers: Mapping[str, Mapping[str, Any]],
    used_keys: Iterable[str],
    figures: Sequence[FigureInfo] = (),
    root: Path | None = None,
    absent_keys: Iterable[str] = (),
) -> str:
    """The appendix body: records used in the paper, figures, and keys this dataset lacks.

    Records are grouped in blocks of shared provenance (one rule's records share its inputs,
    config and calls); each block opens with that shared chain, and each row links to it.
    """
    root = root or Path.cwd()
    used = set(used_keys) | {k for f in figures for k in f.keys}
    present = sorted(k for k in used if k in numbers)
    blocks: dict[str, list[str]] = {}
    for key in present:
        blocks.setdefault(provenance_signature(numbers[key]), []).append(key)
    ordered = sorted(blocks.values(), key=lambda ks: (str(numbers[ks[0]].get("rule")), ks[0]))
    lines = ["% Generated by rule `provenance_appendix`. Do not edit."]
    lines.append(f"% {len(present)} numbers used in the paper, {len(figures)} figures")
    if present:
        lines += _RECORD_HEAD
        for i, keys in enumerate(ordered):
            block_id = f"prov:{numbers[keys[0]].get('rule', 'rule')}:{i}"
            if i:
                lines.append(r"\midrule")
            lines.append(block_header(block_id, numbers[keys[0]]))
            lines.append(r"\cmidrule{1-3}")
            lines += [record_row(k, numbers[k], block_id) for k in keys]
        lines += [r"\end{longtable}", r"\endgroup"]
    else:
        lines.append(r"\emph{The text prints no record of this dataset.}")
    if figures:
        lines += [r"\paragraph{Figures.}", *_FIGURE_HEAD]
        for i, fig in enumerate(figures):
            if i:
                lines.append(r"\midrule")
            lines.append(figure_row(fig, root))
        lines += [r"\end{longtable}", r"\endgroup"]
    absent = sorted(set(absent_keys) - set(numbers))
    if absent:
        lines.append(
            r"\paragraph{Not available in this dataset.}\begingroup\small\raggedright "
            r"The text asks for these records, which this dataset cannot support, and says so "
            r"where they would appear: " + ", ".join(texttt(k) for k in absent) + r".\par\endgroup"
        )
    return "\n".join(lines) + "\n"


def render_software_tex(software: Mapping[str, Any]) -> str:
    """The software that built these numbers (``results/<dataset>/environment.json``): the
    platform, TeX, and every installed package with its version; the packages installed outside
    the hashed lock also with a hash of their installed files, since their version alone does
    not say which build they are."""
    platform_rows = [
        ("Python", software.get("python")),
        ("Operating system", software.get("os")),
        ("Machine", software.get("machine")),
        ("TeX", software.get("tex")),
        ("latexmk", software.get("latexmk")),
    ]
    lines = [
        r"\paragraph{Software that built these numbers.}\begingroup\small\raggedright",
        "; ".join(f"{name}: {escape_latex(str(v or 'not installed'))}" for name, v in platform_rows)
        + r".\par",
    ]
    outside = software.get("outside_lock", {})
    if outside:
        lines.append(
            "Installed outside the hashed lock (file hash of the installed build): "
            + "; ".join(
                f"{escape_latex(n)} {escape_latex(str(d.get('version')))} "
                f"({texttt(short_sha(str(d.get('record_sha256'))))})"
                for n, d in outside.items()
            )
            + r".\par"
        )
    packages = software.get("packages", {})
    lines.append(
        f"Python packages ({len(packages)}): "
        + "; ".join(f"{escape_latex(n)} {escape_latex(v)}" for n, v in packages.items())
        + r".\par\endgroup"
    )
    return "\n".join(lines) + "\n"


FIGURE_MACRO = r"""\providecommand\hyperlink[2]{#2}
% dataset.tex (input first) says whether the data are simulated; without it, no caption note
\providecommand\SimulatedCaption{}
% \StudyFigure[width]{stem}{caption}: the figure with a caption linked to its provenance row;
% a figure this build did not produce is shown as a box that says so.
\newcommand\StudyFigure[3][\linewidth]{%
  \begin{figure}[tbp]\centering
  \ifcsname rc@fig@#2\endcsname
    \edef\rc@figfile{\csname rc@fig@#2\endcsname}%
    \includegraphics[width=#1]{\rc@figfile}%
    \caption{#3\SimulatedCaption\ \protect\hyperlink{figrec:#2}{(Provenance.)}}%
  \else
    \fbox{\parbox{0.9\linewidth}{\centering\emph{Figure \texttt{\detokenize{#2}} is not
    produced in this build.}}}%
    \caption{#3\SimulatedCaption}%
  \fi
  \label{fig:#2}%
  \end{figure}}
"""


def render_figures_tex(figures: Sequence[FigureInfo], root: Path, paper_dir: Path) -> str:
    """``figures.tex``: stem -> file (relative to the paper folder) and ``\\StudyFigure``."""
    lines = ["% Generated by rule `provenance_appendix`. Do not edit.", r"\makeatletter"]
    lines.append(FIGURE_MACRO.rstrip())
    for fig in figures:
        f = fig.paper_file
        if f is None:
            continue
        rel = os.path.relpath((root / f).resolve(), paper_dir.resolve()).replace(os.sep, "/")
        lines.append(f"\\expandafter\\def\\csname rc@fig@{fig.stem}\\endcsname{{{rel}}}")
    lines.append(r"\makeatother")
    return "\n".join(lines) + "\n"
