r"""Render ``numbers.json`` as LaTeX macros: the only way a number gets into the paper.

For every record key the generated ``paper/generated/<dataset>/numbers.tex`` defines

* ``\csname rc@<key>\endcsname``: the display value (``0.43``, ``58.0\%``), escaped for LaTeX,
* ``rc@ci@<key>`` (``0.39, 0.47``), ``rc@cilevel@<key>`` (``95\%``; ``95\% exact`` for an
  exact interval, ``extra.exact``), ``rc@method@<key>``,
  ``rc@n@<key>`` where the record has them,
* an alias named for the key's meaning: ``stage2.final.kappa.human_human`` ->
  ``\StageTwoFinalKappaHumanHuman`` (words capitalised, separators dropped, every digit
  spelled out so TeX accepts the name). Two keys with the same alias are an error.

and the accessors the text uses:

* ``\rc{key}``: the value, linked to the key's page in the audit site beside the PDF
  (``site/numbers/<key>.html#<key>``, a relative link; ``analysis.paper.site_links``);
  an unknown key is a LaTeX error naming it,
* ``\rclink{key}{text}``: ``text`` (a number stored with the record, e.g. a p-value) linked
  to the key's page,
* ``\rcci{key}``: the value with its confidence interval (just the value when there is none),
  ``\rcint{key}`` the same without the level, for table cells (``0.43 [0.39, 0.47]``), and
  ``\rcstack{key}`` with the interval on a line under the value (narrow table columns),
* ``\rcn{key}``, ``\rcmethod{key}``: the sample size and the method text,
* ``\IfRecordTF{key}{present}{absent}`` and ``\IfRecordsTF{k1,k2}{all present}{otherwise}``:
  sections that need data a dataset lacks say so instead of printing numbers,
* ``\NotAvailable{what}``: the sentence that says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from analysis.paper import site_links
from analysis.paper.latex import escape_latex, escape_number, format_number
from analysis.provenance import RecordError

#: characters a key may contain: each is a plain character inside \csname and a hyperref name
KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$")

_DIGIT_WORDS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")

#: macros this scheme defines itself; an alias may not take one of these names
RESERVED_MACROS = frozenset(
    {
        "IfRecordTF",
        "IfRecordsTF",
        "NotAvailable",
        "Claim",
        "StudyFigure",
        "DatasetName",
        "DatasetDescription",
        "PaperTitle",
        "SimulatedCaption",
        "RealUsers",
        "SiteLink",
        "IfTableTF",
        # the dataset's nouns (analysis.paper.dataset_info.NOUN_MACROS)
        "people",
        "People",
        "person",
        "Person",
        "users",
        "Users",
        "chatusers",
        "Chatusers",
        "modelraters",
        "Modelraters",
    }
)


def check_key(key: str) -> str:
    """Return ``key`` if it can be a macro name and a link target, else raise naming it."""
    if not KEY_PATTERN.match(key):
        raise RecordError(
            f"record key {key!r} has characters LaTeX cannot take in a macro name; "
            "keys use letters, digits and . _ : + - only"
        )
    return key


def alias_for(key: str) -> str:
    """The CamelCase macro name for ``key`` (``stage2.f1`` -> ``StageTwoFOne``)."""
    words: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", key):
        for token in re.findall(r"[A-Za-z]+|\d", part):
            if token.isdigit():
                words.append(_DIGIT_WORDS[int(token)])
            else:
                words.append(token[0].upper() + token[1:])
    name = "".join(words)
    if not name:
        raise RecordError(f"record key {key!r} yields no alias (no letters or digits)")
    return name


def alias_map(keys: Iterable[str]) -> dict[str, str]:
    """``alias -> key`` for every key; two keys sharing an alias is an error naming both."""
    out: dict[str, str] = {}
    for key in sorted(keys):
        name = alias_for(key)
        if name in RESERVED_MACROS:
            raise RecordError(f"record key {key!r} would define \\{name}, a reserved macro")
        if name in out:
            raise RecordError(
                f"record keys {out[name]!r} and {key!r} both become the macro \\{name}; "
                "rename one of them"
            )
        out[name] = key
    return out


def ci_level_of(record: Mapping[str, Any]) -> float:
    """The confidence level of a record's interval, as the record carries it (``ci_level``).

    The statistics layer sets it where the interval is made; a record with an interval but
    no level is an error naming the key, never a level guessed from its config.
    """
    level = record.get("ci_level")
    if isinstance(level, bool) or not isinstance(level, int | float):
        raise RecordError(
            f"record {record.get('key', '?')}: has an interval but no 'ci_level' (the level is "
            "set where the interval is made, analysis.stats.intervals.Interval)"
        )
    return float(level)


def display_value(record: Mapping[str, Any]) -> str:
    """The value as printed (the record's ``display``, else ``value`` under ``fmt``)."""
    if record.get("display") not in (None, ""):
        return str(record["display"])
    return format_number(record["value"], str(record.get("fmt") or "g"))


def display_ci(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(low, high)`` formatted like the value, or ``None`` without an interval."""
    low, high = record.get("ci_low"), record.get("ci_high")
    if low is None or high is None:
        return None
    fmt = str(record.get("fmt") or "g")
    return format_number(low, fmt), format_number(high, fmt)


PREAMBLE = r"""% Accessors (see analysis/paper/macros.py and docs/provenance.md).
\providecommand\href[2]{#2}
% \SiteLink{path}{text}: text linked to a page of the audit site beside the PDF
\newcommand\SiteLink[2]{\href{{SITE_DIR}/#1}{#2}}
\def\rc@url#1{\csname rc@url@#1\endcsname}
\newcount\rc@allfound
\newcommand\rc@check[1]{\ifcsname rc@#1\endcsname\else
  \PackageError{recenter}{Unknown record key `\detokenize{#1}'}{The key is not in
  numbers.json of this dataset. Check its spelling (recenter trace KEY lists near
  matches) or guard the sentence with \string\IfRecordTF.}\fi}
\DeclareRobustCommand\rc[1]{\rc@check{#1}\ifcsname rc@#1\endcsname
  \href{\rc@url{#1}}{\csname rc@#1\endcsname}\fi}
\DeclareRobustCommand\rclink[2]{\rc@check{#1}\ifcsname rc@#1\endcsname
  \href{\rc@url{#1}}{#2}\fi}
\DeclareRobustCommand\rcci[1]{\rc@check{#1}\ifcsname rc@#1\endcsname
  \href{\rc@url{#1}}{\csname rc@#1\endcsname\ifcsname rc@ci@#1\endcsname
  \space[\csname rc@cilevel@#1\endcsname~CI \csname rc@ci@#1\endcsname]\fi}\fi}
\DeclareRobustCommand\rcint[1]{\rc@check{#1}\ifcsname rc@#1\endcsname
  \href{\rc@url{#1}}{\csname rc@#1\endcsname\ifcsname rc@ci@#1\endcsname
  \space[\csname rc@ci@#1\endcsname]\fi}\fi}
\DeclareRobustCommand\rcstack[1]{\rc@check{#1}\ifcsname rc@#1\endcsname
  \href{\rc@url{#1}}{\begin{tabular}[t]{@{}r@{}}\csname rc@#1\endcsname
  \ifcsname rc@ci@#1\endcsname\\{}[\csname rc@ci@#1\endcsname]\fi\end{tabular}}\fi}
\DeclareRobustCommand\rcn[1]{\rc@check{#1}\ifcsname rc@n@#1\endcsname
  \csname rc@n@#1\endcsname\else\PackageError{recenter}{Record `\detokenize{#1}' has no
  n}{Use \string\rc\space for its value.}\fi}
\DeclareRobustCommand\rcmethod[1]{\rc@check{#1}\ifcsname rc@method@#1\endcsname
  \csname rc@method@#1\endcsname\fi}
\newcommand\IfRecordTF[1]{\ifcsname rc@#1\endcsname
  \expandafter\@firstoftwo\else\expandafter\@secondoftwo\fi}
\def\rc@zap#1{\zap@space#1 \@empty}
\newcommand\IfRecordsTF[1]{\global\rc@allfound\@ne
  \@for\rc@key:=#1\do{\edef\rc@key{\expandafter\rc@zap\expandafter{\rc@key}}%
    \ifcsname rc@\rc@key\endcsname\else\global\rc@allfound\z@\fi}%
  \ifnum\rc@allfound=\@ne\expandafter\@firstoftwo\else\expandafter\@secondoftwo\fi}
\DeclareRobustCommand\NotAvailable[1]{\emph{(not available in this dataset: #1)}}
"""


def pdf_link(key: str) -> str:
    """The link of a key's number in the PDF, as TeX reads it inside a macro (``\\#``)."""
    return site_links.from_pdf(site_links.entry_link(key)).replace("#", "\\#")


def _def(prefix: str, key: str, body: str) -> str:
    return f"\\expandafter\\def\\csname rc@{prefix}{key}\\endcsname{{{body}}}"


def render_numbers_tex(numbers: Mapping[str, Mapping[str, Any]], source: str = "") -> str:
    """The full ``numbers.tex``: accessors, one block of definitions per key, the aliases."""
    keys = sorted(numbers)
    for key in keys:
        check_key(key)
    aliases = alias_map(keys)
    by_key = {key: name for name, key in aliases.items()}
    lines = [
        "% Generated by rule `numbers`" + (f" from {source}" if source else "") + ". Do not edit:",
        "% every value is a record; `recenter trace KEY` prints where it comes from.",
        r"\makeatletter",
        PREAMBLE.replace("{SITE_DIR}", site_links.SITE_DIR).rstrip(),
        r"\newif\ifSmallRealModel",
    ]
    if any("smollm2" in key for key in keys):
        lines.append(r"\SmallRealModeltrue")
    lines.append(f"% {len(keys)} records")
    for key in keys:
        rec = numbers[key]
        lines.append(_def("", key, escape_number(display_value(rec))))
        lines.append(_def("url@", key, pdf_link(key)))
        ci = display_ci(rec)
        if ci is not None:
            lines.append(_def("ci@", key, f"{escape_number(ci[0])}, {escape_number(ci[1])}"))
            level = format_number(ci_level_of(rec), ".0%")
            if (rec.get("extra") or {}).get("exact"):  # Clopper-Pearson: the text says so
                level += " exact"
            lines.append(_def("cilevel@", key, escape_latex(level)))
        if rec.get("method"):
            lines.append(_def("method@", key, escape_latex(rec["method"])))
        if rec.get("n") is not None:
            lines.append(_def("n@", key, escape_number(format_number(rec["n"], ",d"))))
        lines.append(f"\\newcommand\\{by_key[key]}{{\\rc{{{key}}}}}")
    lines.append(r"\makeatother")
    return "\n".join(lines) + "\n"
