"""The paper's qualitative claims, declared as conditions on record keys and checked at build time.

``paper/claims.yaml`` lists each claim once, with the sentence it licenses, the sentence the
paper prints instead when the data do not support it (``negative``), and a *structured*
condition (no expression strings, nothing is ``eval``-ed). A condition is either a leaf::

    key: stage3.judge_minus_human.*      # one key, or a glob (``*``: one or more characters)
    field: ci_low                        # value | ci_low | ci_high | n | extra.<name>
    exclude: ["*smollm2*"]               # globs of keys to leave out (e.g. a near-random model)
    aggregate: all                       # all | any | mean | min | max | median of the matches
    op: ">"                              # < <= > >= == != between
    value: 0.0                           # a number, or [low, high] for between

or a combination ``{all: [conditions]}``, ``{any: [conditions]}``, ``{not: condition}``.

A directional claim is judged on an *interval*, never on two point values: the interval of
its paired-difference record lies on one side of the null (``field: ci_low, op: ">"`` or
``field: ci_high, op: "<"``), or, for a small-sample statistic that carries an exact test,
its p-value (``field: extra.p_value``). Hence the rules :func:`validate_condition` enforces:
an interval bound is aggregated only by ``all`` or ``any`` (a mean of lower bounds is no
interval); ``other: <key or glob>`` compares only interval bounds, this record's lower bound
with the other's upper bound (or upper with lower) -- two intervals that do not overlap,
the conservative check where no paired-difference record exists; and every claim has at
least one interval or p-value leaf.

Verdicts are four-valued: *supported*, *not supported*, *not testable* when a key the
condition needs is absent from the dataset (a dataset without stage-3 human ratings cannot
test a stage-3 claim), and *inconclusive* when a p-value leaf misses its level on a test that
could not have reached it: an exact test over a handful of units has few attainable
outcomes, and when only its most extreme outcome (or none) reaches the level, missing it says
nothing about the claim. The record lists the test's attainable outcomes with their p-values
(``extra.attainable``: ``[[statistic, p], ...]``, e.g.
:func:`analysis.stats.intervals.exact_permutation_attainable`); with five models only
rho = +/-1 reaches p < 0.05, so rho = 0.9 (p = 0.083) is inconclusive, not a refutation. A
test with finer resolution (a bootstrap p of resolution 1/B) has no such list and fails as
*not supported*. ``all``/``any``/``not`` follow Kleene's logic, so one untestable or
inconclusive branch does not hide a refuted one (``all``: not supported over not testable over
inconclusive over supported; ``any`` the reverse order for supported and not supported). The
paper prints a supported claim's sentence, a refuted claim's ``negative`` sentence, and an
inconclusive claim's sentence bracketed with the reason. In ``strict`` mode a claim the data
do not support stops the build with a message naming the claim, its keys and their values
(an inconclusive one does not); ``report`` mode only reports it, and the paper says which
mode built it.
"""

from __future__ import annotations

import fnmatch
import math
import operator
import re
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analysis.paper.latex import breakable, escape_latex, escape_number, format_number, texttt
from analysis.paper.plan_history import COMMITTED, Change
from analysis.settings import ClaimsMode, DataNouns

SUPPORTED = "supported"
REFUTED = "not supported"
UNTESTABLE = "not testable"
INCONCLUSIVE = "inconclusive"

CLAIM_ID = re.compile(r"^[a-z][a-z0-9_]*$")
#: every ``negative`` sentence says this, so a reader never mistakes it for a finding
NEGATIVE_PHRASE = "not supported on this dataset"

OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
AGGREGATES: dict[str, Callable[[list[float]], float] | None] = {
    "all": None,
    "any": None,
    "mean": statistics.fmean,
    "min": min,
    "max": max,
    "median": statistics.median,
}
LEAF_FIELDS = {"key", "field", "exclude", "aggregate", "op", "value", "other", "other_field"}
CLAIM_FIELDS = {"id", "statement", "negative", "condition"}
#: the bounds of a record's interval, and the opposite bound an ``other`` comparison reads
BOUNDS = {"ci_low": "ci_high", "ci_high": "ci_low"}
#: the direction a bound may be compared in: a lower bound lies above, an upper bound below
BOUND_OPS = {"ci_low": (">", ">="), "ci_high": ("<", "<=")}
#: fields that carry a test's p-value (an exact test where the sample is small)
P_FIELDS = ("extra.p_value", "extra.p_adjusted")
MODES = tuple(m.value for m in ClaimsMode)


