r"""The paper's tables, generated from the records: no cell is typed by hand.

A table is declared, not written: which keys make its rows (a regular expression with a
named group ``row``, and optionally ``group`` for sections such as the stage-2 round) and
which key template fills each column. Cells are ``\rcci{key}`` or ``\rc{key}``, so every cell
links to its page in the audit site beside the PDF; a missing record is a dash. Rows appear for
whatever raters, models or judges a dataset has, so the same declarations serve the bundled
world and the authors' real exports. A table with no rows prints one sentence saying so.

Each generated file holds only the ``tabular`` (booktabs) and its notes; the caption, label and
placement belong to the paper text, which ``\input``s it inside a ``table`` environment.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analysis.paper.latex import escape_latex, escape_number, format_number
from analysis.paper.macros import ci_level_of
from analysis.paper.scorecard import printed_rows
from analysis.settings import NEUTRAL_NOUNS, DataNouns

Numbers = Mapping[str, Mapping[str, Any]]

#: rows that read best first, in this order; everything else follows alphabetically
LEADING_ROWS = (
    "human_majority",
    "human",
    "humans",
    "kappa.human_human",
    "kappa.model_model",
    "kappa.human_model",
    "ceiling.kappa_human_vs_rest",
    "human_vs_rest",
    "mean_model",
)
#: field names under ``extra`` that hold a multiplicity-adjusted p value, in order of preference
ADJUSTED_P_FIELDS = ("p_adjusted", "p_holm", "p_adj", "p_value_adjusted", "p_fdr_bh")


_PLACEHOLDER = re.compile(r"\{(" + "|".join(NEUTRAL_NOUNS.words()) + r")\}")


def escaped_in_words(text: str, nouns: DataNouns) -> str:
    """Plain ``text`` escaped for LaTeX, its noun placeholders in the dataset's words."""
    parts = _PLACEHOLDER.split(text)
    # split keeps the placeholder names at the odd positions
    return "".join(
        in_words("{" + part + "}", nouns) if i % 2 else escape_latex(part)
        for i, part in enumerate(parts)
    )


def two_lines(top: str, bottom: str) -> str:
    """A column header on two lines (LaTeX), so a table of many columns fits the text."""
    return r"\begin{tabular}[b]{@{}r@{}}" + top + r"\\" + bottom + r"\end{tabular}"


def in_words(text: str, nouns: DataNouns) -> str:
    """``text`` with the placeholders of :meth:`DataNouns.words` (``{people}``, ``{People}``,
    ``{person}``, ``{users}``, ``{chat_users}``, ``{models}`` ...) replaced by the dataset's
    nouns (LaTeX-escaped); other braces (LaTeX) are left alone."""
    for name, value in nouns.words().items():
        text = text.replace("{" + name + "}", escape_latex(value))
    return text


#: row labels of the known group names, in words (``{people}``: the dataset's noun)
ROW_WORDS = {
    "human_majority": "majority of {people}",
    "human": "{people} (mean of raters)",
    "kappa.human_human": "{people} with {people}",
    "kappa.model_model": "models with models",
    "kappa.human_model": "{people} with models",
    "ceiling.kappa_human_vs_rest": "ceiling: each {person} vs the others",
    "human_vs_rest": "ceiling: each {person} vs the others",
    "mean_model": "mean over models",
}


def row_label(row: str, nouns: DataNouns = NEUTRAL_NOUNS) -> str:
    """A readable row label: known group names in the dataset's words, ids escaped."""
    if row in ROW_WORDS:
        return in_words(ROW_WORDS[row], nouns)
    return escape_latex(row)


#: words for the key fragments of open-ended key families (a table label is words, never a
#: key fragment such as ``final / reference / sim-llm-a / f1``); model ids stay as they are
FRAGMENT_WORDS = {
    "auroc": "AUROC",
    "f1": "F1",
    "kappa": "Cohen's \u03ba",
    "spearman": "Spearman \u03c1",
    "kendall": "Kendall \u03c4",
    "final": "final round",
    "pilot": "pilot round",
    "pilot2": "second pilot round",
    "pilot_graded": "graded pilot round",
    "reference": "zero-shot",
    "zero_shot": "zero-shot",
    "acceptance_kept": "people's acceptance of the attributes kept",
    "kept_share": "share of attributes kept",
    "zero_shot_acceptance_kept": "zero-shot: people's acceptance of the attributes kept",
    "zero_shot_f1": "zero-shot: F1",
    "zero_shot_kept_share": "zero-shot: share of attributes kept",
    "human_rate": "share relevant to people",
    "predicted_rate": "share predicted relevant",
    "minus_zero_shot": "minus zero-shot",
    "f1_minus_zero_shot": "F1 minus zero-shot",
    "judge": "model judge",
    "ordinal": "ordinal reward model",
    "pairwise": "pairwise reward model",
    "pointwise": "pointwise reward model",
    "detector_accuracy": "mention detector accuracy",
    "detector_sensitivity": "mention detector sensitivity",
    "detector_specificity": "mention detector specificity",
}


def key_words(fragment: str) -> str:
    """Readable LaTeX words for the dotted tail of a key: ``final.reference.sim-llm-a.f1`` ->
    ``final round, zero-shot, sim-llm-a, F1`` (unknown parts with spaces for underscores; a
    part starting with a digit belongs to the model id before it, as in ``gpt-5.4``)."""
    parts: list[str] = []
    for part in fragment.split("."):
        if parts and part[:1].isdigit():  # a model id with a version: gpt-5.4
            parts[-1] += "." + part
        elif part:
            parts.append(part)
    words = [FRAGMENT_WORDS.get(p, p.replace("_", " ")) for p in parts]
    return escape_latex(", ".join(words))


def _row_order(row: str) -> tuple[int, str]:
    return (LEADING_ROWS.index(row) if row in LEADING_ROWS else len(LEADING_ROWS), row)


def has_ci(record: Mapping[str, Any]) -> bool:
    return record.get("ci_low") is not None and record.get("ci_high") is not None


def caveat(record: Mapping[str, Any] | None) -> str | None:
    """The caveat a record carries (``extra.caveat``, from ``stages.caveats``): a model whose
    numbers say nothing about annotation (the exercise-only local model). Such rows leave the
    paper's tables for the one appendix table that shows them (``exercise_model``)."""
    extra = (record or {}).get("extra") or {}
    return str(extra["caveat"]) if isinstance(extra, Mapping) and extra.get("caveat") else None


