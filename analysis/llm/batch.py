"""The Batch API as an alternative executor for large call sets (``llm.executor=batch``).

The calls are written as a JSONL file (``custom_id`` = call key), uploaded through
``client.files``, submitted with ``client.batches.create``, polled, and the output file is
mapped back by ``custom_id`` and stored like any other call (``executor: "batch"``).

A batch is paid once: before anything is uploaded, the calls are saved in a state file beside
the shard (``<shard>.batch.json``); the input file id and the batch id are added as soon as
they exist. A run that is interrupted, or that stops waiting after ``batch_timeout_s``
(``BatchPending``), leaves the state behind, and the next run resumes that batch instead of
submitting a new one. If the input file was uploaded but the run died (or the create request
timed out) before the batch id was saved, the existing batch is found by its input file id.

Storing the results is idempotent: a run killed half-way through them resumes the batch and
stores only the results not stored yet (by ``batch_id``); the state is deleted after the last.
A line of the output that is not JSON is reported with batch, file and line, the other lines
are stored, and its call is reported failed, so the next run makes it again. An unknown or
repeated ``custom_id`` is warned about and never replaces the first answer. A batch that
failed as a whole reports the provider's own errors.

Every request to the endpoint (upload, create, list, poll, download) is one attempt under the
same total deadline as a chat call (``timeout_s``, connect to last byte) and retried like one;
the client is async so that a deadline cancels the request and closes its connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from analysis.llm.calls import ChatRequest, PendingCall, make_record
from analysis.llm.client import (
    SDK_PLATFORM_HEADERS,
    ResponseBodyError,
    parse_completion,
    retry_op,
)
from analysis.llm.failures import CallError, EndpointNotFound
from analysis.llm.models import ModelSpec
from analysis.llm.progress import CallProgress
from analysis.llm.store import ShardWriter, StoreFollower
from analysis.settings import ClientSettings

log = logging.getLogger(__name__)

ENDPOINT = "/v1/chat/completions"
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


class BatchPending(RuntimeError):
    """The batch is still running; its state is saved and the next run resumes it."""


def state_path(shard: Path) -> Path:
    """``<store>/<stage>/<model>/<shard>.batch.json`` beside the shard it fills."""
    return shard.with_name(shard.name.removesuffix(".jsonl") + ".batch.json")


def read_state(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise CallError(f"{path}: batch state is not valid JSON ({err.msg}); inspect it") from err
    if not isinstance(state, dict) or not isinstance(state.get("calls"), list):
        raise CallError(f"{path}: field 'calls': batch state without its calls")
    return state


def write_state(path: Path, state: Mapping[str, Any]) -> None:
    """Atomic replace + fsync: the state on disk is always a complete, earlier or later one."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(state, fh, sort_keys=True, indent=1)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def batch_line(model: ModelSpec, call: PendingCall) -> dict[str, Any]:
    """One line of the input file: the same body a direct call would send."""
    body = {"model": model.request_model, "messages": list(call.request.messages), **call.params}
    return {"custom_id": call.key, "method": "POST", "url": ENDPOINT, "body": body}


def _state_calls(calls: Sequence[PendingCall]) -> list[dict[str, Any]]:
    return [
        {
            "key": c.key,
            "messages": list(c.request.messages),
            "params": c.params,
            "sample_index": c.request.sample_index,
            "revision": c.revision,
        }
        for c in calls
    ]


def _calls_from_state(state: Mapping[str, Any]) -> list[PendingCall]:
    return [
        PendingCall(
            c["key"],
            ChatRequest(tuple(c["messages"]), dict(c["params"]), int(c["sample_index"])),
            dict(c["params"]),
            int(c.get("revision", 0)),
        )
        for c in state["calls"]
    ]


