"""Which files of a raw folder hold what, found by pattern (the authors' annotation-tool layout).

No list of file names is tied to one snapshot: any ``annotations*/`` folder holds per-annotator
files ``<annotator>_task<N>.jsonl``; ``relevance_task<N>/<model>.jsonl`` hold model votes;
``judge_task6/<model>.jsonl`` model-judge ratings; ``task<N>/eval_results_*.jsonl`` generated
responses; ``extracted/task<N>_items.jsonl`` the items each task showed. Everything else (the
tool's empty ``.lock`` files, helper caches, debug runs, a README) is listed as ignored with a
reason, so the skipped-records report accounts for every file under the root.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from analysis.data.errors import IgnoredFile

#: tasks of the annotation tool: 1 = stage-1 pilot, 2 = graded stage-2 pilot, 3 = binary
#: stage-2 pilot, 4 = stage-1 final, 5 = stage-2 final, 6 = stage-3 final
ANNOTATION_TASKS = (1, 2, 3, 4, 5, 6)
ITEM_TASKS = (4, 5, 6)
MODEL_VOTE_TASKS = (3, 5)
JUDGE_TASKS = (6,)
CLASSIFIER_SET = "task3_relevance_clf.jsonl"

_ANNOTATION_DIR = re.compile(r"^annotations[^/]*$")
_ANNOTATION_FILE = re.compile(r"^(?P<annotator>.+)_task(?P<task>\d+)\.jsonl$")
_ITEMS_FILE = re.compile(r"^task(?P<task>\d+)_items\.jsonl$")
_MODEL_VOTE_DIR = re.compile(r"^relevance_task(?P<task>\d+)$")
_JUDGE_DIR = re.compile(r"^judge_task(?P<task>\d+)$")
_EVAL_DIR = re.compile(r"^task\d+$")
_EVAL_FILE = re.compile(r"^eval_results_.+\.jsonl$")

#: helper outputs of the tool that carry no judgment the canonical tables hold
_HELPERS: dict[str, str] = {
    "behaviors": "expected behaviours per attribute (helper; not a judgment)",
    "behaviors_simple": "expected behaviours per attribute (helper; not a judgment)",
    "relevance_debug": "an early debug run of the relevance task (not part of the study)",
    "attr_evidence_cache.jsonl": "evidence pointers into conversations (helper; not a judgment)",
}


@dataclass(frozen=True)
class AnnotationFile:
    """A per-annotator file of one task."""

    path: Path
    rel: str
    annotator: str
    task: int


@dataclass(frozen=True)
class ModelFile:
    """A per-model file (votes or judge ratings) of one task."""

    path: Path
    rel: str
    model: str
    task: int


@dataclass
class Layout:
    """The data files under one raw root, by kind, each list sorted by relative path."""

    root: Path
    items: dict[int, tuple[Path, str]] = field(default_factory=dict)
    annotations: list[AnnotationFile] = field(default_factory=list)
    model_votes: list[ModelFile] = field(default_factory=list)
    judges: list[ModelFile] = field(default_factory=list)
    classifier_set: tuple[Path, str] | None = None
    eval_results: list[tuple[Path, str]] = field(default_factory=list)
    ignored: list[IgnoredFile] = field(default_factory=list)

    def files(self) -> list[Path]:
        """Every file the adapter reads, sorted (the rule's declared inputs)."""
        paths = [p for p, _ in self.items.values()]
        paths += [a.path for a in self.annotations]
        paths += [m.path for m in self.model_votes + self.judges]
        paths += [p for p, _ in self.eval_results]
        if self.classifier_set is not None:
            paths.append(self.classifier_set[0])
        return sorted(paths)


def _classify(layout: Layout, path: Path, rel: Path) -> str | None:
    """File the path under its kind; return the reason it is ignored, or None."""
    parts = rel.parts
    name = parts[-1]
    if name.endswith(".lock"):
        return "lock file of the annotation tool (empty artefact)"
    if any(p.startswith(".") for p in parts):
        return "hidden file"
    if parts[0] in _HELPERS:
        return _HELPERS[parts[0]]
    text = rel.as_posix()
    if len(parts) == 2 and _ANNOTATION_DIR.match(parts[0]):
        m = _ANNOTATION_FILE.match(name)
        if not m:
            return "not an <annotator>_task<N>.jsonl file"
        task = int(m.group("task"))
        if task not in ANNOTATION_TASKS:
            return f"annotation task {task} is not one of the study's tasks {ANNOTATION_TASKS}"
        layout.annotations.append(AnnotationFile(path, text, m.group("annotator"), task))
        return None
    if len(parts) == 2 and parts[0] == "extracted":
        m = _ITEMS_FILE.match(name)
        if not m or int(m.group("task")) not in ITEM_TASKS:
            return f"not an items file of tasks {ITEM_TASKS}"
        layout.items[int(m.group("task"))] = (path, text)
        return None
    if len(parts) == 2 and name.endswith(".jsonl"):
        m = _MODEL_VOTE_DIR.match(parts[0])
        if m:
            task = int(m.group("task"))
            if task not in MODEL_VOTE_TASKS:
                return f"model votes of task {task} (the study has {MODEL_VOTE_TASKS})"
            layout.model_votes.append(ModelFile(path, text, name[: -len(".jsonl")], task))
            return None
        m = _JUDGE_DIR.match(parts[0])
        if m:
            task = int(m.group("task"))
            if task not in JUDGE_TASKS:
                return f"judge ratings of task {task} (the study has {JUDGE_TASKS})"
            layout.judges.append(ModelFile(path, text, name[: -len(".jsonl")], task))
            return None
        if _EVAL_DIR.match(parts[0]) and _EVAL_FILE.match(name):
            layout.eval_results.append((path, text))
            return None
    if text == CLASSIFIER_SET:
        layout.classifier_set = (path, text)
        return None
    return "not a file kind of the annotation-tool layout"


def discover(root: Path | str) -> Layout:
    """Classify every file under ``root`` (sorted walk, so the result is deterministic)."""
    root = Path(root)
    layout = Layout(root=root)
    if not root.is_dir():
        return layout
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        reason = _classify(layout, path, rel)
        if reason is not None:
            layout.ignored.append(IgnoredFile(rel.as_posix(), reason))
    return layout


def raw_files(root: Path | str) -> list[str]:
    """The data files the adapter would read under ``root``, sorted, as strings.

    The workflow declares these as the inputs of ``canonical_tables``, so adding, removing or
    editing any of them reruns the rule even though the adapter finds files by pattern.
    """
    return [str(p) for p in discover(root).files()]