#: a paragraph column set ragged right (``RAGGED + "p{width}"``)
RAGGED = r">{\raggedright\arraybackslash}"
#: the label column of a stacked table: a row is two lines high anyway (the value, then its
#: interval), so a long label wraps onto the second line instead of widening the table
STACKED_LABEL = RAGGED + r"p{0.2\linewidth}"


def value_cell(numbers: Numbers, key: str, with_ci: bool = True, stacked: bool = False) -> str:
    """``\\rcint{key}`` (value [CI]), ``\\rcstack{key}`` (the interval under the value, for
    narrow columns) or ``\\rc{key}`` when the record exists, else a dash."""
    if key not in numbers:
        return "--"
    if not (with_ci and has_ci(numbers[key])):
        return f"\\rc{{{key}}}"
    return f"\\rcstack{{{key}}}" if stacked else f"\\rcint{{{key}}}"


def ci_note(numbers: Numbers, keys: Sequence[str]) -> str | None:
    """The sentence under a table that says what its brackets are (levels from the records)."""
    levels = sorted({ci_level_of(numbers[k]) for k in keys if k in numbers and has_ci(numbers[k])})
    if not levels:
        return None
    text = " or ".join(format_number(level, ".0%") for level in levels)
    return f"Brackets: {escape_latex(text)} confidence intervals (methods in the audit site)."


def extra_cell(numbers: Numbers, key: str, names: Sequence[str], fmt: str) -> str:
    """A number stored under ``extra`` of a record (first of ``names``), linked to its row."""
    rec = numbers.get(key)
    if rec is None:
        return "--"
    extra = rec.get("extra") or {}
    for name in names:
        x = extra.get(name)
        if isinstance(x, int | float) and not isinstance(x, bool):
            text = format_number(x, fmt)
            return f"\\rclink{{{key}}}{{{escape_number(text)}}}"
    return "--"


def adjusted_p_cell(numbers: Numbers, key: str) -> str:
    """The multiplicity-adjusted p value stored with a test's record; one that rests on a
    p-value at the resampling floor is an upper bound and prints as one (``<m/B``)."""
    rec = numbers.get(key) or {}
    extra = rec.get("extra") or {}
    p = next((extra[n] for n in ADJUSTED_P_FIELDS if _is_num(extra.get(n))), None)
    if p is not None and extra.get("p_adjusted_is_upper_bound"):
        text = escape_number(format_number(p, ".2g"))
        return f"\\hyperlink{{rec:{key}}}{{\\ensuremath{{<}}{text}}}"
    if p is not None and p < 0.001:
        return f"\\rclink{{{key}}}{{\\ensuremath{{<}}0.001}}"
    return extra_cell(numbers, key, ADJUSTED_P_FIELDS, ".3f")


def _is_num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def advantage_cell(metrics: Mapping[str, str]) -> Callable[[Numbers, str], str]:
    """A cell saying in words whether a trained model beats the row's model, per metric.

    ``key`` is the prefix of the paired-difference records (trained minus this model), one
    per metric suffix (suffix ``""``: ``key`` is the record itself). The trained model beats
    the row's model on a metric only when the interval of the difference lies above zero, so
    a point estimate above zero with an interval that reaches zero reads "no": the words
    follow the intervals, never the point values.
    """

    def cell(numbers: Numbers, key: str) -> str:
        above, below, known = [], [], 0
        for suffix, label in metrics.items():
            rec = numbers.get(f"{key}.{suffix}" if suffix else key)
            if rec is None or not has_ci(rec):
                continue
            known += 1
            if rec["ci_low"] > 0:
                above.append(label)
            elif rec["ci_high"] < 0:
                below.append(label)
        if not known:
            return "--"
        if len(above) == len(metrics):
            return "yes"
        if above:
            return " and ".join(above) + " only"
        return "no, lower" if below else "no"

    return cell


@dataclass(frozen=True)
class Column:
    """One column: its header and the key template (``{row}``, ``{group}``) of its cells."""

    header: str
    template: str
    ci: bool = True
    cell: Callable[[Numbers, str], str] | None = None  # custom cell (e.g. an adjusted p)
    alt: Mapping[str, str] = field(default_factory=dict)  # row -> template for special rows

    def key(self, row: str, group: str) -> str:
        return self.alt.get(row, self.template).format(row=row, group=group)


