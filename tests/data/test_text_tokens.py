"""The one tokenizer gives each caller exactly the tokens its former private copy gave."""

from __future__ import annotations

import math
import re

from analysis.data.text_tokens import word_tokens
from analysis.learn.features import STOPWORDS, content_words, tokens
from analysis.stages.baselines import STOP_WORDS, tokenize

TEXTS = [
    "The user's dog, Rex, doesn't like 2 cats!",
    "I'm baking sourdough at 5am; you're welcome to join.",
    "A b c -- it's O'Brien's 3rd e-mail.",
    "",
]


def test_bm25_tokens_split_at_apostrophes_and_drop_stop_words() -> None:
    for text in TEXTS:
        old = [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP_WORDS]
        assert tokenize(text) == old
    assert tokenize("The user's dog doesn't bark") == ["dog", "doesn", "t", "bark"]


def test_feature_tokens_keep_apostrophes_and_missing_text_has_none() -> None:
    for text in TEXTS:
        assert tokens(text) == re.findall(r"[a-z0-9']+", text.lower())
    assert tokens(None) == []
    assert tokens(math.nan) == []  # type: ignore[arg-type]
    assert tokens("You're here") == ["you're", "here"]


def test_content_words_drop_stopwords_and_one_letter_tokens() -> None:
    for text in TEXTS:
        old = {t for t in re.findall(r"[a-z0-9']+", text.lower()) if t not in STOPWORDS}
        assert content_words(text) == {t for t in old if len(t) > 1}


def test_word_tokens_parameters() -> None:
    assert word_tokens("Ab c DEF", min_length=2) == ["ab", "def"]
    assert word_tokens("ab cd", drop={"cd"}) == ["ab"]
    assert word_tokens(None) == []
