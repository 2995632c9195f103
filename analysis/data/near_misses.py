"""Two spellings of one thing: annotator ids and pilot attribute texts that differ only in case
or surrounding space.

A second export file ``tal_task3.jsonl`` beside ``Tal_task3.jsonl`` would become a rater of
its own, and a pilot vote on ``"likes tea "`` (one trailing space) an item of its own beside
``"likes tea"``: both change agreement statistics without a word. So two such spellings are an
error naming file, line and the near match, unless the dataset config lists them as distinct
(``data.distinct_annotators``, ``data.distinct_attributes``: groups of exact spellings). Model
names have their own near-miss check (:func:`analysis.data.raters.near_miss`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from analysis.data.errors import DataError


def folded(text: str) -> str:
    """The form two spellings share when they differ only in case or whitespace: inner runs
    of whitespace as one space, none around, case folded."""
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class Place:
    """Where a spelling was seen: file, line (None for a file name) and field."""

    file: str
    line: int | None
    field: str

    def __str__(self) -> str:
        line = "" if self.line is None else f", line {self.line}"
        return f"{self.file}{line}, field '{self.field}'"


def _allowed(groups: Iterable[Sequence[str]]) -> list[frozenset[str]]:
    return [frozenset(group) for group in groups]


def _listed(spellings: Iterable[str], allowed: list[frozenset[str]]) -> bool:
    """True when every spelling is in one listed group (the config says they are distinct)."""
    wanted = frozenset(spellings)
    return any(wanted <= group for group in allowed)


def check_annotators(
    spellings: Mapping[str, Place], distinct: Iterable[Sequence[str]] = ()
) -> None:
    """Annotator ids (as written, snapshot padding removed) that differ only in case or
    surrounding space are an error, unless one group of ``distinct`` lists them all.

    Surrounding space is never part of a rater id (it is dropped), so only spellings that
    differ in case can be listed as distinct raters.
    """
    allowed = _allowed(distinct)
    by_form: dict[str, list[str]] = {}
    for spelling in sorted(spellings, key=lambda s: (str(spellings[s]), s)):
        by_form.setdefault(folded(spelling), []).append(spelling)
    for group in by_form.values():
        if len(group) < 2:
            continue
        first, other = group[0], group[1]
        stripped = {s.strip() for s in group}
        if len(stripped) == len(group) and _listed(group, allowed):
            continue
        place = spellings[other]
        hint = (
            "rename the file (surrounding space cannot tell two raters apart)"
            if len(stripped) < len(group)
            else "fix the file name, or list both spellings in the dataset config's "
            "data.distinct_annotators if they are two people"
        )
        raise DataError(
            place.file,
            place.line,
            place.field,
            f"annotator {other!r} differs from annotator {first!r} ({spellings[first]}) only in "
            f"case or surrounding space: it would become a rater of its own beside it; {hint}",
        )


def check_pilot_attributes(
    texts: Mapping[tuple[str, str], Mapping[str, Sequence[Place]]],
    distinct: Iterable[Sequence[str]] = (),
) -> None:
    """Attribute texts of one (user, prompt) pilot pair that are equal only after whitespace and
    case are normalized are an error at the rarer spelling (the one seen fewer times; of two
    seen as often, the later), naming the near match, unless ``distinct`` lists them."""
    allowed = _allowed(distinct)
    for (user, prompt), seen in texts.items():
        by_form: dict[str, list[str]] = {}
        for text in seen:
            by_form.setdefault(folded(text), []).append(text)
        for group in by_form.values():
            if len(group) < 2 or _listed(group, allowed):
                continue
            ranked = sorted(group, key=lambda t: (-len(seen[t]), str(seen[t][0])))
            near, odd = ranked[0], ranked[-1]
            place = seen[odd][0]
            raise DataError(
                place.file,
                place.line,
                place.field,
                f"attribute text {odd!r} matches no attribute of user {user[:16]}... and "
                f"{prompt} exactly, but {near!r} ({seen[near][0]}, {len(seen[near])} votes) "
                "once whitespace and case are normalized: it would become an item of its own. "
                "Fix the text, or list both in the dataset config's data.distinct_attributes "
                "if they are different attributes",
            )
