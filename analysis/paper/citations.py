r"""Where the paper cites each number: its sentences, tables, figures and claims.

The audit site lists, under every number, each place of the PDF that prints it. The text is
read as the PDF prints it: comments dropped, the generated text macros expanded (the dataset's
nouns such as ``\people``, ``\RealUsers``: :func:`read_text_macros` reads them from the files
the PDF inputs; :func:`with_source_words` adds the words a source defines once, such as a long
table's caption) and its switches resolved (``\ifDatasetSimulated ... \else ... \fi``),
``\IfRecordTF``/``\IfRecordsTF`` resolved against this build's records and ``\Claim`` against
its verdicts, then split into sentences; a sentence
cites the keys it prints (``\rc``, ``\rcci``, ``\rcint``, ``\rcstack``, ``\rcn``, ``\rcmethod``,
``\rclink`` and the CamelCase aliases). A generated table cites the keys its file prints, with
the caption and number of its own float (none for a table outside a float); a figure the keys
its sidecar names. Numbers of sections, tables and figures come from LaTeX's ``.aux`` of the
compiled PDF.

Sentences are turned into plain text for reading, not typeset: the printed numbers become
their display values (marked, so the site can link each one), common markup becomes text, and
anything else is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.paper.macros import display_ci, display_value
from analysis.paper.source_check import strip_comments

#: accessors that print a key's value (first argument), and what each prints
PRINTERS = ("rcci", "rcint", "rcstack", "rcn", "rcmethod", "rclink", "rc")
#: a printed number in the plain text: PUA characters around its index, never in LaTeX sources
MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"
_HEADINGS = ("section", "subsection", "subsubsection", "paragraph")
_SYMBOLS = {
    "kappa": "κ",
    "rho": "ρ",
    "alpha": "α",
    "beta": "β",
    "Delta": "Δ",
    "delta": "δ",
    "tau": "τ",
    "sigma": "σ",
    "mu": "μ",
    "times": "×",
    "pm": "±",
    "geq": "≥",
    "leq": "≤",
    "ge": "≥",
    "le": "≤",
    "approx": "≈",
    "neq": "≠",
    "to": "→",
    "ldots": "…",
    "dots": "…",
    "S": "§",
    "textasciitilde": "~",
}
_ESCAPES = {"%": "%", "&": "&", "_": "_", "#": "#", "$": "$", "{": "{", "}": "}", " ": " "}


@dataclass(frozen=True)
class Sentence:
    """One sentence of the text as printed: plain text in segments, each printed number a
    segment with its key (the other segments have the key ``""``)."""

    file: str
    section: str
    segments: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.segments)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(key for _, key in self.segments if key))


@dataclass(frozen=True)
class Float:
    """A table or figure of the paper and the keys it prints."""

    kind: str  # "table" or "figure"
    name: str  # the generated table's file stem, or the figure's stem
    label: str
    number: str
    page: str
    section: str
    caption: str
    keys: tuple[str, ...]


@dataclass
class Citations:
    """Every place the paper prints each key."""

    sentences: list[Sentence] = field(default_factory=list)
    floats: list[Float] = field(default_factory=list)

    def sentences_of(self, key: str) -> list[Sentence]:
        return [s for s in self.sentences if key in s.keys]

    def floats_of(self, key: str) -> list[Float]:
        return [f for f in self.floats if key in f.keys]

    def sections_of(self, key: str) -> list[str]:
        found = [s.section for s in self.sentences_of(key)]
        found += [f.section for f in self.floats_of(key)]
        return sorted(set(found))


def group(text: str, start: int) -> tuple[str, int]:
    """The brace group opening at ``text[start]`` (after optional spaces): (content, end)."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "{":
        raise ValueError(f"expected '{{' at offset {start}: {text[start : start + 40]!r}")
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c == "\\":
            continue
        if c == "{" and text[j - 1] != "\\":
            depth += 1
        elif c == "}" and text[j - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j], j + 1
    raise ValueError(f"unbalanced braces from offset {i}: {text[i : i + 60]!r}")


def _optional(text: str, start: int) -> int:
    """Skip an optional ``[...]`` argument at ``start``."""
    if start < len(text) and text[start] == "[":
        depth = 0
        for j in range(start, len(text)):
            depth += {"[": 1, "]": -1}.get(text[j], 0)
            if depth == 0:
                return j + 1
    return start


@dataclass(frozen=True)
class TextMacros:
    r"""The generated macros the text prints: ``words`` (a macro without arguments -> its
    LaTeX body, e.g. ``people -> simulated raters``) and ``switches`` (``\newif\ifName`` ->
    whether this build sets it true)."""

    words: Mapping[str, str] = field(default_factory=dict)
    switches: Mapping[str, bool] = field(default_factory=dict)


_NEWCOMMAND = re.compile(r"\\newcommand\s*\{?\\([A-Za-z]+)\}?\s*(?=\{)")
_NEWIF = re.compile(r"\\newif\s*\\if([A-Za-z]+)")


def _definitions(text: str) -> list[tuple[str, str, int, int]]:
    r"""``(name, body, start, end)`` of each ``\newcommand\name{body}`` without arguments."""
    out = []
    for m in _NEWCOMMAND.finditer(text):
        body, end = group(text, m.end())
        out.append((m.group(1), body, m.start(), end))
    return out


def with_source_words(
    texts: Mapping[Path, str], macros: TextMacros
) -> tuple[dict[Path, str], TextMacros]:
    r"""The sources without their ``\newcommand\name{body}`` definitions (they print nothing),
    and ``macros`` with those words added: text a source names once and prints where it is used
    (``\DataSupportCaption``, the caption a generated long table prints). A generated file's
    word wins over a source's of the same name, as the build's own."""
    words: dict[str, str] = {}
    bare: dict[Path, str] = {}
    for path, text in texts.items():
        pieces, pos = [], 0
        for name, body, start, end in _definitions(text):
            words[name] = body
            pieces.append(text[pos:start])
            pos = end
        bare[path] = "".join(pieces) + text[pos:]
    return bare, TextMacros({**words, **macros.words}, macros.switches)


def read_text_macros(paths: Iterable[Path]) -> TextMacros:
    r"""The text macros and switches the generated files define, as LaTeX would read them.

    Only what a reader sees as words is read: ``\newcommand\name{body}`` without arguments
    (a macro with ``[n]`` arguments is markup, left to :func:`to_text`), and each
    ``\newif\ifName`` with the ``\Nametrue`` / ``\Namefalse`` that sets it (false unless set).
    """
    words: dict[str, str] = {}
    switches: dict[str, bool] = {}
    for path in paths:
        text = strip_comments(Path(path).read_text(encoding="utf-8"))
        words |= {name: body for name, body, _, _ in _definitions(text)}
        for m in _NEWIF.finditer(text):
            name = m.group(1)
            sets = re.findall(r"\\" + name + r"(true|false)(?![A-Za-z])", text)
            switches[name] = bool(sets) and sets[-1] == "true"
    return TextMacros(words, switches)


_CONDITIONAL = re.compile(r"\\(if[A-Za-z]*|else|fi)(?![A-Za-z])")


def resolve_switches(text: str, switches: Mapping[str, bool]) -> str:
    r"""``\ifName A\else B\fi`` of every known switch replaced by the branch this build prints
    (nested conditionals included); an ``\if...`` the build does not define is left alone."""
    out: list[str] = []
    # one frame per open conditional: (known switch?, its value, in its else branch?)
    stack: list[tuple[bool, bool, bool]] = []

    def printing() -> bool:
        return all(not known or value != in_else for known, value, in_else in stack)

    pos = 0
    for m in _CONDITIONAL.finditer(text):
        if printing():
            out.append(text[pos : m.start()])
        pos = m.end()
        token = m.group(1)
        if token.startswith("if"):
            name = token[2:]
            known = name in switches
            stack.append((known, switches.get(name, False), False))
            if not known and printing():
                out.append(m.group(0))
        elif not stack:  # an \else or \fi of a conditional outside this text
            out.append(m.group(0))
        elif token == "else":
            known, value, _ = stack.pop()
            stack.append((known, value, True))
            if not known and printing():
                out.append(m.group(0))
        else:
            known, _, _ = stack.pop()
            if not known and printing():
                out.append(m.group(0))
    if printing():
        out.append(text[pos:])
    return "".join(out)


def expand_text_macros(text: str, macros: TextMacros) -> str:
    r"""``text`` with its switches resolved and each text macro replaced by its body (``\people{}``
    and ``\people`` alike), repeatedly, so a body that uses another macro is expanded too."""
    text = resolve_switches(text, macros.switches)
    if not macros.words:
        return text
    pattern = re.compile(
        r"\\(" + "|".join(sorted(map(re.escape, macros.words), key=len, reverse=True)) + r")"
        r"(?![A-Za-z])(?:\{\})?"
    )
    for _ in range(10):  # bodies nest a level or two; ten is far more than any does
        expanded = pattern.sub(lambda m: macros.words[m.group(1)], text)
        if expanded == text:
            break
        text = expanded
    return text


_BRANCH = re.compile(r"\\(IfRecordTF|IfRecordsTF|Claim)(?![A-Za-z])")


def resolve_branches(
    text: str, present: Callable[[str], bool], claims: Mapping[str, Mapping[str, Any]]
) -> str:
    """The text as the PDF prints it: record guards and claims resolved."""
    out: list[str] = []
    pos = 0
    for m in _BRANCH.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos : m.start()])
        first, end = group(text, m.end())
        second, end = group(text, end)
        if m.group(1) == "Claim":
            claim = claims.get(first.strip(), {})
            verdict = claim.get("verdict")
            if verdict == "supported":
                body = second
            elif verdict in ("refuted", "not supported") and claim.get("negative"):
                body = str(claim["negative"]).replace("_", r"\_")
            elif verdict == "inconclusive":
                why = claim.get("why_inconclusive") or "its test cannot decide"
                body = f"[Inconclusive on this dataset ({why}): {second}]"
            else:
                body = f"[Not testable on this dataset: {second}]"
        else:
            third, end = group(text, end)
            keys = [k.strip() for k in first.split(",") if k.strip()]
            body = second if all(present(k) for k in keys) else third
        out.append(resolve_branches(body, present, claims))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _mark_numbers(
    text: str, numbers: Mapping[str, Mapping[str, Any]], aliases: Mapping[str, str]
) -> tuple[str, list[str]]:
    """Replace each printed number by a mark and its display text; the marks' keys in order."""
    keys: list[str] = []
    pattern = re.compile(r"\\(" + "|".join(PRINTERS) + r"|[A-Za-z]+)(?![A-Za-z])")
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        if m.start() < pos:
            continue
        name = m.group(1)
        if name in PRINTERS:
            try:
                arg, end = group(text, m.end())
            except ValueError:
                continue
            key = arg.strip()
            shown = key
            if name == "rclink":
                shown, end = group(text, end)
                shown = to_text(shown)
        elif name in aliases:
            key, end, shown = aliases[name], m.end(), ""
        else:
            continue
        rec = numbers.get(key)
        if rec is not None and name != "rclink":
            shown = printed(name, rec)
        out.append(text[pos : m.start()])
        out.append(f"{MARK_OPEN}{len(keys)}{MARK_CLOSE}{shown}{MARK_OPEN}{MARK_CLOSE}")
        keys.append(key)
        pos = end
    out.append(text[pos:])
    return "".join(out), keys