class ClaimError(ValueError):
    """``claims.yaml`` is malformed; the message names file, claim and field."""


class ClaimNotSupported(RuntimeError):
    """At least one claim is contradicted by the data (``strict`` mode)."""


@dataclass(frozen=True)
class Claim:
    """One declared claim: its id (``\\Claim{id}{...}`` in the text), sentence, condition, and
    the sentence printed instead when the data do not support it."""

    id: str
    statement: str
    condition: Mapping[str, Any]
    negative: str = ""


@dataclass
class Outcome:
    """The verdict of a (sub)condition and the evidence: what was compared, which keys it used,
    and for an inconclusive one why the test could not decide."""

    verdict: str
    evidence: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    why_inconclusive: str = ""


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    outcome: Outcome

    @property
    def verdict(self) -> str:
        return self.outcome.verdict


# ---------------------------------------------------------------- loading and validation


def _sentence(entry: Mapping[str, Any], name: str, where: str) -> str:
    text = entry.get(name)
    if not isinstance(text, str) or not text.strip():
        raise ClaimError(f"{where}: field '{name}' must be a non-empty string")
    return " ".join(text.split())


def load_claims(path: Path | str, nouns: DataNouns | None = None) -> list[Claim]:
    """Read and validate ``claims.yaml``; every error names the file, the claim and the field.

    A sentence names who it is about by placeholder (``{people}``, ``{Models}``: the names of
    :meth:`DataNouns.words`), so a simulated build's sentences say "simulated raters" where the
    real exports' say "people"; with ``nouns`` they are filled in, and an unknown placeholder
    is an error either way."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ClaimError(f"{path}: not valid YAML ({err})") from err
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise ClaimError(f"{path}: expected a mapping with a list under 'claims'")
    claims: list[Claim] = []
    seen: set[str] = set()
    for i, entry in enumerate(data["claims"], start=1):
        where = f"{path}: claim #{i}"
        if not isinstance(entry, dict):
            raise ClaimError(f"{where}: must be a mapping")
        unknown = set(entry) - CLAIM_FIELDS
        if unknown:
            raise ClaimError(f"{where}: unknown field(s) {sorted(unknown)}")
        cid = entry.get("id")
        if not isinstance(cid, str) or not CLAIM_ID.match(cid):
            raise ClaimError(f"{where}: field 'id' must match {CLAIM_ID.pattern}, got {cid!r}")
        where = f"{path}: claim '{cid}'"
        if cid in seen:
            raise ClaimError(f"{where}: duplicate id")
        seen.add(cid)
        statement = _in_words(_sentence(entry, "statement", where), nouns, f"{where}, statement")
        negative = _in_words(_sentence(entry, "negative", where), nouns, f"{where}, negative")
        if NEGATIVE_PHRASE not in negative:
            raise ClaimError(f"{where}: field 'negative' must say '{NEGATIVE_PHRASE}'")
        if "condition" not in entry:
            raise ClaimError(f"{where}: field 'condition' is missing")
        validate_condition(entry["condition"], f"{where}, condition")
        if not any(_is_inferential(leaf) for leaf in leaves(entry["condition"])):
            raise ClaimError(
                f"{where}, condition: no leaf reads an interval bound (field: ci_low or ci_high) "
                f"or a p-value ({' or '.join(P_FIELDS)}); a claim is judged on an interval, "
                "not on point values"
            )
        claims.append(Claim(cid, statement, entry["condition"], negative))
    return claims


#: a placeholder in a sentence: ``{name}`` (claims are plain text, so no other braces)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)\}")


def _in_words(text: str, nouns: DataNouns | None, where: str) -> str:
    """A sentence with its placeholders in the dataset's words (``nouns``; kept without)."""
    known = set(DataNouns("", "", "", "", "").words())
    unknown = sorted(set(_PLACEHOLDER.findall(text)) - known)
    if unknown:
        raise ClaimError(f"{where}: unknown placeholder(s) {unknown} (known: {sorted(known)})")
    return nouns.fill(text) if nouns is not None else text


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def leaves(cond: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every leaf of a (validated) condition tree."""
    if "not" in cond:
        yield from leaves(cond["not"])
    elif "all" in cond or "any" in cond:
        for sub in cond.get("all", cond.get("any")):
            yield from leaves(sub)
    else:
        yield cond


def _is_inferential(leaf: Mapping[str, Any]) -> bool:
    """A leaf that reads an interval bound or a p-value, not only a point estimate."""
    return leaf.get("field", "value") in (*BOUNDS, *P_FIELDS)


def validate_condition(cond: Any, where: str) -> None:
    """Check the structure of one condition tree (raises :class:`ClaimError`)."""
    if not isinstance(cond, dict):
        raise ClaimError(f"{where}: a condition must be a mapping")
    combinators = {"all", "any", "not"} & set(cond)
    if combinators:
        if len(cond) != 1:
            raise ClaimError(f"{where}: '{sorted(combinators)[0]}' must be the only field")
        ((name, body),) = cond.items()
        if name == "not":
            validate_condition(body, f"{where}.not")
            return
        if not isinstance(body, list) or not body:
            raise ClaimError(f"{where}.{name}: must be a non-empty list of conditions")
        for j, sub in enumerate(body, start=1):
            validate_condition(sub, f"{where}.{name}[{j}]")
        return
    unknown = set(cond) - LEAF_FIELDS
    if unknown:
        raise ClaimError(f"{where}: unknown field(s) {sorted(unknown)}")
    if not isinstance(cond.get("key"), str) or not cond["key"]:
        raise ClaimError(f"{where}: field 'key' must be a record key or glob")
    op = cond.get("op")
    if op not in OPS and op != "between":
        raise ClaimError(f"{where}: field 'op' must be one of {[*OPS, 'between']}, got {op!r}")
    has_value, has_other = "value" in cond, "other" in cond
    if has_value == has_other:
        raise ClaimError(f"{where}: give exactly one of 'value' and 'other'")
    if op == "between":
        v = cond.get("value")
        if not (isinstance(v, list) and len(v) == 2 and all(map(_is_number, v)) and v[0] <= v[1]):
            raise ClaimError(f"{where}: 'between' needs value: [low, high] with low <= high")
    elif has_value and not _is_number(cond["value"]):
        raise ClaimError(f"{where}: field 'value' must be a number, got {cond['value']!r}")
    agg = cond.get("aggregate", "all")
    if agg not in AGGREGATES:
        raise ClaimError(f"{where}: field 'aggregate' must be one of {list(AGGREGATES)}")
    for name in ("field", "other_field"):
        if name in cond and not _valid_field(cond[name]):
            raise ClaimError(
                f"{where}: field '{name}' must be value, ci_low, ci_high, n or extra.<name>"
            )
    fld = cond.get("field", "value")
    if fld in BOUNDS and agg not in ("all", "any"):
        raise ClaimError(
            f"{where}: field 'aggregate' of an interval bound must be all or any, got {agg!r} "
            "(a mean of bounds is no interval)"
        )
    if has_other:
        _validate_other(cond, fld, where)
    excl = cond.get("exclude", [])
    if not isinstance(excl, list) or not all(isinstance(e, str) for e in excl):
        raise ClaimError(f"{where}: field 'exclude' must be a list of globs")


def _validate_other(cond: Mapping[str, Any], fld: str, where: str) -> None:
    """``other`` compares two intervals (non-overlap), never two point values."""
    if not isinstance(cond["other"], str):
        raise ClaimError(f"{where}: field 'other' must be a record key or glob")
    ofld = cond.get("other_field")
    if fld not in BOUNDS or ofld != BOUNDS[fld] or cond["op"] not in BOUND_OPS[fld]:
        raise ClaimError(
            f"{where}: field 'other' compares two intervals, not two point values: use "
            "field: ci_low, op: '>', other_field: ci_high (this interval lies above the "
            "other's) or field: ci_high, op: '<', other_field: ci_low; better, judge the "
            "claim on the interval of a paired-difference record"
        )


def _valid_field(name: Any) -> bool:
    return isinstance(name, str) and (
        name in {"value", "ci_low", "ci_high", "n"} or re.match(r"^extra\.\w+$", name) is not None
    )


# ---------------------------------------------------------------- evaluation


def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in pattern.split("*")]
    return re.compile("^" + "(.+?)".join(parts) + "$")


def match_keys(pattern: str, keys: Sequence[str], exclude: Sequence[str]) -> list[tuple[str, str]]:
    """``(key, wildcard part)`` for each key the glob matches and no exclude glob does."""
    if "*" not in pattern:
        return [(pattern, "")] if pattern in keys else []
    rx = _glob_regex(pattern)
    out = []
    for key in keys:
        m = rx.match(key)
        if m and not any(fnmatch.fnmatchcase(key, e) for e in exclude):
            out.append((key, "|".join(m.groups())))
    return out


def record_field(record: Mapping[str, Any], name: str) -> float | None:
    if name.startswith("extra."):
        value = (record.get("extra") or {}).get(name.split(".", 1)[1])
    else:
        value = record.get(name)
    return float(value) if _is_number(value) else None


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _compare(op: str, lhs: float, rhs: Any) -> bool:
    if op == "between":
        return rhs[0] <= lhs <= rhs[1]
    return OPS[op](lhs, rhs)


def _rhs_text(op: str, rhs: Any) -> str:
    if op == "between":
        return f"in [{_fmt(rhs[0])}, {_fmt(rhs[1])}]"
    return f"{op} {_fmt(rhs)}"


def _field_text(key: str, fld: str) -> str:
    """How the evidence names a field: bounds and p-values in words, so a reader never takes a
    p-value or a bound for the record's value."""
    if fld == "value":
        return key
    if fld in BOUNDS:
        return f"{key} {'lower' if fld == 'ci_low' else 'upper'} CI bound"
    if fld in P_FIELDS:
        return f"{key} p-value" + (" (adjusted)" if fld == "extra.p_adjusted" else "")
    return f"{key} {fld}"


def _leaf(cond: Mapping[str, Any], numbers: Mapping[str, Mapping[str, Any]]) -> Outcome:
    keys = sorted(numbers)
    fld = cond.get("field", "value")
    exclude = cond.get("exclude", [])
    agg = cond.get("aggregate", "all")
    op = cond["op"]
    matches = match_keys(cond["key"], keys, exclude)
    if not matches:
        return Outcome(UNTESTABLE, [f"no record matches {cond['key']}"], [])
    lhs: list[tuple[str, float]] = []
    for key, _ in matches:
        value = record_field(numbers[key], fld)
        if value is None:
            return Outcome(UNTESTABLE, [f"{key} has no numeric field '{fld}'"], [key])
        lhs.append((key, value))
    used = [k for k, _ in lhs]

    # the right-hand side: a constant, or the other record's opposite interval bound
    if "value" in cond:
        pairs = [(k, v, cond["value"], _rhs_text(op, cond["value"])) for k, v in lhs]
    else:
        ofld = cond["other_field"]
        other = cond["other"]
        pairs = []
        wild = dict(matches)
        for key, value in lhs:
            okey = other
            if "*" in other:
                pieces = wild[key].split("|")
                okey = "".join(
                    seg + (pieces[i] if i < len(pieces) else "")
                    for i, seg in enumerate(other.split("*"))
                )
            if okey not in numbers:
                return Outcome(UNTESTABLE, [f"{okey} (compared with {key}) is absent"], used)
            ovalue = record_field(numbers[okey], ofld)
            if ovalue is None:
                return Outcome(UNTESTABLE, [f"{okey} has no numeric field '{ofld}'"], used)
            used.append(okey)
            pairs.append((key, value, ovalue, f"{op} {_field_text(okey, ofld)} = {_fmt(ovalue)}"))

    fn = AGGREGATES[agg]
    if fn is not None:  # only point values and p-values reach here (validated)
        agg_lhs = fn([v for _, v, _, _ in pairs])
        ok = _compare(op, agg_lhs, cond["value"])
        listed = ", ".join(f"{k} = {_fmt(v)}" for k, v, _, _ in pairs)
        label = _field_text(cond["key"], fld)
        evidence = [f"{agg}({label}) = {_fmt(agg_lhs)} {_rhs_text(op, cond['value'])} [{listed}]"]
        return Outcome(SUPPORTED if ok else REFUTED, evidence, sorted(set(used)))

    results = [_judged(numbers[k], k, fld, op, v, r, t) for k, v, r, t in pairs]
    ok = all(r for r, _ in results) if agg == "all" else any(r for r, _ in results)
    evidence = [("holds: " if r else "fails: ") + text for r, text in results]
    if not ok and fld in P_FIELDS and op in ("<", "<="):
        # a miss on a test whose only outcomes at the level are its extremes: inconclusive
        reasons = [
            _unattainable(numbers[k], op, float(cond["value"]))
            for (k, _, _, _), (r, _) in zip(pairs, results, strict=True)
            if not r
        ]
        if all(reasons):
            return Outcome(INCONCLUSIVE, evidence, sorted(set(used)), str(reasons[0]))
    return Outcome(SUPPORTED if ok else REFUTED, evidence, sorted(set(used)))


def _judged(
    record: Mapping[str, Any], key: str, fld: str, op: str, value: float, rhs: Any, rhs_text: str
) -> tuple[bool, str]:
    """One comparison and its evidence. A p-value at the resampling floor is an upper bound
    (``extra.<p>_is_upper_bound``: no resample beyond the null, printed ``< 1/B``, or ``< m/B``
    after adjustment): it supports ``p < c`` only when the bound is at most ``c``, and never
    a lower bound on p."""
    bound = fld in P_FIELDS and bool(
        (record.get("extra") or {}).get(f"{fld.split('.', 1)[1]}_is_upper_bound")
    )
    if not bound:
        return _compare(op, value, rhs), f"{_field_text(key, fld)} = {_fmt(value)} {rhs_text}"
    holds = op in ("<", "<=") and value <= rhs
    return holds, f"{_field_text(key, fld)} < {_fmt(value)} (resampling floor) {rhs_text}"


def _unattainable(record: Mapping[str, Any], op: str, level: float) -> str | None:
    """Why a missed p-value level says nothing, from the test's attainable outcomes
    (``extra.attainable``), or None when the test could reach the level short of its most
    extreme outcome (or the record does not list its outcomes)."""
    table = (record.get("extra") or {}).get("attainable")
    if not isinstance(table, list) or not table:
        return None
    values = [float(t) for t, _ in table]
    extremes = {min(values), max(values)}
    reaching = sorted({float(t) for t, q in table if OPS[op](float(q), level)})
    if not set(reaching) <= extremes:
        return None
    name = str((record.get("extra") or {}).get("statistic") or "the statistic")
    n, unit = record.get("n"), str(record.get("unit") or "units")
    with_n = f"with {int(n)} {unit} " if isinstance(n, int | float) else ""
    if not reaching:
        return f"{with_n}no outcome of the exact test reaches p {op} {_fmt(level)}"
    # name the extreme on the observed side (a two-sided test reaches both)
    value = record.get("value")
    side = [t for t in reaching if _is_number(value) and t * float(value) > 0] or reaching
    shown = " and ".join(f"{name} = {_fmt(t)}" for t in side)
    return f"{with_n}only {shown} reach{'es' if len(side) == 1 else ''} p {op} {_fmt(level)}"


def evaluate(cond: Mapping[str, Any], numbers: Mapping[str, Mapping[str, Any]]) -> Outcome:
    """Evaluate one condition tree against ``numbers`` (key -> record)."""
    if "not" in cond:
        inner = evaluate(cond["not"], numbers)
        flip = {
            SUPPORTED: REFUTED,
            REFUTED: SUPPORTED,
            UNTESTABLE: UNTESTABLE,
            INCONCLUSIVE: INCONCLUSIVE,
        }
        return Outcome(
            flip[inner.verdict],
            [f"not ({e})" for e in inner.evidence],
            inner.keys,
            inner.why_inconclusive,
        )
    if "all" in cond or "any" in cond:
        kind = "all" if "all" in cond else "any"
        parts = [evaluate(sub, numbers) for sub in cond[kind]]
        verdicts = {p.verdict for p in parts}
        decisive, other = (REFUTED, SUPPORTED) if kind == "all" else (SUPPORTED, REFUTED)
        verdict = next(
            v for v in (decisive, UNTESTABLE, INCONCLUSIVE, other) if v in verdicts or v == other
        )
        evidence = [e for p in parts for e in p.evidence]
        keys = sorted({k for p in parts for k in p.keys})
        why = next((p.why_inconclusive for p in parts if p.verdict == INCONCLUSIVE), "")
        return Outcome(verdict, evidence, keys, why if verdict == INCONCLUSIVE else "")
    return _leaf(cond, numbers)


def evaluate_claims(
    claims: Sequence[Claim], numbers: Mapping[str, Mapping[str, Any]]
) -> list[ClaimResult]:
    """Every claim's verdict, in the order they are declared."""
    return [ClaimResult(c, evaluate(c.condition, numbers)) for c in claims]


def resolve_mode(mode: object) -> str:
    """``report`` or ``strict``: the rule's ``paper.claims_mode`` value (composition checked it)."""
    if mode not in MODES:
        raise ClaimError(f"paper.claims_mode must be one of {MODES}, got {mode!r}")
    return str(mode)


def failure_message(results: Sequence[ClaimResult]) -> str:
    """The message of a stopped build: each failing claim with its keys and values."""
    lines = []
    for r in results:
        if r.verdict == REFUTED:
            lines.append(f"claim '{r.claim.id}' is not supported by the data: {r.claim.statement}")
            lines.append(f"  keys: {', '.join(r.outcome.keys)}")
            lines.extend(f"  {e}" for e in r.outcome.evidence)
    return "\n".join(lines)


def check(results: Sequence[ClaimResult], mode: str) -> None:
    """Raise :class:`ClaimNotSupported` in ``strict`` mode when any claim is refuted."""
    if mode == ClaimsMode.strict and any(r.verdict == REFUTED for r in results):
        raise ClaimNotSupported(
            failure_message(results)
            + "\nTo explore a dataset without stopping, set paper.claims_mode=report "
            '(snakemake --config overrides="paper.claims_mode=report").'
        )


def results_json(results: Sequence[ClaimResult], mode: str) -> dict[str, Any]:
    """The verdicts as plain data (written next to numbers.json)."""
    return {
        "mode": mode,
        "claims": {
            r.claim.id: {
                "statement": r.claim.statement,
                "negative": r.claim.negative,
                "verdict": r.verdict,
                "keys": r.outcome.keys,
                "evidence": r.outcome.evidence,
                "why_inconclusive": r.outcome.why_inconclusive,
                "condition": r.claim.condition,
            }
            for r in results
        },
    }


# ---------------------------------------------------------------- LaTeX

_VERDICT_WORD = {
    SUPPORTED: "supported",
    REFUTED: "refuted",
    UNTESTABLE: "untestable",
    INCONCLUSIVE: "inconclusive",
}

VERDICT_PREAMBLE = r"""% \Claim{id}{sentence}: a supported claim's sentence, checked and linked;
% a refuted claim's negative sentence from claims.yaml instead; an inconclusive one bracketed
% with the reason its test could not decide; an untestable one bracketed.
\providecommand\hyperlink[2]{#2}
\DeclareRobustCommand\Claim[2]{\ifcsname rc@claim@#1\endcsname
  \expandafter\ifx\csname rc@claim@#1\endcsname\rc@claim@supported
    #2\textsuperscript{\hyperlink{claim:#1}{\S}}%
  \else\expandafter\ifx\csname rc@claim@#1\endcsname\rc@claim@refuted
    \emph{\csname rc@claimneg@#1\endcsname}\textsuperscript{\hyperlink{claim:#1}{\S}}%
  \else\expandafter\ifx\csname rc@claim@#1\endcsname\rc@claim@inconclusive
    [\emph{\hyperlink{claim:#1}{Inconclusive on this dataset}}
    (\csname rc@claimwhy@#1\endcsname): #2]%
  \else
    [\emph{\hyperlink{claim:#1}{Not testable on this dataset}}: #2]%
  \fi\fi\fi
  \else\PackageError{recenter}{Unknown claim `\detokenize{#1}'}{Declare it in
  paper/claims.yaml.}\fi}
\def\rc@claim@supported{supported}
\def\rc@claim@refuted{refuted}
\def\rc@claim@inconclusive{inconclusive}
"""

#: what the paper says about the mode that built it (``\ClaimsModeSentence``)
MODE_SENTENCES = {
    ClaimsMode.report: (
        "This PDF was built in report mode: a claim the data do not support is printed in "
        "its negative form, in italics, and the build goes on."
    ),
    ClaimsMode.strict: (
        "This PDF was built in strict mode: a claim the data do not support would have "
        "stopped the build, so every claim printed here is supported or not testable."
    ),
}


def render_verdicts_tex(results: Sequence[ClaimResult], mode: str = ClaimsMode.report) -> str:
    """``claim_verdicts.tex``: one verdict and one negative sentence per claim, ``\\Claim``,
    and the mode that built the paper (``\\ClaimsMode``, ``\\ClaimsModeSentence``)."""
    lines = [
        "% Generated by rule `claims` from paper/claims.yaml. Do not edit.",
        r"\makeatletter",
        VERDICT_PREAMBLE.rstrip(),
        rf"\newcommand\ClaimsMode{{{escape_latex(mode)}}}",
        rf"\newcommand\ClaimsModeSentence{{{escape_latex(MODE_SENTENCES[ClaimsMode(mode)])}}}",
    ]
    for r in results:
        cid = r.claim.id
        word = _VERDICT_WORD[r.verdict]
        lines.append(f"\\expandafter\\def\\csname rc@claim@{cid}\\endcsname{{{word}}}")
        negative = escape_latex(r.claim.negative or f"Claim {cid} is {NEGATIVE_PHRASE}.")
        lines.append(f"\\expandafter\\def\\csname rc@claimneg@{cid}\\endcsname{{{negative}}}")
        if r.verdict == INCONCLUSIVE:
            why = _evidence_tex(r.outcome.why_inconclusive)
            lines.append(f"\\expandafter\\def\\csname rc@claimwhy@{cid}\\endcsname{{{why}}}")
    lines.append(r"\makeatother")
    return "\n".join(lines) + "\n"


def _leaf_text(cond: Mapping[str, Any]) -> str:
    fld = cond.get("field", "value")
    key = texttt(cond["key"])
    if fld in BOUNDS:
        lhs = f"{'lower' if fld == 'ci_low' else 'upper'} CI bound of {key}"
    elif fld in P_FIELDS:
        lhs = ("adjusted " if fld == "extra.p_adjusted" else "") + f"$p$-value of {key}"
    elif fld == "value":
        lhs = key
    else:
        lhs = f"{escape_latex(fld)} of {key}"
    if "*" in cond["key"]:
        agg = cond.get("aggregate", "all")
        lhs = ("every " if agg == "all" else f"{escape_latex(agg)} of ") + lhs
    if cond.get("exclude"):
        lhs += " (excluding " + ", ".join(texttt(e) for e in cond["exclude"]) + ")"
    if "value" in cond:
        rhs = escape_latex(_rhs_text(cond["op"], cond["value"]))
    else:
        bound = "upper" if cond["other_field"] == "ci_high" else "lower"
        rhs = escape_latex(cond["op"]) + f" {bound} CI bound of " + texttt(cond["other"])
    return f"{lhs} {rhs}"


def _condition_text(cond: Mapping[str, Any]) -> str:
    if "not" in cond:
        return r"not (" + _condition_text(cond["not"]) + ")"
    for kind in ("all", "any"):
        if kind in cond:
            joiner = r" \textbf{and} " if kind == "all" else r" \textbf{or} "
            return "(" + joiner.join(_condition_text(c) for c in cond[kind]) + ")"
    return _leaf_text(cond)


def _values_text(result: ClaimResult, numbers: Mapping[str, Mapping[str, Any]]) -> str:
    """The values a claim was judged on: each record's value with its interval (linked), never
    a p-value in the value's place; p-values appear only in the evidence, named as such."""
    keys = [k for k in result.outcome.keys if k in numbers]
    if not keys or result.verdict == UNTESTABLE:
        return ""
    cells = []
    for k in keys:
        rcint = "rcint" if _has_interval(numbers[k]) else "rc"
        cells.append(f"{breakable(k)} = \\{rcint}{{{k}}}")
    return "; ".join(cells)


def _has_interval(record: Mapping[str, Any] | None) -> bool:
    """Whether the values row prints ``record`` with both bounds of its interval."""
    return record is not None and None not in (record.get("ci_low"), record.get("ci_high"))


def _evidence_tex(text: str) -> str:
    """One evidence line: record keys may break at their separators, numbers never do."""
    return " ".join(
        breakable(tok)
        if re.match(r"[A-Za-z]", tok) and re.search(r"[._]", tok)
        else escape_number(tok)
        for tok in text.split(" ")
    )


def render_claims_tex(
    results: Sequence[ClaimResult],
    mode: str,
    numbers: Mapping[str, Mapping[str, Any]],
    history: Mapping[str, Change] | None = None,
) -> str:
    """The appendix table: every claim with its verdict, its condition and (``history``) the
    commit and date at which the condition last changed, the values it was judged on and the
    checks.

    One full-width column: a verdict column of its own wrapped every refuted claim's reason into
    a narrow tower that set the height of its row. A refuted claim's negative sentence is not
    repeated: the text prints it where the claim stands (and the audit site's claims page)."""
    lines = [
        "% Generated by rule `claims` from paper/claims.yaml. Do not edit.",
        r"\begingroup\scriptsize",
        r"\begin{longtable}{@{}>{\raggedright\arraybackslash}p{\linewidth}@{}}",
        r"\toprule",
        r"Claim and verdict; condition"
        + (" and when it last changed" if history is not None else "")
        + r"; values; checks \\",
        r"\midrule\endhead",
        r"\bottomrule\endfoot",
    ]
    for r in results:
        verdict = {
            SUPPORTED: r"\textbf{supported}",
            REFUTED: r"\textbf{not supported} (printed in its negative form)",
            UNTESTABLE: r"\textbf{not testable on this dataset}",
            INCONCLUSIVE: r"\textbf{inconclusive} ("
            + _evidence_tex(r.outcome.why_inconclusive)
            + ")",
        }[r.verdict]
        lines.append(
            rf"\raisebox{{1.5ex}}{{\hypertarget{{claim:{r.claim.id}}}{{}}}}"
            rf"{texttt(r.claim.id)}, {verdict}: {escape_latex(r.claim.statement)} \\*"
        )
        changed = ""
        if history is not None and r.claim.id in history:
            changed = f"; last changed {_change_tex(history[r.claim.id])}"
        lines.append(rf"\quad {_condition_text(r.claim.condition)}{changed} \\*")
        values = _values_text(r, numbers)
        if values:
            lines.append(rf"\quad values: {values} \\*")
        shown = {k for k in r.outcome.keys if values and _has_interval(numbers.get(k))}
        checks = "; ".join(_evidence_tex(e) for e in r.outcome.evidence if not _shown(e, shown))
        if checks:
            lines.append(rf"\quad checked: {checks} \\")
        else:
            lines[-1] = lines[-1].removesuffix("*")
        lines.append(r"\midrule")
    if results:
        lines.pop()
    lines += [r"\end{longtable}", r"\endgroup"]
    lines.append(f"% claims mode: {mode}")
    return "\n".join(lines) + "\n"


#: a check of an interval's bound against a constant: ``holds: KEY lower CI bound = x > c``
_BOUND_CHECK = re.compile(r"(?:holds|fails): (\S+) (?:lower|upper) CI bound = \S+ [<>]=? [^ ]+")


def _shown(evidence: str, keys: set[str]) -> bool:
    """Whether ``evidence`` only compares the bound of an interval the values row prints (its
    record's value and interval, linked) with a constant; the audit site keeps every check."""
    match = _BOUND_CHECK.fullmatch(evidence)
    return match is not None and match.group(1) in keys


def _change_tex(change: Change) -> str:
    if change.status == COMMITTED:
        return texttt(change.commit) + " (" + escape_latex(change.date) + ")"
    return r"\emph{" + escape_latex(change.status) + "}"


def _margin_text(margin: float, fmt: str) -> str:
    """A margin in its figure's format; a share's margin is in percentage points."""
    text = format_number(margin, fmt.lstrip("+"))
    return text[:-1] + " points" if text.endswith("%") else text


def render_margins_tex(
    published: Mapping[str, Mapping[str, Any]], history: Mapping[str, Change]
) -> str:
    """The scorecard's equivalence margins, each with its reason and the commit and date at
    which it last changed (the study file's entries that have a margin). The margins are
    grouped under their last change (most changed together), and figures that share a
    margin and its reason share a row (the study's sizes do)."""
    groups: dict[str, dict[tuple[str, str], list[str]]] = {}
    for name, entry in published.items():
        if entry.get("margin") is None:
            continue
        change = history.get(name)
        rows = groups.setdefault(_change_tex(change) if change is not None else "--", {})
        row = (
            r"$\pm$" + escape_number(_margin_text(float(entry["margin"]), entry["fmt"])),
            escape_latex(str(entry.get("margin_reason") or "")),
        )
        rows.setdefault(row, []).append(name)
    lines = [
        r"\par\medskip\noindent\textbf{Equivalence margins of the scorecard.}",
        r"\begingroup\footnotesize",
        r"\begin{longtable}{@{}>{\raggedright}p{0.21\linewidth}>{\raggedleft}p{0.12\linewidth}"
        r">{\raggedright\arraybackslash}p{0.6\linewidth}@{}}",
        r"\toprule",
        r"Published figures & Margin & Why this margin \\",
        r"\midrule\endhead",
        r"\bottomrule\endfoot",
    ]
    for i, (change, rows) in enumerate(groups.items()):
        if i:
            lines.append(r"\addlinespace")
        lines.append(rf"\multicolumn{{3}}{{@{{}}l}}{{\emph{{Last changed}} {change}:}} \\*")
        for (margin, reason), names in rows.items():
            figures = ", ".join(texttt(n) for n in names)
            lines.append(f"{figures} & {margin} & {reason}" + r" \\")
    lines += [r"\end{longtable}", r"\endgroup"]
    return "\n".join(lines) + "\n"
