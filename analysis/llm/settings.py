"""Client behaviour from the ``llm`` config group: timeouts, retries, backoff, batch polling.

Kept apart from ``ModelSpec`` because it describes how this run talks to endpoints, not what
a model is: none of it enters a call key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

MODES = ("replay", "record", "refresh")
EXECUTORS = ("direct", "batch")


@dataclass(frozen=True)
class CallSettings:
    """Per-run client settings (``config/llm/*.yaml`` holds the same keys)."""

    timeout_s: float = 120.0  # per request, connect + read
    max_retries: int = 6  # retries after the first attempt (429, 5xx, timeouts, connection)
    backoff_base_s: float = 1.0  # first backoff; doubles per retry, plus up to this much jitter
    backoff_max_s: float = 60.0  # cap of one backoff sleep
    retry_after_max_s: float = (
        300.0  # cap on an endpoint's Retry-After (a broken header cannot hang a run)
    )
    batch_poll_s: float = 30.0  # seconds between Batch API status polls
    batch_timeout_s: float = 90000.0  # give up waiting (state is kept: the next run resumes)

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.timeout_s <= 0:
            raise ValueError("llm settings: max_retries must be >= 0 and timeout_s > 0")
        if self.backoff_base_s < 0 or self.backoff_max_s < 0:
            raise ValueError("llm settings: backoff times must be >= 0")

    @classmethod
    def from_config(cls, llm_cfg: Mapping[str, Any] | None) -> CallSettings:
        """Take the matching keys of the ``llm`` group (mode, store, ... are not settings)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in dict(llm_cfg or {}).items() if k in names})