@dataclass(frozen=True)
class RowTable:
    """A table whose rows are discovered from the keys (see the module docstring)."""

    name: str
    row_header: str
    row_pattern: str
    columns: tuple[Column, ...]
    group_label: Callable[[str], str] = lambda g: escape_latex(g)
    empty: str = "No records for this table in this dataset."
    notes: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)  # row -> label in this table
    first: tuple[str, ...] = ()  # rows shown first in each group (e.g. the trained model's)
    stacked: bool = False  # each interval under its value: narrow columns for a wide table

    def rows(self, numbers: Numbers) -> dict[str, list[str]]:
        """``group -> rows`` found in ``numbers`` (group ``""`` without sections).

        The row is the first matched group whose name starts with ``row`` (a pattern may
        offer alternatives: ``(?P<row>...)|(?P<row_ceiling>...)``).
        """
        rx = re.compile(self.row_pattern)
        found: dict[str, set[str]] = {}
        for key in numbers:
            m = rx.match(key)
            if m:
                groups = m.groupdict()
                row = next(v for k, v in groups.items() if k.startswith("row") and v)
                found.setdefault(groups.get("group") or "", set()).add(row)

        def order(row: str) -> tuple[int, int, str]:
            lead = self.first.index(row) if row in self.first else len(self.first)
            return (lead, *_row_order(row))

        return {g: sorted(found[g], key=order) for g in sorted(found)}

    def caveated(self, numbers: Numbers, row: str, group: str) -> bool:
        """Whether any record of the row carries a caveat (the exercise-only model)."""
        return any(caveat(numbers.get(col.key(row, group))) for col in self.columns)

    def render(self, numbers: Numbers, nouns: DataNouns = NEUTRAL_NOUNS) -> str:
        groups = {
            g: [r for r in rows if not self.caveated(numbers, r, g)]
            for g, rows in self.rows(numbers).items()
        }
        groups = {g: rows for g, rows in groups.items() if rows}
        if not groups:
            return f"\\emph{{{escape_latex(self.empty)}}}\n"
        ncol = 1 + len(self.columns)
        size = r"\footnotesize\setlength\tabcolsep{4pt}" if ncol > 4 else r"\small"
        lines = [
            r"\begingroup" + size,
            r"\begin{tabular}{@{}"
            + (STACKED_LABEL if self.stacked else "l")
            + "r" * len(self.columns)
            + "@{}}",
            r"\toprule",
            " & ".join([self.row_header, *(c.header for c in self.columns)]) + r" \\",
            r"\midrule",
        ]
        shown: list[str] = []
        for g_index, (group, rows) in enumerate(groups.items()):
            if group:
                if g_index:
                    lines.append(r"\addlinespace")
                lines.append(f"\\multicolumn{{{ncol}}}{{@{{}}l}}{{{self.group_label(group)}}} \\\\")
            for row in rows:
                label = self.labels.get(row)
                cells = [in_words(label, nouns) if label else row_label(row, nouns)]
                for col in self.columns:
                    key = col.key(row, group)
                    if col.cell is not None:
                        cells.append(col.cell(numbers, key))
                    else:
                        cells.append(value_cell(numbers, key, col.ci, self.stacked))
                        shown += [key] if col.ci else []
                lines.append(
                    " & ".join(cells) + r" \\" + (r"\addlinespace[1pt]" if self.stacked else "")
                )
        lines += [r"\bottomrule", r"\end{tabular}"]
        notes = [n for n in (ci_note(numbers, shown),) if n] + [
            in_words(n, nouns) for n in self.notes
        ]
        for note in notes:
            lines.append(r"\par\smallskip\parbox{\linewidth}{" + note + "}")
        lines.append(r"\endgroup")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class KeyListTable:
    """A table with one row per matching key: for families whose key names are open-ended.

    Keys whose record carries a caveat (the exercise-only model) are left out, unless the
    table is the one that shows them (``caveated=True``: only those keys)."""

    name: str
    sections: tuple[tuple[str, str], ...]  # (section title, regex over keys)
    labels: Mapping[str, str] = field(default_factory=dict)  # key -> readable label
    empty: str = "No records for this table in this dataset."
    caveated: bool = False
    notes: tuple[str, ...] = ()

    def keys(self, numbers: Numbers, pattern: str) -> list[str]:
        rx = re.compile(pattern)
        return sorted(
            k for k in numbers if rx.match(k) and (caveat(numbers[k]) is not None) == self.caveated
        )

    def render(self, numbers: Numbers, nouns: DataNouns = NEUTRAL_NOUNS) -> str:
        blocks = []
        for title, pattern in self.sections:
            keys = self.keys(numbers, pattern)
            if keys:
                blocks.append((title, keys, re.compile(pattern)))
        if not blocks:
            return f"\\emph{{{escape_latex(self.empty)}}}\n"
        all_keys = [k for _, keys, _ in blocks for k in keys]
        with_n = any(numbers[k].get("n") is not None for k in all_keys)
        ncol = 3 if with_n else 2
        lines = [
            r"\begingroup\small",
            r"\begin{tabular}{@{}l" + "r" * (ncol - 1) + "@{}}",
            r"\toprule",
            r"Quantity & Value" + (r" & $n$" if with_n else "") + r" \\",
            r"\midrule",
        ]
        for i, (title, keys, rx) in enumerate(blocks):
            if i:
                lines.append(r"\addlinespace")
            if title:
                head = f"\\emph{{{escaped_in_words(title, nouns)}}}"
                lines.append(f"\\multicolumn{{{ncol}}}{{@{{}}l}}{{{head}}} \\\\")
            for key in keys:
                m = rx.match(key)
                rest = key[key.rfind(".", 0, m.end() if m else len(key)) + 1 :] or key
                if m is not None and "label" in m.groupdict():  # the pattern names the words
                    rest = m["label"]
                label = self.labels.get(key)
                label = in_words(label, nouns) if label else key_words(rest)
                n = f"\\rcn{{{key}}}" if numbers[key].get("n") is not None else "--"
                cells = [label, value_cell(numbers, key)] + ([n] if with_n else [])
                lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
        notes = [n for n in (ci_note(numbers, all_keys),) if n]
        notes += [in_words(n, nouns) for n in self.notes]
        for note in notes:
            lines.append(r"\par\smallskip\parbox{\linewidth}{" + note + "}")
        lines.append(r"\endgroup")
        return "\n".join(lines) + "\n"


#: the verdict rules under the scorecard table (which rule a row used is in its record)
SCORECARD_NOTE = (
    "Rounding rule, for a figure this build recomputes from the study's own data by the "
    "study's method: reproduced when the estimate rounds to the published figure (half a step "
    "of its last digit, or the stated tolerance of an approximate figure), since sampling "
    "error is the wrong yardstick for the same data. Every other row: the 95\\% interval of "
    "(this build minus published) against the equivalence margin written with its reason in "
    "the study file (Appendix~\\ref{app:claims}): reproduced when the interval lies within "
    "the margin, differs when it lies wholly outside, inconclusive otherwise. Partial: the "
    "dataset holds only part of what the study pooled over."
)

#: the stages of the data-support table, in order, with their headings
SUPPORT_STAGES = {
    "data": "Sizes of the study",
    "stage1": "Stage 1: attribute extraction",
    "stage2": "Stage 2: relevance matching",
    "stage3": "Stage 3: response generation",
}


def support_entries(numbers: Numbers) -> dict[str, tuple[int, str, Mapping[str, Any]]]:
    """Every published figure once (an ``each`` entry makes several rows, one figure):
    entry name -> (order, its first ``repro.<name>.published`` key, that record)."""
    entries: dict[str, tuple[int, str, Mapping[str, Any]]] = {}
    for key, rec in numbers.items():
        extra = rec.get("extra") or {}
        if not (key.startswith("repro.") and key.endswith(".published")) or not extra.get(
            "release"
        ):
            continue
        name = str(extra.get("entry") or key[len("repro.") : -len(".published")])
        if name not in entries or key < entries[name][1]:
            entries[name] = (int(extra.get("order", 0)), key, rec)
    return entries


