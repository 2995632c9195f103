"""Client behaviour from the ``llm`` config group: timeouts, retries, backoff, batch polling.

Kept apart from ``ModelSpec`` because it describes how this run talks to endpoints, not what
a model is: none of it enters a call key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from analysis.settings import Executor, LlmMode

MODES = tuple(m.value for m in LlmMode)
EXECUTORS = tuple(m.value for m in Executor)


@dataclass(frozen=True)
class CallSettings:
    """Per-run client settings (``config/llm/*.yaml`` holds the same keys)."""

    timeout_s: float = 120.0  # per attempt of any request, connect to last byte
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
    def from_config(cls, llm_cfg: Mapping[str, Any]) -> CallSettings:
        """The matching keys of the composed ``llm`` group, every one required (mode, store,
        ... are not settings). The field defaults serve library callers without a config
        (tests, benchmarks); a run always takes the YAML values."""
        names = [f.name for f in fields(cls)]
        missing = [n for n in names if n not in llm_cfg]
        if missing:
            raise ValueError(f"llm settings: the llm config lacks {missing}")
        return cls(**{n: llm_cfg[n] for n in names})
