"""The one tokenizer of the study's texts (prompts, attributes, responses, reasons).

BM25 retrieval, the mention detector and the learned features all split a text into
lower-cased alphanumeric words; they differ only in whether an apostrophe stays inside a word
(``you're`` one token for the features, ``you`` + ``re`` for BM25), which words are dropped
(each caller's own stop-word list: it says what carries meaning for *that* use) and the
shortest word kept. One function with those three parameters keeps every caller's tokens
exactly as they were, so no BM25 score, feature or selected item depends on which copy ran.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection

_WORD = re.compile(r"[a-z0-9]+")
_WORD_WITH_APOSTROPHES = re.compile(r"[a-z0-9']+")


def word_tokens(
    text: object,
    *,
    keep_apostrophes: bool = False,
    drop: Collection[str] = frozenset(),
    min_length: int = 1,
) -> list[str]:
    """Lower-cased words of ``text`` in order, without those in ``drop`` or shorter than ``min_length``.

    A missing text (``None`` or NaN, e.g. an attribute without a reason) has no words.
    """
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return []
    pattern = _WORD_WITH_APOSTROPHES if keep_apostrophes else _WORD
    return [
        t for t in pattern.findall(str(text).lower()) if len(t) >= min_length and t not in drop
    ]