def release_support_words(numbers: Numbers) -> str:
    """What the authors' release supports, stage by stage, in words read from the data-support
    table's rows (``release`` of each figure): "stage~2 in part, stage~3 partly, for 1 of its 6
    figures and stage~1 not at all". A stage all of whose figures the release holds
    is supported "in full", none of them "not at all"; the rest "in part", with how many of
    the stage's figures where most are not supported."""
    by_stage: dict[str, list[str]] = {}
    for _, _, rec in support_entries(numbers).values():
        extra = rec.get("extra") or {}
        by_stage.setdefault(str(extra.get("stage")), []).append(str(extra["release"]))
    parts = []
    for stage in SUPPORT_STAGES:
        releases = by_stage.get(stage)
        if stage == "data" or not releases:
            continue
        name = "stage~" + stage.removeprefix("stage")
        held = sum(r != "no" for r in releases)
        if held == 0:
            parts.append((2, f"{name} not at all"))
        elif all(r == "yes" for r in releases):
            parts.append((0, f"{name} in full"))
        elif 2 * held < len(releases):
            how = "" if all(r == "yes" for r in releases if r != "no") else "partly, "
            parts.append((1, f"{name} {how}for {held} of its {len(releases)} figures"))
        else:
            parts.append((1, f"{name} in part"))
    if not parts:
        return "none of the study's figures (none is declared for this build)"
    words = [w for _, w in sorted(parts, key=lambda t: t[0])]
    return ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]


def render_release_support_tex(numbers: Numbers) -> str:
    r"""``\ReleaseSupport``: :func:`release_support_words` for the limitations' sentence."""
    return (
        "% Generated by rule `paper_tables` from the data-support table's rows. Do not edit.\n"
        f"\\newcommand\\ReleaseSupport{{{release_support_words(numbers)}}}\n"
    )


@dataclass(frozen=True)
class DataSupportTable:
    """What the authors' public release can support: every figure the study published, stage
    by stage, whether the release holds what it needs (yes / partial / no) and what it holds
    or lacks. Read from the ``repro.<name>.published`` records (the study file's ``release``
    and ``release_note``), so it is the same in every build, simulated or real."""

    name: str = "data_support"

    def render(self, numbers: Numbers) -> str:
        entries = support_entries(numbers)
        if not entries:  # the table (and its label, which the text cites) says so
            return (
                "\n".join(
                    [
                        r"\begin{longtable}{@{}l@{}}",
                        r"\caption{\DataSupportCaption}\label{tab:data-support}\\",
                        r"\emph{No published figures are declared for this build.}\\",
                        r"\end{longtable}",
                    ]
                )
                + "\n"
            )
        source = next(iter(entries.values()))[2]["extra"].get("release_source", "")
        lines = [
            r"\begingroup\scriptsize\setlength\tabcolsep{4pt}",
            # ragged right: justified narrow columns stretch their spaces (underfull boxes)
            r"\begin{longtable}{@{}"
            + RAGGED
            + r"p{0.3\linewidth}"
            + RAGGED
            + r"p{0.13\linewidth}l"
            + RAGGED
            + r"p{0.4\linewidth}@{}}",
            r"\caption{\DataSupportCaption}\label{tab:data-support}\\",
            r"\toprule",
            r"Figure & Published & Release & What the release holds \\",
            r"\midrule",
            r"\endfirsthead",
            r"\toprule",
            r"Figure & Published & Release & What the release holds \\",
            r"\midrule",
            r"\endhead",
        ]
        rows = sorted(entries.values(), key=lambda t: (t[0], t[1]))
        first = True
        for stage, heading in SUPPORT_STAGES.items():
            mine = [(k, r) for _, k, r in rows if (r.get("extra") or {}).get("stage") == stage]
            if not mine:
                continue
            if not first:
                lines.append(r"\addlinespace")
            first = False
            lines.append(f"\\multicolumn{{4}}{{@{{}}l}}{{\\emph{{{escape_latex(heading)}}}}} \\\\")
            for key, rec in mine:
                extra = rec["extra"]
                figure = str(extra.get("figure") or extra.get("quantity", ""))
                figure = re.sub(r"^stage \d: ", "", figure)
                cells = [
                    escape_latex(figure),
                    f"\\rc{{{key}}}",
                    escape_latex(str(extra["release"])),
                    escape_latex(str(extra.get("release_note", ""))),
                ]
                lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{longtable}"]
        note = (
            "Yes: the release holds what the figure needs; partial: part of it (fewer models, "
            "another round); no: it does not. Source: " + escape_latex(str(source)) + "."
        )
        lines.append(r"\par\smallskip\noindent\parbox{\linewidth}{" + note + "}")
        lines.append(r"\endgroup")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ScorecardTable:
    """Does it reproduce? quantity | study | this build [CI] | n | verdict, one row per
    ``repro.<name>.verdict`` record, in the published file's order."""

    name: str = "scorecard"

    def render(self, numbers: Numbers) -> str:
        rows = printed_rows(numbers)
        if not rows:  # the table (and its label, which the text cites) says so
            return (
                "\n".join(
                    [
                        r"\begin{longtable}{@{}l@{}}",
                        r"\caption{\ScorecardCaption}\label{tab:scorecard}\\",
                        r"\emph{No published figures were compared in this build.}\\",
                        r"\end{longtable}",
                    ]
                )
                + "\n"
            )
        # A longtable, not a float: the study published more figures than fit one page, and a
        # float too large for its page hides its last rows.
        header = r"Quantity & Study & This build & $n$ & Verdict \\"
        lines = [
            r"\begingroup\scriptsize\setlength\tabcolsep{4pt}",
            r"\begin{longtable}{@{}p{0.34\linewidth}p{0.14\linewidth}rrl@{}}",
            r"\caption{\ScorecardCaption}\label{tab:scorecard}\\",
            r"\toprule",
            header,
            r"\midrule",
            r"\endfirsthead",
            r"\toprule",
            header,
            r"\midrule",
            r"\endhead",
        ]
        shown = []
        for row in rows:
            rec = numbers.get(row.key) if row.key else None
            if rec is not None and row.field == "n":
                build = f"\\rcn{{{row.key}}}"
            elif rec is not None and row.key is not None:
                build = value_cell(numbers, row.key)
                shown.append(row.key)
            elif row.estimate is not None:
                fmt = str(numbers[row.published_key].get("fmt") or "g")
                build = escape_number(format_number(row.estimate, fmt))
            else:
                build = "--"
            n = f"\\rcn{{{row.key}}}" if rec is not None and rec.get("n") is not None else "--"
            cells = [
                escape_latex(row.quantity),
                f"\\rc{{{row.published_key}}}",
                build,
                n,
                f"\\rc{{{row.verdict_key}}}",
            ]
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{longtable}"]
        notes = [n for n in (ci_note(numbers, shown),) if n]
        notes.append(SCORECARD_NOTE)
        for note in notes:  # outside a float, a paragraph is indented: \noindent
            lines.append(r"\par\smallskip\noindent\parbox{\linewidth}{" + note + "}")
        lines.append(r"\endgroup")
        return "\n".join(lines) + "\n"


