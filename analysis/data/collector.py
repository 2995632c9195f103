"""Rows of the canonical tables, collected while raw files are read.

The collector is where keys are enforced as records arrive: a second vote by the same rater on
the same item in the same round, a response that differs from an earlier copy, two texts for one
prompt index: each raises :class:`~analysis.data.errors.DataError` naming both places, so a
duplicate can never be resolved silently by whichever file happened to be read last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analysis.data import ids
from analysis.data.errors import SkippedRecord
from analysis.data.jsonl import Rec
from analysis.data.near_misses import Place
from analysis.data.raters import normalize_model_id


@dataclass
class Stage2Pair:
    """One line of task5_items: a (user, prompt) pair and its profile attributes by text."""

    user_id: str
    prompt_index: int
    attributes: dict[str, str]  # text -> attribute_id
    positions: dict[str, int]  # text -> position in profile_attributes


@dataclass
class Stage3Item:
    """One line of task6_items: a pair, the generator, and the attributes shown for rating."""

    user_id: str
    prompt_index: int
    raw_prompt_id: str
    generator: str
    raw_generator: str
    attributes: dict[str, str]  # text -> attribute_id


@dataclass
class RowCollector:
    """Accumulates the rows of every table while files are read; checks keys as they arrive."""

    skipped: list[SkippedRecord] = field(default_factory=list)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    user_refs: dict[str, str] = field(default_factory=dict)
    conversations: list[dict[str, Any]] = field(default_factory=list)
    conversation_ids: dict[str, str] = field(default_factory=dict)
    attributes: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    attribute_origin: dict[tuple[str, str], str] = field(default_factory=dict)
    prompts: dict[int, tuple[str, str]] = field(default_factory=dict)
    prompt_refs: dict[int, tuple[str, int]] = field(default_factory=dict)
    judgments: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    votes: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    vote_origin: dict[tuple[str, str, str], str] = field(default_factory=dict)
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    response_origin: dict[str, str] = field(default_factory=dict)
    ratings: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)
    rating_origin: dict[tuple[str, ...], str] = field(default_factory=dict)
    classifier_set: dict[str, dict[str, Any]] = field(default_factory=dict)
    stage1_items: list[tuple[str, list[str]]] = field(default_factory=list)
    stage1_lines: list[int] = field(default_factory=list)
    stage2_pairs: list[Stage2Pair] = field(default_factory=list)
    stage2_by_pair: dict[tuple[str, int], int] = field(default_factory=dict)
    stage2_profile: dict[str, dict[str, str]] = field(default_factory=dict)
    stage3_items: list[Stage3Item] = field(default_factory=list)
    pilot_samples: dict[int, tuple[str, int, str]] = field(default_factory=dict)
    annotation_records: dict[tuple[int, str, int], str] = field(default_factory=dict)
    #: (user, prompt) of a pilot pair -> attribute text -> every place a vote names it
    pilot_texts: dict[tuple[str, str], dict[str, list[Place]]] = field(default_factory=dict)
    item_lines: dict[int, int] = field(default_factory=dict)

    # ------------------------------------------------------------------ small helpers
    def note_pilot_text(self, rec: Rec, key: str, user_id: str, prompt: str, text: str) -> None:
        """Remember where a pilot vote names an attribute text (``near_misses`` checks them)."""
        place = Place(rec.file, rec.line, rec.where(key))
        self.pilot_texts.setdefault((user_id, prompt), {}).setdefault(text, []).append(place)

    def skip(self, rec: Rec, key: str | None, kind: str, reason: str) -> None:
        self.skipped.append(SkippedRecord(rec.file, rec.line, rec.where(key), kind, reason))

    def ref_user(self, user_id: str, rec: Rec) -> None:
        self.user_refs.setdefault(user_id, rec.origin())

    def add_prompt(self, rec: Rec, index: int, text: str | None) -> str:
        """Register a prompt by its index (and its text, when this record carries it)."""
        if index < 0:
            raise rec.error("prompt_index", f"negative prompt index {index}")
        self.prompt_refs.setdefault(index, (rec.file, rec.line))
        if text is not None:
            known = self.prompts.get(index)
            if known is None:
                self.prompts[index] = (text, rec.origin())
            elif known[0] != text:
                raise rec.error(
                    "prompt_text",
                    f"prompt {index} has a different text than in {known[1]}",
                )
        return ids.prompt_id(index)

    def add_attribute(
        self,
        rec: Rec,
        user_id: str,
        text: str,
        set_name: str,
        *,
        position: int | None = None,
        reason: str | None = None,
        confidence: float | None = None,
        n_originals: int | None = None,
        key: str = "attribute",
    ) -> str:
        aid = ids.attribute_id(user_id, text)
        row = {
            "attribute_id": aid,
            "user_id": user_id,
            "set": set_name,
            "position": position,
            "text": text,
            "reason": reason,
            "confidence": confidence,
            "n_originals": n_originals,
        }
        known = self.attributes.get((aid, set_name))
        if known is None:
            self.attributes[(aid, set_name)] = row
            self.attribute_origin[(aid, set_name)] = rec.origin()
        elif known["text"] != text or known["user_id"] != user_id:
            raise rec.error(
                key, f"attribute id collides with {self.attribute_origin[(aid, set_name)]}"
            )
        elif set_name != "stage2_pilot" and any(
            known[c] != row[c] for c in ("reason", "confidence", "n_originals")
        ):
            # one user's profile repeats in each of their pairs; it must say the same each time
            # (the position may differ: the first one is kept)
            raise rec.error(
                key,
                "the same attribute of the same user has another reason, confidence or number "
                f"of originals in {self.attribute_origin[(aid, set_name)]}",
            )
        self.ref_user(user_id, rec)
        return aid

    def add_item(
        self, rec: Rec, round_: str, sample_index: int, user_id: str, prompt: str, aid: str
    ) -> str:
        iid = ids.item_id(user_id, prompt, aid)
        known = self.items.get((iid, round_))
        if known is None:
            self.items[(iid, round_)] = {
                "item_id": iid,
                "round": round_,
                "sample_index": sample_index,
                "user_id": user_id,
                "prompt_id": prompt,
                "attribute_id": aid,
            }
        elif known["sample_index"] != sample_index:
            raise rec.error(
                None,
                f"item ({user_id}, {prompt}) appears at samples {known['sample_index']} and "
                f"{sample_index} of round {round_}",
            )
        return iid

    def add_vote(
        self,
        rec: Rec,
        key: str,
        *,
        round_: str,
        sample_index: int,
        user_id: str,
        prompt: str,
        aid: str,
        rater: str,
        kind: str,
        raw: str,
        vote: bool,
        graded: str | None = None,
        same_value_ok: bool = False,
    ) -> None:
        iid = self.add_item(rec, round_, sample_index, user_id, prompt, aid)
        vkey = (iid, rater, round_)
        row = {
            "item_id": iid,
            "user_id": user_id,
            "prompt_id": prompt,
            "attribute_id": aid,
            "rater": rater,
            "rater_kind": kind,
            "raw_rater": raw,
            "round": round_,
            "vote": vote,
            "graded_label": graded,
        }
        if vkey in self.votes:
            known = self.votes[vkey]
            if same_value_ok and known["vote"] == vote:
                return
            raise rec.error(
                key,
                f"duplicate annotation: rater {rater} already voted on this item in round "
                f"{round_} ({self.vote_origin[vkey]})",
            )
        self.votes[vkey] = row
        self.vote_origin[vkey] = rec.origin()

    def add_judgment(
        self,
        rec: Rec,
        key: str,
        *,
        aid: str,
        user_id: str,
        rater: str,
        raw: str,
        round_: str,
        label: str,
        note: str | None,
        flag_reason: str | None = None,
    ) -> None:
        jkey = (aid, rater, round_)
        if jkey in self.judgments:
            raise rec.error(
                key, f"duplicate annotation: rater {rater} already judged this attribute"
            )
        self.judgments[jkey] = {
            "attribute_id": aid,
            "user_id": user_id,
            "rater": rater,
            "rater_kind": "human",
            "raw_rater": raw,
            "round": round_,
            "label": label,
            "note": note or None,
            "flag_reason": flag_reason,
        }

    def add_rating(
        self,
        rec: Rec,
        key: str,
        item: Stage3Item,
        aid: str,
        *,
        rater: str,
        kind: str,
        raw: str,
        rating: int,
    ) -> None:
        prompt = ids.prompt_id(item.prompt_index)
        rkey = (item.user_id, prompt, item.generator, aid, rater, "final")
        if rkey in self.ratings:
            raise rec.error(
                key,
                f"duplicate annotation: rater {rater} already rated this attribute "
                f"({self.rating_origin[rkey]})",
            )
        self.ratings[rkey] = {
            "user_id": item.user_id,
            "prompt_id": prompt,
            "generator": item.generator,
            "attribute_id": aid,
            "rater": rater,
            "rater_kind": kind,
            "raw_rater": raw,
            "round": "final",
            "rating": rating,
        }
        self.rating_origin[rkey] = rec.origin()

    def add_response(
        self,
        rec: Rec,
        key: str,
        *,
        user_id: str,
        prompt_index: int,
        raw_generator: str,
        condition: str,
        text: str,
    ) -> None:
        prompt = ids.prompt_id(prompt_index)
        generator = normalize_model_id(raw_generator)
        rid = ids.response_id(user_id, prompt, generator, condition)
        row = {
            "response_id": rid,
            "user_id": user_id,
            "prompt_id": prompt,
            "generator": generator,
            "raw_generator": raw_generator,
            "condition": condition,
            "text": text,
        }
        known = self.responses.get(rid)
        if known is None:
            self.responses[rid] = row
            self.response_origin[rid] = rec.origin()
            self.ref_user(user_id, rec)
        elif known["text"] != text:
            raise rec.error(
                key,
                f"{condition} response of {generator} differs from the one in "
                f"{self.response_origin[rid]}",
            )

    def sample_of(self, rec: Rec, index: int, user_id: str, prompt_index: int | None) -> int:
        """Check a pilot sample against what other pilot files say; return its prompt index."""
        known = self.pilot_samples.get(index)
        if known is None:
            if prompt_index is None:
                raise rec.error(
                    "prompt_index",
                    f"missing, and pilot sample {index} is not described by any other pilot file",
                )
            self.pilot_samples[index] = (user_id, prompt_index, rec.origin())
            return prompt_index
        if known[0] != user_id or (prompt_index is not None and known[1] != prompt_index):
            raise rec.error(
                "user_id",
                f"pilot sample {index} is (user {known[0][:16]}..., prompt {known[1]}) in "
                f"{known[2]}, here (user {user_id[:16]}..., prompt {prompt_index})",
            )
        return known[1]
