"""The items files: what each task showed (``extracted/task<N>_items.jsonl``).

Task 4 lists stage-1 users with their ``source``, merged attributes and conversations; task 5
the stage-2 (user, prompt) pairs with each user's profile attributes; task 6 the stage-3 items,
a generic and a personalized response side by side with the attributes to rate. Annotation
files point into these by line (``index`` / ``sample_index`` = 0-based record position).
"""

from __future__ import annotations

import re
from pathlib import Path

from analysis.data.collector import RowCollector, Stage2Pair, Stage3Item
from analysis.data.jsonl import Rec, read_jsonl
from analysis.data.raters import normalize_model_id

#: benchmark sources of the authors' synthetic users
SYNTHETIC_BENCHMARKS = ("cupid", "prefeval", "personalens")


def source_of(raw: str) -> tuple[str, str]:
    """(source, source_kind) for a raw ``source`` value, or ValueError if it is unknown."""
    if raw == "wildchat":
        return "wildchat", "real"
    if raw in SYNTHETIC_BENCHMARKS:
        return f"synthetic:{raw}", "synthetic"
    if raw.startswith("synthetic:") and raw.split(":", 1)[1] in SYNTHETIC_BENCHMARKS:
        return raw, "synthetic"
    if raw == "sim-wildchat":
        return raw, "real"
    if raw.startswith("sim-") and raw[4:] in SYNTHETIC_BENCHMARKS:
        return raw, "synthetic"
    raise ValueError(
        f"unknown source {raw!r}: expected wildchat, {', '.join(SYNTHETIC_BENCHMARKS)} "
        "or their sim- equivalents"
    )


def _confidence(attr: Rec) -> float | None:
    value = attr.nullable("confidence", float)
    if value is not None and not 0.0 <= value <= 1.0:
        raise attr.error("confidence", f"{value} is not in [0, 1]")
    return value


def read_stage1_items(b: RowCollector, path: Path, rel: str) -> None:
    for rec in read_jsonl(path, rel):
        user_id = rec.req("user_id", str)
        try:
            source, kind = source_of(rec.req("source", str))
        except ValueError as err:
            raise rec.error("source", str(err)) from err
        if user_id in b.users:
            raise rec.error("user_id", f"user already listed in {b.users[user_id]['origin']}")
        b.users[user_id] = {"source": source, "source_kind": kind, "origin": rec.origin()}
        position_ids: list[str] = []
        seen: dict[str, int] = {}
        for pos, attr in enumerate(rec.children("merged_attributes")):
            text = attr.req("attribute", str)
            if text in seen:
                raise attr.error(
                    "attribute", f"duplicate attribute of this user (also at {seen[text]})"
                )
            seen[text] = pos
            position_ids.append(
                b.add_attribute(
                    attr,
                    user_id,
                    text,
                    "stage1",
                    position=pos,
                    reason=attr.req("reason", str),
                    confidence=_confidence(attr),
                    n_originals=max(1, len(attr.req("original_attributes", list))),
                )
            )
        for conv_index, conv in enumerate(rec.children("conversations")):
            conv_id = conv.opt("conversation_hash", str) or f"{user_id}#{conv_index}"
            if conv_id in b.conversation_ids:
                raise conv.error(
                    "conversation_hash",
                    f"conversation already listed in {b.conversation_ids[conv_id]}",
                )
            b.conversation_ids[conv_id] = rec.origin()
            for turn, msg in enumerate(conv.children("conversation")):
                role = msg.req("role", str)
                if role not in ("user", "assistant"):
                    raise msg.error("role", f"unknown role {role!r} (expected user or assistant)")
                b.conversations.append(
                    {
                        "conversation_id": conv_id,
                        "user_id": user_id,
                        "conversation_index": conv_index,
                        "turn": turn,
                        "role": role,
                        "text": msg.req("content", str),
                    }
                )
        if rec.has("prompt_index") and rec.data["prompt_index"] is not None:
            b.add_prompt(rec, rec.req("prompt_index", int), rec.opt("prompt_text", str))
        b.stage1_items.append((user_id, position_ids))
        b.stage1_lines.append(rec.line)