def _round_label(group: str) -> str:
    return r"\emph{" + escape_latex(group.replace("_", " ")) + " round}"


def _stage_label(group: str) -> str:
    text = re.sub(r"^stage(\d)_?", r"stage \1: ", group).replace("_", " ").rstrip(": ")
    return r"\emph{" + escape_latex(text) + "}"


_S2_METRICS = "relevance_rate|over_selection|kappa_vs_majority|precision_vs_majority|"
_S2_METRICS += "recall_vs_majority|f1_vs_majority"

DATASET_LABELS = {
    "data.n_users": "users",
    "data.n_users.real": "{chat_users}",
    "data.n_users.synthetic": "synthetic-benchmark users",
    "data.n_users.stage1": "users shown in stage 1",
    "data.n_conversations": "conversations",
    "data.n_conversations.real": "conversations of {chat_users}",
    "data.n_prompts": "prompts",
    "data.n_pairs.final": "(user, prompt) pairs, final round",
    "data.n_responses": "responses",
    "data.n_judgments.stage1": "stage 1, final round",
    "data.n_judgments.stage2": "stage 2, final round",
    "data.n_judgments.stage3": "stage 3, final round",
    "data.n_judgments.total": "all stages, final rounds",
    "data.n_majority_labels.final": "published majority labels, stage 2 final round",
    "data.n_model_votes.final": "model relevance votes, final round",
    "data.n_model_ratings.stage3": "model-judge preference ratings",
}
#: the note under every table of a simulated build (the exercise model's table has its own)
SIMULATED_NOTE = (
    r"\emph{Simulated data} (the bundled world): every number here describes the simulation, "
    "not real people and not what real models do."
)
#: the note under the exercise-only model's table, and its words on a simulated build
EXERCISE_NOTE = (
    "These rows are the model(s) whose records carry a caveat (config stages.caveats), "
    "left out of every other table and figure: "
)
EXERCISE_SIMULATED = (
    r"\emph{Simulated data} (the bundled world): a real model run on simulated texts, so its "
    "numbers describe neither real people nor what models do on real data."
)
#: the scorecard's note on a simulated build: its estimates come from the simulated world
SIMULATED_SCORECARD_NOTE = (
    r"\emph{Simulated data} (the bundled world): the column ``This build'' holds the simulated "
    "world's estimates, which the simulator was set to land near the published figures, so the "
    "verdicts check the workflow, not the study."
)
#: the data-support table's note on a simulated build: it describes the real release regardless
SIMULATED_SUPPORT_NOTE = (
    r"\emph{Simulated data} (the bundled world) made this paper's numbers; this table describes "
    "the authors' public release and reads the same in every build."
)

_CEILING = "human_vs_rest"

_DELTA_NOTE = (
    r"$\Delta$: the trained model minus the row's model on the items both judged, with a paired "
    "interval (both on the same resamples). Beats it: yes when every difference's interval "
    "lies above zero; no when none does (lower: an interval lies below zero)."
)
_REWARD_VARIANTS = ("pointwise", "pairwise", "ordinal")

STAGE1_AGREEMENT_LABELS = {
    "stage1.alpha.human": r"Krippendorff's $\alpha$ (nominal), all judgments",
    "stage1.kappa.human_human": r"Cohen's $\kappa$, mean over pairs of {people}",
    "stage1.ceiling.kappa_human_vs_rest": (
        r"Cohen's $\kappa$, each {person} vs the others' majority (accept or not)"
    ),
}
STAGE1_FLAG_LABELS = {
    "stage1.flags.share.overgeneralization": "overgeneralization",
    "stage1.flags.share.task_context_confusion": "task-context confusion",
    "stage1.flags.share.other": "other reasons",
}
STAGE1_SOURCE_WORDS = {"real": "{chat_users} (pooled)", "synthetic": "benchmark personas (pooled)"}
_STAGE1_AGREEMENT_NOTE = (
    r"Agreement rows are not comparable with one another: $\alpha$ and the mean pairwise "
    r"$\kappa$ are computed on the three labels (accepted, uncertain, rejected), the "
    r"leave-one-out $\kappa$ and the verifiers' $\kappa$ on the binary decision accept or not, "
    r"where chance agreement and the attainable $\kappa$ differ."
)
INTERVENTION_LABELS = {
    "stage1.verifier.auroc": "verifier: AUROC (accepted vs not)",
    "stage1.verifier.kappa": r"verifier: Cohen's $\kappa$ with the majority",
    "stage1.acceptance_rate.overall": "{people} accept, all attributes",
    "stage1.verifier.acceptance_kept": "{people} accept, attributes the verifier keeps",
    "stage1.verifier.kept_share": "share of attributes the verifier keeps",
    "stage3.reward_model.human_ceiling.spearman": "each {person} vs the others",
    **{f"stage3.reward_model.{v}.spearman": f"{v} reward model" for v in _REWARD_VARIANTS},
}

