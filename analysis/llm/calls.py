"""``run_calls``: every model call of the study, answered from the call store or made and stored.

Modes (``llm.mode``):
- ``replay`` (default): offline; every call must be in the store, else ``ReplayMiss`` says how
  many are missing and the command that records them. No key, server or network is touched.
- ``record``: calls that are missing are made and appended; stored calls are reused.
- ``refresh``: every call is made again and appended with the revision of the record it
  replaces plus one, which wins on read (no clock decides: see ``store.py``).

Identical requests in one call set are made once. A call that fails for good is not stored (a
rerun tries it again); calls that succeeded are already durable when the error is raised.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import gc
import json
import logging
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from analysis import REPO_ROOT
from analysis.llm.failures import CallError, LocalServerDied, RecordNotStored
from analysis.llm.keys import KeyMaker, effective_params, normalize_value
from analysis.llm.models import NO_KEY, ModelSpec, resolve_api_key
from analysis.llm.progress import CallProgress
from analysis.llm.store import (
    KeyClaims,
    ShardWriter,
    StoreFollower,
    check_name,
    load_index,
    shard_path,
    usage_summary,
)
from analysis.settings import ClientSettings, Executor, LlmMode

__all__ = [
    "CallError",
    "CallResult",
    "LocalServerDied",
    "ChatRequest",
    "PendingCall",
    "RecordNotStored",
    "ReplayMiss",
    "call_key",
    "calls_provenance",
    "run_calls",
    "usage_summary",
]

MODES = tuple(m.value for m in LlmMode)
EXECUTORS = tuple(m.value for m in Executor)

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion the study needs; ``custom_id`` is the caller's, not part of the key."""

    messages: tuple[dict, ...]  # [{"role": ..., "content": ...}]
    params: dict = field(default_factory=dict)  # per-request overrides of the model's params
    sample_index: int = 0  # the n-th independent sample of the same request
    custom_id: str = ""  # caller's id (e.g. item id)

    def __post_init__(self) -> None:
        messages = tuple(dict(m) for m in self.messages)
        for i, m in enumerate(messages):
            if "role" not in m:
                raise ValueError(f"request {self.custom_id or '?'}: message {i} has no 'role'")
        if not messages:
            raise ValueError(f"request {self.custom_id or '?'}: no messages")
        if self.params.get("stream"):
            raise ValueError(f"request {self.custom_id or '?'}: stream is not supported")
        object.__setattr__(self, "messages", messages)

    @classmethod
    def from_prompt(
        cls,
        user: str,
        *,
        system: str | None = None,
        params: Mapping[str, Any] | None = None,
        sample_index: int = 0,
        custom_id: str = "",
    ) -> ChatRequest:
        """The common case: an optional system message and one user message."""
        messages = ([{"role": "system", "content": system}] if system is not None else []) + [
            {"role": "user", "content": user}
        ]
        return cls(tuple(messages), dict(params or {}), sample_index, custom_id)


class CallResult(NamedTuple):
    """The answer to one ``ChatRequest`` (in the order of the requests). Immutable; a named
    tuple because replay makes one per call, and a frozen dataclass costs several times more
    to make."""

    key: str
    custom_id: str
    text: str | None  # first choice's content (None if the call failed or had no content)
    response: dict  # the endpoint's raw JSON
    usage: dict
    cached: bool  # answered from the store without a call in this run
    error: str | None  # call failure, or "invalid content: ..." for a stored unusable answer


class ReplayMiss(RuntimeError):
    """Replay needs calls the store does not have; the message says how to record them."""

    def __init__(self, model: str, stage: str, missing: Sequence[str], store: Path, command: str):
        self.model, self.stage, self.missing, self.command = model, stage, list(missing), command
        super().__init__(
            f"ReplayMiss: {len(missing)} calls missing for {model}/{stage} in {store} "
            f"(e.g. key {missing[0]}); record them with: {command}"
        )


@dataclass(frozen=True)
class PendingCall:
    """A call that must be made: its key, the request, the exact body parameters, and the
    revision its record gets (one above the stored record it replaces, else 0)."""

    key: str
    request: ChatRequest
    params: dict
    revision: int = 0


def call_key(model: ModelSpec, request: ChatRequest, prompt_version: str) -> str:
    """sha256 over model identity, messages, every effective param, sample index, prompt version."""
    return _keyer(model, prompt_version)(request)


