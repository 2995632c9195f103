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

Replay reads every shard of a (stage, model); when a key occurs more than once (``refresh``
appends a newer answer) the record with the newest ``created`` time wins.

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
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.llm.keys import key_from_parts
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
}

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


def list_shards(folder: Path) -> list[Path]:
    """Every shard file of a (stage, model) folder, in a stable order."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith(SHARD_SUFFIXES) and p.is_file())


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


def _is_complete_record(line: bytes) -> bool:
    """True when ``line`` is a whole JSON record. No proper prefix of a JSON object parses, so
    a line cut short by a kill never passes; only a record missing its newline does."""
    try:
        rec = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(rec, dict) and isinstance(rec.get("key"), str)


def _read_lines(path: Path) -> tuple[list[bytes], bytes]:
    """Lines of a shard holding records, and the torn tail after them (usually empty).

    The text after the last newline counts as a line when it is a complete record.
    """
    raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    head, newline, tail = raw.rpartition(b"\n")
    lines = head.split(b"\n") if newline else []
    if tail.strip() and _is_complete_record(tail):
        return [*lines, tail], b""
    return lines, tail


def iter_shard(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of every complete record; a torn last line is skipped."""
    lines, tail = _read_lines(path)
    if tail.strip():
        log.warning(
            "%s: ignoring a torn last line (%d bytes) left by a killed run", path, len(tail)
        )
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise StoreError(
                f"{path}:{lineno}: not valid JSON ({err.msg}); "
                "run `recenter calls --validate` to list every bad record"
            ) from err
        if not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
            raise StoreError(f"{path}:{lineno}: field 'key': a record must be an object with a key")
        yield lineno, rec


def _newer(candidate: Mapping[str, Any], current: Mapping[str, Any] | None) -> bool:
    return current is None or str(candidate.get("created", "")) >= str(current.get("created", ""))


def load_index(store: Path, stage: str, model: str) -> dict[str, dict[str, Any]]:
    """key -> newest record over every shard of (stage, model)."""
    index: dict[str, dict[str, Any]] = {}
    for path in list_shards(shard_dir(store, stage, model)):
        for _, rec in iter_shard(path):
            if _newer(rec, index.get(rec["key"])):
                index[rec["key"]] = rec
    return index


#: the claims file of a (stage, model) folder; holds no data (git-ignored), only locks
CLAIMS_FILE = ".claims"


class StoreFollower:
    """The records of a (stage, model) folder, kept current by reading only what was appended
    since the last look (by this run or by another writer of the same store)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.index: dict[str, dict[str, Any]] = {}
        self._read_up_to: dict[Path, int] = {}

    def update(self) -> dict[str, dict[str, Any]]:
        """Read the complete lines appended to every shard since the last call; the index."""
        for path in list_shards(self.folder):
            if path.name.endswith(".gz"):  # finished shards: read once, never appended to
                if path not in self._read_up_to:
                    self._add(rec for _, rec in iter_shard(path))
                    self._read_up_to[path] = -1
                continue
            start = self._read_up_to.get(path, 0)
            with contextlib.suppress(FileNotFoundError), open(path, "rb") as fh:
                fh.seek(start)
                data = fh.read()
                end = data.rfind(b"\n")
                if end >= 0:
                    self._add(_records_of(data[:end].split(b"\n")))
                    self._read_up_to[path] = start + end + 1
        return self.index

    def _add(self, records: Iterable[dict[str, Any]]) -> None:
        for rec in records:
            if _newer(rec, self.index.get(rec["key"])):
                self.index[rec["key"]] = rec


def _records_of(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The well-formed records among ``lines`` (a bad one was reported when the run began)."""
    for line in lines:
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
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

    def _repair_tail(self) -> None:
        """End the file with a newline: complete a whole last record that lacks it, or cut a
        torn last line (from a writer killed mid-write) back to the last newline."""
        size = os.fstat(self.fd).st_size
        if size == 0 or os.pread(self.fd, 1, size - 1) == b"\n":
            return
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
            return
        os.ftruncate(self.fd, keep)
        os.fsync(self.fd)
        log.warning("%s: truncated a torn last line (%d bytes)", self.path, size - keep)

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
        blob = b"".join(
            (
                json.dumps(redact(dict(r), self.secrets), sort_keys=True, ensure_ascii=False) + "\n"
            ).encode("utf-8")
            for r in records
        )
        with self._thread_lock, self._locked():
            self._repair_tail()
            view = memoryview(blob)
            while view:  # one write for a regular file; the loop only guards a short write
                written = os.write(self.fd, view)
                view = view[written:]
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


