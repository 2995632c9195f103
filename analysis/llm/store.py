"""The call store: every model call of the study as one JSON line, committed under ``data/calls/``.

Layout: ``<store>/<stage>/<model>/<shard>.jsonl`` (``.jsonl.gz`` is read too, for finished
shards compressed before committing). Parallel Snakemake jobs write different shards, so a
shard has one writer; an ``fcntl`` lock guards it anyway. Records are appended as complete
lines in one ``write``, then fsynced before the call counts as done, so a run killed at any
moment loses no completed (paid) call. A kill in the middle of a write can leave a torn last
line: readers ignore it (with a warning) and the next writer truncates it, so it never becomes a
corrupt record. A last line that lacks only its newline (a hand edit, or a kill between the
record and its newline) is a complete record: readers serve it and the next writer completes
the line instead of deleting a paid call.

Every record verifies itself. Its line begins with ``"digest"``, the sha256 of the record's
canonical content (every other field, key-sorted compact JSON: the rest of the line as the
writer wrote it), and the record's ``key`` is the sha256 of its request (``keys.py``). Replay
checks both on every record it serves, and the fields it reads, and refuses a record that
fails, naming shard, line and key: a changed byte in a stored answer, or two records whose
keys were swapped, is never served. ``recenter calls --validate`` checks the same for every
record; ``recenter calls --upgrade`` gives records written before digests existed theirs,
after checking their keys.

Replay reads every shard of a (stage, model); when a key occurs more than once (``refresh``
appends another answer) the record of the highest ``revision`` wins (a refresh writes the
revision of the record it replaces plus one), and among equal revisions the one read last:
later in its shard, or in the shard whose name sorts last. No clock takes part, so a record
written by a machine whose clock runs ahead cannot beat a later refresh. Replay parses a
record only when it is asked for: each shard has an index (key, revision, byte offset, length
of every record) cached beside it as ``<shard>.idx``. The index is a pure function of the
shard's bytes and is used only when the shard's sha256 and the index's own checksum both
match; otherwise it is rebuilt (and, where the folder is not writable, kept in memory only).
It holds keys, revisions and offsets, never a request or a secret, and is git-ignored.

Two record runs may share a store (two results folders in one checkout, each writing its own
shard). So that a shared call is paid once, a writer holds a per-key claim while it makes and
stores a call (``KeyClaims``: a POSIX byte-range lock, released by the kernel if the run dies)
and, holding it, first reads what the other writers appended since (``StoreFollower``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import gzip
import hashlib
import json
import logging
import os
import threading
import zlib
from collections.abc import AsyncIterator, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from analysis.llm.keys import AskedParts, StoredKeys
from analysis.llm.models import SAFE_NAME

log = logging.getLogger(__name__)

SHARD_SUFFIXES = (".jsonl", ".jsonl.gz")

#: fields every record carries, with the JSON types they must have
RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "stage": (str,),
    "model_name": (str,),
    "model": (dict,),
    "prompt_version": (str,),
    "request": (dict,),
    "response": (dict,),
    "usage": (dict,),
    "latency_s": (float, int, type(None)),
    "created": (str,),
    "system_fingerprint": (str, type(None)),
    "cost_usd": (float, int),
    "executor": (str,),
    "revision": (int,),
    "digest": (str,),
}

#: every line the writer appends starts with the record's digest field, then its canonical body
DIGEST_PREFIX = b'{"digest":"'
_DIGEST_END = len(DIGEST_PREFIX) + 64  # where the hex digest ends: '",' follows

#: what a record written before digests existed needs (said wherever one is refused)
UPGRADE_HINT = "check and upgrade the store with `recenter calls --upgrade --store STORE`"

REDACTED = "[REDACTED]"
_SECRET_FIELD_NAMES = frozenset({"api_key", "authorization", "openai-api-key", "x-api-key"})


class StoreError(RuntimeError):
    """The call store is unreadable or inconsistent; the message names file, line and field."""


def check_name(kind: str, value: str) -> str:
    """Stage, model and shard names become path components: keep them plain."""
    if not SAFE_NAME.match(value):
        raise StoreError(f"{kind} '{value}' must match {SAFE_NAME.pattern} (it names a folder)")
    return value


def shard_dir(store: Path, stage: str, model: str) -> Path:
    """Folder holding every shard of one (stage, model)."""
    return Path(store) / check_name("stage", stage) / check_name("model", model)


def shard_path(store: Path, stage: str, model: str, shard: str) -> Path:
    """The (uncompressed) shard file a writer appends to."""
    return shard_dir(store, stage, model) / f"{check_name('shard', shard)}.jsonl"


def shard_names(folder: Path | str) -> list[str]:
    """The names of every shard file of a (stage, model) folder, in a stable order.

    One read of the directory, whose entries come with their types (``os.scandir``, no stat
    per file): recording looks here before every call it makes.
    """
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.endswith(SHARD_SUFFIXES) and e.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(names)


def list_shards(folder: Path) -> list[Path]:
    """Every shard file of a (stage, model) folder, in a stable order."""
    return [folder / name for name in shard_names(folder)]


def redact(value: Any, secrets: Iterable[str]) -> Any:
    """Copy of ``value`` with every secret string replaced and secret-named fields dropped.

    Response bodies do not normally carry keys, but an error body or a proxy may echo request
    headers; the store is committed, so it is scrubbed on the way in.
    """
    secrets = [s for s in secrets if s and len(s) >= 6]
    if not secrets:
        return value

    def scrub(v: Any) -> Any:
        if isinstance(v, str):
            for s in secrets:
                v = v.replace(s, REDACTED)
            return v
        if isinstance(v, dict):
            return {k: scrub(x) for k, x in v.items() if str(k).lower() not in _SECRET_FIELD_NAMES}
        if isinstance(v, list):
            return [scrub(x) for x in v]
        return v

    return scrub(value)


def canonical_body(record: Mapping[str, Any]) -> bytes:
    """A record's canonical content: every field but ``digest``, key-sorted compact JSON
    (orjson; the stdlib for what it cannot encode, e.g. an integer beyond 64 bits in an
    endpoint's response). Its sha256 is the record's digest."""
    if "digest" in record:
        record = {k: v for k, v in record.items() if k != "digest"}
    try:
        return orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8"
        )


def line_of_body(body: bytes) -> bytes:
    """The store line of a canonical body: its digest field first, then the body's fields."""
    digest = hashlib.sha256(body).hexdigest().encode()
    rest = body[1:] if body == b"{}" else b"," + body[1:]
    return DIGEST_PREFIX + digest + b'"' + rest + b"\n"


def record_line(record: Mapping[str, Any]) -> bytes:
    """One store line (digest first, then the canonical body) and its newline."""
    return line_of_body(canonical_body(record))


def digest_problem(line: bytes | memoryview, rec: Mapping[str, Any]) -> str | None:
    """Why a parsed record does not verify against its digest (None when it does).

    The writer's own lines are checked on their bytes: the body after the digest field is
    exactly what was hashed. A line written otherwise (reformatted by hand, say) is checked on
    the canonical form of its parsed content, so only a change of content fails.
    """
    digest = rec.get("digest")
    if not isinstance(digest, str):
        return (
            "field 'digest': missing (a record written before records carried digests); "
            + UPGRADE_HINT
        )
    if (
        line[: len(DIGEST_PREFIX)] == DIGEST_PREFIX
        and line[_DIGEST_END : _DIGEST_END + 2] == b'",'
        and line[len(DIGEST_PREFIX) : _DIGEST_END] == digest.encode()
    ):
        fast = hashlib.sha256(b"{")
        fast.update(line[_DIGEST_END + 2 :])
        if fast.hexdigest() == digest:
            return None
    if hashlib.sha256(canonical_body(rec)).hexdigest() == digest:
        return None
    return (
        "field 'digest': the record's content does not hash to its digest (changed after it "
        "was written)"
    )


def _field(rec: Any, path: str) -> tuple[bool, Any]:
    """(found, value) of a dotted path into nested dicts (``response.choices``)."""
    node = rec
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def replay_problems(rec: Mapping[str, Any]) -> list[str]:
    """Field-level problems of what replay reads from a record: the request that makes its
    key, the first choice's message and its content, the requested response format, usage."""
    if _replayable(rec):
        return []
    problems = []
    for path, types, what in (
        ("request", (dict,), "an object"),
        ("request.messages", (list,), "a list"),
        ("request.params", (dict,), "an object"),
        ("model", (dict,), "an object"),
        ("prompt_version", (str,), "a string"),
        ("usage", (dict,), "an object"),
        ("response", (dict,), "an object"),
    ):
        found, value = _field(rec, path)
        if not found:
            problems.append(f"field '{path}': missing")
        elif not isinstance(value, types):
            problems.append(f"field '{path}': {type(value).__name__}, not {what}")
    if problems:
        return problems
    sample = rec["request"].get("sample_index", 0)
    if type(sample) is not int:
        problems.append(f"field 'request.sample_index': {type(sample).__name__}, not an integer")
    fmt = rec["request"]["params"].get("response_format")
    if fmt is not None and not isinstance(fmt, dict):
        problems.append(
            f"field 'request.params.response_format': {type(fmt).__name__}, not an object"
        )
    choices = rec["response"].get("choices")
    if choices is None:
        problems.append("field 'response.choices': missing (the stored response has no answer)")
    elif not isinstance(choices, list) or not choices:
        problems.append(f"field 'response.choices': {choices!r:.40}, not a non-empty list")
    elif not isinstance(choices[0], dict):
        problems.append(f"field 'response.choices[0]': {type(choices[0]).__name__}, not an object")
    else:
        message = choices[0].get("message")
        if not isinstance(message, dict):
            problems.append(
                f"field 'response.choices[0].message': {type(message).__name__}, not an object "
                "with role and content"
            )
        elif not isinstance(message.get("content"), str | None):
            problems.append(
                "field 'response.choices[0].message.content': "
                f"{type(message['content']).__name__}, not a string or null"
            )
    return problems


def _replayable(rec: Mapping[str, Any]) -> bool:
    """The common case of ``replay_problems`` in one expression (it runs for every record
    replay serves); False sends a record to the field-by-field check, which names the field."""
    try:
        req = rec["request"]
        message = rec["response"]["choices"][0]["message"]
        return (
            type(req) is dict
            and type(req["messages"]) is list
            and type(req["params"]) is dict
            and type(req.get("sample_index", 0)) is int
            and type(req["params"].get("response_format", {})) is dict
            and type(rec["model"]) is dict
            and type(rec["prompt_version"]) is str
            and type(rec["usage"]) is dict
            and type(message) is dict
            and type(message.get("content")) in _CONTENT_TYPES
        )
    except (KeyError, IndexError, TypeError, AttributeError):
        return False


_CONTENT_TYPES = (str, type(None))


def key_problem(
    rec: Mapping[str, Any], keys: StoredKeys, asked: AskedParts | None = None
) -> str | None:
    """Why the record's request does not hash to its key (None when it does). ``asked``: the
    parts the key was just made from, when the record is served for them (equal parts need no
    second hash)."""
    if asked is not None and keys.answers(rec, asked):
        return None
    req = rec["request"]
    try:
        expected = keys.key(
            rec["model"],
            req["messages"],
            req["params"],
            req.get("sample_index", 0),
            rec["prompt_version"],
        )
    except (TypeError, ValueError) as err:
        return f"field 'request': cannot make its key ({err})"
    if expected != rec["key"]:
        return f"field 'key': the stored request hashes to {expected}, not to the record's key"
    return None


def record_problems(
    line: bytes | memoryview,
    rec: Mapping[str, Any],
    keys: StoredKeys,
    asked: AskedParts | None = None,
) -> list[str]:
    """Everything that keeps replay from serving a parsed record: its digest, its key, the
    fields replay reads (empty when the record may be served; ``asked`` as in ``key_problem``)."""
    problem = digest_problem(line, rec)
    if problem is not None:
        return [problem]
    problems = replay_problems(rec)
    if problems:
        return problems
    problem = key_problem(rec, keys, asked)
    return [] if problem is None else [problem]


#: every digit byte as ``1``, any other byte as ``0``: a run of 19 ``1`` then marks 19 digits in
#: a row, which every integer of magnitude 2**63 or more has in its JSON text
_DIGITS_AS_ONES = bytes(0x31 if 0x30 <= b <= 0x39 else 0x30 for b in range(256))
_LONG_DIGIT_RUN = b"1" * 19


def _may_hold_a_big_integer(value: Any, line: bytes | memoryview) -> bool:
    """True when orjson may have read an integer beyond 64 bits as a float (it does: lossy).

    The stdlib reads those exactly; a record with a float this large is re-read by it. A line
    without 19 digits in a row holds no such integer: one byte translation and one substring
    search (both in C) show it, so only a line with such a run (a long number, or digits
    inside a string) has its parsed values walked.
    """
    if _LONG_DIGIT_RUN not in bytes(line).translate(_DIGITS_AS_ONES):
        return False
    stack = [value]
    while stack:
        v = stack.pop()
        kind = type(v)
        if kind is dict:
            stack.extend(v.values())
        elif kind is list:
            stack.extend(v)
        elif kind is float and abs(v) >= 2.0**63:
            return True
    return False


def loads_record(line: bytes | memoryview) -> Any:
    """A parsed store line, exact: orjson, or the stdlib where orjson would round an integer.

    Raises ``json.JSONDecodeError`` (orjson's error is a subclass) for a line that is no JSON.
    """
    value = orjson.loads(line)
    if _may_hold_a_big_integer(value, line):
        try:
            return json.loads(bytes(line))
        except UnicodeDecodeError as err:  # orjson parsed it: cannot happen, kept for clarity
            raise json.JSONDecodeError(str(err), "", 0) from err
    return value


def _plain_secret(secret: str) -> bool:
    """True when JSON writes ``secret`` verbatim (no quote, backslash or control character)."""
    return not any(c in secret for c in '"\\') and all(ord(c) >= 0x20 for c in secret)


def _is_complete_record(line: bytes) -> bool:
    """True when ``line`` is a whole JSON record. No proper prefix of a JSON object parses, so
    a line cut short by a kill never passes; only a record missing its newline does."""
    try:
        rec = orjson.loads(line)  # a parse only: exactness does not matter here
    except orjson.JSONDecodeError:
        return False
    return isinstance(rec, dict) and isinstance(rec.get("key"), str)


def _shard_bytes(path: Path, raw: bytes | None = None) -> bytes:
    """The (decompressed) content of a shard file; a damaged compressed shard is a
    ``StoreError`` naming the last line that could be read."""
    raw = path.read_bytes() if raw is None else raw
    if not path.name.endswith(".gz"):
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as err:
        readable = zlib.decompressobj(wbits=31)
        try:
            partial = readable.decompress(raw)
        except zlib.error:
            partial = b""
        lines = partial.count(b"\n")
        raise StoreError(
            f"{path}: compressed shard is truncated or damaged after line {lines} "
            f"({type(err).__name__}: {err}); its calls cannot be read. Restore the file "
            "(e.g. `git checkout` it) or record its calls again"
        ) from err


def _split_records(data: bytes) -> tuple[list[tuple[int, int]], int]:
    """(offset, length) of every line holding a record, and the length of the torn tail.

    The text after the last newline counts as a line when it is a complete record.
    """
    end = data.rfind(b"\n")
    spans: list[tuple[int, int]] = []
    pos = 0
    if end >= 0:
        for line in data[:end].split(b"\n"):
            spans.append((pos, len(line)))
            pos += len(line) + 1
    tail = data[end + 1 :]
    if tail.strip() and _is_complete_record(tail):
        return [*spans, (end + 1, len(tail))], 0
    return spans, len(tail)


def _read_lines(path: Path) -> tuple[list[bytes], bytes]:
    """Lines of a shard holding records, and the torn tail after them (usually empty)."""
    data = _shard_bytes(path)
    spans, torn = _split_records(data)
    tail = data[len(data) - torn :] if torn else b""
    return [data[o : o + n] for o, n in spans], tail


def _warn_torn(path: Path, torn: int) -> None:
    log.warning("%s: ignoring a torn last line (%d bytes) left by a killed run", path, torn)


def _parse_line(path: Path, lineno: int, line: bytes | memoryview) -> dict[str, Any]:
    try:
        rec = loads_record(line)
    except json.JSONDecodeError as err:
        raise StoreError(
            f"{path}:{lineno}: not valid JSON ({err.msg}); "
            "run `recenter calls --validate` to list every bad record"
        ) from err
    if not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
        raise StoreError(f"{path}:{lineno}: field 'key': a record must be an object with a key")
    return rec


def iter_shard(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of every complete record; a torn last line is skipped."""
    lines, tail = _read_lines(path)
    if tail.strip():
        _warn_torn(path, len(tail))
    for lineno, line in enumerate(lines, start=1):
        if line.strip():
            yield lineno, _parse_line(path, lineno, line)


def revision_of(rec: Mapping[str, Any]) -> int:
    """A record's revision (0 when absent or malformed: ``--validate`` reports the latter)."""
    value = rec.get("revision", 0)
    return value if type(value) is int else 0


def _replaces(candidate: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool:
    """True when ``candidate``, read after ``current``, is the one to serve: its revision is
    at least as high. Never a clock: see the module docstring."""
    return current is None or revision_of(candidate) >= revision_of(current)


def line_number(data: bytes | memoryview, offset: int) -> int:
    """The 1-based line of a shard that starts at byte ``offset`` (for error messages)."""
    return bytes(data[:offset]).count(b"\n") + 1


# ---------------------------------------------------------------- the cached shard index

#: bumped when the layout of ``<shard>.idx`` changes (an old index is then rebuilt)
INDEX_VERSION = 2
INDEX_SUFFIX = ".idx"


@dataclass(frozen=True)
class ShardIndex:
    """Where each record of one shard is: a pure function of the shard's bytes."""

    keys: list[str]
    revisions: list[int]
    offsets: list[int]
    lengths: list[int]
    torn: int  # bytes of a torn last line (ignored, with a warning)
    exact: list[int]  # entries that need the stdlib parser (see ``loads_record``)


def index_path(shard: Path) -> Path:
    """The cached index of a shard, beside it (``0.jsonl`` -> ``0.jsonl.idx``)."""
    return shard.with_name(shard.name + INDEX_SUFFIX)


def scan_shard(path: Path, data: bytes) -> ShardIndex:
    """Parse every record of a shard once (errors name file and line): its index."""
    spans, torn = _split_records(data)
    keys, revisions, offsets, lengths, exact = [], [], [], [], []
    view = memoryview(data)
    for lineno, (offset, length) in enumerate(spans, start=1):
        line = view[offset : offset + length]
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            if not data[offset : offset + length].strip():
                continue  # a blank line is no record
            rec = None
        if not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
            rec = _parse_line(path, lineno, line)  # raises the error naming file and line
        if _may_hold_a_big_integer(rec, line):
            exact.append(len(keys))
            rec = loads_record(line)
        keys.append(rec["key"])
        revisions.append(revision_of(rec))
        offsets.append(offset)
        lengths.append(length)
    return ShardIndex(keys, revisions, offsets, lengths, torn, exact)


def _index_bytes(index: ShardIndex, shard_sha256: str) -> bytes:
    """Header line (what the index was built from, and its body's checksum), then the body."""
    body = orjson.dumps(
        {
            "keys": index.keys,
            "revisions": index.revisions,
            "offsets": index.offsets,
            "lengths": index.lengths,
            "exact": index.exact,
        }
    )
    header = {
        "version": INDEX_VERSION,
        "shard_sha256": shard_sha256,
        "torn": index.torn,
        "body_sha256": hashlib.sha256(body).hexdigest(),
    }
    return orjson.dumps(header, option=orjson.OPT_SORT_KEYS) + b"\n" + body


def _cached_index(path: Path, shard_sha256: str, size: int) -> ShardIndex | None:
    """The index beside ``path`` if it was built from exactly these shard bytes and is intact."""
    try:
        raw = index_path(path).read_bytes()
        header_line, _, body = raw.partition(b"\n")
        header = orjson.loads(header_line)
        if (
            not isinstance(header, dict)
            or header.get("version") != INDEX_VERSION
            or header.get("shard_sha256") != shard_sha256
            or header.get("body_sha256") != hashlib.sha256(body).hexdigest()
        ):
            return None
        doc = orjson.loads(body)
        index = ShardIndex(
            doc["keys"],
            doc["revisions"],
            doc["offsets"],
            doc["lengths"],
            int(header["torn"]),
            doc["exact"],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return index if _well_formed(index, size) else None


def _well_formed(index: ShardIndex, size: int) -> bool:
    """Columns of equal length and the right types, every span inside the shard."""
    columns = (index.keys, index.revisions, index.offsets, index.lengths)
    if not all(type(c) is list and len(c) == len(index.keys) for c in columns):
        return False
    if not all(type(v) is str for v in index.keys):
        return False
    numbers = (*index.revisions, *index.offsets, *index.lengths)
    if not all(type(v) is int and v >= 0 for v in numbers):
        return False
    if type(index.exact) is not list or not all(
        type(i) is int and 0 <= i < len(index.keys) for i in index.exact
    ):
        return False
    ends = map(int.__add__, index.offsets, index.lengths)
    return not index.keys or max(ends) <= size


def _write_index(path: Path, index: ShardIndex, shard_sha256: str) -> None:
    """Cache the index beside the shard (atomic replace); a read-only folder keeps it in memory."""
    target = index_path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(_index_bytes(index, shard_sha256))
        os.replace(tmp, target)
    except OSError as err:
        log.debug("%s: index not cached (%s); kept in memory", path, err)
        with contextlib.suppress(OSError):
            tmp.unlink()


def shard_index(path: Path) -> tuple[bytes, ShardIndex]:
    """The shard's (decompressed) bytes and its index: the cached one when valid, else rebuilt."""
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    data = _shard_bytes(path, raw)
    index = _cached_index(path, digest, len(data))
    if index is None:
        index = scan_shard(path, data)
        _write_index(path, index, digest)
    if index.torn:
        _warn_torn(path, index.torn)
    return data, index


class StoreIndex(Mapping[str, dict[str, Any]]):
    """key -> the record replay serves for it over the shards of a (stage, model): the highest
    revision, the last read among equal ones. A record is parsed and verified when asked for."""

    def __init__(self) -> None:
        #: key -> revision, shard number, offset, length, needs the stdlib parser
        self._where: dict[str, tuple[int, int, int, int, bool]] = {}
        self._shards: list[tuple[Path, memoryview]] = []
        self._keys = StoredKeys()

    def add_shard(self, path: Path, data: bytes, index: ShardIndex) -> None:
        """Merge one shard's records (shards in name order): a record of a key replaces the one
        read before it unless that one has a higher revision."""
        number = len(self._shards)
        self._shards.append((path, memoryview(data)))
        where = self._where
        exact = set(index.exact)
        for i, (key, revision, offset, length) in enumerate(
            zip(index.keys, index.revisions, index.offsets, index.lengths, strict=True)
        ):
            old = where.get(key)
            if old is None or revision >= old[0]:
                where[key] = (revision, number, offset, length, i in exact)

    def revision(self, key: str) -> int:
        """The revision of the record served for ``key`` (no parse)."""
        return self._where[key][0]

    def __getitem__(self, key: str) -> dict[str, Any]:
        """The record, parsed and verified now (each access returns a fresh copy; none is
        kept). A record that does not verify is a ``StoreError`` naming shard, line and key."""
        return self.served(key)

    def served(self, key: str, asked: AskedParts | None = None) -> dict[str, Any]:
        """The record of ``key`` verified as ``[key]`` does; ``asked``: the parts replay just
        made ``key`` from (the key check then compares instead of hashing again)."""
        _, number, offset, length, exact = self._where[key]
        path, view = self._shards[number]
        line = view[offset : offset + length]
        try:
            rec = loads_record(line) if exact else orjson.loads(line)
        except json.JSONDecodeError:
            rec = None
        if not isinstance(rec, dict) or rec.get("key") != key:
            raise StoreError(
                f"{path}: the record of key {key} is not at byte {offset}; delete "
                f"{index_path(path)} (it is rebuilt on the next read)"
            )
        problems = record_problems(line, rec, self._keys, asked)
        if problems:
            raise StoreError(
                f"{path}:{line_number(view, offset)}: key {key}: {'; '.join(problems)}. "
                "Replay refuses to serve it: restore the shard (e.g. `git checkout` it) or "
                "record the call again (llm.mode=refresh); `recenter calls --validate` lists "
                "every such record"
            )
        return rec

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


def load_index(store: Path, stage: str, model: str) -> StoreIndex:
    """key -> newest record over every shard of (stage, model)."""
    index = StoreIndex()
    for path in list_shards(shard_dir(store, stage, model)):
        data, shard = shard_index(path)
        index.add_shard(path, data, shard)
    return index


#: the claims file of a (stage, model) folder; holds no data (git-ignored), only locks
CLAIMS_FILE = ".claims"


class StoreFollower:
    """The records of a (stage, model) folder, kept current by reading only what was appended
    since the last look by another writer of the same store.

    With ``own`` (the run's own writer) the blocks that writer appended are stepped over, not
    read back: a run never asks for a key it has stored itself, and recording looks here
    before every call, so reading its own records again would cost a parse per call and hold
    a second copy of every record it made.
    """

    def __init__(self, folder: Path, own: ShardWriter | None = None) -> None:
        self.folder = Path(folder)
        self.own = own
        if own is not None and own.appended is None:
            own.appended = {}
        self.index: dict[str, dict[str, Any]] = {}
        #: shard name -> bytes read so far (-1: a finished shard, read whole)
        self._read_up_to: dict[str, int] = {}
        # names and paths as strings: recording looks before every call it makes
        self._dir = str(self.folder)
        self._own_name = (
            own.path.name if own is not None and own.path.parent == self.folder else None
        )

    def update(self) -> dict[str, dict[str, Any]]:
        """Read the complete lines appended to every shard since the last call; the index."""
        for name in shard_names(self._dir):
            path = os.path.join(self._dir, name)
            if name.endswith(".gz"):  # finished shards: read once, never appended to
                if name not in self._read_up_to:
                    self._add(rec for _, rec in iter_shard(Path(path)))
                    self._read_up_to[name] = -1
                continue
            start = self._read_up_to.get(name, 0)
            if name == self._own_name:
                start = self._read_up_to[name] = self._past_own_blocks(start)
            try:
                if os.stat(path).st_size <= start:
                    continue  # nothing appended since the last look: no open, no read
            except FileNotFoundError:
                continue
            with contextlib.suppress(FileNotFoundError), open(path, "rb") as fh:
                fh.seek(start)
                data = fh.read()
                end = data.rfind(b"\n")
                if end >= 0:
                    self._add(_records_of(data[:end].split(b"\n")))
                    self._read_up_to[name] = start + end + 1
        return self.index

    def _past_own_blocks(self, start: int) -> int:
        """``start`` moved past the run's own blocks that follow it one after another. Own
        blocks behind another writer's lines are read with them (harmless: the run never asks
        for its own keys) and, like blocks written while a look was under way, forgotten."""
        assert self.own is not None and self.own.appended is not None
        appended = self.own.appended
        while (end := appended.pop(start, None)) is not None:
            start = end
        for stale in [s for s in list(appended) if s < start]:
            appended.pop(stale, None)
        return start

    def _add(self, records: Iterable[dict[str, Any]]) -> None:
        for rec in records:
            if _replaces(rec, self.index.get(rec["key"])):
                self.index[rec["key"]] = rec


def _records_of(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The well-formed records among ``lines`` (a bad one was reported when the run began)."""
    for line in lines:
        try:
            rec = loads_record(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("key"), str):
            yield rec


class KeyClaims:
    """Per-key claims on a (stage, model) folder, shared by every process using the store.

    A claim is an exclusive POSIX lock on one byte of the folder's ``.claims`` file, at an
    offset derived from the key (a collision only makes two calls wait for each other). The
    kernel drops the locks of a process that dies, so a killed run never blocks the next one.
    POSIX locks belong to the process: keys within one run are already unique.
    """

    def __init__(self, folder: Path, poll_s: float = 0.02) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        self.poll_s = poll_s
        self.fd = os.open(Path(folder) / CLAIMS_FILE, os.O_RDWR | os.O_CREAT, 0o644)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    @staticmethod
    def _offset(key: str) -> int:
        return int(hashlib.sha256(key.encode()).hexdigest()[:15], 16)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Wait (without blocking the event loop) until ``key`` is free, hold it in the block."""
        offset = self._offset(key)
        while True:
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
                break
            except (BlockingIOError, PermissionError):
                await asyncio.sleep(self.poll_s)
        try:
            yield
        finally:
            fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, offset)


class ShardWriter:
    """Appends records to one shard: a full line per write, fsynced, under an exclusive lock."""

    def __init__(self, path: Path, secrets: Iterable[str] = ()) -> None:
        self.path = Path(path)
        self.secrets = tuple(secrets)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._thread_lock = threading.Lock()  # flock does not exclude threads sharing the fd
        #: start -> end offset of every block of lines appended since a ``StoreFollower`` of
        #: the same run started following this writer (None: nobody asked), so that it need
        #: not read the run's own records back
        self.appended: dict[int, int] | None = None
        existed = self.path.exists()
        self.fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        if not existed:  # make the new directory entry durable too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        with self._locked():
            self._repair_tail()

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    class _Lock:
        def __init__(self, fd: int) -> None:
            self.fd = fd

        def __enter__(self) -> None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)

        def __exit__(self, *exc: object) -> None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def _locked(self) -> ShardWriter._Lock:
        return ShardWriter._Lock(self.fd)

    def _repair_tail(self) -> int:
        """End the file with a newline: complete a whole last record that lacks it, or cut a
        torn last line (from a writer killed mid-write) back to the last newline. The size
        after the repair."""
        size = os.fstat(self.fd).st_size
        if size == 0 or os.pread(self.fd, 1, size - 1) == b"\n":
            return size
        pos = size
        chunk = 1 << 16
        keep = 0
        while pos > 0:
            start = max(0, pos - chunk)
            data = os.pread(self.fd, pos - start, start)
            nl = data.rfind(b"\n")
            if nl >= 0:
                keep = start + nl + 1
                break
            pos = start
        if _is_complete_record(os.pread(self.fd, size - keep, keep)):
            os.write(self.fd, b"\n")
            os.fsync(self.fd)
            log.warning("%s: added the missing newline after the last record", self.path)
            return size + 1
        os.ftruncate(self.fd, keep)
        os.fsync(self.fd)
        log.warning("%s: truncated a torn last line (%d bytes)", self.path, size - keep)
        return keep

    def _line(self, record: Mapping[str, Any]) -> bytes:
        """The record's line (digest first), secrets scrubbed before the digest is taken.
        Serializing first and searching the bytes is cheaper than walking every record; only a
        body that shows a secret or a secret-named field is scrubbed field by field (a secret
        that JSON would escape is always scrubbed)."""
        body = canonical_body(record)
        if self.secrets:
            lowered = body.lower()
            if any(not _plain_secret(s) or s.encode("utf-8") in body for s in self.secrets) or any(
                f'"{name}"'.encode() in lowered for name in _SECRET_FIELD_NAMES
            ):
                body = canonical_body(redact(dict(record), self.secrets))
        return line_of_body(body)

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record durably; the secrets given to the writer never reach the file."""
        self.append_many([record])

    def append_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Write complete lines in one ``write``, then one fsync (a group commit).

        Calls that finish together share the fsync, which otherwise caps a recording run at a
        few hundred calls per second. A kill mid-write can tear only the last line written.
        """
        if not records:
            return
        blob = b"".join(self._line(r) for r in records)
        with self._thread_lock, self._locked():
            start = self._repair_tail()  # the append lands here: the lock keeps writers out
            view = memoryview(blob)
            while view:  # one write for a regular file; the loop only guards a short write
                written = os.write(self.fd, view)
                view = view[written:]
            if self.appended is not None:
                self.appended[start] = start + len(blob)
            os.fsync(self.fd)


# ---------------------------------------------------------------- validation and usage


@dataclass
class StoreReport:
    """Result of ``validate_store``: errors make the store invalid, warnings do not."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_records: int = 0
    n_keys: int = 0
    n_shards: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors


def iter_store(store: Path) -> Iterator[tuple[str, str, Path]]:
    """(stage, model, shard path) of every shard under the store root."""
    root = Path(store)
    if not root.is_dir():
        return
    for stage_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for model_dir in sorted(p for p in stage_dir.iterdir() if p.is_dir()):
            for path in list_shards(model_dir):
                yield stage_dir.name, model_dir.name, path


def check_record(
    rec: Mapping[str, Any],
    stage: str,
    model: str,
    line: bytes | memoryview | None = None,
    keys: StoredKeys | None = None,
) -> list[str]:
    """Field-level problems of one record (empty when it is well formed): every field and its
    type, its folder, its digest (with its ``line``), every field replay reads, and its key
    recomputed from its request."""
    problems = []
    for name, types in RECORD_FIELDS.items():
        if name not in rec:
            problems.append(f"field '{name}': missing")
        elif not isinstance(rec[name], types) or (
            isinstance(rec[name], bool) and bool not in types
        ):
            problems.append(f"field '{name}': wrong type {type(rec[name]).__name__}")
    if isinstance(rec.get("revision"), int) and rec["revision"] < 0:
        problems.append(f"field 'revision': {rec['revision']} is negative")
    if rec.get("stage", stage) != stage:
        problems.append(f"field 'stage': '{rec['stage']}' but the shard is under stage '{stage}'")
    if rec.get("model_name", model) != model:
        problems.append(f"field 'model_name': '{rec['model_name']}' but the folder is '{model}'")
    if line is not None and "digest" in rec:
        problem = digest_problem(line, rec)
        if problem is not None:
            problems.append(problem)
    if any(p.startswith(_REPLAY_READ) for p in problems):
        return problems  # a part replay reads is missing or mistyped: said once, above
    replay = replay_problems(rec)
    problems += replay
    if not replay and isinstance(rec.get("key"), str):
        problem = key_problem(rec, keys or StoredKeys())
        if problem is not None:
            problems.append(problem)
    return problems


#: the top-level fields ``replay_problems`` looks into
_REPLAY_READ = tuple(
    f"field '{name}'" for name in ("request", "model", "prompt_version", "usage", "response")
)


def _parsed_record(
    path: Path, lineno: int, line: bytes | memoryview, report: StoreReport | UpgradeReport
) -> dict[str, Any] | None:
    """One shard line as a record, counted in ``report``; None (the reason added to its
    errors) for a line that is no JSON object. Validation and upgrade read lines alike."""
    try:
        rec = loads_record(line)
    except json.JSONDecodeError as err:
        report.errors.append(f"{path}:{lineno}: not valid JSON ({err.msg})")
        return None
    if not isinstance(rec, dict):
        report.errors.append(f"{path}:{lineno}: a record must be a JSON object")
        return None
    report.n_records += 1
    return rec


def validate_store(store: Path) -> StoreReport:
    """Check every record of every shard: JSON, fields, folder, digest, the fields replay
    reads, recomputed key."""
    report = StoreReport()
    keys = StoredKeys()
    where: dict[tuple[str, str, str], list[str]] = {}
    for stage, model, path in iter_store(store):
        report.n_shards += 1
        try:
            lines, tail = _read_lines(path)
        except StoreError as err:
            report.errors.append(str(err))
            continue
        except OSError as err:
            report.errors.append(f"{path}: unreadable ({err})")
            continue
        if tail.strip():
            report.warnings.append(
                f"{path}: torn last line ({len(tail)} bytes) from a killed run; ignored on "
                "read, truncated by the next writer"
            )
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                report.errors.append(f"{path}:{lineno}: empty line")
                continue
            rec = _parsed_record(path, lineno, line, report)
            if rec is None:
                continue
            key = rec.get("key")
            label = f"{path}:{lineno}: key {key}" if isinstance(key, str) else f"{path}:{lineno}"
            for problem in check_record(rec, stage, model, line, keys):
                report.errors.append(f"{label}: {problem}")
            if isinstance(key, str):
                where.setdefault((stage, model, key), []).append(f"{path}:{lineno}")
    report.n_keys = len(where)
    for (stage, model, key), places in where.items():
        if len(places) > 1:
            report.warnings.append(
                f"{stage}/{model}: key {key} stored {len(places)} times (each was paid; the "
                f"highest revision is served, the last read among equal ones): "
                f"{', '.join(places)}"
            )
    return report


@dataclass
class UpgradeReport:
    """Result of ``upgrade_store``: nothing is written when there is any error."""

    errors: list[str] = field(default_factory=list)
    n_records: int = 0
    n_upgraded: int = 0
    shards_rewritten: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def upgrade_store(store: Path) -> UpgradeReport:
    """Give every record written before records carried a digest its ``digest`` and
    ``revision``, after checking it as ``--validate`` does (its key recomputed from its
    request): a record that fails is reported and nothing is written, so an upgrade never
    blesses a damaged record. Records that already have a digest must verify; they are kept.

    Revisions reproduce what was served before: among one key's records, the old rule's order
    (``created``, then the order read) becomes revision 0, 1, ..., so the record replay served
    is still the one served. Each shard is rewritten whole (atomic replace; a compressed
    shard stays compressed, with no timestamp in its header). Run it while no run records into
    the store.
    """
    report = UpgradeReport()
    keys = StoredKeys()
    folders: dict[tuple[str, str], list[tuple[Path, list[tuple[int, bytes, dict[str, Any]]]]]]
    folders = {}
    for stage, model, path in iter_store(store):
        try:
            lines, tail = _read_lines(path)
        except (StoreError, OSError) as err:
            report.errors.append(str(err))
            continue
        if tail.strip():
            report.errors.append(
                f"{path}: torn last line ({len(tail)} bytes); run a record run first (it "
                "truncates it) or remove it"
            )
        parsed = []
        for lineno, line in enumerate(lines, start=1):
            rec = _parsed_record(path, lineno, line, report)
            if rec is None:
                continue
            legacy = "digest" not in rec
            if legacy:
                rec.setdefault("revision", 0)
                rec["digest"] = hashlib.sha256(canonical_body(rec)).hexdigest()
                report.n_upgraded += 1
            for problem in check_record(rec, stage, model, None if legacy else line, keys):
                report.errors.append(f"{path}:{lineno}: key {rec.get('key')}: {problem}")
            parsed.append((lineno, line, rec if legacy else {}))
        folders.setdefault((stage, model), []).append((path, parsed))
    if report.errors or not report.n_upgraded:
        return report
    for shards in folders.values():
        _order_legacy_revisions(shards)
        for path, parsed in shards:
            if not any(rec for _, _, rec in parsed):
                continue
            data = b"".join(
                record_line(rec) if rec else bytes(line) + b"\n" for _, line, rec in parsed
            )
            if path.name.endswith(".gz"):
                data = gzip.compress(data, mtime=0)
            tmp = path.with_name(f".{path.name}.upgrade.tmp")
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
            with contextlib.suppress(FileNotFoundError):
                index_path(path).unlink()
            report.shards_rewritten.append(path)
    return report


def _order_legacy_revisions(
    shards: list[tuple[Path, list[tuple[int, bytes, dict[str, Any]]]]],
) -> None:
    """Revisions of upgraded records of one (stage, model): a key's records in the order the
    rule before revisions served them (``created``, then the order read), numbered 0, 1, ..."""
    by_key: dict[str, list[tuple[str, int, dict[str, Any]]]] = {}
    order = 0
    for _, parsed in shards:
        for _, _, rec in parsed:
            if rec:
                by_key.setdefault(rec["key"], []).append((str(rec.get("created", "")), order, rec))
            order += 1
    for records in by_key.values():
        if len(records) < 2:
            continue
        for revision, (_, _, rec) in enumerate(sorted(records, key=lambda r: r[:2])):
            rec["revision"] = revision  # its digest is taken when its line is written


USAGE_COLUMNS = [
    "stage",
    "model",
    "calls",
    "keys",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost_usd",
    "latency_s",
]


def usage_summary(
    store: Path, prompt_version: str | None = None, asked: Collection[str] | None = None
) -> pd.DataFrame:
    """Calls, tokens, cost and summed latency per (stage, model), sorted; only the calls of
    one prompt version when given (a prompt variant's own calls, README "Variants"), and only
    those whose key is in ``asked`` when given (the calls one build asks, :func:`asked_keys`:
    the store also keeps calls recorded for another world or config of the same version).

    ``calls`` counts every stored record (each was paid for, including answers later replaced
    by ``refresh``); ``keys`` counts distinct calls, i.e. what replay serves; ``latency_s`` sums
    the recorded seconds from request to answer (what recording them took, one at a time).
    """
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    keys: dict[tuple[str, str], set[str]] = {}
    for stage, model, path in iter_store(store):
        for _, rec in iter_shard(path):
            if prompt_version is not None and rec.get("prompt_version") != prompt_version:
                continue
            if asked is not None and rec["key"] not in asked:
                continue
            row = rows.setdefault(
                (stage, model),
                {c: 0 for c in USAGE_COLUMNS[2:]} | {"stage": stage, "model": model},
            )
            usage = rec.get("usage") or {}
            row["calls"] += 1
            row["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
            row["completion_tokens"] += int(usage.get("completion_tokens") or 0)
            row["total_tokens"] += int(
                usage.get("total_tokens")
                or (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
            )
            row["cost_usd"] += float(rec.get("cost_usd") or 0.0)
            row["latency_s"] += float(rec.get("latency_s") or 0.0)
            keys.setdefault((stage, model), set()).add(rec["key"])
    for ident, row in rows.items():
        row["keys"] = len(keys[ident])
    frame = pd.DataFrame([rows[k] for k in sorted(rows)], columns=USAGE_COLUMNS)
    frame["cost_usd"] = frame["cost_usd"].astype(float)
    frame["latency_s"] = frame["latency_s"].astype(float).round(1)
    return frame.reset_index(drop=True)


#: the columns of a model-call table that name the calls it was made from (a reply, its repair)
CALL_KEY_COLUMNS = ("call_key", "repair_key")


def table_keys(paths: Iterable[Path]) -> set[str]:
    """The call keys the given model-call tables hold (``CALL_KEY_COLUMNS``; a table without
    them holds none, and an empty key is a row that made no call)."""
    import pyarrow.parquet as pq

    keys: set[str] = set()
    for path in paths:
        columns = [c for c in CALL_KEY_COLUMNS if c in pq.read_schema(path).names]
        if columns:
            table = pd.read_parquet(path, columns=columns)
            keys.update(v for c in columns for v in table[c].dropna() if v)
    return keys


def asked_keys(folder: Path) -> set[str]:
    """The call keys a build's model-call tables hold: every call its world and config ask.

    ``folder`` is the build's model-call folder (``results/<dataset>[/variants/<name>]``); its
    tables are the Parquet files below it with a ``call_key`` column, shard tables and the
    variants' folders left out.
    """
    return table_keys(
        path
        for path in sorted(folder.rglob("*.parquet"))
        if not {"shards", "variants"} & set(path.relative_to(folder).parts[:-1])
    )