def _keyer(model: ModelSpec, prompt_version: str) -> Callable[[ChatRequest], str]:
    """``call_key`` for many requests of one model: the fixed parts are serialized once."""
    maker = KeyMaker(model.identity(), model.params, prompt_version)

    def key(request: ChatRequest) -> str:
        return maker.key(request.messages, request.params, request.sample_index)

    return key


def record_command(overrides: str | None = None) -> str:
    """The command that records missing calls (keeping the run's other overrides)."""
    extra = " ".join(
        t for t in (overrides or "").split() if not t.startswith(("llm=", "llm.mode="))
    )
    joined = f"{extra} llm.mode=record".strip()
    return f'snakemake --cores all --config overrides="{joined}"'


def now_iso() -> str:
    """UTC timestamp with microseconds: when a record was made (information only: replay
    orders records by revision and position, never by a clock)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def cost_usd(model: ModelSpec, usage: Mapping[str, Any], factor: float = 1.0) -> float:
    """What the call cost at the configured prices (``factor`` < 1 for batch discounts)."""
    prompt = float(usage.get("prompt_tokens") or 0)
    completion = float(usage.get("completion_tokens") or 0)
    raw = prompt * model.price_input_per_mtok + completion * model.price_output_per_mtok
    return round(raw * factor / 1e6, 10)


def make_record(
    model: ModelSpec,
    call: PendingCall,
    *,
    stage: str,
    prompt_version: str,
    response: dict[str, Any],
    latency_s: float | None,
    executor: str,
    attempts: int = 1,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The store record of one completed call (secrets are scrubbed by the writer)."""
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    record = {
        "key": call.key,
        "stage": stage,
        "model_name": model.name,
        "model": normalize_value(model.identity()),
        "prompt_version": prompt_version,
        "request": {
            "messages": [normalize_value(m) for m in call.request.messages],
            "params": call.params,
            "sample_index": call.request.sample_index,
        },
        "response": response,
        "usage": usage,
        "latency_s": None if latency_s is None else round(latency_s, 6),
        "created": now_iso(),
        "system_fingerprint": response.get("system_fingerprint"),
        "cost_usd": cost_usd(
            model, usage, 1.0 - model.price_batch_discount if executor == "batch" else 1.0
        ),
        "executor": executor,
        "attempts": attempts,
        "revision": call.revision,
    }
    record.update(extra or {})
    return record


def content_error(record: Mapping[str, Any], message: Mapping[str, Any]) -> str | None:
    """Why a stored answer (``message``: its first choice's) is unusable as asked (no content;
    JSON requested but not given).

    Derived from the record alone, so a replay reports exactly what the recording reported.
    """
    content = message.get("content")
    if content is None:
        if message.get("tool_calls"):
            return None
        return "invalid content: the model returned no content"
    fmt = (record["request"]["params"].get("response_format") or {}).get("type")
    if fmt in ("json_object", "json_schema"):
        try:
            json.loads(content)
        except (json.JSONDecodeError, TypeError):
            return f"invalid content: response_format {fmt} but the content is not valid JSON"
    return None


def result_from_record(record: Mapping[str, Any], custom_id: str, cached: bool) -> CallResult:
    """The result a stored record gives (fields in ``CallResult``'s order: made once per call)."""
    response = record["response"]
    message = response["choices"][0].get("message") or {}
    return CallResult(
        record["key"],
        custom_id,
        message.get("content"),
        response,
        record.get("usage") or {},
        cached,
        content_error(record, message),
    )


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Cyclic garbage collection off for the block.

    Replay builds a few hundred thousand long-lived dicts (records and results); each
    allocation burst would set off a collection that walks all of them again, which costs
    more than parsing them. The block creates no reference cycles, so nothing is lost. At the
    end its objects are moved to the oldest generation (``freeze`` then ``unfreeze``: a list
    splice, no traversal) instead of being scanned by the next young collection; a cycle made
    elsewhere meanwhile is still collected, by the next full collection.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


