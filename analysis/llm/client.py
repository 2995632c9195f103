"""One chat-completion request through the official ``openai`` client, retried the study's way.

The openai client's own retries are switched off (``max_retries=0``) so that the policy here
is the only one: exponential backoff with jitter on 429, 408, 5xx, timeouts, connection errors
and broken bodies (truncated, not JSON, not a chat completion), honouring ``Retry-After``;
no retry on any other 4xx, which would fail the same way again. The response is taken raw
(``cast_to=httpx2.Response``) so the stored response is the endpoint's own JSON, not a
re-serialized client object, and so a broken body can be told apart from a model's answer.

``timeout_s`` bounds each whole attempt, from connecting to the last byte of the body: the
HTTP client's own timeout is per read, so a server that drips a byte now and then would keep
a request open indefinitely. A retry gets a fresh deadline of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx2
import openai
from openai import AsyncOpenAI, DefaultAioHttpClient
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
)
from tenacity.wait import wait_exponential_jitter

from analysis.llm.failures import CallError, EndpointNotFound, LocalServerDied
from analysis.llm.models import ModelSpec
from analysis.llm.store import redact
from analysis.settings import ClientSettings

log = logging.getLogger(__name__)
T = TypeVar("T")

# httpx2 logs every request at INFO; thousands of calls would drown a rule's log. Our own
# retry and failure messages say what matters. A level set explicitly elsewhere is kept.
if logging.getLogger("httpx2").level == logging.NOTSET:
    logging.getLogger("httpx2").setLevel(logging.WARNING)

#: HTTP statuses worth another attempt: rate limit, request timeout, any server error
RETRY_STATUSES = frozenset({408, 429})


#: headers the SDK adds for its maker, left out: the platform ones describe the user's machine
#: (no endpoint needs them), and the per-request retry count would say 0 on every retry of ours
#: (the SDK's own retries are off). Fewer headers are also less to build on every request.
SDK_PLATFORM_HEADERS = {
    name: openai.omit
    for name in (
        "X-Stainless-Lang",
        "X-Stainless-Package-Version",
        "X-Stainless-OS",
        "X-Stainless-Arch",
        "X-Stainless-Runtime",
        "X-Stainless-Runtime-Version",
        "X-Stainless-Async",
    )
}
SDK_REQUEST_HEADERS = {
    "X-Stainless-Retry-Count": openai.omit,
    "X-Stainless-Read-Timeout": openai.omit,
}


class ResponseBodyError(Exception):
    """HTTP 200 whose body is not a chat completion (truncated, not JSON, no choices)."""


class AttemptTimeout(Exception):
    """An attempt did not deliver its complete response within ``timeout_s`` (retryable)."""


def make_client(
    base_url: str,
    api_key: str,
    settings: ClientSettings,
    *,
    max_concurrency: int,
) -> AsyncOpenAI:
    """An async client whose only retries are ours, with one kept-alive connection per slot.

    Its HTTP transport is aiohttp, the openai client's own documented alternative "for
    improved concurrency performance" (``openai[aiohttp]``): the same client, request building,
    auth, timeouts and status errors, with aiohttp's C parser and a connection pool that hands
    out a free connection without probing every idle one per request (httpcore's pool did,
    which made one call's CPU grow with the number in flight). The pool keeps as many
    connections alive as requests may be in flight, so none is opened and closed per call.
    """
    slots = max(max_concurrency, 1)
    http_client = DefaultAioHttpClient(
        timeout=settings.timeout_s,
        limits=httpx2.Limits(max_connections=slots, max_keepalive_connections=slots),
    )
    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=settings.timeout_s,
        http_client=http_client,
        default_headers=SDK_PLATFORM_HEADERS,
    )


class Lease:
    """One request's slot of a ``ClientPool`` and the client to make it with."""

    def __init__(self, client: AsyncOpenAI, slots: asyncio.Semaphore) -> None:
        self.client = client
        self._slots: asyncio.Semaphore | None = slots

    def release(self) -> None:
        """Give the slot back (once; later calls do nothing)."""
        if self._slots is not None:
            self._slots.release()
            self._slots = None


class ClientPool:
    """The client of one endpoint for one event loop, made once, and the bound on requests in
    flight: ``lease`` hands it out when fewer than ``max_concurrency`` requests hold a slot.
    A request's slot is given back as soon as its response is in, before its record is
    stored: the bound is on the endpoint's load, not on the run's bookkeeping."""

    def __init__(
        self, base_url: str, api_key: str, settings: ClientSettings, max_concurrency: int
    ) -> None:
        self.client = make_client(base_url, api_key, settings, max_concurrency=max_concurrency)
        self._slots = asyncio.Semaphore(max(max_concurrency, 1))

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[Lease]:
        """A slot for one request (waits while all are taken), given back at the end of the
        block or earlier by ``Lease.release``."""
        await self._slots.acquire()
        lease = Lease(self.client, self._slots)
        try:
            yield lease
        finally:
            lease.release()

    async def close(self) -> None:
        await self.client.close()


def is_retryable(exc: BaseException) -> bool:
    """Transient failures: worth the same request again after a pause."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRY_STATUSES or exc.status_code >= 500
    return isinstance(
        exc,
        openai.APIConnectionError | ResponseBodyError | AttemptTimeout | httpx2.TransportError,
    )


def retry_after_s(exc: BaseException | None) -> float | None:
    """Seconds the endpoint asked us to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def describe_error(exc: BaseException) -> str:
    """Short, secret-free description of a failed attempt."""
    if isinstance(exc, openai.APIStatusError):
        body = exc.response.text[:300] if exc.response is not None else ""
        return f"HTTP {exc.status_code} {body!r}"
    refused = _connection_os_error(exc)
    if refused is not None:
        return refused
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, AttemptTimeout):
        return f"timeout ({exc})"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        return f"connection error ({type(cause).__name__ if cause else 'unknown'})"
    return f"{type(exc).__name__}: {exc}"


