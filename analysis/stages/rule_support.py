"""Config subtrees back to the nested shape the stage functions want.

Rules receive config as ``subtree(CFG, "stages.stage2", "prompts", ...)``: flat dotted keys,
so that a change to one stage's settings reruns only that stage's rules. The step functions
want the nested shape; :func:`nested` rebuilds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1, "a.c": 2, "d": 3}`` -> ``{"a": {"b": 1, "c": 2}, "d": 3}``."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out