@contextlib.contextmanager
def gc_for_recording(young_threshold: int = 50_000) -> Iterator[None]:
    """Cyclic garbage collection made cheap for thousands of calls in flight.

    A request through the openai client allocates a few hundred objects, some in reference
    cycles, so collection stays on (unlike replay's ``gc_paused``). With the defaults a young
    collection ran every 700 allocations and each full collection walked every object of the
    process, the imported libraries' included: about a fifth of the client's CPU at 128 calls
    in flight (profiled). Here what exists when recording starts (modules, the run's inputs) is
    frozen out of every collection, and a young collection runs every ``young_threshold``
    allocations; cycles made while recording are still collected.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(young_threshold, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass(frozen=True)
class Endpoint:
    """Where to send the calls, and for a server this run started, how to tell it has died."""

    base_url: str
    #: a local server's ``death``: None while it runs, else how it ended (None: not ours)
    server_death: Callable[[], str | None] | None = None

    def died(self) -> str | None:
        return self.server_death() if self.server_death is not None else None


@contextlib.contextmanager
def endpoint(model: ModelSpec) -> Iterator[Endpoint]:
    """The endpoint to call: the configured one, or a local server started for this block."""
    if model.base_url is not None:
        yield Endpoint(model.base_url)
        return
    from analysis.llm.local_server import local_server

    with local_server(model) as server:
        yield Endpoint(server.base_url, server.death)


#: how long a group commit waits for more records before it writes (PostgreSQL's commit_delay):
#: every group costs a hand-off to the writer thread and an fsync, which at a hundred calls in
#: flight cost more CPU than the calls' own records (``benchmarks/bench_callstore.py``). A
#: request's slot is free before its record is committed, so the wait costs no throughput.
COMMIT_DELAY_S = 0.002


class GroupCommit:
    """Appends records from many in-flight calls, sharing one fsync among those that finish
    together (within ``delay_s`` of the first); the fsync runs in a worker thread so it never
    stalls the event loop.

    The first write that fails (``ENOSPC``, ``EIO``, ...) is kept in ``failed``: every record
    still waiting, and every later one, fails with it at once, and the caller stops making
    calls (an answer that cannot be stored would be paid for again by the next run).
    """

    def __init__(self, writer: ShardWriter, delay_s: float = COMMIT_DELAY_S) -> None:
        self.writer = writer
        self.delay_s = delay_s
        self.pending: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self.flushing = False
        self.failed: OSError | None = None

    async def commit(self, record: dict[str, Any]) -> None:
        """Return once ``record`` is on disk (fsynced); raise ``failed`` once a write failed."""
        if self.failed is not None:
            raise self.failed
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.append((record, future))
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        await future

    async def _flush(self) -> None:
        try:
            while self.pending:
                await asyncio.sleep(self.delay_s)  # let the calls finishing now join the group
                group, self.pending = self.pending, []
                try:
                    if self.failed is not None:
                        raise self.failed
                    await asyncio.to_thread(self.writer.append_many, [r for r, _ in group])
                except Exception as err:  # e.g. disk full: every waiting call fails with it
                    if isinstance(err, OSError) and self.failed is None:
                        self.failed = err
                    for _, future in group:
                        future.set_exception(err)
                else:
                    for _, future in group:
                        future.set_result(None)
        finally:
            self.flushing = False


async def _direct(
    model: ModelSpec,
    calls: Sequence[PendingCall],
    *,
    base_url: str,
    api_key: str,
    stage: str,
    prompt_version: str,
    settings: ClientSettings,
    writer: ShardWriter,
    progress: CallProgress,
    reuse_stored: bool = False,
    server_death: Callable[[], str | None] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Make ``calls`` with at most ``max_concurrency`` in flight; store each as it completes.

    Once a local server this run started has died (``server_death``), the calls not yet made
    are not attempted: each fails at once, quietly (the caller reports the death once).

    A fixed set of workers takes the calls one after another (twice ``max_concurrency``: a
    worker whose request is over waits for its record's fsync while another takes the slot),
    so the tasks and records alive at once do not grow with the number of calls.

    With ``reuse_stored`` (record mode) each call is made under a claim on its key, and not at
    all if another run sharing the store has stored it meanwhile; such keys are in neither
    returned dict.

    When a record cannot be written (a full disk), no further call is made: the calls already
    in flight finish, and ``RecordNotStored`` names the shard, the OS error, how many answers
    were paid but not stored (with their keys: the next run pays for them again) and how many
    calls were not made. Every record stored before stays.
    """
    from analysis.llm.client import ClientPool, call_with_retries  # the HTTP stack: not in replay

    folder = writer.path.parent
    claims = KeyClaims(folder) if reuse_stored else None
    follower = StoreFollower(folder, own=writer) if reuse_stored else None
    fresh: dict[str, dict[str, Any]] = {}
    failures: dict[str, str] = {}
    unstored: list[str] = []  # keys whose answers were paid for but could not be stored
    secrets = [api_key] if api_key != NO_KEY else []
    clients = ClientPool(base_url, api_key, settings, model.max_concurrency)

    async def one(call: PendingCall) -> None:
        async with (
            clients.lease() as lease,
            claims.hold(call.key) if claims else contextlib.nullcontext(),
        ):
            if committer.failed is not None:
                return  # the store cannot take records: no call that could not be kept
            if follower is not None and call.key in follower.update():
                progress.add_done()  # another run sharing the store made it meanwhile
                return
            try:
                if server_death is not None and server_death():
                    raise LocalServerDied("not attempted: the local model server had died")
                response, latency, attempts = await call_with_retries(
                    lease.client,
                    model,
                    call.request.messages,
                    call.params,
                    stage=stage,
                    key=call.key,
                    settings=settings,
                    secrets=secrets,
                    server_death=server_death,
                )
            except LocalServerDied as err:
                failures[call.key] = str(err)
                progress.add_failed()
                return
            except CallError as err:
                failures[call.key] = str(err)
                log.error("%s", err)
                progress.add_failed()
                return
            finally:
                lease.release()  # the request is over: its slot serves the next call now
            record = make_record(
                model,
                call,
                stage=stage,
                prompt_version=prompt_version,
                response=response,
                latency_s=latency,
                executor="direct",
                attempts=attempts,
            )
            try:
                await committer.commit(record)  # durable (and visible) before the claim ends
            except OSError:
                unstored.append(call.key)  # paid, not stored: reported once, at the end
                progress.add_failed()
                return
        fresh[call.key] = record
        progress.add_done()

    committer = GroupCommit(writer)
    todo = iter(calls)

    async def worker() -> None:
        for call in todo:  # each call is taken by exactly one worker
            if committer.failed is not None:
                return
            await one(call)

    try:
        with gc_for_recording():
            await asyncio.gather(*(worker() for _ in range(2 * max(model.max_concurrency, 1))))
    finally:
        await clients.close()
        if claims is not None:
            claims.close()
    if committer.failed is not None:
        done = set(fresh) | set(failures) | set(unstored)
        not_made = sum(1 for c in calls if c.key not in done)
        raise _not_stored(writer.path, committer.failed, len(fresh), unstored, not_made)
    return fresh, failures


