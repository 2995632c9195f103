"""Child seeds derived from the master seed, so random steps never share a stream.

Two derivations exist because two parts of the study were seeded differently from the start,
and every committed draw, selected item and call key depends on them: stage selection hashes
``seed`` and ``purpose`` joined by a unit separator into 64 bits reduced modulo 2**31 - 1;
the learners hash ``"{seed}:{name}"`` and keep 31 bits. Callers name their scheme explicitly,
so neither can drift into the other.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum


class SeedScheme(StrEnum):
    """Which derivation a caller has always used (changing it changes committed draws)."""

    #: stage selection, baselines, controls: sha256 of "seed\x1fpurpose", 8 bytes mod 2**31-1
    stages = "stages"
    #: the trained interventions: sha256 of "seed:name", 4 bytes masked to 31 bits
    learn = "learn"


def stable_hash(*parts: object) -> int:
    """A 64-bit integer from the sha256 of the parts joined by a separator (stable everywhere)."""
    blob = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


def derive_seed(seed: int, purpose: str, *, scheme: SeedScheme) -> int:
    """A 31-bit child seed of ``seed`` for one random step (stable across machines)."""
    if scheme is SeedScheme.stages:
        return stable_hash(seed, purpose) % (2**31 - 1)
    digest = hashlib.sha256(f"{seed}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
