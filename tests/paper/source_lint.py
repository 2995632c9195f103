r"""The hand-typed-number lint of the paper's sources (run by ``test_sources.py``).

:func:`hand_typed_numbers` finds digits typed by hand where a result belongs. It blanks what
may legitimately hold digits (record keys, labels, references, citations, file names, package
options, lengths such as ``0.5\linewidth`` or ``2pt``, section titles, model names written with
``\model{...}``, stage names such as "stage~2", names such as F1 or BM25, macro parameters
``#1``, integer assignments such as ``\pdfsuppressptexinfo=-1``, LaTeX's float placement
fractions) and reports every digit left, with file and line. :func:`check_sources` adds
unknown keys, aliases and claim ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from analysis.paper.macros import RESERVED_MACROS, alias_for, alias_map
from analysis.paper.source_check import (
    GUARDS,
    PRINTING_ACCESSORS,
    keys_guarded,
    keys_used,
    macro_args,
    strip_comments,
)
from analysis.paper.tables import Numbers, render_tables

#: commands whose mandatory arguments are identifiers, never prose: name -> arguments to blank
IDENTIFIER_ARGS: dict[str, int] = {
    **{name: 1 for name in PRINTING_ACCESSORS + GUARDS},
    "Claim": 1,
    "StudyFigure": 1,
    "ref": 1,
    "eqref": 1,
    "autoref": 1,
    "pageref": 1,
    "nameref": 1,
    "label": 1,
    "tag": 1,
    "hyperlink": 1,
    "hypertarget": 1,
    "href": 1,
    "url": 1,
    "input": 1,
    "include": 1,
    "includegraphics": 1,
    "bibliography": 1,
    "bibliographystyle": 1,
    "usepackage": 1,
    "RequirePackage": 1,
    "documentclass": 1,
    "begin": 1,
    "end": 1,
    "setcounter": 2,
    "addtocounter": 2,
    "setlength": 2,
    "addtolength": 2,
    "multicolumn": 2,
    "cmidrule": 1,
    "cline": 1,
    "newcommand": 1,
    "renewcommand": 1,
    "providecommand": 1,
    "DeclareRobustCommand": 1,
    # section titles may carry numbers ("Stage 2: relevance")
    "part": 1,
    "section": 1,
    "subsection": 1,
    "subsubsection": 1,
    "paragraph": 1,
}
#: citation commands (any \cite..., \citet, \citep, \citealp, \citeyear ...)
_CITE = re.compile(r"^(?:no)?cite[a-zA-Z]*$")
#: commands whose argument is a name that may contain digits (a model, a code identifier),
#: blanked only when the argument has a letter: ``\model{0.43}`` is still a typed number
NAME_ARGS = ("model", "code", "texttt")

_DIMENSION = re.compile(
    r"[-+]?(?:\d+\.?\d*|\.\d+)\s*(?:pt|em|ex|cm|mm|in|bp|pc|sp|dd|cc|mu|fil{1,3})\b"
    r"|[-+]?(?:\d+\.?\d*|\.\d+)\s*\\(?:textwidth|linewidth|columnwidth|textheight|"
    r"baselineskip|hsize|vsize|paperwidth|paperheight|tabcolsep|parindent)"
)
_STAGE_NAME = re.compile(r"\b[Ss]tages?(?:~|\s+|-)\d(?:\s*(?:,|--|-|and|or|to)[\s~]*\d)*")
_MACRO_PARAM = re.compile(r"#+\d")
#: names that contain digits but start with a letter: F1, BM25, sha256, SmolLM2
_NAME_WITH_DIGITS = re.compile(r"(?<![\w.\\])[A-Za-z][A-Za-z-]*\d[\w-]*")
#: TeX integer assignments in the preamble (``\pdfsuppressptexinfo=-1``)
_ASSIGNMENT = re.compile(r"\\[A-Za-z@]+\s*=\s*[-+]?\d+")
#: LaTeX's float placement fractions in the preamble (``\renewcommand\topfraction{.9}``)
_FLOAT_FRACTION = re.compile(
    r"\\renewcommand\s*\{?\\(?:top|bottom|text|floatpage|dbltop|dblfloatpage)fraction\}?"
    r"\s*\{[-+]?\d*\.?\d+\}"
)


@dataclass(frozen=True)
class Finding:
    """A problem in a source file, with where it is."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def matching_brace(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``start`` (or len(text) if unbalanced)."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def _blank(chars: list[str], start: int, end: int) -> None:
    for j in range(start, min(end, len(chars))):
        if chars[j] != "\n":
            chars[j] = " "


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n":
        i += 1
    return i