def _not_stored(
    path: Path, err: OSError, n_stored: int, unstored: Sequence[str], not_made: int
) -> RecordNotStored:
    """The one report of a store that stopped taking records (logged once, then raised)."""
    code = errno.errorcode.get(err.errno or 0, "error")
    shown = ", ".join(unstored[:5]) + (
        f", ... ({len(unstored) - 5} more)" if len(unstored) > 5 else ""
    )
    error = RecordNotStored(
        f"cannot store calls in {path}: {err.strerror or err} ({code}); calls stopped. "
        f"{n_stored} calls of this run are stored; {len(unstored)} answers were paid for but "
        f"could not be stored{f' (keys {shown})' if unstored else ''}, so a rerun pays for "
        f"them again; {not_made} calls were not made. Free space under {path.parent} (or fix "
        "the error) and rerun: stored calls are not made again",
        n_stored=n_stored,
        unstored=list(unstored),
        not_made=not_made,
    )
    log.error("%s", error)
    return error


def run_calls(
    model: ModelSpec,
    requests: Sequence[ChatRequest],
    *,
    stage: str,
    store: Path,
    mode: str = "replay",
    shard: str = "0",
    progress: bool = True,
    prompt_version: str = "",
    settings: ClientSettings,
    executor: str = "direct",
    raise_on_error: bool = True,
    overrides: str | None = None,
) -> list[CallResult]:
    """Answer ``requests`` (results in the same order) from the store or by calling ``model``.

    ``store`` is the store root (``data/calls``); new records go to
    ``<store>/<stage>/<model>/<shard>.jsonl``. ``overrides`` (the run's Hydra overrides) only
    completes the command printed by ``ReplayMiss``. ``settings`` (timeouts, retries, polling)
    come from the composed ``llm`` group (an ``LlmConfig`` is one). With ``raise_on_error`` a
    call that fails for good raises ``CallError`` after every other call is stored; otherwise
    its result carries the error.
    """
    if mode not in MODES:
        raise ValueError(f"llm.mode '{mode}' unknown; use one of {MODES}")
    if executor not in EXECUTORS:
        raise ValueError(f"llm.executor '{executor}' unknown; use one of {EXECUTORS}")
    check_name("stage", stage)
    check_name("shard", shard)
    store = Path(store)

    maker = KeyMaker(model.identity(), model.params, prompt_version)
    with gc_paused():
        asked = [maker.asked(r.messages, r.params, r.sample_index) for r in requests]
        keys = [a.key for a in asked]
        unique: dict[str, ChatRequest] = {}
        for key, request in zip(keys, requests, strict=True):
            unique.setdefault(key, request)
        index = load_index(store, stage, model.name)

    if mode == "replay":
        missing = [k for k in unique if k not in index]
        if missing:
            raise ReplayMiss(model.name, stage, missing, store, record_command(overrides))
        todo_keys: list[str] = []
    elif mode == "record":
        todo_keys = [k for k in unique if k not in index]
    else:
        todo_keys = list(unique)

    fresh: dict[str, dict[str, Any]] = {}
    failures: dict[str, str] = {}
    if todo_keys:
        todo = [
            PendingCall(
                k,
                unique[k],
                effective_params(model.params, unique[k].params),
                index.revision(k) + 1 if k in index else 0,
            )
            for k in todo_keys
        ]
        bar = CallProgress(
            f"{model.name}/{stage}", len(unique), len(unique) - len(todo), enabled=progress
        )
        try:
            fresh, failures = _execute(
                model,
                todo,
                stage=stage,
                store=store,
                shard=shard,
                settings=settings,
                prompt_version=prompt_version,
                executor=executor,
                progress=bar,
                reuse_stored=mode == "record",
            )
        finally:
            bar.close()
        if any(k not in fresh and k not in failures for k in todo_keys):
            index = load_index(store, stage, model.name)  # stored meanwhile by another run

    results = []
    with gc_paused():
        for key, request, parts in zip(keys, requests, asked, strict=True):
            if key in fresh:
                results.append(result_from_record(fresh[key], request.custom_id, cached=False))
            elif key in failures:
                results.append(
                    CallResult(key, request.custom_id, None, {}, {}, False, failures[key])
                )
            else:
                record = index.served(key, parts)
                results.append(result_from_record(record, request.custom_id, cached=True))
    if failures and raise_on_error:
        first = next(iter(failures.values()))
        raise CallError(
            f"{len(failures)} of {len(todo_keys)} calls failed for {model.name}/{stage} "
            f"({len(fresh)} stored; rerun to retry the rest). First: {first}"
        )
    return results


