"""How a call ends for good when it cannot be answered: the errors the call layer raises.

Kept apart from ``client`` (the openai client and its transport) so that replay, which never
makes a request, can raise and catch them without importing the HTTP stack.
"""

from __future__ import annotations


class CallError(RuntimeError):
    """A call failed for good; the message names model, stage and key."""


class EndpointNotFound(CallError):
    """HTTP 404 on an endpoint operation: the object (e.g. a saved batch) does not exist there."""


class LocalServerDied(CallError):
    """The local model server this run started has died: no call can be answered any more.

    The message names the model, how the process ended (exit code, or the signal by name) and
    the end of its log; the calls not yet answered are not stored, so a rerun makes them.
    """


class RecordNotStored(CallError):
    """A paid answer could not be written to the call store (a full disk, say): calls stop, and
    the message names the shard, the OS error and how many paid answers were not stored."""

    def __init__(self, message: str, *, n_stored: int, unstored: list[str], not_made: int) -> None:
        super().__init__(message)
        self.n_stored = n_stored  # calls of this run that are in the store
        self.unstored = unstored  # keys of answers paid for but not stored
        self.not_made = not_made  # calls this run did not make
