"""Who judged: one id per rater, whatever spelling the raw files use.

Agreement matrices compare raters across files and rounds, so the same model must carry the
same id whether a file calls it by a cloud ARN (``arn:aws:bedrock:...:inference-profile/
us.anthropic.claude-sonnet-4-6``), a hub id (``google/gemma-4-31B-it``), the file-name
variant of either (``google_gemma-4-31b-it``) or a short tag (``llama-3.3-70b``). Humans keep
the annotation tool's name; the published snapshot pads pseudonymized Prolific ids with
underscores (``prolific_P1_____________``), which are dropped (``prolific_P1``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

#: short or provider-specific spellings -> canonical id (keys are already lower-cased)
_ALIASES: dict[str, str] = {
    "llama-3.3-70b": "llama-3.3-70b-instruct",
    "llama3.3-70b-instruct": "llama-3.3-70b-instruct",
    "llama3-3-70b-instruct": "llama-3.3-70b-instruct",
    "gemma-4-31b": "gemma-4-31b-it",
    "qwen3.5-27b-instruct": "qwen3.5-27b",
    "qwen-3.5-27b": "qwen3.5-27b",
    "smollm2-135m-instruct": "smollm2-135m",
}

#: hub organisations whose ``org/`` (or file-name ``org_``) prefix is dropped
_ORGS: tuple[str, ...] = (
    "google",
    "meta-llama",
    "qwen",
    "openai",
    "anthropic",
    "mistralai",
    "microsoft",
    "deepseek-ai",
    "huggingfacetb",
)

# Bedrock inference-profile ids put a region and a vendor in front: "us.anthropic.claude-...".
_BEDROCK_PREFIX = re.compile(
    r"^(?:(?:us|eu|apac|global)\.)?(?:anthropic|meta|amazon|mistral|cohere|ai21|openai|qwen|google)\."
)
# ... and a version behind: "claude-...-v1:0".
_BEDROCK_SUFFIX = re.compile(r"(?:-v\d+)?(?::\d+)?$")
# An ARN in its original form or as a file name (":" and "/" replaced by "_").
_ARN = re.compile(r"^arn[:_].*?(?:inference-profile|foundation-model)[/_](?P<model>.+)$")


def normalize_model_id(raw: str) -> str:
    """Canonical model id for a raw provider id, hub id, ARN or file-name variant.

    Simulated models (``sim-...``) pass through unchanged; unknown real models keep their
    lower-cased name without organisation or vendor prefix, so a new model gets a readable id
    instead of an error.
    """
    text = str(raw).strip()
    if not text:
        raise ValueError("empty model id")
    if text.startswith("sim-"):
        return text
    low = text.lower()
    arn = _ARN.match(low)
    if arn:
        low = arn.group("model")
    if "/" in low:
        low = low.rsplit("/", 1)[1]
    else:
        for org in _ORGS:
            if low.startswith(org + "_"):
                low = low[len(org) + 1 :]
                break
    low = _BEDROCK_PREFIX.sub("", low)
    low = _BEDROCK_SUFFIX.sub("", low)
    return _ALIASES.get(low, low)


def normalize_human_rater(raw: str) -> str:
    """The annotation tool's rater name without the snapshot's underscore padding."""
    text = str(raw).strip().rstrip("_")
    if not text:
        raise ValueError(f"empty human rater id {raw!r}")
    return text


#: how similar (difflib ratio) a model id must be to a known one to count as its misspelling:
#: "gpt-5.4" vs "gpt5.4" or "gemma-4-31b-it" vs "gemma-4-31b-lt" are; "sim-llm-a" vs "gpt-5.4" not
NEAR_MISS_RATIO = 0.8


def near_miss(model: str, known: Iterable[str]) -> str | None:
    """The known model id that ``model`` nearly but not exactly spells, or None.

    A misspelt export file would otherwise become a new rater beside the model it belongs to
    (and the model would silently lose its votes); an unrelated name is a new model, kept.
    """
    known = sorted(set(known))
    if model in known:
        return None
    close = difflib.get_close_matches(model, known, n=1, cutoff=NEAR_MISS_RATIO)
    return close[0] if close else None