def _execute(
    model: ModelSpec,
    todo: Sequence[PendingCall],
    *,
    stage: str,
    store: Path,
    shard: str,
    settings: ClientSettings,
    prompt_version: str,
    executor: str,
    progress: CallProgress,
    reuse_stored: bool = False,
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Resolve key and endpoint (only now: replay never needs them), then run the executor."""
    api_key = resolve_api_key(model)
    secrets = [api_key] if api_key != NO_KEY else []
    path = shard_path(store, stage, model.name, shard)
    with endpoint(model) as target, ShardWriter(path, secrets=secrets) as writer:
        common: dict[str, Any] = {
            "base_url": target.base_url,
            "api_key": api_key,
            "stage": stage,
            "prompt_version": prompt_version,
            "settings": settings,
            "writer": writer,
            "progress": progress,
        }
        if executor == "batch":
            from analysis.llm.batch import execute_batch

            return _run_coroutine(execute_batch(model, todo, **common))
        fresh, failures = _run_coroutine(
            _direct(
                model,
                todo,
                **common,
                reuse_stored=reuse_stored,
                server_death=target.server_death,
            )
        )
        died = target.died()
        if died and failures:
            raise LocalServerDied(
                f"{died}\n{len(failures)} of {len(todo)} calls for {model.name}/{stage} were not "
                f"answered and nothing was stored for them ({len(fresh)} answered before are "
                "stored); a rerun makes the rest"
            )
        return fresh, failures


def resolve_store(path: str | Path, repo: Path = REPO_ROOT) -> Path:
    """The store root of the config: relative paths are relative to the repository ``repo``."""
    path = Path(path)
    return path if path.is_absolute() else repo / path


def calls_provenance(
    model: ModelSpec, stage: str, results: Sequence[CallResult], store: Path
) -> dict[str, int]:
    """``{store/<stage>/<model>: n}`` for ``write_records(calls=...)``: which calls fed a number."""
    folder = Path(store) / stage / model.name
    with contextlib.suppress(ValueError):
        folder = folder.resolve().relative_to(REPO_ROOT)
    return {str(folder): len(results)}