TABLES: dict[str, RowTable | KeyListTable | ScorecardTable | DataSupportTable] = {
    t.name: t
    for t in (
        ScorecardTable(),
        DataSupportTable(),
        KeyListTable(
            "dataset_sizes",
            (
                ("", r"^data\.n_(?:users|conversations|prompts|pairs|responses)"),
                ("Attributes", r"^data\.n_attributes\."),
                ("Stage-2 items", r"^data\.n_relevance_items\."),
                ("Judgments of the {people}", r"^data\.n_judgments\."),
                ("Model judgments and published labels", r"^data\.n_(?:model_|majority_)"),
            ),
            labels=DATASET_LABELS,
        ),
        KeyListTable(
            "stage1_main",
            (
                (
                    "Share of judgments that accept the attribute, by source of the user",
                    r"^stage1\.acceptance_rate\.",
                ),
                ("Flags (judgments that do not accept) by reason", r"^stage1\.flags\.share\."),
                ("Agreement between {people}", r"^stage1\.(?:kappa|alpha|ceiling)\."),
                (
                    "Zero-shot model verifiers: Cohen's kappa with the majority",
                    r"^stage1\.verifier_agreement\.",
                ),
            ),
            labels={
                **STAGE1_AGREEMENT_LABELS,
                **STAGE1_FLAG_LABELS,
                **{f"stage1.acceptance_rate.{k}": v for k, v in STAGE1_SOURCE_WORDS.items()},
            },
            notes=(_STAGE1_AGREEMENT_NOTE,),
        ),
        RowTable(
            "stage2_agreement",
            "Rater pairs",
            r"^stage2\.(?P<group>[^.]+)\.(?:(?:kappa|kappa_max|kappa_share_of_max)\."
            r"(?P<row>human_human|model_model|human_model)"
            r"|ceiling\.(?P<row_ceiling>kappa_human_vs_rest))$",
            (
                Column(
                    r"Cohen's $\kappa$",
                    "stage2.{group}.kappa.{row}",
                    alt={"kappa_human_vs_rest": "stage2.{group}.ceiling.kappa_human_vs_rest"},
                ),
                Column(r"$\kappa_{\max}$", "stage2.{group}.kappa_max.{row}"),
                Column(r"$\kappa / \kappa_{\max}$", "stage2.{group}.kappa_share_of_max.{row}"),
            ),
            group_label=_round_label,
            labels={
                "human_human": ROW_WORDS["kappa.human_human"],
                "model_model": ROW_WORDS["kappa.model_model"],
                "human_model": ROW_WORDS["kappa.human_model"],
                "kappa_human_vs_rest": ROW_WORDS["ceiling.kappa_human_vs_rest"],
            },
            first=("human_human", "model_model", "human_model"),
        ),
        RowTable(
            "stage2_models",
            "Rater",
            rf"^stage2\.(?P<group>[^.]+)\.(?:{_S2_METRICS})\.(?P<row>.+)$",
            (
                Column("Relevant", "stage2.{group}.relevance_rate.{row}"),
                Column("Over-selection", "stage2.{group}.over_selection.{row}"),
                Column(
                    two_lines(r"$\kappa$ with", "the majority"),
                    "stage2.{group}.kappa_vs_majority.{row}",
                ),
                Column("Precision", "stage2.{group}.precision_vs_majority.{row}"),
                Column("Recall", "stage2.{group}.recall_vs_majority.{row}"),
                Column("F1", "stage2.{group}.f1_vs_majority.{row}"),
            ),
            group_label=_round_label,
            stacked=True,
            notes=(
                "Against the majority of all {people} (the "
                "study's definition); the comparison with the {people} themselves uses the "
                r"leave-one-out references (Table~\ref{tab:stage2-vs-rest}).",
            ),
        ),
        RowTable(
            "stage2_vs_rest",
            "Rater",
            r"^stage2\.(?P<group>[^.]+)\.(?:vs_rest\.(?:kappa|f1|gap_kappa|gap_f1)\.(?P<row>.+)"
            rf"|ceiling\.(?:kappa|f1)_(?P<row_ceiling>{_CEILING}))$",
            (
                Column(
                    r"$\kappa$",
                    "stage2.{group}.vs_rest.kappa.{row}",
                    alt={_CEILING: "stage2.{group}.ceiling.kappa_human_vs_rest"},
                ),
                Column(
                    two_lines(r"$\kappa$ minus", "the {person}'s"),
                    "stage2.{group}.vs_rest.gap_kappa.{row}",
                ),
                Column(
                    "F1",
                    "stage2.{group}.vs_rest.f1.{row}",
                    alt={_CEILING: "stage2.{group}.ceiling.f1_human_vs_rest"},
                ),
                Column(
                    two_lines("F1 minus", "the {person}'s"), "stage2.{group}.vs_rest.gap_f1.{row}"
                ),
            ),
            group_label=_round_label,
            labels={_CEILING: "{people}: the ceiling"},
            stacked=True,
        ),
        RowTable(
            "stage3_models",
            "Rater",
            r"^stage3\.(?:mean_rating|mention_rate|judge_minus_human|judge_spearman_vs_human"
            r"|mention_delta)\.(?P<row>.+)$",
            (
                Column(two_lines("Mean", "rating"), "stage3.mean_rating.{row}"),
                Column(two_lines("Mentions", "attributes"), "stage3.mention_rate.{row}"),
                Column(two_lines("Judge", "gap"), "stage3.judge_minus_human.{row}"),
                Column(two_lines("Spearman", r"$\rho$"), "stage3.judge_spearman_vs_human.{row}"),
                Column(two_lines("Mention", "effect"), "stage3.mention_delta.{row}"),
            ),
            labels={"human": "{People} (all generators)"},
            first=("human",),
            stacked=True,
            notes=(
                "As a generator: the mean rating the {people} "
                "give its personalized response (1-5; 3: no different from the generic one) "
                "and the share of its rated slots that mention the attribute outright. As a "
                "judge: its gap (its rating minus that of the {people} on the same slots), "
                "the rank correlation of its ratings with theirs, and its mention effect "
                "(rating with an explicit mention minus without; that of the {people} in "
                "their row).",
            ),
        ),
        RowTable(
            "stage3_judges",
            "Rater",
            r"^stage3\.(?:judge_mean_rating|judge_minus_human|judge_spearman_vs_human"
            r"|mention_delta)\.(?P<row>.+)$|^stage3\.ceiling\.spearman_(?P<row_ceiling>human_vs_rest)$",
            (
                Column(
                    two_lines("Mean", "rating"),
                    "stage3.judge_mean_rating.{row}",
                    alt={"human": "stage3.mean_rating.human"},
                ),
                Column(two_lines("Judge", "gap"), "stage3.judge_minus_human.{row}"),
                Column(
                    two_lines("adjusted", "$p$"),
                    "stage3.judge_minus_human.{row}",
                    cell=adjusted_p_cell,
                ),
                Column(
                    two_lines("Spearman", r"$\rho$"),
                    "stage3.judge_spearman_vs_human.{row}",
                    alt={_CEILING: "stage3.ceiling.spearman_human_vs_rest"},
                ),
                Column(two_lines("Mention", "effect"), "stage3.mention_delta.{row}"),
                Column(
                    two_lines("within", "generators"), "stage3.mention_delta_within_generator.{row}"
                ),
            ),
            labels={"human": "{people}", _CEILING: "ceiling: each {person} vs the others"},
            first=("human",),
            stacked=True,
            notes=(
                "Judge gap: the judge's rating minus that of the "
                "{people} on the same slots, with its $p$ Holm-adjusted across judges; "
                r"Spearman $\rho$: the rank correlation of the judge's ratings with theirs; "
                r"mention effect within generators: Appendix~\ref{app:stage3-measures}.",
            ),
        ),
        RowTable(
            "stage3_better",
            "Rater",
            r"^stage3\.judge_better_share\.(?P<row>.+)$|^stage3\.(?P<row_h>human)_better_share$",
            (
                Column(
                    "Rates better than generic",
                    "stage3.judge_better_share.{row}",
                    alt={"human": "stage3.human_better_share"},
                ),
                Column("Judge minus {people}", "stage3.judge_better_share_minus_human.{row}"),
            ),
            labels={"human": "{people}"},
            first=("human",),
        ),
        RowTable(
            "interventions_verifier",
            "Verifier",
            r"^stage1\.verifier\.(?:zero_shot_(?:auroc|kappa)\.(?P<row>.+)|(?P<row_t>auroc))$",
            (
                Column(
                    "AUROC",
                    "stage1.verifier.zero_shot_auroc.{row}",
                    alt={"auroc": "stage1.verifier.auroc"},
                ),
                Column(r"$\Delta$ AUROC", "stage1.verifier.minus_zero_shot.{row}.auroc"),
                Column(
                    r"$\kappa$ with majority",
                    "stage1.verifier.zero_shot_kappa.{row}",
                    alt={"auroc": "stage1.verifier.kappa"},
                ),
                Column(r"$\Delta\kappa$", "stage1.verifier.minus_zero_shot.{row}.kappa"),
                Column(
                    "Beats it",
                    "stage1.verifier.minus_zero_shot.{row}",
                    cell=advantage_cell({"auroc": "AUROC", "kappa": r"$\kappa$"}),
                ),
            ),
            labels={"auroc": "trained verifier"},
            first=("auroc",),
            notes=(_DELTA_NOTE,),
        ),
        RowTable(
            "interventions_verifier_kept",
            "Verifier",
            # the row of all attributes (people's acceptance of every attribute is stage 1's
            # one record of it) shows where a verifier exists, found by its kept share
            r"^stage1\.verifier\.(?:zero_shot_(?:kept_share|acceptance_kept)\.(?P<row>.+)"
            r"|(?P<row_t>acceptance_kept)|(?P<row_all>kept_share))$",
            (
                Column(
                    "F1 (flags unsupported)",
                    "stage1.verifier.zero_shot_f1.{row}",
                    alt={"acceptance_kept": "stage1.verifier.f1", "kept_share": "-"},
                ),
                Column(
                    "Attributes kept",
                    "stage1.verifier.zero_shot_kept_share.{row}",
                    alt={"acceptance_kept": "stage1.verifier.kept_share", "kept_share": "-"},
                ),
                Column(
                    "{People} accept (kept)",
                    "stage1.verifier.zero_shot_acceptance_kept.{row}",
                    alt={
                        "acceptance_kept": "stage1.verifier.acceptance_kept",
                        "kept_share": "stage1.acceptance_rate.overall",
                    },
                ),
            ),
            labels={"acceptance_kept": "trained verifier", "kept_share": "no verifier (all)"},
            first=("kept_share", "acceptance_kept"),
        ),
        RowTable(
            "interventions_classifier",
            "Relevance votes by",
            r"^stage2\.classifier\.(?P<group>[^.]+)\.(?:reference\.(?P<row>.+)\.f1"
            r"|(?P<row_t>f1))$",
            (
                Column(
                    "Precision",
                    "stage2.classifier.{group}.reference.{row}.precision",
                    alt={"f1": "stage2.classifier.{group}.precision"},
                ),
                Column(
                    "Recall",
                    "stage2.classifier.{group}.reference.{row}.recall",
                    alt={"f1": "stage2.classifier.{group}.recall"},
                ),
                Column(
                    "F1",
                    "stage2.classifier.{group}.reference.{row}.f1",
                    alt={"f1": "stage2.classifier.{group}.f1"},
                ),
                Column(r"$\Delta$ F1", "stage2.classifier.{group}.f1_minus_zero_shot.{row}"),
                Column(
                    "Beats it",
                    "stage2.classifier.{group}.f1_minus_zero_shot.{row}",
                    cell=advantage_cell({"": "F1"}),
                ),
            ),
            group_label=_round_label,
            labels={"f1": "trained classifier"},
            first=("f1",),
            stacked=True,
            notes=(
                _DELTA_NOTE + " Retrieval baselines are listed for reference, without a "
                "difference.",
            ),
        ),
        RowTable(
            "interventions_reward",
            "Scores by",
            r"^stage3\.reward_model\.(?:(?P<group>judge)\.(?P<row>.+)|(?P<row_v>pointwise|pairwise|ordinal"
            r"|human_ceiling))\.spearman$",
            (
                Column(
                    r"Spearman $\rho$",
                    "stage3.reward_model.judge.{row}.spearman",
                    alt={
                        v: f"stage3.reward_model.{v}.spearman"
                        for v in (*_REWARD_VARIANTS, "human_ceiling")
                    },
                ),
                Column(
                    r"Kendall $\tau$ (b)",
                    "stage3.reward_model.judge.{row}.kendall",
                    alt={
                        v: f"stage3.reward_model.{v}.kendall"
                        for v in (*_REWARD_VARIANTS, "human_ceiling")
                    },
                ),
            ),
            group_label=lambda g: r"\emph{model judges}",
            labels={
                **{v: f"{v} reward model" for v in _REWARD_VARIANTS},
                "human_ceiling": "each {person} vs the others",
            },
            first=(*_REWARD_VARIANTS, "human_ceiling"),
        ),
        RowTable(
            "stage3_controls",
            "Judge",
            r"^stage3\.controls\.mean_rating\.[^.]+\.(?P<row>.+)$",
            (
                Column("No profile", "stage3.controls.mean_rating.no_context.{row}"),
                Column("Normal", "stage3.controls.mean_rating.matched_for_no_context.{row}"),
                Column("Wrong profile", "stage3.controls.mean_rating.mismatched_profile.{row}"),
                Column(
                    "Normal", "stage3.controls.mean_rating.matched_for_mismatched_profile.{row}"
                ),
            ),
            notes=(
                "No profile / wrong profile: the judge's mean rating when it is given no profile "
                "or another user's profile; each is followed by its mean rating of the same "
                "slots judged normally.",
            ),
        ),
        RowTable(
            "stage3_position",
            "Judge",
            r"^stage3\.controls\.position_(?:side_)?consistency\.(?P<row>.+)$",
            (
                Column("Same rating", "stage3.controls.position_consistency.{row}"),
                Column("Same side of 3", "stage3.controls.position_side_consistency.{row}"),
            ),
            notes=(
                "Share of slots whose rating stays the same, or on the same side of 3, when the "
                "two answers change places.",
            ),
        ),
        KeyListTable(
            "interventions_main",
            (
                (
                    "Stage 1: attribute verifier (trained on the labels of the {people})",
                    # people's acceptance of every attribute is stage 1's one record of it
                    r"^stage1\.(?:acceptance_rate\.overall"
                    r"|verifier\.(?:auroc|kappa|acceptance_kept|kept_share))$",
                ),
                (
                    "Stage 2: relevance classifier, against the majority",
                    r"^stage2\.classifier\.(?P<label>[^.]+\.(?:precision|recall|f1))$",
                ),
                (
                    "Stage 3: reward models, rank correlation with held-out ratings",
                    r"^stage3\.reward_model\.(?:pointwise|pairwise|ordinal|human_ceiling)"
                    r"\.spearman$",
                ),
            ),
            labels=INTERVENTION_LABELS,
        ),
        KeyListTable(
            "exercise_model",
            (
                ("Stage 1: verification", r"^stage1\."),
                ("Stage 2: relevance votes", r"^stage2\."),
                ("Stage 3: generation and judging", r"^stage3\."),
            ),
            caveated=True,
            empty="No model of this build carries a caveat.",
        ),
        RowTable(
            "call_usage",
            "Stage / model",
            r"^calls\.(?P<group>[^.]+)\.(?P<row>.+)\.calls$",
            (
                Column("Calls", "calls.{group}.{row}.calls", ci=False),
                Column("Distinct", "calls.{group}.{row}.keys", ci=False),
                Column("Prompt tokens", "calls.{group}.{row}.prompt_tokens", ci=False),
                Column("Completion tokens", "calls.{group}.{row}.completion_tokens", ci=False),
                Column("Cost (USD)", "calls.{group}.{row}.cost_usd", ci=False),
            ),
            group_label=_stage_label,
            empty="No model calls are in the call store for this build.",
        ),
        RowTable(
            "parse_failures",
            "Model",
            r"^parse_failures\.(?P<group>[^.]+)\.(?P<row>.+)$",
            (
                Column("Failures", "parse_failures.{group}.{row}", ci=False),
                Column(
                    "Calls",
                    "parse_failures.{group}.{row}",
                    cell=lambda n, k: extra_cell(n, k, ("n_calls",), ",d"),
                ),
                Column(
                    "Failure rate",
                    "parse_failures.{group}.{row}",
                    cell=lambda n, k: extra_cell(n, k, ("failure_rate",), ".1%"),
                ),
            ),
            group_label=_stage_label,
            empty="No parse-failure counts were recorded for this dataset.",
        ),
    )
}

