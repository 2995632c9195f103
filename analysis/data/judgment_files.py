"""The judgment files: people's and models' labels, each tied to the item it judges.

Per-annotator files ``annotations*/<annotator>_task<N>.jsonl`` (task 1 stage-1 pilot, 2 graded
stage-2 pilot, 3 binary stage-2 pilot, 4 stage-1 final, 5 stage-2 final, 6 stage-3 ratings),
model votes ``relevance_task<N>/<model>.jsonl``, model-judge ratings
``judge_task6/<model>.jsonl``, the round-2 classifier set and the human-majority labels carried
by ``gt_attributes`` response files. Null labels, the graded task's never-set ``none`` rating and
empty records are what the tool is known to write: they are skipped and reported. Anything else
that does not fit raises :class:`~analysis.data.errors.DataError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.data import ids
from analysis.data.collector import RowCollector, Stage3Item
from analysis.data.items_files import pair_prompt_index
from analysis.data.jsonl import Rec, read_jsonl
from analysis.data.layout import AnnotationFile, ModelFile
from analysis.data.near_misses import folded
from analysis.data.raters import normalize_human_rater, normalize_model_id
from analysis.data.schemas import GRADED_LABELS
from analysis.data.vocabulary import ACCEPTED, FLAG_REASONS, TOOL_STAGE1_LABELS

#: graded stage-2 labels that count as YES ("should change the response explicitly or implicitly")
GRADED_YES = frozenset({"necessary_explicit", "necessary_implicit"})
#: the graded task's default: the annotator never set a rating
GRADED_UNSET = "none"
#: response-file modes -> canonical conditions
MODES: dict[str, str] = {
    "no_context": "generic",
    "gt_attributes": "personalized",
    "attributes": "full_profile",
}
#: id of the published human-majority label as a rater
MAJORITY_RATER = "human-majority"
#: rounds (see docs/data.md): annotation task -> round
TASK_ROUNDS: dict[int, str] = {1: "pilot", 2: "pilot_graded", 3: "pilot", 4: "final", 5: "final"}
MODEL_VOTE_ROUNDS: dict[int, str] = {3: "pilot", 5: "final"}


def line_of(b_items: list[Any], rec: Rec, key: str, index: int, items_file: str) -> Any:
    """The item a record points to by its 0-based position ``index`` in an items file."""
    if not 0 <= index < len(b_items):
        raise rec.error(
            key, f"{index} is not an item index of {items_file} (it has {len(b_items)} items)"
        )
    return b_items[index]


def _annotation_rater(rec: Rec, af: AnnotationFile) -> tuple[str, str]:
    """(rater, raw_rater): the record's ``annotator`` if given, else the file name's."""
    raw = rec.opt("annotator", str) or af.annotator
    rater = normalize_human_rater(raw)
    if rater != normalize_human_rater(af.annotator):
        raise rec.error("annotator", f"{raw!r} does not match the file name's {af.annotator!r}")
    return rater, raw


def read_annotations(b: RowCollector, af: AnnotationFile) -> None:
    """Read one per-annotator file of any task into judgments, votes or ratings."""
    for rec in read_jsonl(af.path, af.rel):
        task = rec.data.get("task")
        if task is not None and str(task) != str(af.task):
            raise rec.error("task", f"record of task {task} in a task-{af.task} file")
        rater, raw = _annotation_rater(rec, af)
        index = rec.req("index", int)
        akey = (af.task, rater, index)
        if akey in b.annotation_records:
            raise rec.error(
                "index",
                f"duplicate annotation: {rater} already annotated task {af.task} item {index} "
                f"({b.annotation_records[akey]})",
            )
        b.annotation_records[akey] = rec.origin()
        if af.task in (1, 4):
            _stage1_record(b, rec, af.task, index, rater, raw)
        elif af.task in (2, 3, 5):
            _stage2_record(b, rec, af.task, index, rater, raw)
        else:
            _stage3_record(b, rec, index, rater, raw)


def _stage1_label(rec: Rec) -> str | None:
    label = rec.nullable("judgment", str)
    if label is None:
        return None
    if label not in TOOL_STAGE1_LABELS:
        raise rec.error("judgment", f"unknown label {label!r} (expected ok, bad or unsure)")
    return TOOL_STAGE1_LABELS[label]


def _flag_reason(judgment: Rec, label: str) -> str | None:
    """The structured reason of a flag (absent in the real exports: None, never guessed)."""
    reason = judgment.opt("flag_reason", str)
    if reason is None:
        return None
    if reason not in FLAG_REASONS:
        raise judgment.error(
            "flag_reason", f"unknown reason {reason!r} (expected one of {FLAG_REASONS})"
        )
    if label == ACCEPTED:
        raise judgment.error(
            "flag_reason", f"reason {reason!r} on a judgment that accepts the attribute"
        )
    return reason


def _stage1_record(b: RowCollector, rec: Rec, task: int, index: int, rater: str, raw: str) -> None:
    judgments = rec.children("attr_judgments")
    if not judgments:
        b.skip(rec, "attr_judgments", "empty_record", "record holds no judgments")
        return
    if task == 1:
        # The stage-1 pilot's `index` points into an item list that was not published: the
        # judgments cannot be tied to an attribute text or a user, so none becomes a row.
        # Labels are still checked, so a malformed pilot file is an error, not a skip.
        for judgment in judgments:
            if _stage1_label(judgment) is None:
                b.skip(judgment, "judgment", "null_label", "judgment is null")
            else:
                b.skip(
                    judgment,
                    "judgment",
                    "unpublished_item_list",
                    f"task-1 item {index} refers to the pilot's item list, which is not in the "
                    "data: the judged attribute and user are unknown",
                )
        return
    if task == 4:
        user_id, positions = line_of(
            b.stage1_items, rec, "index", index, "extracted/task4_items.jsonl"
        )
        given = rec.opt("user_id", str)
        if given is not None and given != user_id:
            raise rec.error("user_id", f"item {index} of task4_items is user {user_id[:16]}...")
        if len(judgments) != len(positions):
            raise rec.error(
                "attr_judgments",
                f"{len(judgments)} judgments for the {len(positions)} merged_attributes "
                f"of task4 item {index}",
            )
    round_ = TASK_ROUNDS[task]
    for pos, judgment in enumerate(judgments):
        label = _stage1_label(judgment)
        if label is None:
            b.skip(judgment, "judgment", "null_label", "judgment is null")
            continue
        b.add_judgment(
            judgment,
            "judgment",
            aid=positions[pos],
            user_id=user_id,
            rater=rater,
            raw=raw,
            round_=round_,
            label=label,
            note=judgment.opt("note", str),
            flag_reason=_flag_reason(judgment, label),
        )


def _stage2_pair(
    b: RowCollector, rec: Rec, task: int, index_key: str, index: int
) -> tuple[str, str, Any | None]:
    """(user, prompt id, task-5 item or None) of one stage-2 record, human or model.

    A final-round (task 5) record points at a line of task5_items, which fixes its user and
    prompt; a pilot record points at a prompt sample of its user.
    """
    user_id = rec.req("user_id", str)
    pair = None
    if task == 5:
        pair = line_of(b.stage2_pairs, rec, index_key, index, "extracted/task5_items.jsonl")
        if pair.user_id != user_id:
            raise rec.error(
                "user_id", f"item {index} of task5_items is user {pair.user_id[:16]}..."
            )
        given = rec.opt("prompt_index", int)
        if given is not None and given != pair.prompt_index:
            raise rec.error(
                "prompt_index", f"item {index} of task5_items has prompt {pair.prompt_index}"
            )
        prompt_index = pair.prompt_index
    else:
        prompt_index = b.sample_of(rec, index, user_id, rec.opt("prompt_index", int))
    prompt = b.add_prompt(rec, prompt_index, rec.opt("prompt_text", str))
    b.ref_user(user_id, rec)
    return user_id, prompt, pair


def _stage2_attribute(
    b: RowCollector,
    node: Rec,
    pair: Any | None,
    index: int,
    user_id: str,
    prompt: str,
    text: str,
) -> str:
    """The attribute id a stage-2 vote is about: one of the task-5 item's profile attributes,
    or (pilot rounds) an attribute the record itself introduces."""
    if pair is None:
        b.note_pilot_text(node, "attribute", user_id, prompt, text)
        return b.add_attribute(node, user_id, text, "stage2_pilot")
    aid = pair.attributes.get(text)
    if aid is None:
        near = [t for t in pair.attributes if folded(t) == folded(text)]
        hint = f" ({near[0]!r} is, once whitespace and case are normalized)" if near else ""
        raise node.error(
            "attribute", f"not a profile attribute of item {index} of task5_items{hint}"
        )
    return aid


def _stage2_record(b: RowCollector, rec: Rec, task: int, index: int, rater: str, raw: str) -> None:
    round_ = TASK_ROUNDS[task]
    user_id, prompt, pair = _stage2_pair(b, rec, task, "index", index)
    judgments = rec.children("relevance_judgments")
    if not judgments:
        b.skip(rec, "relevance_judgments", "empty_record", "record holds no judgments")
        return
    seen: set[str] = set()
    for judgment in judgments:
        text = judgment.req("attribute", str)
        if text in seen:
            raise judgment.error(
                "attribute", "duplicate annotation: attribute judged twice in one record"
            )
        seen.add(text)
        graded: str | None = None
        if task == 2:
            graded = judgment.nullable("rating", str)
            if graded is None:
                b.skip(judgment, "rating", "null_label", "rating is null")
                continue
            if graded == GRADED_UNSET:
                b.skip(
                    judgment,
                    "rating",
                    "unrated",
                    "graded rating 'none': the tool's default, never set",
                )
                continue
            if graded not in GRADED_LABELS:
                raise judgment.error(
                    "rating", f"unknown label {graded!r} (expected one of {GRADED_LABELS})"
                )
            vote = graded in GRADED_YES
        else:
            value = judgment.nullable("relevant", bool)
            if value is None:
                b.skip(judgment, "relevant", "null_label", "relevant is null")
                continue
            vote = value
        aid = _stage2_attribute(b, judgment, pair, index, user_id, prompt, text)
        b.add_vote(
            judgment,
            "attribute",
            round_=round_,
            sample_index=index,
            user_id=user_id,
            prompt=prompt,
            aid=aid,
            rater=rater,
            kind="human",
            raw=raw,
            vote=vote,
            graded=graded,
        )


def _rating_value(rec: Rec, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise rec.error(key, f"rating must be an integer 1-5, got {value!r:.40}")
    if not 1 <= value <= 5:
        raise rec.error(key, f"rating {value} out of range 1-5")
    return value


def _ratings(
    b: RowCollector, rec: Rec, item: Stage3Item, *, rater: str, kind: str, raw: str
) -> None:
    ratings = rec.req("ratings", dict)
    if not ratings:
        b.skip(rec, "ratings", "empty_record", "record holds no ratings")
        return
    for text, value in ratings.items():
        key = f"ratings[{text[:40]!r}]"
        rating = _rating_value(rec, key, value)
        if rating is None:
            b.skip(rec, key, "null_label", "rating is null")
            continue
        aid = item.attributes.get(text)
        if aid is None:
            raise rec.error(key, "not an attribute of this task6 item")
        b.add_rating(rec, key, item, aid, rater=rater, kind=kind, raw=raw, rating=rating)


def _stage3_item_for(b: RowCollector, rec: Rec, index_key: str, index: int) -> Stage3Item:
    item = line_of(b.stage3_items, rec, index_key, index, "extracted/task6_items.jsonl")
    user_id = rec.req("user_id", str)
    if user_id != item.user_id:
        raise rec.error("user_id", f"item {index} of task6_items is user {item.user_id[:16]}...")
    tag = rec.opt("model_tag", str)
    if tag is not None and normalize_model_id(tag) != item.generator:
        raise rec.error("model_tag", f"item {index} of task6_items is generator {item.generator}")
    given = rec.opt("prompt_id", str)
    if given is not None and item.raw_prompt_id and given != item.raw_prompt_id:
        raise rec.error("prompt_id", f"item {index} of task6_items is {item.raw_prompt_id}")
    return item


def _stage3_record(b: RowCollector, rec: Rec, index: int, rater: str, raw: str) -> None:
    item = _stage3_item_for(b, rec, "index", index)
    _ratings(b, rec, item, rater=rater, kind="human", raw=raw)


# ---------------------------------------------------------------------- model files
def _model_rater(rec: Rec, mf: ModelFile) -> tuple[str, str]:
    raw = rec.opt("model", str) or mf.model
    rater = normalize_model_id(raw)
    if rater != normalize_model_id(mf.model):
        raise rec.error("model", f"{raw!r} does not match the file name's {mf.model!r}")
    return rater, raw


def read_model_votes(b: RowCollector, mf: ModelFile) -> None:
    round_ = MODEL_VOTE_ROUNDS[mf.task]
    seen: dict[int, str] = {}
    for rec in read_jsonl(mf.path, mf.rel):
        rater, raw = _model_rater(rec, mf)
        index = rec.req("sample_index", int)
        if index in seen:
            raise rec.error(
                "sample_index", f"duplicate annotation: sample already voted on ({seen[index]})"
            )
        seen[index] = rec.origin()
        user_id, prompt, pair = _stage2_pair(b, rec, mf.task, "sample_index", index)
        votes = rec.children("items")
        if not votes:
            b.skip(rec, "items", "empty_record", "record holds no votes")
            continue
        texts: set[str] = set()
        for v in votes:
            text = v.req("attribute", str)
            if text in texts:
                raise v.error(
                    "attribute", "duplicate annotation: attribute voted twice in one record"
                )
            texts.add(text)
            vote = v.nullable("relevant", bool)
            if vote is None:
                b.skip(v, "relevant", "null_label", "relevant is null")
                continue
            aid = _stage2_attribute(b, v, pair, index, user_id, prompt, text)
            b.add_vote(
                v,
                "relevant",
                round_=round_,
                sample_index=index,
                user_id=user_id,
                prompt=prompt,
                aid=aid,
                rater=rater,
                kind="model",
                raw=raw,
                vote=vote,
            )


def read_judges(b: RowCollector, mf: ModelFile) -> None:
    for rec in read_jsonl(mf.path, mf.rel):
        rater, raw = _model_rater(rec, mf)
        index = rec.req("sample_index", int)
        item = _stage3_item_for(b, rec, "sample_index", index)
        _ratings(b, rec, item, rater=rater, kind="model", raw=raw)


def read_classifier_set(b: RowCollector, path: Path, rel: str) -> None:
    for rec in read_jsonl(path, rel):
        index = rec.req("sample_index", int)
        known = b.pilot_samples.get(index)
        if known is None:
            raise rec.error("sample_index", "pilot sample not described by any pilot file")
        user_id = known[0]
        prompt_index = rec.req("prompt_index", int)
        if prompt_index != known[1]:
            raise rec.error(
                "prompt_index", f"pilot sample {index} has prompt {known[1]} ({known[2]})"
            )
        prompt = b.add_prompt(rec, prompt_index, rec.opt("prompt_text", str))
        text = rec.req("attribute", str)
        label = rec.data.get("label", None)
        if label is None:
            raise rec.error("label", "missing required field")
        if label not in (0, 1) or isinstance(label, float):
            raise rec.error("label", f"unknown label {label!r} (expected 0 or 1)")
        split = rec.req("split", str)
        if split not in ("train", "val", "test"):
            raise rec.error("split", f"unknown split {split!r}")
        n_annotators = rec.req("n_annotators", int)
        if n_annotators < 1:
            raise rec.error("n_annotators", "item with no raters")
        yes_rate = rec.req("human_yes_rate", float)
        if not 0.0 <= yes_rate <= 1.0:
            raise rec.error("human_yes_rate", f"{yes_rate} not in [0, 1]")
        b.note_pilot_text(rec, "attribute", user_id, prompt, text)
        aid = b.add_attribute(rec, user_id, text, "stage2_pilot")
        b.add_vote(
            rec,
            "label",
            round_="pilot2",
            sample_index=index,
            user_id=user_id,
            prompt=prompt,
            aid=aid,
            rater=MAJORITY_RATER,
            kind="human_majority",
            raw="label",
            vote=bool(label),
        )
        iid = ids.item_id(user_id, prompt, aid)
        b.classifier_set[iid] = {
            "item_id": iid,
            "user_id": user_id,
            "prompt_id": prompt,
            "attribute_id": aid,
            "sample_index": index,
            "split": split,
            "label": bool(label),
            "human_yes_rate": yes_rate,
            "n_annotators": n_annotators,
        }


def read_eval_results(b: RowCollector, path: Path, rel: str) -> None:
    for rec in read_jsonl(path, rel):
        mode = rec.req("mode", str)
        if mode not in MODES:
            raise rec.error("mode", f"unknown mode {mode!r} (expected one of {tuple(MODES)})")
        user_id = rec.req("user_id", str)
        prompt_index = pair_prompt_index(b, rec, user_id)
        b.add_prompt(rec, prompt_index, rec.opt("prompt_text", str))
        b.add_response(
            rec,
            "response",
            user_id=user_id,
            prompt_index=prompt_index,
            raw_generator=rec.req("model", str),
            condition=MODES[mode],
            text=rec.req("response", str),
        )
        if mode != "gt_attributes":
            continue
        line = b.stage2_by_pair.get((user_id, prompt_index))
        if line is None:
            raise rec.error(
                "prompt_id", "ground-truth labels for a pair not in extracted/task5_items.jsonl"
            )
        pair = b.stage2_pairs[line]
        for attr in rec.children("profile_attributes"):
            text = attr.req("attribute", str)
            aid = pair.attributes.get(text)
            if aid is None:
                raise attr.error(
                    "attribute", f"not a profile attribute of item {line} of task5_items"
                )
            label = attr.nullable("ground_truth", bool)
            if label is None:
                b.skip(attr, "ground_truth", "null_label", "human-majority label is null")
                continue
            b.add_vote(
                attr,
                "ground_truth",
                round_="final",
                sample_index=line,
                user_id=user_id,
                prompt=ids.prompt_id(prompt_index),
                aid=aid,
                rater=MAJORITY_RATER,
                kind="human_majority",
                raw="ground_truth",
                vote=label,
                same_value_ok=True,
            )
