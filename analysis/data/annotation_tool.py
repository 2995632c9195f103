"""Adapter: the authors' annotation-tool layout -> the canonical tables.

Reads every file kind of the layout (see :mod:`analysis.data.layout` and ``docs/data.md``):

* ``extracted/task4_items.jsonl``: stage-1 users (``source``), their merged attributes and
  conversations; ``extracted/task5_items.jsonl``: stage-2 (user, prompt) pairs with the
  user's profile attributes; ``extracted/task6_items.jsonl``: stage-3 items (generic and
  personalized response side by side).
* ``annotations*/<annotator>_task<N>.jsonl``: human judgments. Task 1 = stage-1 pilot,
  2 = graded stage-2 pilot, 3 = binary stage-2 pilot, 4 = stage-1 final, 5 = stage-2 final,
  6 = stage-3 final ratings.
* ``relevance_task3/`` and ``relevance_task5/``: model votes (pilot, final);
  ``judge_task6/``: model-judge ratings; ``task3_relevance_clf.jsonl``: the round-2
  classifier set (human-majority labels and splits); ``task6/eval_results_*.jsonl``:
  responses, and in ``gt_attributes`` files the human-majority label of every final item.

Votes are keyed by (sample, attribute): the sample gives the user and the prompt, the
attribute text is looked up within that user's profile, never across users. Records the
tool is known to write without a usable judgment (null labels, the graded task's never-set
``none`` rating, empty records) are skipped and reported; anything else that does not fit
raises :class:`~analysis.data.errors.DataError` naming file, line and field.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.data import ids
from analysis.data.collector import RowCollector
from analysis.data.errors import DataError, IgnoredFile, SkippedRecord
from analysis.data.items_files import read_stage1_items, read_stage2_items, read_stage3_items
from analysis.data.jsonl import read_jsonl
from analysis.data.judgment_files import (
    read_annotations,
    read_classifier_set,
    read_eval_results,
    read_judges,
    read_model_votes,
)
from analysis.data.layout import Layout, discover
from analysis.data.near_misses import Place, check_annotators, check_pilot_attributes
from analysis.data.raters import near_miss, normalize_model_id
from analysis.data.schemas import TABLE_NAMES, make_table, validate_tables
from analysis.data.vocabulary import STUDY_MODELS


@dataclass
class AdapterResult:
    """The validated canonical tables plus everything that did not become a row."""

    tables: dict[str, pd.DataFrame]
    skipped: list[SkippedRecord]
    ignored_files: list[IgnoredFile]
    #: table -> the raw files (paths relative to the root, sorted) it rests on: those that
    #: added rows to it, and the items files those rows were resolved against
    sources: dict[str, list[str]] = field(default_factory=dict)

    def report(self) -> dict[str, Any]:
        """The skipped-records report (counts first, then every record), JSON-ready."""
        by_kind = Counter(s.kind for s in self.skipped)
        by_file: dict[str, Counter[str]] = defaultdict(Counter)
        for s in self.skipped:
            by_file[s.file][s.kind] += 1
        return {
            "n_skipped": len(self.skipped),
            "skipped_by_kind": dict(sorted(by_kind.items())),
            "skipped_by_file": {f: dict(sorted(c.items())) for f, c in sorted(by_file.items())},
            "ignored_files": [f.as_dict() for f in sorted(self.ignored_files)],
            "raters": raters_found(self.tables),
            "skipped": [s.as_dict() for s in sorted(self.skipped)],
        }


#: the tables whose rows are one rater's judgment (rater, rater_kind columns)
RATER_TABLES = ("attribute_judgments", "relevance_votes", "preference_ratings")


def raters_found(tables: Mapping[str, pd.DataFrame]) -> dict[str, dict[str, dict[str, int]]]:
    """Every rater of every judgment table with its row count, by kind: nobody enters unseen.

    The data summary (``skipped_records.json``) and the paper's data section list these, so a
    stray export file that became a rater of its own shows up where a reader looks.
    """
    found: dict[str, dict[str, dict[str, int]]] = {}
    for name in RATER_TABLES:
        counts = tables[name].groupby(["rater_kind", "rater"]).size()
        by_kind: dict[str, dict[str, int]] = defaultdict(dict)
        for (kind, rater), n in sorted(counts.items()):
            by_kind[str(kind)][str(rater)] = int(n)
        found[name] = dict(by_kind)
    return found


def _check_model_files(layout: Layout, known_models: Sequence[str]) -> None:
    """A model file whose name nearly spells a known model is an error with a did-you-mean."""
    known = {*STUDY_MODELS, *known_models}
    for mf in (*layout.model_votes, *layout.judges):
        model = normalize_model_id(mf.model)
        near = near_miss(model, known)
        if near is not None:
            raise DataError(
                mf.rel,
                None,
                "model",
                f"model {model!r} (from the file name) is not a known model but nearly spells "
                f"{near!r}: did you mean {near!r}? A misspelt file would become a new rater "
                "beside it; if this is another model, list it in the dataset config's "
                f"data.models (known: {sorted(known)})",
            )


def _annotator_spellings(layout: Layout) -> dict[str, Place]:
    """Each annotator id as its files spell it (the snapshot's underscore padding removed),
    with the first file that does."""
    spellings: dict[str, Place] = {}
    for af in layout.annotations:
        spelling = af.annotator.rstrip("_")
        spellings.setdefault(spelling, Place(af.rel, None, "annotator (file name)"))
    return spellings


#: collector field -> the canonical table its entries become
_TABLE_OF_FIELD = {
    "users": "users",
    "user_refs": "users",
    "conversations": "conversations",
    "attributes": "attributes",
    "judgments": "attribute_judgments",
    "prompts": "prompts",
    "prompt_refs": "prompts",
    "items": "relevance_items",
    "votes": "relevance_votes",
    "responses": "responses",
    "ratings": "preference_ratings",
    "classifier_set": "relevance_classifier_set",
}


class _Sources:
    """Which raw files fed which table, seen as the rows each file read adds.

    A file whose records are resolved against an items file (a judgment names a line and a
    position of task<N>_items) makes the tables it feeds rest on that items file too. This is
    what lets ``recenter trace --lineage`` name the stage-2 exports behind a stage-2 kappa
    instead of every raw file of the dataset.
    """

    def __init__(self, b: RowCollector, layout: Layout):
        self.b, self.layout = b, layout
        self.fed: dict[str, set[str]] = {name: set() for name in TABLE_NAMES}

    def _sizes(self) -> dict[str, int]:
        return {f: len(getattr(self.b, f)) for f in _TABLE_OF_FIELD}

    def read(self, rel: str, reader: Any, *args: Any, items_task: int | None = None) -> None:
        """Run ``reader(*args)`` and note the tables that gained rows from file ``rel``."""
        before = self._sizes()
        reader(*args)
        grown = {_TABLE_OF_FIELD[f] for f, n in self._sizes().items() if n > before[f]}
        resolved = self.layout.items.get(items_task) if items_task is not None else None
        for table in grown:
            self.fed[table].add(rel)
            if resolved is not None:
                self.fed[table].add(resolved[1])

    def as_dict(self) -> dict[str, list[str]]:
        return {name: sorted(files) for name, files in self.fed.items()}


def _pilot_samples(layout: Layout) -> dict[int, tuple[str, int, str]]:
    """Pilot sample index -> (user, prompt index, where first seen), from every pilot file that
    names both. The pilot's item list was not published; some model files give only the
    sample index, and this map places them. Conflicts are raised when the files are read."""
    samples: dict[int, tuple[str, int, str]] = {}
    sources: list[tuple[Path, str, str]] = [
        (af.path, af.rel, "index") for af in layout.annotations if af.task in (2, 3)
    ]
    sources += [(mf.path, mf.rel, "sample_index") for mf in layout.model_votes if mf.task == 3]
    for path, rel, key in sources:
        for rec in read_jsonl(path, rel):
            index, user, prompt = (rec.data.get(k) for k in (key, "user_id", "prompt_index"))
            if isinstance(index, int) and isinstance(user, str) and isinstance(prompt, int):
                samples.setdefault(index, (user, prompt, rec.origin()))
    return samples


def _check_coverage(b: RowCollector, layout: Layout) -> None:
    """An item shown for judgment but judged by no one is an error ("item with no raters")."""
    voted = {(k[0]) for k in b.votes if k[2] == "final"}
    for (iid, round_), item in b.items.items():
        if round_ == "final" and iid not in voted:
            line = b.item_lines[item["sample_index"]]
            pair = b.stage2_pairs[item["sample_index"]]
            text = next(t for t, a in pair.attributes.items() if a == item["attribute_id"])
            raise DataError(
                layout.items[5][1],
                line,
                f"profile_attributes[{pair.positions[text]}]",
                "item with no raters: no human, model or majority vote on it in any file",
            )
    if any(af.task == 4 for af in layout.annotations):
        judged = {k[0] for k in b.judgments if k[2] == "final"}
        for line, (_, positions) in zip(b.stage1_lines, b.stage1_items, strict=True):
            for pos, aid in enumerate(positions):
                if aid not in judged:
                    raise DataError(
                        layout.items[4][1],
                        line,
                        f"merged_attributes[{pos}]",
                        "item with no raters: no task-4 judgment on this attribute",
                    )


def _users_table(b: RowCollector) -> list[dict[str, Any]]:
    """Users from task4_items keep their recorded source; users seen only in stage-2/3 files
    are the study's real users (only WildChat users enter stages 2 and 3)."""
    simulated = any(u["source"].startswith("sim-") for u in b.users.values())
    inferred_source = "sim-wildchat" if simulated else "wildchat"
    rows = [
        {
            "user_id": uid,
            "source": u["source"],
            "source_kind": u["source_kind"],
            "source_inferred": False,
        }
        for uid, u in b.users.items()
    ]
    for uid in b.user_refs:
        if uid not in b.users:
            rows.append(
                {
                    "user_id": uid,
                    "source": inferred_source,
                    "source_kind": "real",
                    "source_inferred": True,
                }
            )
    return rows


def _prompts_table(b: RowCollector) -> list[dict[str, Any]]:
    rows = []
    for index, origin in sorted(b.prompt_refs.items()):
        if index not in b.prompts:
            raise DataError(*origin, "prompt_index", f"prompt {index} has no text in any file")
        rows.append(
            {"prompt_id": ids.prompt_id(index), "prompt_index": index, "text": b.prompts[index][0]}
        )
    return rows


def read_annotation_tool(
    root: Path | str,
    known_models: Sequence[str] = (),
    *,
    distinct_annotators: Sequence[Sequence[str]] = (),
    distinct_attributes: Sequence[Sequence[str]] = (),
) -> AdapterResult:
    """Read a folder in the annotation-tool layout into validated canonical tables.

    Raises :class:`DataError` (file, line, field) on malformed input; the returned
    ``skipped`` list holds every record the tool is known to write without a usable judgment.
    Annotator ids and pilot attribute texts that differ only in case or surrounding space are
    errors unless ``distinct_annotators`` / ``distinct_attributes`` (``data.*`` of the dataset
    config) list them (:mod:`analysis.data.near_misses`).
    """
    root = Path(root)
    layout = discover(root)
    if 5 not in layout.items:
        raise DataError(
            str(root),
            None,
            None,
            "no extracted/task5_items.jsonl: not an annotation-tool folder (set data.root)",
        )
    _check_model_files(layout, known_models)
    check_annotators(_annotator_spellings(layout), distinct_annotators)
    b = RowCollector()
    src = _Sources(b, layout)
    for task, reader in ((4, read_stage1_items), (5, read_stage2_items), (6, read_stage3_items)):
        if task in layout.items:
            src.read(layout.items[task][1], reader, b, *layout.items[task])
    b.pilot_samples.update(_pilot_samples(layout))
    for af in layout.annotations:
        if af.task == 6 and 6 not in layout.items:
            raise DataError(af.rel, None, None, "task-6 ratings but no extracted/task6_items.jsonl")
        if af.task == 4 and 4 not in layout.items:
            raise DataError(
                af.rel, None, None, "task-4 judgments but no extracted/task4_items.jsonl"
            )
        src.read(af.rel, read_annotations, b, af, items_task=af.task)
    for mf in layout.model_votes:
        src.read(mf.rel, read_model_votes, b, mf, items_task=mf.task)
    if layout.classifier_set is not None:
        src.read(layout.classifier_set[1], read_classifier_set, b, *layout.classifier_set)
    for path, rel in layout.eval_results:
        src.read(rel, read_eval_results, b, path, rel, items_task=5)
    for mf in layout.judges:
        if 6 not in layout.items:
            raise DataError(mf.rel, None, None, "judge ratings but no extracted/task6_items.jsonl")
        src.read(mf.rel, read_judges, b, mf, items_task=6)
    check_pilot_attributes(b.pilot_texts, distinct_attributes)
    _check_coverage(b, layout)
    rows: dict[str, list[dict[str, Any]]] = {
        "users": _users_table(b),
        "conversations": b.conversations,
        "attributes": list(b.attributes.values()),
        "attribute_judgments": list(b.judgments.values()),
        "prompts": _prompts_table(b),
        "relevance_items": list(b.items.values()),
        "relevance_votes": list(b.votes.values()),
        "responses": list(b.responses.values()),
        "preference_ratings": list(b.ratings.values()),
        "relevance_classifier_set": list(b.classifier_set.values()),
    }
    tables = {name: make_table(name, rows[name]) for name in TABLE_NAMES}
    return AdapterResult(
        validate_tables(tables), sorted(b.skipped), sorted(layout.ignored), src.as_dict()
    )