#: the file that says which tables have rows in this build (:func:`render_present_tex`)
PRESENT = "present"
#: the file that says what the authors' release supports (:func:`render_release_support_tex`)
RELEASE_SUPPORT = "release_support"
#: the generated files, known when the Snakefile is parsed
TABLE_NAMES: tuple[str, ...] = (*TABLES, PRESENT, RELEASE_SUPPORT)


def _with_note(tex: str, note: str) -> str:
    """``tex`` with one more note line (inside its group, when it has one); unindented, since
    outside a float (the longtables) a paragraph is indented and the box would overrun."""
    line = r"\par\smallskip\noindent\parbox{\linewidth}{" + note + "}"
    end = r"\endgroup"
    if tex.rstrip().endswith(end):
        return tex.rstrip()[: -len(end)] + line + "\n" + end + "\n"
    return tex + line + "\n"


def render_tables(
    numbers: Numbers,
    usage_note: str = "",
    simulated: bool = False,
    nouns: DataNouns = NEUTRAL_NOUNS,
) -> dict[str, str]:
    """``name -> tex`` for every table; ``usage_note`` explains an empty call-usage table.

    Labels, headers and notes say who the rows are in the dataset's words (``nouns``); on a
    ``simulated`` build every table says so in a note. Rows of a model whose records carry a
    caveat appear only in the table ``exercise_model``, whose note gives the caveat.
    """
    out = {}
    caveats = sorted({c for rec in numbers.values() if (c := caveat(rec))})
    for name, table in TABLES.items():
        if isinstance(table, ScorecardTable):
            tex = table.render(numbers)
            if simulated:
                tex = _with_note(tex, SIMULATED_SCORECARD_NOTE)
        elif isinstance(table, DataSupportTable):
            tex = table.render(numbers)
            if simulated:
                tex = _with_note(tex, SIMULATED_SUPPORT_NOTE)
        else:
            if isinstance(table, RowTable):
                headers = tuple(
                    dataclasses.replace(c, header=in_words(c.header, nouns)) for c in table.columns
                )
                table = dataclasses.replace(table, columns=headers)
            if name == "exercise_model" and caveats:
                note = EXERCISE_NOTE + " ".join(escape_latex(c) for c in caveats)
                table = dataclasses.replace(table, notes=(note,))
            tex = table.render(numbers, nouns)
            if name == "call_usage" and usage_note and not table.rows(numbers):  # type: ignore[union-attr]
                tex = f"\\emph{{{escape_latex(usage_note)}}}\n"
            if simulated:
                note = EXERCISE_SIMULATED if name == "exercise_model" else SIMULATED_NOTE
                tex = _with_note(tex, note)
        out[name] = f"% Generated by rule `paper_tables` from numbers.json. Do not edit.\n{tex}"
    out[PRESENT] = render_present_tex(numbers)
    out[RELEASE_SUPPORT] = render_release_support_tex(numbers)
    return out