def read_stage2_items(b: RowCollector, path: Path, rel: str) -> None:
    for rec in read_jsonl(path, rel):
        user_id = rec.req("user_id", str)
        prompt_index = rec.req("prompt_index", int)
        prompt = b.add_prompt(rec, prompt_index, rec.req("prompt_text", str))
        if (user_id, prompt_index) in b.stage2_by_pair:
            first = b.stage2_by_pair[(user_id, prompt_index)] + 1
            raise rec.error(
                "prompt_index", f"pair (user, prompt {prompt_index}) repeats line {first}"
            )
        pair = Stage2Pair(user_id, prompt_index, {}, {})
        for pos, attr in enumerate(rec.children("profile_attributes")):
            text = attr.req("attribute", str)
            if text in pair.attributes:
                raise attr.error("attribute", "duplicate attribute in this profile")
            aid = b.add_attribute(
                attr,
                user_id,
                text,
                "stage2",
                position=pos,
                reason=attr.req("reason", str),
                confidence=_confidence(attr),
                n_originals=max(1, len(attr.req("original_attributes", list))),
            )
            pair.attributes[text] = aid
            pair.positions[text] = pos
            b.add_item(attr, "final", len(b.stage2_pairs), user_id, prompt, aid)
        b.stage2_by_pair[(user_id, prompt_index)] = len(b.stage2_pairs)
        b.stage2_profile.setdefault(user_id, {}).update(pair.attributes)
        b.stage2_pairs.append(pair)
        b.item_lines[len(b.stage2_pairs) - 1] = rec.line


_PAIR_ID = re.compile(r"^(?P<user>.+)_(?P<index>\d+)$")


def pair_prompt_index(b: RowCollector, rec: Rec, user_id: str) -> int:
    """The prompt index of a stage-3 / response record.

    The tool writes ``prompt_id`` as ``<user_id>_<prompt index>``; a bare index is accepted
    too; else ``prompt_index``, else the (user, prompt text) of a known stage-2 pair.
    """
    raw = rec.opt("prompt_id", str)
    if raw is not None:
        if raw.isdigit():
            return int(raw)
        m = _PAIR_ID.match(raw)
        if m and m.group("user") == user_id:
            return int(m.group("index"))
    if rec.has("prompt_index") and rec.data["prompt_index"] is not None:
        return rec.req("prompt_index", int)
    text = rec.opt("prompt_text", str)
    if text is not None:
        for (uid, index), _ in b.stage2_by_pair.items():
            if uid == user_id and b.prompts.get(index, ("",))[0] == text:
                return index
    raise rec.error(
        "prompt_id",
        "cannot tell the prompt: expected '<user_id>_<prompt index>', a prompt index or the "
        "text of a known pair",
    )


def _profile_attribute(b: RowCollector, rec: Rec, key: str, user_id: str, text: str) -> str:
    profile = b.stage2_profile.get(user_id)
    if profile is None or text not in profile:
        raise rec.error(key, "not a profile attribute of this user in extracted/task5_items.jsonl")
    return profile[text]


def read_stage3_items(b: RowCollector, path: Path, rel: str) -> None:
    for rec in read_jsonl(path, rel):
        user_id = rec.req("user_id", str)
        prompt_index = pair_prompt_index(b, rec, user_id)
        b.add_prompt(rec, prompt_index, rec.opt("prompt_text", str))
        raw_generator = rec.req("model_tag", str)
        attributes: dict[str, str] = {}
        for attr in rec.children("attributes"):
            text = attr.req("attribute", str)
            attributes[text] = _profile_attribute(b, attr, "attribute", user_id, text)
        item = Stage3Item(
            user_id,
            prompt_index,
            rec.opt("prompt_id", str) or "",
            normalize_model_id(raw_generator),
            raw_generator,
            attributes,
        )
        b.stage3_items.append(item)
        for key, condition in (
            ("response_no_context", "generic"),
            ("response_personalized", "personalized"),
        ):
            b.add_response(
                rec,
                key,
                user_id=user_id,
                prompt_index=prompt_index,
                raw_generator=raw_generator,
                condition=condition,
                text=rec.req(key, str),
            )