def _blank_options(text: str, chars: list[str], i: int) -> int:
    """Blank ``[...]`` groups at ``i`` (and ``(lr)`` trims of \\cmidrule); return the end."""
    while True:
        j = _skip_space(text, i)
        if j < len(text) and text[j] in "[(":
            close = text.find("]" if text[j] == "[" else ")", j)
            if close < 0:
                return i
            _blank(chars, j, close + 1)
            i = close + 1
        else:
            return i


def _blank_identifiers(text: str) -> str:
    chars = list(text)
    for m in re.finditer(r"\\([A-Za-z@]+|.)", text):
        name = m.group(1)
        end = m.end()
        n_args = IDENTIFIER_ARGS.get(name, 1 if _CITE.match(name) else 0)
        if n_args or name in NAME_ARGS:
            if name.endswith("command") or name == "DeclareRobustCommand":
                end = _skip_space(text, end)
                if end < len(text) and text[end] == "\\":  # \newcommand\name[1]{...}
                    name_end = re.match(r"\\[A-Za-z@]+", text[end:])
                    end += name_end.end() if name_end else 1
                    n_args = 0
            j = _skip_space(text, end)
            if j < len(text) and text[j] == "*":
                j += 1
            j = _blank_options(text, chars, j)
            for _ in range(max(n_args, 1 if name in NAME_ARGS else 0)):
                j = _skip_space(text, j)
                if j >= len(text) or text[j] != "{":
                    break
                close = matching_brace(text, j)
                if name not in NAME_ARGS or re.search(r"[A-Za-z]", text[j:close]):
                    _blank(chars, j, close + 1)
                j = close + 1
            _blank_options(text, chars, j)
        else:
            _blank_options(text, chars, end)
    return "".join(chars)


def hand_typed_numbers(text: str, path: str = "<text>") -> list[Finding]:
    """Every digit in ``text`` that is not in an allowed place (see the module docstring)."""
    cleaned = _blank_identifiers(strip_comments(text))
    for rx in (
        _DIMENSION,
        _STAGE_NAME,
        _MACRO_PARAM,
        _ASSIGNMENT,
        _FLOAT_FRACTION,
        _NAME_WITH_DIGITS,
    ):
        cleaned = rx.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), cleaned)
    findings = []
    original = text.split("\n")
    for lineno, line in enumerate(cleaned.split("\n"), start=1):
        for m in re.finditer(r"\d+(?:[.,]\d+)*", line):
            snippet = original[lineno - 1].strip()
            findings.append(
                Finding(
                    path,
                    lineno,
                    f"number typed by hand: '{m.group(0)}' in: {snippet[:120]} "
                    r"(use \rc{key} / \rcci{key} or a generated table)",
                )
            )
    return findings


def defined_macros(text: str) -> set[str]:
    """Macros ``text`` defines with \\newcommand, \\renewcommand, \\providecommand, \\def."""
    pattern = r"\\(?:(?:re|provide|new)command\*?|DeclareRobustCommand|def)\s*\{?\\([A-Za-z@]+)"
    return set(re.findall(pattern, strip_comments(text)))


def check_sources(
    sources: Mapping[str, str], numbers_keys: Iterable[str], claim_ids: Iterable[str] = ()
) -> list[Finding]:
    r"""All problems in the hand-written sources (``name -> text``) against a set of keys.

    Reports numbers typed by hand, keys printed or guarded that ``numbers_keys`` lacks,
    aliases (``\StageTwo...``-style macros) that no key defines, and unknown claim ids.
    """
    keys = set(numbers_keys)
    aliases = alias_map(keys)
    prefixes = {alias_for(k.split(".")[0]) for k in keys}
    claim_ids = set(claim_ids)
    defined: set[str] = set()
    for text in sources.values():
        defined |= defined_macros(text)
    findings: list[Finding] = []
    for name, text in sorted(sources.items()):
        findings += hand_typed_numbers(text, name)
        clean = strip_comments(text)
        for lineno, line in enumerate(clean.split("\n"), start=1):
            for key in keys_used(line) | keys_guarded(line):
                if key not in keys:
                    findings.append(Finding(name, lineno, f"record key '{key}' is not defined"))
            for macro in re.findall(r"\\([A-Z][A-Za-z]+)", line):
                if (
                    macro not in aliases
                    and macro not in defined
                    and macro not in RESERVED_MACROS
                    and any(
                        macro.startswith(p) and macro[len(p) : len(p) + 1].isupper()
                        for p in prefixes
                    )
                ):
                    findings.append(
                        Finding(name, lineno, f"macro \\{macro} is not the alias of any key")
                    )
            for cid in macro_args(line, ("Claim",)):
                if claim_ids and cid not in claim_ids:
                    findings.append(Finding(name, lineno, f"claim '{cid}' is not declared"))
    return findings


def table_keys(numbers: Numbers) -> Sequence[str]:
    """Every key some generated table prints."""
    keys: set[str] = set()
    for tex in render_tables(numbers).values():
        keys |= keys_used(tex)
    return sorted(keys)
