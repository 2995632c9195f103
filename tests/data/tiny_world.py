"""A tiny, hand-checkable dataset in the annotation-tool layout (all text made up here).

``tiny_world()`` returns ``{relative path: list of records}`` (or a string for raw file
content) so a test can change one record before ``write_world`` puts it on disk. The expected
counts of every table are in ``EXPECTED``; they are worked out by hand in the comments.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

# Users: u-wc-1 (wildchat, stage 1 and 2), u-syn-1 (cupid, stage 1 only), u-wc-2 (stage 2 only),
# u-pilot-1 / u-pilot-2 (pilot stage 2 only).
HIKING = "The user enjoys mountain hiking."  # shared by u-wc-1 and u-wc-2: never key on text alone
A1, A2, A3 = HIKING, "The user is learning to bake bread.", "The user owns a cat."
B1, B2 = "The user prefers concise answers.", "The user works as a night-shift nurse."
C1, C2 = HIKING, "The user is saving money for a car."
P1, P2, P3 = "The user plays chess online.", "The user lives near the coast.", "The user has a dog."
Q1 = "The user collects vinyl records."

PROMPTS = {
    1: "Plan a chess club evening.",
    2: "Recommend a podcast for a long drive.",
    3: "Suggest a weekend plan for a rainy day.",
    7: "Write a short toast for a friend's wedding.",
}

CLAUDE_ARN = (
    "arn:aws:bedrock:us-east-1:000000000000:inference-profile/us.anthropic.claude-sonnet-4-6"
)
CLAUDE_FILE = (
    "arn_aws_bedrock_us-east-1_000000000000_inference-profile_us.anthropic.claude-sonnet-4-6"
)


def _attr(text: str, reason: str, conf: float | None, n: int) -> dict[str, Any]:
    return {
        "attribute": text,
        "original_attributes": [text] * n,
        "reason": reason,
        "original_reasons": [reason] * n,
        "confidence": conf,
        "original_confidences": [conf] * n,
    }


WC1_PROFILE = [
    _attr(A1, "Asked for trail tips twice.", 0.9, 2),
    _attr(A2, "Asked how to feed a sourdough starter.", 0.6, 1),
    _attr(A3, "Mentioned feeding a cat before work.", None, 1),
]
WC2_PROFILE = [
    _attr(C1, "Planned a summit day with friends.", 0.8, 1),
    _attr(C2, "Compared loan rates for a used hatchback.", 0.7, 3),
]

PAIRS = [("u-wc-1", 3, WC1_PROFILE), ("u-wc-2", 3, WC2_PROFILE), ("u-wc-2", 7, WC2_PROFILE)]
# Published human-majority labels per pair (None = the tool wrote a null label).
GROUND_TRUTH = [[True, False, False], [False, True], [None, True]]


def _votes(texts: list[str], values: list[bool | None]) -> list[dict[str, Any]]:
    return [{"attribute": t, "relevant": v} for t, v in zip(texts, values, strict=True)]


def _texts(profile: list[dict[str, Any]]) -> list[str]:
    return [a["attribute"] for a in profile]


def _model_votes(model: str, values: list[list[bool]]) -> list[dict[str, Any]]:
    return [
        {
            "model": model,
            "sample_index": i,
            "prompt_index": p,
            "user_id": u,
            "items": [
                {"attribute": t, "relevant": v, "raw_answer": "YES" if v else "NO"}
                for t, v in zip(_texts(profile), values[i], strict=True)
            ],
        }
        for i, (u, p, profile) in enumerate(PAIRS)
    ]


def _eval(mode: str, model: str, responses: list[str]) -> list[dict[str, Any]]:
    out = []
    for i, (u, p, profile) in enumerate(PAIRS):
        attrs = copy.deepcopy(profile)
        if mode == "gt_attributes":
            for a, gt in zip(attrs, GROUND_TRUTH[i], strict=True):
                a["ground_truth"] = gt
        out.append(
            {
                "user_id": u,
                "prompt_id": f"{u}_{p}",
                "prompt_text": PROMPTS[p],
                "profile_attributes": attrs,
                "items": [],
                "mode": mode,
                "model": model,
                "response": responses[i],
            }
        )
    return out


GENERIC_GPT = ["Stay in and bake.", "Visit a museum.", "To love and laughter!"]
PERSONAL_GPT = ["Take a short hike.", "Plan a hike when it clears.", "To the summit ahead!"]


def tiny_world() -> dict[str, Any]:
    """Every file of the tiny world, as records (a fresh deep copy each call)."""
    files: dict[str, Any] = {
        "extracted/task4_items.jsonl": [
            {
                "user_id": "u-wc-1",
                "source": "wildchat",
                "merged_attributes": WC1_PROFILE,
                "conversations": [
                    {
                        "hashed_ip": "u-wc-1",
                        "conversation_hash": "conv-wc-1-0",
                        "conversation": [
                            {"role": "user", "content": "How long should dough proof?"},
                            {"role": "assistant", "content": "Usually two to four hours."},
                        ],
                    }
                ],
                "prompt_index": 3,
                "prompt_text": PROMPTS[3],
                "items": [],
                "item_index": 0,
            },
            {
                "user_id": "u-syn-1",
                "source": "cupid",
                "merged_attributes": [
                    _attr(B1, "Asked twice for shorter replies.", 0.8, 1),
                    _attr(B2, "Mentioned a shift ending at dawn.", 0.7, 2),
                ],
                "conversations": [
                    {
                        "hashed_ip": "u-syn-1",
                        "conversation_hash": "conv-syn-1-0",
                        "conversation": [
                            {"role": "user", "content": "Summarize this chart in one line."},
                            {"role": "assistant", "content": "Sales rose in spring."},
                            {"role": "user", "content": "Shorter please."},
                        ],
                    }
                ],
                "item_index": 1,
            },
        ],
        "extracted/task5_items.jsonl": [
            {
                "prompt_index": p,
                "user_id": u,
                "profile_attributes": profile,
                "prompt_text": PROMPTS[p],
                "items": [],
                "item_index": i,
            }
            for i, (u, p, profile) in enumerate(PAIRS)
        ],
        "extracted/task6_items.jsonl": [
            {
                "model_tag": "gpt-5.4",
                "user_id": "u-wc-1",
                "prompt_id": "u-wc-1_3",
                "prompt_text": PROMPTS[3],
                "attributes": [
                    {"attribute": A1, "is_relevant": True},
                    {"attribute": A2, "is_relevant": False},
                    {"attribute": A3, "is_relevant": False},
                ],
                "response_no_context": GENERIC_GPT[0],
                "response_personalized": PERSONAL_GPT[0],
                "item_index": 0,
            },
            {
                "model_tag": "claude-sonnet-4-6",
                "user_id": "u-wc-2",
                "prompt_id": "u-wc-2_7",
                "prompt_text": PROMPTS[7],
                "attributes": [
                    {"attribute": C1, "is_relevant": False},
                    {"attribute": C2, "is_relevant": True},
                ],
                "response_no_context": "Cheers to you both.",
                "response_personalized": "Cheers, and may your savings grow.",
                "item_index": 1,
            },
        ],
        # Stage 1, final: one record per (annotator, user); judgments by position.
        "annotations/alice_task4.jsonl": [
            {
                "task": "4",
                "index": 0,
                "user_id": "u-wc-1",
                "attr_judgments": [
                    {"judgment": "ok", "note": ""},
                    {"judgment": "bad", "note": "one recipe is not a hobby"},
                    {"judgment": "unsure", "note": ""},
                ],
                "annotator": "alice",
            },
            {
                "task": "4",
                "index": 1,
                "user_id": "u-syn-1",
                "attr_judgments": [{"judgment": "ok", "note": ""}, {"judgment": None, "note": ""}],
                "annotator": "alice",
            },
        ],
        "annotations/bob_task4.jsonl": [
            {
                "task": "4",
                "index": 0,
                "user_id": "u-wc-1",
                "attr_judgments": [
                    {"judgment": "ok", "note": ""},
                    {"judgment": "ok", "note": ""},
                    {"judgment": "bad", "note": ""},
                ],
                "annotator": "bob",
            },
            {
                "task": "4",
                "index": 1,
                "user_id": "u-syn-1",
                "attr_judgments": [{"judgment": "bad", "note": ""}, {"judgment": "ok", "note": ""}],
                "annotator": "bob",
            },
        ],
        # Stage 2, final.
        "annotations/alice_task5.jsonl": [
            {
                "task": "5",
                "index": 0,
                "user_id": "u-wc-1",
                "prompt_index": 3,
                "relevance_judgments": _votes([A1, A2, A3], [True, False, False]),
                "annotator": "alice",
            },
            {
                "task": "5",
                "index": 1,
                "user_id": "u-wc-2",
                "prompt_index": 3,
                "relevance_judgments": _votes([C1, C2], [False, True]),
                "annotator": "alice",
            },
            {
                "task": "5",
                "index": 2,
                "user_id": "u-wc-2",
                "prompt_index": 7,
                "relevance_judgments": _votes([C1, C2], [True, None]),
                "annotator": "alice",
            },
        ],
        "annotations/alice_task5.lock": "",
        "annotations/bob_task5.jsonl": [
            {
                "task": "5",
                "index": 0,
                "user_id": "u-wc-1",
                "prompt_index": 3,
                "relevance_judgments": _votes([A1, A2, A3], [True, True, False]),
                "annotator": "bob",
            },
            {
                "task": "5",
                "index": 1,
                "user_id": "u-wc-2",
                "prompt_index": 3,
                "relevance_judgments": _votes([C1, C2], [False, False]),
                "annotator": "bob",
            },
            {
                "task": "5",
                "index": 2,
                "user_id": "u-wc-2",
                "prompt_index": 7,
                "relevance_judgments": _votes([C1, C2], [False, True]),
                "annotator": "bob",
            },
        ],
        # Stage 3, final: ratings per attribute text, 5 = personalized much better.
        "annotations/alice_task6.jsonl": [
            {
                "task": "6",
                "index": 0,
                "user_id": "u-wc-1",
                "prompt_id": "u-wc-1_3",
                "model_tag": "gpt-5.4",
                "ratings": {A1: 4},
                "annotator": "alice",
            },
            {
                "task": "6",
                "index": 1,
                "user_id": "u-wc-2",
                "prompt_id": "u-wc-2_7",
                "model_tag": "claude-sonnet-4-6",
                "ratings": {C2: 2},
                "annotator": "alice",
            },
        ],
        "annotations/bob_task6.jsonl": [
            {
                "task": "6",
                "index": 0,
                "user_id": "u-wc-1",
                "prompt_id": "u-wc-1_3",
                "model_tag": "gpt-5.4",
                "ratings": {A1: 3, A2: None},
                "annotator": "bob",
            },
        ],
        f"relevance_task5/{CLAUDE_FILE}.jsonl": _model_votes(
            CLAUDE_ARN, [[True, True, False], [True, True], [True, True]]
        ),
        "relevance_task5/google_gemma-4-31b-it.jsonl": _model_votes(
            "google/gemma-4-31B-it", [[True, False, True], [False, True], [True, False]]
        ),
        "judge_task6/gpt-5.4.jsonl": [
            {
                "model": "gpt-5.4",
                "sample_index": 0,
                "user_id": "u-wc-1",
                "prompt_id": "u-wc-1_3",
                "model_tag": "gpt-5.4",
                "ratings": {A1: 5},
            },
            {
                "model": "gpt-5.4",
                "sample_index": 1,
                "user_id": "u-wc-2",
                "prompt_id": "u-wc-2_7",
                "model_tag": "claude-sonnet-4-6",
                "ratings": {C2: 4},
            },
        ],
        "task6/eval_results_task5_no_context_gpt-5.4.jsonl": _eval(
            "no_context", "gpt-5.4", GENERIC_GPT
        ),
        "task6/eval_results_task5_gt_attributes_gpt-5.4.jsonl": _eval(
            "gt_attributes", "gpt-5.4", PERSONAL_GPT
        ),
        "task6/eval_results_task5_attributes_llama-3.3-70b.jsonl": _eval(
            "attributes", "meta-llama/Llama-3.3-70B-Instruct", ["Full A.", "Full B.", "Full C."]
        ),
        # Pilot, stage 2: graded (task 2) and binary (task 3) human files, model votes, and the
        # round-2 classifier set. Pilot sample 0 = (u-pilot-1, prompt 1), 1 = (u-pilot-2, prompt 2).
        "annotations_v0/dave_task2.jsonl": [
            {
                "task": "2",
                "index": 0,
                "user_id": "u-pilot-1",
                "prompt_index": 1,
                "relevance_judgments": [
                    {"attribute": P1, "rating": "necessary_implicit", "is_relevant": True},
                    {"attribute": P2, "rating": "optional", "is_relevant": True},
                    {"attribute": P3, "rating": "none", "is_relevant": False},
                ],
                "annotator": "dave",
            },
        ],
        "annotations_v0/dave_task3.jsonl": [
            {
                "task": "3",
                "index": 0,
                "user_id": "u-pilot-1",
                "prompt_index": 1,
                "relevance_judgments": _votes([P1, P2, P3], [True, True, False]),
                "note": " [converted from task2]",
                "annotator": "dave",
            },
        ],
        "annotations_v0/erin_task3.jsonl": [
            {
                "task": "3",
                "index": 0,
                "user_id": "u-pilot-1",
                "prompt_index": 1,
                "relevance_judgments": _votes([P1, P2, P3], [False, None, False]),
                "annotator": "erin",
            },
            {
                "task": "3",
                "index": 1,
                "user_id": "u-pilot-2",
                "prompt_index": 2,
                "relevance_judgments": [],
                "annotator": "erin",
            },
        ],
        "annotations_v0/prolific_P9_____task1.jsonl": [
            {
                "task": "1",
                "index": 0,
                "annotator": "prolific_P9____",
                "attr_judgments": [{"judgment": "ok", "note": ""}, {"judgment": "bad", "note": ""}],
            },
        ],
        "relevance_task3/google_gemma-4-31b-it.jsonl": [
            {
                "model": "google/gemma-4-31B-it",
                "sample_index": 0,
                "prompt_index": 1,
                "user_id": "u-pilot-1",
                "items": _votes([P1, P2, P3], [True, True, True]),
            },
            {
                "model": "google/gemma-4-31B-it",
                "sample_index": 1,
                "prompt_index": 2,
                "user_id": "u-pilot-2",
                "items": _votes([Q1], [True]),
            },
        ],
        # no prompt_index here: placed through the other pilot files' sample map
        "relevance_task3/gpt-5.4.jsonl": [
            {
                "model": "gpt-5.4",
                "sample_index": 0,
                "user_id": "u-pilot-1",
                "items": _votes([P1, P2, P3], [True, False, False]),
            },
        ],
        "task3_relevance_clf.jsonl": [
            {
                "prompt_index": 1,
                "sample_index": 0,
                "attribute": P1,
                "prompt_text": PROMPTS[1],
                "label": 1,
                "split": "train",
                "n_annotators": 3,
                "human_yes_rate": 2 / 3,
            },
            {
                "prompt_index": 1,
                "sample_index": 0,
                "attribute": P2,
                "prompt_text": PROMPTS[1],
                "label": 0,
                "split": "test",
                "n_annotators": 4,
                "human_yes_rate": 0.25,
            },
            {
                "prompt_index": 2,
                "sample_index": 1,
                "attribute": Q1,
                "prompt_text": PROMPTS[2],
                "label": 0,
                "split": "val",
                "n_annotators": 3,
                "human_yes_rate": 0.0,
            },
        ],
        "behaviors/gpt-5.4.jsonl": [{"model": "gpt-5.4", "note": "a helper file"}],
        "README.md": "A tiny made-up world for tests.\n",
    }
    # a JSON round trip: no two records share a list, as in files read from disk
    return {k: v if isinstance(v, str) else json.loads(json.dumps(v)) for k, v in files.items()}


EXPECTED_ROWS = {
    "users": 5,  # u-wc-1, u-syn-1 (task4) + u-wc-2, u-pilot-1, u-pilot-2 (inferred)
    "conversations": 5,  # 2 + 3 turns
    "attributes": 14,  # stage1 5, stage2 5 (A1-A3, C1, C2), stage2_pilot 4 (P1-P3, Q1)
    "attribute_judgments": 9,  # alice 3 + 1 (one null), bob 3 + 2
    "prompts": 4,
    "relevance_items": 16,  # final 7, pilot 4, pilot_graded 2, pilot2 3
    "relevance_votes": 50,  # final 33, pilot 12, pilot_graded 2, pilot2 3
    "responses": 11,  # task6 items 4 + eval (no_context 2 new, gt 2 new, attributes 3)
    "preference_ratings": 5,  # alice 2, bob 1 (one null), gpt-5.4 judge 2
    "relevance_classifier_set": 3,
}
EXPECTED_SKIPS = {"null_label": 5, "unrated": 1, "empty_record": 1, "unpublished_item_list": 2}
EXPECTED_IGNORED = {"README.md", "annotations/alice_task5.lock", "behaviors/gpt-5.4.jsonl"}


def write_world(root: Path, files: dict[str, Any]) -> Path:
    """Write ``files`` under ``root``: a list becomes JSON lines, a string is written as is."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            text = "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in content)
            path.write_text(text, encoding="utf-8")
    return root
