"""Stable ids for the canonical tables.

Ids are derived from content, never from row order, so the same raw files give the same ids on
every machine and a re-export that reorders lines changes nothing downstream. The attribute
text alone is not an id: a few texts repeat across users of one prompt, so the user is always
part of the key.
"""

from __future__ import annotations

import hashlib

#: hex digits kept from sha1; 12 (48 bits) leaves collisions negligible at study scale, and
#: the adapter checks for them anyway.
ID_LENGTH = 12


def short_hash(*parts: str) -> str:
    """sha1 over the parts joined by a separator that cannot occur in them (NUL)."""
    return hashlib.sha1("\x00".join(parts).encode("utf-8")).hexdigest()[:ID_LENGTH]


def prompt_id(prompt_index: int) -> str:
    """Prompts are numbered by their position in the study's prompt list (LIMA in the paper)."""
    return f"p{int(prompt_index):04d}"


def attribute_id(user_id: str, text: str) -> str:
    """One user's attribute: the user plus the exact attribute sentence."""
    return "a" + short_hash(user_id, text)


def item_id(user_id: str, prompt: str, attribute: str) -> str:
    """A stage-2 item: (user, prompt, attribute) with canonical prompt and attribute ids."""
    return "i" + short_hash(user_id, prompt, attribute)


def response_id(user_id: str, prompt: str, generator: str, condition: str) -> str:
    """One generated response: who it is for, to which prompt, by which model, in which mode."""
    return "r" + short_hash(user_id, prompt, generator, condition)