def printed(accessor: str, rec: Mapping[str, Any]) -> str:
    """What an accessor prints for a record, as plain text."""
    value = display_value(rec)
    ci = display_ci(rec)
    if accessor == "rcn":
        return f"{int(rec['n']):,d}" if rec.get("n") is not None else ""
    if accessor == "rcmethod":
        return str(rec.get("method") or "")
    if accessor in ("rcci", "rcint", "rcstack") and ci is not None:
        level = rec.get("ci_level")
        prefix = f"{float(level):.0%} CI " if accessor == "rcci" and level is not None else ""
        return f"{value} [{prefix}{ci[0]}, {ci[1]}]"
    return value


def to_text(tex: str, refs: Mapping[str, str] | None = None) -> str:
    """Readable plain text of a LaTeX fragment (markup dropped, symbols as Unicode)."""
    refs = refs or {}
    s = tex
    s = re.sub(r"\\(?:eq)?ref\*?\{([^{}]*)\}", lambda m: refs.get(m.group(1), "??"), s)
    s = re.sub(r"\\cite[pt]?\*?(?:\[[^\]]*\])*\{([^{}]*)\}", lambda m: f"[{m.group(1)}]", s)
    s = re.sub(r"\\(?:label|hypertarget)\{[^{}]*\}", "", s)
    s = re.sub(r"\\\\(?:\[[^\]]*\])?", " ", s)
    s = re.sub(r"\\([%&_#${} ])", lambda m: "\ue002" + m.group(1), s)
    s = re.sub(r"\\([A-Za-z]+)\*?", lambda m: _SYMBOLS.get(m.group(1), "\ue003"), s)
    s = re.sub(r"\\[,;:!/]", " ", s)
    s = re.sub(r"\ue003(\[[^\]]*\])?", "", s)
    s = s.replace("---", "—").replace("--", "–").replace("``", "“").replace("''", "”")
    s = s.replace("~", " ").replace("$", "").replace("{", "").replace("}", "")
    s = re.sub(r"\ue002(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), s)
    return re.sub(r"\s+", " ", s).strip()


def read_aux(aux: Path | None) -> dict[str, tuple[str, str]]:
    r"""``label -> (number, page)`` from LaTeX's ``.aux`` (``\newlabel{name}{{num}{page}...}``)."""
    if aux is None or not aux.is_file():
        return {}
    text = aux.read_text(encoding="utf-8", errors="replace")
    return {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"\\newlabel\{([^{}]+)\}\{\{([^{}]*)\}\{([^{}]*)\}", text)
    }