def present_tables(numbers: Numbers) -> list[str]:
    """The tables that have rows in this build (``tables/present.tex`` defines a flag for each,
    so the paper leaves out an appendix table a dataset cannot fill)."""
    out = []
    for name, table in TABLES.items():
        if isinstance(table, RowTable):
            groups = table.rows(numbers)
            if any(not table.caveated(numbers, r, g) for g, rows in groups.items() for r in rows):
                out.append(name)
        elif isinstance(table, KeyListTable):
            if any(table.keys(numbers, pattern) for _, pattern in table.sections):
                out.append(name)
        else:
            out.append(name)
    return out


def render_present_tex(numbers: Numbers) -> str:
    r"""``\IfTableTF{name}{present}{absent}``: whether a table has rows in this build."""
    lines = [
        "% Generated by rule `paper_tables`: the tables with rows in this build. Do not edit.",
        r"\makeatletter",
        r"\newcommand\IfTableTF[1]{\ifcsname rc@table@#1\endcsname"
        r"\expandafter\@firstoftwo\else\expandafter\@secondoftwo\fi}",
        *(
            f"\\expandafter\\def\\csname rc@table@{n}\\endcsname{{}}"
            for n in present_tables(numbers)
        ),
        r"\makeatother",
    ]
    return "\n".join(lines) + "\n"