class _BatchRun:
    """One batch from submission (or resumption) to stored records."""

    def __init__(
        self,
        model: ModelSpec,
        client: AsyncOpenAI,
        *,
        stage: str,
        prompt_version: str,
        settings: ClientSettings,
        writer: ShardWriter,
        progress: CallProgress,
    ) -> None:
        self.model, self.client, self.stage = model, client, stage
        self.prompt_version, self.settings = prompt_version, settings
        self.writer, self.progress = writer, progress
        self.state_file = state_path(writer.path)
        self.unreadable: list[str] = []  # output lines of the batch being collected, not JSON

    async def _op(self, what: str, fn: Callable[[], Awaitable[Any]]) -> Any:
        return await retry_op(
            fn, settings=self.settings, what=f"model {self.model.name}, stage {self.stage}: {what}"
        )

    async def submit(self, calls: Sequence[PendingCall]) -> dict[str, Any]:
        """Save state, upload, create the batch; every id is saved as soon as it exists."""
        state: dict[str, Any] = {
            "model": self.model.name,
            "stage": self.stage,
            "calls": _state_calls(calls),
            "input_file_id": None,
            "batch_id": None,
        }
        write_state(self.state_file, state)
        return await self.ensure_batch(state)

    async def ensure_batch(self, state: dict[str, Any]) -> dict[str, Any]:
        """Bring a state up to 'batch exists', reusing whatever an earlier run created."""
        if not state.get("input_file_id"):
            calls = _calls_from_state(state)
            payload = "".join(
                json.dumps(batch_line(self.model, c), sort_keys=True) + "\n" for c in calls
            ).encode("utf-8")
            name = f"{self.stage}-{self.model.name}-{self.writer.path.stem}.jsonl"
            uploaded = await self._op(
                "upload batch input",
                lambda: self.client.files.create(file=(name, payload), purpose="batch"),
            )
            state["input_file_id"] = uploaded.id
            write_state(self.state_file, state)
        if not state.get("batch_id"):
            input_file_id = state["input_file_id"]
            state["batch_id"] = await self._op(
                "create batch", lambda: self._find_or_create_batch(input_file_id)
            )
            write_state(self.state_file, state)
        return state

    async def _find_or_create_batch(self, input_file_id: str) -> str:
        """The batch of this input file: an existing one, else a new one. One attempt looks
        first, so a retry after a create whose answer never arrived (a timeout) finds the batch
        that create made instead of paying for a second one."""
        existing = await self._find_batch(input_file_id)
        if existing is not None:
            return existing
        created = await self.client.batches.create(
            input_file_id=input_file_id,
            endpoint=ENDPOINT,
            completion_window="24h",
            metadata={"recenter_stage": self.stage, "recenter_model": self.model.name},
        )
        return created.id

    async def _find_batch(self, input_file_id: str) -> str | None:
        async for batch in self.client.batches.list(limit=100):
            if batch.input_file_id == input_file_id:
                return batch.id
        return None

    async def wait(self, batch_id: str) -> Any:
        """Poll until the batch ends; past ``batch_timeout_s`` raise ``BatchPending``."""
        deadline = time.monotonic() + self.settings.batch_timeout_s
        while True:
            batch = await self._op("poll batch", lambda: self.client.batches.retrieve(batch_id))
            if batch.status in TERMINAL:
                return batch
            if time.monotonic() >= deadline:
                raise BatchPending(
                    f"batch {batch_id} for {self.model.name}/{self.stage} is still "
                    f"'{batch.status}'; its state is saved in {self.state_file}: run again "
                    "to resume it (nothing is submitted twice)"
                )
            await asyncio.sleep(self.settings.batch_poll_s)

    async def _lines(self, batch: Any, file_id: str | None) -> list[tuple[str, dict[str, Any]]]:
        """(where, line) of every JSON line of a result file; a line that is not JSON is
        logged with batch, file and line number and noted in ``self.unreadable``."""
        if not file_id:
            return []
        content = await self._op("download batch file", lambda: self.client.files.content(file_id))
        lines = []
        for lineno, text in enumerate(content.text.splitlines(), start=1):
            if not text.strip():
                continue
            where = f"batch {batch.id}, file {file_id} line {lineno}"
            try:
                line = json.loads(text)
            except json.JSONDecodeError as err:
                line = None
                problem = f"not JSON ({err.msg}, {len(text)} bytes)"
            else:
                problem = "not a JSON object" if not isinstance(line, dict) else ""
            if problem:
                self.unreadable.append(f"{where}: {problem}")
                log.error(
                    "%s: %s; its call is reported failed and retried next run", where, problem
                )
                continue
            lines.append((where, line))
        return lines

    def _stored_from(self, batch_id: str) -> dict[str, dict[str, Any]]:
        """Records of this batch already in the store (a run killed while storing them)."""
        index = StoreFollower(self.writer.path.parent).update()
        return {k: rec for k, rec in index.items() if rec.get("batch_id") == batch_id}

    def _batch_errors(self, batch: Any) -> str:
        """The provider's own reasons for a batch that failed, expired or was cancelled."""
        errors = getattr(batch, "errors", None)
        data = getattr(errors, "data", None) or []
        reasons = [
            f"{getattr(e, 'code', None) or 'error'}: {getattr(e, 'message', '')}"
            + (f" (input line {e.line})" if getattr(e, "line", None) else "")
            for e in data
        ]
        return "; ".join(reasons)

    async def collect(
        self, state: Mapping[str, Any], batch: Any
    ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        """Store every successful line not stored yet, report every other call as failed."""
        calls = {c.key: c for c in _calls_from_state(state)}
        self.unreadable = []
        fresh: dict[str, dict[str, Any]] = dict(self._stored_from(batch.id))
        failures: dict[str, str] = {}
        answered: set[str] = set(fresh)
        where = f"model {self.model.name}, stage {self.stage}"
        lines = await self._lines(batch, batch.output_file_id)
        lines += await self._lines(batch, batch.error_file_id)
        seen: set[str] = set()
        for place, line in lines:
            key = line.get("custom_id")
            if key not in calls:
                log.warning(
                    "%s: unknown custom_id %r (not a call of this batch); ignored", place, key
                )
                continue
            if key in seen:
                log.warning(
                    "%s: duplicated custom_id %s; ignored, the first result is kept", place, key
                )
                continue
            seen.add(key)
            if key in answered:
                continue  # stored by an earlier run that was killed while storing
            response = line.get("response") or {}
            status = response.get("status_code")
            if status == 200 and not line.get("error"):
                try:
                    body = parse_completion(json.dumps(response.get("body")).encode())
                except ResponseBodyError as err:
                    failures[key] = f"{where}, key {key}: batch output unusable: {err}"
                    continue
                record = make_record(
                    self.model,
                    calls[key],
                    stage=self.stage,
                    prompt_version=self.prompt_version,
                    response=body,
                    latency_s=None,
                    executor="batch",
                    extra={"batch_id": batch.id},
                )
                self.writer.append(record)
                fresh[key] = record
            else:
                detail = line.get("error") or response.get("body")
                failures[key] = f"{where}, key {key}: batch line failed (HTTP {status}): {detail}"
        reasons = self._batch_errors(batch)
        for key in calls:
            if key not in fresh and key not in failures:
                failures[key] = (
                    f"{where}, key {key}: no result in batch {batch.id} ({batch.status})"
                    + (f"; the batch's errors: {reasons}" if reasons else "")
                    + (f"; unreadable: {'; '.join(self.unreadable)}" if self.unreadable else "")
                )
        if reasons:
            log.error("batch %s (%s) reports: %s", batch.id, batch.status, reasons)
        return fresh, failures

    async def finish(
        self, state: dict[str, Any]
    ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        batch = await self.wait(state["batch_id"])
        fresh, failures = await self.collect(state, batch)
        self.state_file.unlink()  # every paid answer is stored: the batch is done with
        return fresh, failures


async def execute_batch(
    model: ModelSpec,
    todo: Sequence[PendingCall],
    *,
    base_url: str,
    api_key: str,
    stage: str,
    prompt_version: str,
    settings: ClientSettings,
    writer: ShardWriter,
    progress: CallProgress,
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Resume a saved batch of this shard first, then submit one batch for what is still missing."""
    client = AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=settings.timeout_s,
        default_headers=SDK_PLATFORM_HEADERS,
    )
    run = _BatchRun(
        model,
        client,
        stage=stage,
        prompt_version=prompt_version,
        settings=settings,
        writer=writer,
        progress=progress,
    )
    wanted = {c.key for c in todo}
    fresh: dict[str, dict[str, Any]] = {}
    failures: dict[str, str] = {}
    try:
        state = read_state(run.state_file)
        if state is not None:
            log.info("resuming batch %s from %s", state.get("batch_id"), run.state_file)
            try:
                got, lost = await run.finish(await run.ensure_batch(state))
            except EndpointNotFound as err:
                raise CallError(
                    f"{err}: the batch saved in {run.state_file} (batch {state.get('batch_id')}, "
                    f"input file {state.get('input_file_id')}) is unknown to this endpoint "
                    "(submitted with another account or endpoint?); discard the state (delete "
                    f"{run.state_file}) and run again to submit a new batch"
                ) from None
            fresh.update({k: v for k, v in got.items() if k in wanted})
            failures.update({k: v for k, v in lost.items() if k in wanted})
        remaining = [c for c in todo if c.key not in fresh]
        if remaining:
            failures = {k: v for k, v in failures.items() if k not in {c.key for c in remaining}}
            got, lost = await run.finish(await run.submit(remaining))
            fresh.update(got)
            failures.update(lost)
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    progress.add_done(len(fresh))
    progress.add_failed(len(failures))
    return fresh, failures
