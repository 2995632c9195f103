"""Small synthetic worlds in the canonical-table shapes, with or without a planted signal.

With ``signal=True`` the latent truth (an attribute is supported, an attribute is relevant
to a prompt, a personalized response is better) shapes both the features the learners see
(embedding directions, hedging words, response shifts) and the human labels; with
``signal=False`` the labels are drawn from the same rates independently of the features,
so any apparent skill is chance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

TOPICS = [
    "gardening",
    "chess",
    "baking bread",
    "python programming",
    "marathon training",
    "french grammar",
    "jazz piano",
    "birdwatching",
    "tax returns",
    "woodworking",
    "astronomy",
    "vegan recipes",
]


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.normal(size=(n, dim))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _emb_frame(ids: list[str], matrix: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"id": ids, "embedding": [row.astype(np.float32) for row in matrix]})


def stage1_world(
    n_users: int = 40, per_user: int = 10, dim: int = 16, signal: bool = True, seed: int = 0
) -> dict[str, pd.DataFrame]:
    """Attributes with 3 human judgments each, one zero-shot LLM verifier, embeddings."""
    rng = np.random.default_rng(seed)
    n = n_users * per_user
    supported = rng.random(n) < 0.6
    visible = supported if signal else rng.random(n) < 0.6  # what the features reflect
    direction = _unit(rng, 1, dim)[0]
    attr_emb = rng.normal(size=(n, dim)) + np.where(visible, 1.5, -1.5)[:, None] * direction
    reason_emb = rng.normal(size=(n, dim))
    rows, judgments, convs = [], [], []
    for i in range(n):
        user = f"u{i // per_user:03d}"
        topic = TOPICS[i % len(TOPICS)]
        hedge = "may be" if (not visible[i] and rng.random() < 0.6) else "is"
        aid = f"a{i:05d}"
        rows.append(
            {
                "attribute_id": aid,
                "user_id": user,
                "set": "stage1",
                "text": f"The user {hedge} interested in {topic}.",
                "reason": f"The user asked about {topic} in one conversation.",
                "confidence": float(np.clip(0.5 + (0.3 if visible[i] else -0.2), 0, 1)),
                "n_originals": int(1 + 2 * visible[i]),
            }
        )
        p_accept = 0.9 if supported[i] else 0.15
        for r in range(3):
            label = (
                "accepted" if rng.random() < p_accept else ("rejected" if r % 2 else "uncertain")
            )
            judgments.append(
                {
                    "attribute_id": aid,
                    "user_id": user,
                    "rater": f"sim-human-{r:02d}",
                    "rater_kind": "human",
                    "round": "final",
                    "label": label,
                }
            )
        judgments.append(
            {
                "attribute_id": aid,
                "user_id": user,
                "rater": "sim-llm-a",
                "rater_kind": "model",
                "round": "final",
                "label": "accepted" if rng.random() < 0.85 else "rejected",
            }
        )
    for u in range(n_users):
        convs.append(
            {
                "conversation_id": f"c{u:03d}",
                "user_id": f"u{u:03d}",
                "turn": 0,
                "role": "user",
                "text": f"Tell me about {TOPICS[u % len(TOPICS)]}.",
            }
        )
    ids = [r["attribute_id"] for r in rows]
    users = pd.DataFrame(
        {
            "user_id": [f"u{u:03d}" for u in range(n_users)],
            "source": ["wildchat" if u % 2 else "synthetic:cupid" for u in range(n_users)],
            "source_kind": ["real" if u % 2 else "synthetic" for u in range(n_users)],
        }
    )
    return {
        "attributes": pd.DataFrame(rows),
        "judgments": pd.DataFrame(judgments),
        "users": users,
        "conversations": pd.DataFrame(convs),
        "attribute_embeddings": _emb_frame(ids, attr_emb),
        "reason_embeddings": _emb_frame(ids, reason_emb),
    }


def stage2_world(
    n_prompts: int = 30,
    users_per_prompt: int = 5,
    attrs_per_user: int = 8,
    dim: int = 16,
    signal: bool = True,
    seed: int = 0,
    round_: str = "final",
    published_majority: bool = False,
) -> dict[str, pd.DataFrame]:
    """(prompt, attribute) items: 3 human votes (or a published majority), an LLM, a baseline."""
    rng = np.random.default_rng(seed)
    prompt_vecs = _unit(rng, n_prompts, dim)
    prompts = pd.DataFrame(
        {
            "prompt_id": [f"p{k:04d}" for k in range(n_prompts)],
            "text": [
                f"How do I get started with {TOPICS[k % len(TOPICS)]}?" for k in range(n_prompts)
            ],
        }
    )
    attrs, items, votes, base = [], [], [], []
    attr_vecs = []
    for k in range(n_prompts):
        for u in range(users_per_prompt):
            user = f"u{k:03d}_{u}"
            for j in range(attrs_per_user):
                relevant = rng.random() < 0.25
                visible = relevant if signal else rng.random() < 0.25
                aid = f"a{k:03d}{u}{j:02d}"
                vec = rng.normal(size=dim) * 0.6 + (1.2 * prompt_vecs[k] if visible else 0.0)
                attr_vecs.append(vec)
                attrs.append(
                    {
                        "attribute_id": aid,
                        "user_id": user,
                        "set": "stage2",
                        "text": f"The user likes {TOPICS[(k + j) % len(TOPICS)]}.",
                        "reason": "From a chat.",
                        "confidence": 0.7,
                        "n_originals": 1,
                    }
                )
                item = f"i{k:03d}{u}{j:02d}"
                base_row = {
                    "item_id": item,
                    "user_id": user,
                    "prompt_id": f"p{k:04d}",
                    "attribute_id": aid,
                    "round": round_,
                }
                items.append(base_row)
                p_yes = 0.85 if relevant else 0.08
                if published_majority:
                    votes.append(
                        {
                            **base_row,
                            "rater": "human_majority",
                            "rater_kind": "human_majority",
                            "vote": bool(relevant),
                        }
                    )
                else:
                    for r in range(3):
                        votes.append(
                            {
                                **base_row,
                                "rater": f"sim-human-{r:02d}",
                                "rater_kind": "human",
                                "vote": bool(rng.random() < p_yes),
                            }
                        )
                votes.append(
                    {
                        **base_row,
                        "rater": "sim-llm-a",
                        "rater_kind": "model",
                        "vote": bool(rng.random() < (0.9 if relevant else 0.45)),
                    }
                )
                base.append(
                    {
                        **base_row,
                        "rater": "bm25",
                        "rater_kind": "baseline",
                        "vote": bool(rng.random() < 0.3),
                        "split": "dev" if k < 5 else "eval",
                    }
                )
    ids = [a["attribute_id"] for a in attrs]
    return {
        "prompts": prompts,
        "attributes": pd.DataFrame(attrs),
        "items": pd.DataFrame(items),
        "votes": pd.DataFrame(votes),
        "baseline_votes": pd.DataFrame(base),
        "prompt_embeddings": _emb_frame(prompts["prompt_id"].tolist(), prompt_vecs),
        "attribute_embeddings": _emb_frame(ids, np.vstack(attr_vecs)),
    }


def stage3_world(
    n_users: int = 30,
    prompts_per_user: int = 4,
    generators: tuple[str, ...] = ("sim-gen-a", "sim-gen-b"),
    attrs_per_example: int = 3,
    dim: int = 16,
    signal: bool = True,
    humans_per_example: int = 1,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """Generic/personalized response pairs rated 1-5 by people and by one LLM judge."""
    rng = np.random.default_rng(seed)
    attrs, prompts, responses, ratings = [], [], [], []
    attr_vecs: dict[str, np.ndarray] = {}
    resp_vecs: dict[str, np.ndarray] = {}
    prompt_vecs: dict[str, np.ndarray] = {}
    for u in range(n_users):
        user = f"u{u:03d}"
        for pk in range(prompts_per_user):
            pid = f"p{u:03d}{pk}"
            prompts.append({"prompt_id": pid, "text": f"Question {pid} about {TOPICS[pk]}."})
            prompt_vecs[pid] = rng.normal(size=dim)
            aids = []
            for j in range(attrs_per_example):
                aid = f"a{u:03d}{pk}{j}"
                aids.append(aid)
                attrs.append(
                    {
                        "attribute_id": aid,
                        "user_id": user,
                        "text": f"The user enjoys {TOPICS[(pk + j) % len(TOPICS)]}.",
                    }
                )
                attr_vecs[aid] = rng.normal(size=dim)
            for g in generators:
                gid = f"r{user}{pid}{g}g"
                pid_r = f"r{user}{pid}{g}p"
                generic = rng.normal(size=dim)
                quality = rng.normal(size=attrs_per_example)
                shift = sum(q * attr_vecs[a] for q, a in zip(quality, aids, strict=True)) * 0.8
                resp_vecs[gid] = generic
                resp_vecs[pid_r] = generic + shift + rng.normal(size=dim) * 0.3
                responses.append(
                    {
                        "response_id": gid,
                        "user_id": user,
                        "prompt_id": pid,
                        "generator": g,
                        "condition": "generic",
                        "text": "Here is a plain answer.",
                    }
                )
                responses.append(
                    {
                        "response_id": pid_r,
                        "user_id": user,
                        "prompt_id": pid,
                        "generator": g,
                        "condition": "personalized",
                        "text": "Here is an answer for you.",
                    }
                )
                for q, a in zip(quality, aids, strict=True):
                    latent = q if signal else rng.normal()
                    key = {
                        "user_id": user,
                        "prompt_id": pid,
                        "generator": g,
                        "attribute_id": a,
                        "round": "final",
                    }
                    for h in range(humans_per_example):
                        rating = int(np.clip(np.round(3 + 1.2 * latent + rng.normal() * 0.5), 1, 5))
                        ratings.append(
                            {
                                **key,
                                "rater": f"sim-human-{h:02d}",
                                "rater_kind": "human",
                                "rating": rating,
                            }
                        )
                    judge = int(np.clip(np.round(3.5 + 0.6 * latent + rng.normal() * 0.8), 1, 5))
                    ratings.append(
                        {**key, "rater": "sim-judge-a", "rater_kind": "model", "rating": judge}
                    )
    return {
        "attributes": pd.DataFrame(attrs),
        "prompts": pd.DataFrame(prompts),
        "responses": pd.DataFrame(responses),
        "ratings": pd.DataFrame(ratings),
        "attribute_embeddings": _emb_frame(list(attr_vecs), np.vstack(list(attr_vecs.values()))),
        "response_embeddings": _emb_frame(list(resp_vecs), np.vstack(list(resp_vecs.values()))),
        "prompt_embeddings": _emb_frame(list(prompt_vecs), np.vstack(list(prompt_vecs.values()))),
    }
