"""The study's vocabulary: every categorical value the canonical tables may hold, named once.

The values are written in parquet files, record keys and method sentences, so they never
change; code that filters or groups by one of them imports its name from here instead of
re-typing the string (a typo in a literal silently selects nothing). The pandera schemas
(:mod:`analysis.data.schemas`) check the tables against the tuples below, so a table and the
code that reads it share one list of allowed values.
"""

from __future__ import annotations

from typing import Final

# --- who rated: ``rater_kind`` of attribute judgments, relevance votes and response ratings
HUMAN: Final = "human"
MODEL: Final = "model"
#: the per-item majority of the human annotators, stored as a rater of its own in the votes
HUMAN_MAJORITY: Final = "human_majority"
JUDGE_KINDS: Final = (HUMAN, MODEL)
VOTE_KINDS: Final = (HUMAN, MODEL, HUMAN_MAJORITY)

# --- the study's five language models (canonical ids, as analysis.data.raters normalizes them):
# a model file whose name is a near miss of one of these (or of a model the dataset config lists
# in ``data.models``) is an error, not a new rater beside it
STUDY_MODELS: Final = (
    "claude-sonnet-4-6",
    "gemma-4-31b-it",
    "gpt-5.4",
    "llama-3.3-70b-instruct",
    "qwen3.5-27b",
)

# --- stage 1: attribute-judgment labels
ACCEPTED: Final = "accepted"
UNCERTAIN: Final = "uncertain"
REJECTED: Final = "rejected"
STAGE1_LABELS: Final = (ACCEPTED, UNCERTAIN, REJECTED)
#: the annotation tool's spelling of each stage-1 label (task-1 / task-4 files): the adapter
#: reads it, the simulator writes it
TOOL_STAGE1_LABELS: Final = {"ok": ACCEPTED, "bad": REJECTED, "unsure": UNCERTAIN}
#: why a person did not accept an attribute (``flag_reason`` of a non-accepted judgment): the
#: study's two named failure modes and the rest. A structured field of the judgment, never
#: inferred from the free-text note.
OVERGENERALIZATION: Final = "overgeneralization"
TASK_CONTEXT_CONFUSION: Final = "task_context_confusion"
OTHER_REASON: Final = "other"
FLAG_REASONS: Final = (OVERGENERALIZATION, TASK_CONTEXT_CONFUSION, OTHER_REASON)

# --- stage 2: graded relevance labels (the graded pilot round)
GRADED_LABELS: Final = (
    "necessary_explicit",
    "necessary_implicit",
    "optional",
    "unnecessary",
    "forbidden",
)

# --- rounds of each stage
PILOT: Final = "pilot"
PILOT_GRADED: Final = "pilot_graded"
PILOT2: Final = "pilot2"
FINAL: Final = "final"
STAGE1_ROUNDS: Final = (PILOT, FINAL)
STAGE2_ROUNDS: Final = (PILOT, PILOT_GRADED, PILOT2, FINAL)
STAGE3_ROUNDS: Final = (FINAL,)

# --- stage 3: generation conditions
GENERIC: Final = "generic"
PERSONALIZED: Final = "personalized"
FULL_PROFILE: Final = "full_profile"
CONDITIONS: Final = (GENERIC, PERSONALIZED, FULL_PROFILE)

# --- users' sources
REAL: Final = "real"
SYNTHETIC: Final = "synthetic"
SOURCE_KINDS: Final = (REAL, SYNTHETIC)
#: a user's source: real WildChat, a synthetic benchmark, or a simulated (``sim-``) equivalent
SOURCE_PATTERN: Final = r"^(wildchat|synthetic:[a-z0-9_.-]+|sim-[a-z0-9_.-]+)$"
#: sources whose users count as real people (the bundled world's stand-in for WildChat too)
REAL_SOURCES: Final = ("wildchat", "sim-wildchat")

# --- other closed sets of the canonical tables
ROLES: Final = ("user", "assistant")
ATTRIBUTE_SETS: Final = ("stage1", "stage2", "stage2_pilot")
TRAIN: Final = "train"
VAL: Final = "val"
TEST: Final = "test"
SPLITS: Final = (TRAIN, VAL, TEST)

# --- parsing of model answers (``parse_status`` of every model-call table)
OK: Final = "ok"
REPAIRED: Final = "repaired"
FAILED: Final = "failed"
#: statuses whose value is used; a failed parse is counted, never guessed
PARSED: Final = (OK, REPAIRED)

# --- the slot a stage-3 rating is about (a key of columns, shared by stages and stats)
RATING_SLOT: Final = ("user_id", "prompt_id", "generator", "attribute_id")
