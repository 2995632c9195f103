"""A progress bar for long call sets: done / cached / failed and calls per second, on stderr.

Cached calls are counted as the bar's starting point, so the rate shows only calls made now.
"""

from __future__ import annotations

import sys

from tqdm import tqdm


class CallProgress:
    """Counts of one ``run_calls``; the bar is drawn only when ``enabled``."""

    def __init__(self, label: str, total: int, cached: int, *, enabled: bool = True) -> None:
        self.cached = cached
        self.done = 0
        self.failed = 0
        self.bar = tqdm(
            total=total,
            initial=cached,
            desc=label,
            unit="call",
            file=sys.stderr,
            disable=not enabled,
            mininterval=0.5,
            dynamic_ncols=True,
        )
        self._postfix()

    def _postfix(self) -> None:
        if self.bar.disable:  # formatting a postfix nobody sees costs CPU on every call
            return
        self.bar.set_postfix(done=self.done, cached=self.cached, failed=self.failed, refresh=False)

    def add_done(self, n: int = 1) -> None:
        self.done += n
        self._postfix()
        self.bar.update(n)

    def add_failed(self, n: int = 1) -> None:
        self.failed += n
        self._postfix()
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()