#: connection failures by the OS error at the bottom of the client's exception chain
_CONNECTION_ERRORS: tuple[tuple[type[OSError], str], ...] = (
    (ConnectionRefusedError, "connection refused"),
    (ConnectionResetError, "connection reset by the endpoint"),
    (ConnectionAbortedError, "connection aborted"),
)


def _connection_os_error(exc: BaseException) -> str | None:
    """ "connection refused" (or reset) where that is what happened underneath ``exc``.

    The aiohttp transport reports a refused connection as httpx2's ``ConnectTimeout`` and the
    client then as ``APITimeoutError``, within milliseconds; it is not a timeout, and a message
    that says so sends a user after the wrong cause.
    """
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        for kind, text in _CONNECTION_ERRORS:
            if isinstance(cause, kind):
                return f"{text} ({cause.strerror or cause})" if cause.strerror else text
        cause = cause.__cause__ or cause.__context__
    return None


def parse_completion(content: bytes) -> dict[str, Any]:
    """The endpoint's JSON, checked to be a chat completion (else a retryable body error)."""
    try:
        body = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ResponseBodyError(
            f"response body is not JSON ({len(content)} bytes: {content[:80]!r})"
        ) from err
    if not isinstance(body, dict):
        raise ResponseBodyError("response body is not a JSON object")
    if isinstance(body.get("error"), dict):
        raise ResponseBodyError(f"response carries an error: {str(body['error'])[:200]}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ResponseBodyError("response has no choices")
    if not all(isinstance(c, dict) and isinstance(c.get("message"), dict) for c in choices):
        raise ResponseBodyError("a choice has no message object")
    return body


async def create_completion(
    client: AsyncOpenAI,
    model: ModelSpec,
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
) -> dict[str, Any]:
    """One attempt: POST /chat/completions with exactly ``params`` in the body.

    The body goes out through the client's own ``post`` (its documented way to call an
    endpoint by path: same auth, headers, timeouts, connection pool and status errors) as
    ``chat.completions.create(..., extra_body=params)`` would send it, without that method's
    per-message conversion through the SDK's typed-dict annotations, which cost more CPU than
    the rest of a call's HTTP handling (profiled at 128 requests in flight). The response
    stays raw bytes for ``parse_completion``. The SDK's per-request headers for its maker are
    left out (``SDK_REQUEST_HEADERS``).
    """
    body = {"model": model.request_model, "messages": [dict(m) for m in messages], **params}
    raw = await client.post(
        "/chat/completions",
        body=body,
        cast_to=httpx2.Response,
        options={"headers": SDK_REQUEST_HEADERS},
    )
    return parse_completion(raw.content)


async def _within_deadline(attempt: Awaitable[T], timeout_s: float) -> T:
    """``attempt``, cancelled (closing its connection) if it is not done within ``timeout_s``."""
    try:
        async with asyncio.timeout(timeout_s):
            return await attempt
    except TimeoutError:
        raise AttemptTimeout(f"no complete response within {timeout_s:g}s") from None


def _waiter(settings: ClientSettings):
    backoff = wait_exponential_jitter(
        multiplier=settings.backoff_base_s,
        max=settings.backoff_max_s,
        jitter=settings.backoff_base_s,
    )

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(exc)
        if asked is not None:
            return min(asked, settings.retry_after_max_s)
        return backoff(state)

    return wait


async def call_with_retries(
    client: AsyncOpenAI,
    model: ModelSpec,
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    *,
    stage: str,
    key: str,
    settings: ClientSettings,
    secrets: Sequence[str] = (),
    server_death: Callable[[], str | None] | None = None,
) -> tuple[dict[str, Any], float, int]:
    """(response, latency of the successful attempt, attempts) or ``CallError``.

    ``server_death`` (a local server's :meth:`~analysis.llm.local_server.LocalServer.death`)
    is asked before every retry: once the server this run started has died, no retry is made
    against its port and the call fails at once with ``LocalServerDied``, which says how the
    process ended.

    The first attempt is made before any retry state exists: most calls succeed at once, and
    tenacity's state for one call is a reference cycle that only the garbage collector frees,
    and at a hundred calls in flight those collections stalled the event loop enough to cost
    a visible share of the throughput (``benchmarks/bench_callstore.py``). A first failure
    becomes tenacity's attempt 1, so every decision after it (retry or not, waits,
    ``Retry-After``, when to stop) is tenacity's alone.
    """

    async def attempt_once() -> tuple[dict[str, Any], float]:
        start = time.perf_counter()
        response = await _within_deadline(
            create_completion(client, model, messages, params), settings.timeout_s
        )
        return response, time.perf_counter() - start

    try:
        response, latency = await attempt_once()
        return response, latency, 1
    except Exception as exc:  # handed to tenacity below
        first_failure = exc

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.info(
            "%s/%s %s: attempt %d failed (%s); retrying in %.2fs",
            model.name,
            stage,
            key[:16],
            state.attempt_number,
            redact(describe_error(exc), secrets) if exc else "?",
            state.next_action.sleep if state.next_action else 0.0,
        )

    def worth_retrying(exc: BaseException) -> bool:
        return is_retryable(exc) and not (server_death is not None and server_death())

    retrying = AsyncRetrying(
        stop=stop_after_attempt(settings.max_retries + 1),
        wait=_waiter(settings),
        retry=retry_if_exception(worth_retrying),
        before_sleep=before_sleep,
        reraise=True,
    )
    attempts = 1
    try:
        async for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                if attempts == 1:
                    raise first_failure
                response, latency = await attempt_once()
                return response, latency, attempts
    except Exception as exc:  # every failure becomes one clear, secret-free error
        died = server_death() if server_death is not None else None
        if died:
            raise LocalServerDied(redact(died, secrets)) from None
        kind = "gave up after" if is_retryable(exc) else "not retryable, failed at"
        message = (
            f"model {model.name}, stage {stage}, key {key}: {kind} attempt {attempts} "
            f"of {settings.max_retries + 1}: {describe_error(exc)}"
        )
        raise CallError(redact(message, secrets)) from None
    raise AssertionError("unreachable: tenacity neither returned nor raised")


async def retry_op(fn: Callable[[], Awaitable[T]], *, settings: ClientSettings, what: str) -> T:
    """Run an endpoint operation (a Batch API upload, batch request or download) with our retries.

    Each attempt is under the same total deadline as a chat call (``timeout_s``, connect to
    last byte), so a server dripping a file or a status a byte at a time cannot hold the run.
    """
    retrying = AsyncRetrying(
        stop=stop_after_attempt(settings.max_retries + 1),
        wait=_waiter(settings),
        retry=retry_if_exception(is_retryable),
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                return await _within_deadline(fn(), settings.timeout_s)
    except Exception as exc:
        kind = EndpointNotFound if isinstance(exc, openai.NotFoundError) else CallError
        raise kind(f"{what}: {describe_error(exc)}") from None
    raise AssertionError("unreachable: tenacity neither returned nor raised")