def _ref_texts(labels: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    return {name: number for name, (number, _page) in labels.items()}


_HEADING = re.compile(r"\\(" + "|".join(_HEADINGS) + r")\*?(?![A-Za-z])")
_SENTENCE_END = re.compile(r"(?<=[.!?])[)\]”']*\s+(?=[A-Z\\(\[“\ue000])")


def _sections(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, title)`` of each heading of ``text`` (a ``\\paragraph`` counts)."""
    out = []
    for m in _HEADING.finditer(text):
        try:
            title, end = group(text, _optional(text, m.end()))
        except ValueError:
            continue
        out.append((m.start(), end, title))
    return out


def _section_title(level: str, title: str, number: str) -> str:
    text = to_text(title).rstrip(".")
    return f"{number} {text}".strip() if level != "paragraph" else text


def sentences_of_file(
    path: Path,
    text: str,
    numbers: Mapping[str, Mapping[str, Any]],
    aliases: Mapping[str, str],
    claims: Mapping[str, Mapping[str, Any]],
    labels: Mapping[str, tuple[str, str]],
) -> list[Sentence]:
    """Every sentence of one source file that prints a number, with its section."""
    resolved = resolve_branches(strip_comments(text), lambda k: k in numbers, claims)
    refs = _ref_texts(labels)
    section = sub = ""
    pos = 0
    chunks: list[tuple[str, str]] = []
    for start, end, title in _sections(resolved):
        chunks.append((resolved[pos:start], f"{section} · {sub}" if sub else section))
        level = _HEADING.match(resolved, start).group(1)  # type: ignore[union-attr]
        label = re.match(r"\s*\\label\{([^{}]+)\}", resolved[end:])
        number = labels.get(label.group(1), ("", ""))[0] if label else ""
        if level == "section":
            section, sub = _section_title(level, title, number), ""
        else:
            sub = _section_title(level, title, number)
        pos = end
    chunks.append((resolved[pos:], f"{section} · {sub}" if sub else section))
    out: list[Sentence] = []
    for chunk, where in chunks:
        for paragraph in re.split(r"\n\s*\n", chunk):
            marked, keys = _mark_numbers(paragraph, numbers, aliases)
            for piece in _SENTENCE_END.split(marked):
                if MARK_OPEN not in piece:
                    continue
                segments = _segments(to_text(piece, refs), keys)
                out.append(Sentence(path.as_posix(), where or path.stem, segments))
    return out


_MARKED = re.compile(MARK_OPEN + r"(\d+)" + MARK_CLOSE + r"(.*?)" + MARK_OPEN + MARK_CLOSE)


def _segments(text: str, keys: list[str]) -> tuple[tuple[str, str], ...]:
    """Split marked plain text into (text, key) segments."""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in _MARKED.finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], ""))
        out.append((m.group(2), keys[int(m.group(1))]))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], ""))
    return tuple(out)


def read_citations(
    sources: Iterable[Path],
    tables: Iterable[Path],
    figures: Iterable[Any],
    numbers: Mapping[str, Mapping[str, Any]],
    aliases: Mapping[str, str],
    claims: Mapping[str, Mapping[str, Any]],
    aux: Path | None = None,
    macros: TextMacros | None = None,
) -> Citations:
    """Sentences, tables and figures of the paper, each with the keys it prints; the text with
    this build's ``macros`` (:func:`read_text_macros` of the generated files) expanded."""
    labels = read_aux(aux)
    refs = _ref_texts(labels)
    cites = Citations()
    raw = {Path(p): strip_comments(Path(p).read_text(encoding="utf-8")) for p in sources}
    raw, macros = with_source_words(raw, macros or TextMacros())
    texts = {path: expand_text_macros(text, macros) for path, text in raw.items()}
    for path, text in texts.items():
        cites.sentences += sentences_of_file(path, text, numbers, aliases, claims, labels)
    for table in sorted(Path(p) for p in tables):
        if not table.is_file():
            continue
        own = strip_comments(table.read_text(encoding="utf-8"))
        _, keys = _mark_numbers(own, numbers, aliases)
        own = expand_text_macros(own, macros)
        where = _float_in_sources(texts, "table", table.stem, labels, refs, numbers, aliases, own)
        if not where[3]:  # generated but input by no source: not in the PDF, so it cites nothing
            continue
        cites.floats.append(Float("table", table.stem, *where, keys=tuple(dict.fromkeys(keys))))
    for fig in figures:
        where = _float_in_sources(texts, "figure", fig.stem, labels, refs, numbers, aliases)
        if not where[3]:  # drawn but placed by no source: not in the PDF
            continue
        keys = tuple(k for k in fig.keys if k in numbers)
        cites.floats.append(Float("figure", fig.stem, *where, keys=keys))
    return cites


def _float_in_sources(
    texts: Mapping[Path, str],
    kind: str,
    name: str,
    labels: Mapping[str, tuple[str, str]],
    refs: Mapping[str, str],
    numbers: Mapping[str, Mapping[str, Any]],
    aliases: Mapping[str, str],
    own: str = "",
) -> tuple[str, str, str, str, str]:
    """(label, number, page, section, caption) of a table (by the generated file it inputs) or
    figure (by its ``\\StudyFigure`` stem) in the sources; empty strings where not found.

    A table's caption and label are those of the float around its ``\\input`` (the last caption
    before it, else the first after it), else its own file's (``own``: a long table captions
    itself); a table set outside any float (in a ``center``) has neither, never a neighbour's."""
    for path, raw in texts.items():
        text = strip_comments(raw)
        if kind == "figure":
            m = re.search(r"\\StudyFigure\s*(\[[^\]]*\])?\s*\{" + re.escape(name) + r"\}", text)
            if m is None:
                continue
            caption, _ = group(text, m.end())
            label = f"fig:{name}"
        else:
            m = re.search(r"\\input\{\\GeneratedDir/tables/" + re.escape(name) + r"\}", text)
            if m is None:
                continue
            env, at = _enclosing_table(text, m.start(), m.end()) or (own, 0)
            caps = list(re.finditer(r"\\caption(?:\[[^\]]*\])?", env))
            cap = next((c for c in reversed(caps) if c.start() < at), caps[0] if caps else None)
            caption = group(env, cap.end())[0] if cap else ""
            lab = re.search(r"\\label\{([^{}]+)\}", env[cap.end() :] if cap else env)
            label = lab.group(1) if lab else ""
        heads = [h for h in _sections(text) if h[0] < m.start()]
        titles = [
            (h, _HEADING.match(text, h[0]).group(1))  # type: ignore[union-attr]
            for h in heads
        ]
        section = next((to_text(h[2]) for h, lvl in reversed(titles) if lvl == "section"), "")
        number, page = labels.get(label, ("", ""))
        marked, _ = _mark_numbers(caption, numbers, aliases)
        caption = _MARKED.sub(lambda m: m.group(2), to_text(marked, refs))
        return label, number, page, section or path.stem, caption
    return "", "", "", "", ""


_TABLE_ENV = re.compile(r"\\(begin|end)\{table\*?\}")


def _enclosing_table(text: str, start: int, end: int) -> tuple[str, int] | None:
    """The ``table`` float around ``text[start:end]`` and that span's offset in it, or None."""
    before = list(_TABLE_ENV.finditer(text, 0, start))
    if not before or before[-1].group(1) != "begin":
        return None
    close = _TABLE_ENV.search(text, end)
    if close is None or close.group(1) != "end":
        return None
    return text[before[-1].start() : close.start()], start - before[-1].start()
