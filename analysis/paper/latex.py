"""Turn record text (values, methods, model ids, paths) into LaTeX that pdflatex accepts.

Everything the paper prints from a record passes through here, so a ``%`` in ``58.0%`` or a
``_`` in ``human_human`` can never break the build or silently swallow the rest of a line.
pdflatex with ``inputenc`` knows Latin-1 and a few typographic characters; the Greek letters
and symbols statistics code likes to write (kappa, rho, <=) are mapped to math, and anything
else is shown as ``[U+XXXX]`` so it stays visible instead of failing the build.
"""

from __future__ import annotations

import re

#: characters with a special meaning in LaTeX text
_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}

#: non-ASCII characters statistics code tends to write, in text-safe LaTeX
_UNICODE = {
    "\u03b1": r"\ensuremath{\alpha}",
    "\u03b2": r"\ensuremath{\beta}",
    "\u03b3": r"\ensuremath{\gamma}",
    "\u03b4": r"\ensuremath{\delta}",
    "\u0394": r"\ensuremath{\Delta}",
    "\u03b5": r"\ensuremath{\varepsilon}",
    "\u03ba": r"\ensuremath{\kappa}",
    "\u03bc": r"\ensuremath{\mu}",
    "\u03c0": r"\ensuremath{\pi}",
    "\u03c1": r"\ensuremath{\rho}",
    "\u03c3": r"\ensuremath{\sigma}",
    "\u03c4": r"\ensuremath{\tau}",
    "\u03c7": r"\ensuremath{\chi}",
    "\u2264": r"\ensuremath{\le}",
    "\u2265": r"\ensuremath{\ge}",
    "\u2260": r"\ensuremath{\ne}",
    "\u00b1": r"\ensuremath{\pm}",
    "\u00d7": r"\ensuremath{\times}",
    "\u2212": r"\ensuremath{-}",
    "\u2192": r"\ensuremath{\rightarrow}",
    "\u2248": r"\ensuremath{\approx}",
    "\u2013": "--",
    "\u2014": "---",
    "\u2018": "`",
    "\u2019": "'",
    "\u201c": "``",
    "\u201d": "''",
    "\u2026": r"\dots{}",
    "\u00a0": "~",
}


def escape_latex(text: str) -> str:
    """Escape ``text`` for LaTeX text mode (values, methods, ids, paths)."""
    out = []
    for ch in str(text):
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        elif ord(ch) < 128 or ord(ch) < 256 and ch.isprintable():
            out.append(ch)
        else:
            out.append(f"[U+{ord(ch):04X}]")
    return "".join(out)


def escape_number(display: str) -> str:
    """Escape a formatted number; a leading minus becomes a real minus sign, not a hyphen."""
    text = escape_latex(display)
    return re.sub(r"(?<![\w.])-(?=[\d.])", r"\\ensuremath{-}", text)


def breakable(text: str) -> str:
    """Escape an identifier (key, path, module) and allow line breaks after ``. _ / : -``."""
    parts = re.split(r"([._/:-])", str(text))
    out = []
    for part in parts:
        if part in {".", "_", "/", ":", "-"}:
            out.append(escape_latex(part) + r"\allowbreak{}")
        else:
            out.append(escape_latex(part))
    return "".join(out)


def texttt(text: str) -> str:
    r"""``\texttt`` of an identifier, breakable at separators."""
    return r"\texttt{" + breakable(text) + "}"


def format_number(value: float | int | None, fmt: str) -> str:
    """``format(value, fmt)``, tolerating a float under an integer spec (a CI of a count)."""
    if value is None:
        return ""
    try:
        return format(value, fmt)
    except ValueError:
        return format(int(round(float(value))), fmt)
