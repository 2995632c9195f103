"""Feature signals count what they claim to, and missing rows are named errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.learn.features import (
    Embeddings,
    FeatureError,
    mention_score,
    relevance_features,
    reward_features,
    verifier_features,
)


def emb(ids: list[str], matrix: np.ndarray, kind: str) -> Embeddings:
    return Embeddings(ids, matrix, kind)


def test_verifier_signals() -> None:
    attrs = pd.DataFrame(
        {
            "attribute_id": ["a1", "a2"],
            "user_id": ["u1", "u2"],
            "text": ["The user may possibly like chess.", "The user is always a passionate baker."],
            "reason": ["They asked once about a cover letter.", None],
            "confidence": [0.9, None],
            "n_originals": [3, 1],
        }
    )
    conv = pd.DataFrame(
        {"user_id": ["u1", "u2"], "role": ["user", "user"], "text": ["chess openings?", "hi"]}
    )
    fm = verifier_features(attrs, conv)
    col = {n: fm.X[:, i] for i, n in enumerate(fm.names)}
    assert list(col["attribute_hedges"]) == [2, 0]
    assert list(col["attribute_overgeneralization_cues"]) == [0, 2]
    assert list(col["reason_single_instance_cues"]) == [2, 0]
    assert list(col["reason_task_context_cues"]) == [1, 0]
    assert list(col["confidence_missing"]) == [0, 1] and col["confidence"][1] == 0.5
    assert col["log_n_originals"][0] == pytest.approx(np.log(3))
    assert col["evidence_word_share"][0] == pytest.approx(1 / 4)  # may possibly like chess
    assert col["evidence_word_share"][1] == 0
    assert fm.ids.tolist() == ["a1", "a2"]


def test_verifier_embeddings_and_missing_id() -> None:
    attrs = pd.DataFrame(
        {
            "attribute_id": ["a1"],
            "user_id": ["u"],
            "text": ["x"],
            "reason": ["y"],
            "confidence": [0.5],
        }
    )
    a = emb(["a1"], np.array([[3.0, 4.0]]), "attributes")
    r = emb(["a1"], np.array([[3.0, 4.0]]), "reasons")
    fm = verifier_features(attrs, None, a, r)
    assert fm.X[0, fm.names.index("cos_attribute_reason")] == pytest.approx(1.0)
    assert fm.X[0, fm.names.index("attribute_emb_0")] == pytest.approx(0.6)  # normalized
    with pytest.raises(FeatureError, match=r"embeddings/reasons.parquet lacks 1 id.*'a1'"):
        verifier_features(attrs, None, a, emb(["zz"], np.ones((1, 2)), "reasons"))


def test_embeddings_from_frame_rejects_duplicates() -> None:
    frame = pd.DataFrame({"id": ["a", "a"], "embedding": [[1.0, 0.0], [0.0, 1.0]]})
    with pytest.raises(FeatureError, match="appears twice"):
        Embeddings.from_frame(frame, "attributes")
    with pytest.raises(FeatureError, match="missing column 'embedding'"):
        Embeddings.from_frame(frame[["id"]], "attributes")


def test_relevance_cosine_and_products() -> None:
    items = pd.DataFrame({"item_id": ["i1"], "prompt_id": ["p1"], "attribute_id": ["a1"]})
    prompts = pd.DataFrame({"prompt_id": ["p1"], "text": ["bake sourdough bread"]})
    attrs = pd.DataFrame(
        {"attribute_id": ["a1"], "text": ["The user bakes bread"], "confidence": [0.8]}
    )
    p = emb(["p1"], np.array([[1.0, 0.0]]), "prompts")
    a = emb(["a1"], np.array([[1.0, 1.0]]), "attributes")
    fm = relevance_features(items, prompts, attrs, p, a)
    assert fm.X[0, fm.names.index("cos_prompt_attribute")] == pytest.approx(np.sqrt(0.5))
    assert fm.X[0, fm.names.index("product_emb_0")] == pytest.approx(np.sqrt(0.5))
    assert fm.X[0, fm.names.index("attribute_word_overlap")] == pytest.approx(1 / 2)
    with pytest.raises(FeatureError, match="tables/prompts.parquet lacks 1 id"):
        relevance_features(items.assign(prompt_id="p9"), prompts, attrs, p, a)


def test_relevance_features_are_float64_values_rounded_once_in_any_chunking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chunked float32 features equal the float64 blocks rounded once, whatever the chunk."""
    import analysis.learn.features as features

    rng = np.random.default_rng(2)
    n_items, dim = 23, 6
    pids, aids = [f"p{i}" for i in range(5)], [f"a{i}" for i in range(7)]
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n_items)],
            "prompt_id": rng.choice(pids, n_items),
            "attribute_id": rng.choice(aids, n_items),
        }
    )
    prompts = pd.DataFrame({"prompt_id": pids, "text": [f"plan a trip {i}" for i in range(5)]})
    attrs = pd.DataFrame({"attribute_id": aids, "text": [f"likes trips {i}" for i in range(7)]})
    p = emb(pids, rng.normal(size=(5, dim)), "prompts")
    a = emb(aids, rng.normal(size=(7, dim)), "attributes")
    pe, ae = p.lookup(items["prompt_id"]), a.lookup(items["attribute_id"])
    whole = relevance_features(items, prompts, attrs, p, a)
    assert whole.X.dtype == np.float32
    k = whole.names.index("product_emb_0")
    np.testing.assert_array_equal(whole.X[:, 0], np.einsum("ij,ij->i", pe, ae).astype(np.float32))
    np.testing.assert_array_equal(whole.X[:, k : k + dim], (pe * ae).astype(np.float32))
    np.testing.assert_array_equal(whole.X[:, k + dim :], ae.astype(np.float32))
    monkeypatch.setattr(features, "_ROWS_PER_CHUNK", 4)
    assert relevance_features(items, prompts, attrs, p, a).X.tobytes() == whole.X.tobytes()


def test_reward_mention_flag_and_length_ratio() -> None:
    assert mention_score(
        "The user loves jazz piano", "Since you love jazz piano, try this"
    ) == pytest.approx(2 / 3)
    ex = pd.DataFrame(
        {
            "user_id": ["u"],
            "generator": ["g"],
            "attribute_id": ["a1"],
            "prompt_id": ["p1"],
            "personalized_response_id": ["rp"],
            "generic_response_id": ["rg"],
        }
    )
    responses = pd.DataFrame(
        {
            "response_id": ["rp", "rg"],
            "text": [
                "Given your interest in jazz piano, practise scales daily.",
                "Practise scales.",
            ],
        }
    )
    attrs = pd.DataFrame({"attribute_id": ["a1"], "text": ["The user plays jazz piano"]})
    r = emb(["rp", "rg"], np.array([[1.0, 0.0], [0.0, 1.0]]), "responses")
    a = emb(["a1"], np.array([[1.0, 0.0]]), "attributes")
    fm = reward_features(ex, responses, attrs, r, a)
    col = dict(zip(fm.names, fm.X[0], strict=True))
    assert col["explicit_mention"] == 1.0 and col["addressing_phrases"] == 1.0
    assert col["cos_attribute_gain"] == pytest.approx(1.0)
    assert col["log_length_ratio"] == pytest.approx(np.log(10 / 3))
    assert col["diff_emb_0"] == pytest.approx(1.0) and col["diff_emb_1"] == pytest.approx(-1.0)
    with pytest.raises(FeatureError, match="stage3/responses.parquet lacks 1 id"):
        reward_features(ex.assign(generic_response_id="nope"), responses, attrs, r, a)