def check_record(rec: Mapping[str, Any], stage: str, model: str) -> list[str]:
    """Field-level problems of one record (empty when it is well formed)."""
    problems = []
    for name, types in RECORD_FIELDS.items():
        if name not in rec:
            problems.append(f"field '{name}': missing")
        elif not isinstance(rec[name], types) or (
            isinstance(rec[name], bool) and bool not in types
        ):
            problems.append(f"field '{name}': wrong type {type(rec[name]).__name__}")
    if problems:
        return problems
    if rec["stage"] != stage:
        problems.append(f"field 'stage': '{rec['stage']}' but the shard is under stage '{stage}'")
    if rec["model_name"] != model:
        problems.append(f"field 'model_name': '{rec['model_name']}' but the folder is '{model}'")
    req = rec["request"]
    if not isinstance(req.get("messages"), list) or not isinstance(req.get("params"), dict):
        problems.append("field 'request': needs 'messages' (list) and 'params' (object)")
        return problems
    expected = key_from_parts(
        rec["model"],
        req["messages"],
        req["params"],
        req.get("sample_index", 0),
        rec["prompt_version"],
    )
    if expected != rec["key"]:
        problems.append(f"field 'key': does not match the request (expected {expected})")
    choices = rec["response"].get("choices")
    if not isinstance(choices, list) or not choices:
        problems.append("field 'response': no choices")
    return problems


def validate_store(store: Path) -> StoreReport:
    """Check every record of every shard: JSON, fields, folder, recomputed key."""
    report = StoreReport()
    where: dict[tuple[str, str, str], list[str]] = {}
    for stage, model, path in iter_store(store):
        report.n_shards += 1
        try:
            lines, tail = _read_lines(path)
        except (OSError, EOFError, gzip.BadGzipFile) as err:
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
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                report.errors.append(f"{path}:{lineno}: not valid JSON ({err.msg})")
                continue
            if not isinstance(rec, dict):
                report.errors.append(f"{path}:{lineno}: a record must be a JSON object")
                continue
            report.n_records += 1
            for problem in check_record(rec, stage, model):
                report.errors.append(f"{path}:{lineno}: {problem}")
            if isinstance(rec.get("key"), str):
                where.setdefault((stage, model, rec["key"]), []).append(f"{path}:{lineno}")
    report.n_keys = len(where)
    for (stage, model, key), places in where.items():
        if len(places) > 1:
            report.warnings.append(
                f"{stage}/{model}: key {key} stored {len(places)} times (each was paid; the "
                f"newest is served): {', '.join(places)}"
            )
    return report


USAGE_COLUMNS = [
    "stage",
    "model",
    "calls",
    "keys",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost_usd",
]


def usage_summary(store: Path) -> pd.DataFrame:
    """Calls, tokens and cost per (stage, model), sorted.

    ``calls`` counts every stored record (each was paid for, including answers later replaced
    by ``refresh``); ``keys`` counts distinct calls, i.e. what replay serves.
    """
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    keys: dict[tuple[str, str], set[str]] = {}
    for stage, model, path in iter_store(store):
        for _, rec in iter_shard(path):
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
            keys.setdefault((stage, model), set()).add(rec["key"])
    for ident, row in rows.items():
        row["keys"] = len(keys[ident])
    frame = pd.DataFrame([rows[k] for k in sorted(rows)], columns=USAGE_COLUMNS)
    frame["cost_usd"] = frame["cost_usd"].astype(float)
    return frame.reset_index(drop=True)
