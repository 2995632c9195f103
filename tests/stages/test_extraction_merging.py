"""Stage 1: extraction with structured output, per-user merging, verification labels."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from analysis.llm.models import ModelSpec
from analysis.settings import StagesConfig
from analysis.stages import steps
from analysis.stages.combine import combine_attribute_judgments
from analysis.stages.extraction import EXTRACTION_SCHEMA
from analysis.stages.merging import cluster_labels, explode_extractions, merge_user_attributes
from analysis.stages.prompts import PromptSet
from analysis.stages.requests import json_response_format
from tests.stages.conftest import ScriptedCaller


def _extractor(request: Any) -> str:
    text = request.messages[1]["content"]  # the conversation (a repair appends after it)
    if "c-u1-1" in request.custom_id and not request.custom_id.endswith("#repair"):
        return "not json"
    facts = [{"sentence": "The user keeps bees.", "reason": "said so", "confidence": 0.8}]
    if "italian" in text.lower():
        facts.append(
            {"sentence": "The user studies Italian.", "reason": "asked", "confidence": 0.6}
        )
    return json.dumps({"attributes": facts})


def test_extraction_step_and_merge(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    caller = ScriptedCaller(_extractor, name="fake-extractor")
    table = steps.extraction_step(world["conversations"], stages_cfg, prompts, caller, 1)
    assert len(table) == 6  # every conversation (cap 24)
    first = caller.batches[0][0]
    assert first.params["response_format"]["type"] == "json_schema"
    assert (table["parse_status"] == "ok").sum() == 5
    assert table.loc[table["conversation_id"] == "c-u1-1", "parse_status"].item() == "repaired"
    originals = explode_extractions(table)
    assert len(originals) == int(table["n_attributes"].sum())
    # vectors: identical sentences merge, different ones do not
    vocab = sorted(originals["text"].unique())
    vecs = np.eye(len(vocab), dtype=np.float32)[[vocab.index(t) for t in originals["text"]]]
    merged, with_ids = merge_user_attributes(originals, vecs, 0.3)
    assert merged.groupby("user_id").size().to_dict() == {"u1": 2, "u2": 1, "u3": 1}
    assert merged["n_originals"].sum() == len(originals)
    assert set(with_ids["attribute_id"]) == set(merged["attribute_id"])


def test_llama_cpp_gets_its_own_json_form() -> None:
    spec = ModelSpec("local", None, None, {}, server={"kind": "llama_cpp", "file": "m.gguf"})
    assert json_response_format(spec, EXTRACTION_SCHEMA, "attributes") == {
        "type": "json_object",
        "schema": EXTRACTION_SCHEMA,
    }


def test_clustering_threshold_and_medoid() -> None:
    v = np.array([[1, 0], [0.99, 0.141], [0, 1]], dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert list(cluster_labels(v, 0.05)) == [0, 0, 1]
    assert list(cluster_labels(v, 1e-4)) == [0, 1, 2]
    assert list(cluster_labels(v[::-1], 0.05)) == [0, 1, 1]  # numbered by first member
    originals = pd.DataFrame(
        {
            "original_id": ["m:c:0", "m:c:1", "m:c:2"],
            "user_id": "u",
            "conversation_id": "c",
            "model": "m",
            "text": ["a", "b", "c"],
            "reason": ["ra", "rb", "rc"],
            "confidence": [0.2, 0.4, 0.9],
        }
    )
    merged, _ = merge_user_attributes(originals, v, 0.05)
    assert merged["n_originals"].tolist() == [2, 1]
    assert merged["confidence"].tolist() == [0.30000000000000004, 0.9]


def test_verification_step_and_judgments(
    world: dict[str, pd.DataFrame], stages_cfg: StagesConfig, prompts: PromptSet
) -> None:
    def verifier(request: Any) -> str:
        claim = request.messages[-1]["content"].split("Claim:")[1]
        label = "UNSUPPORTED" if "Italian" in claim else "SUPPORTED"
        return f'{{"answer": "{label}"}}'

    caller = ScriptedCaller(verifier, name="fake-verifier")
    table = steps.verification_step(
        world["attributes"],
        world["attribute_judgments"],
        world["conversations"],
        stages_cfg,
        prompts,
        caller,
        2,
    )
    assert len(table) == 9  # every stage-1 attribute of users with conversations
    judged = set(world["attribute_judgments"]["attribute_id"])
    assert set(table["attribute_id"].iloc[: len(judged)]) == judged  # human-judged first
    combined = combine_attribute_judgments(world["attribute_judgments"], [table], "v1")
    model_rows = combined[combined["rater"] == "fake-verifier"]
    assert len(model_rows) == 9 and set(model_rows["label"]) == {"accepted", "rejected"}
    assert (model_rows["round"] == "final").all()
