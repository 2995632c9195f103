"""The rules' code path on files: outputs written, keys absent without labels, stable bytes."""

from __future__ import annotations

import json
from pathlib import Path

import joblib
import pandas as pd
import pytest

from analysis.learn.pipeline import (
    run_attribute_verifier,
    run_relevance_classifier,
    run_reward_models,
)
from analysis.provenance import repo_relative
from tests.learn.synthetic import stage1_world, stage2_world, stage3_world
from tests.settings_defaults import compose_config_plain


def _rule_params() -> dict:
    """A learning rule's params (``subtree(CFG, "learn", "stats", "run.seed")``): the YAML
    defaults with small grids and a small bootstrap (settings have no defaults in code)."""
    cfg = compose_config_plain()
    learn = cfg["learn"]
    learn["n_folds"] = 4
    learn["verifier"]["C_grid"] = [0.03]
    learn["relevance"]["C_grid"] = [0.03]
    learn["reward"].update(ridge_alpha_grid=[300.0], C_grid=[0.003, 0.03])
    return {"learn": learn, "stats": {**cfg["stats"], "n_boot": 100}, "run.seed": 123}


CFG = _rule_params()


def write(tmp: Path, frames: dict[str, pd.DataFrame]) -> dict[str, str]:
    paths = {}
    for name, frame in frames.items():
        path = tmp / f"{name}.parquet"
        frame.to_parquet(path, index=False)
        paths[name] = str(path)
    return paths


def outputs(tmp: Path, rule: str) -> dict[str, str]:
    return {
        "records": str(tmp / "out" / f"{rule}.json"),
        "model": str(tmp / "out" / f"{rule}.joblib"),
        "predictions": str(tmp / "out" / f"{rule}.parquet"),
    }


def test_attribute_verifier_files_and_determinism(tmp_path: Path) -> None:
    inputs = write(tmp_path, stage1_world(n_users=16))
    out = outputs(tmp_path, "attribute_verifier")
    run_attribute_verifier(inputs, out, CFG, rule="attribute_verifier")
    first = Path(out["records"]).read_bytes()
    records = json.loads(first)
    for key in ("auroc", "f1", "acceptance_kept", "zero_shot_acceptance_kept.sim-llm-a"):
        rec = records[f"stage1.verifier.{key}"]
        assert rec["ci_low"] is not None and rec["n"] > 0 and rec["seed"] is not None
        assert rec["rule"] == "attribute_verifier" and rec["code"].startswith("analysis.learn.")
        # users within their sources; people's acceptance also resamples the annotators
        assert "users (16) within the 2 strata of source" in rec["method"]
        people = key.endswith(("acceptance_kept", "acceptance_kept.sim-llm-a"))
        assert ("and annotators (3) random" in rec["method"]) == people, key
        assert {i["path"] for i in rec["inputs"]} >= {repo_relative(inputs["judgments"])}
    # people's acceptance of every attribute is stage 1's record, not the verifier's
    assert "stage1.verifier.acceptance_all" not in records
    bundle = joblib.load(out["model"])
    assert bundle["trained"] and bundle["positive_class"] == "unsupported"
    assert {i["path"] for i in bundle["training_data"]} == {
        repo_relative(p) for p in inputs.values()
    }
    assert all(len(i["sha256"]) == 64 for i in bundle["training_data"])
    run_attribute_verifier(inputs, out, CFG, rule="attribute_verifier")
    assert Path(out["records"]).read_bytes() == first  # same seed: identical numbers


def test_no_labels_write_empty_records_not_zeros(tmp_path: Path) -> None:
    world = stage1_world(n_users=6)
    world["judgments"] = world["judgments"][world["judgments"]["rater_kind"] == "model"]
    inputs = write(tmp_path, world)
    out = outputs(tmp_path, "attribute_verifier")
    assert run_attribute_verifier(inputs, out, CFG, rule="attribute_verifier") == []
    assert json.loads(Path(out["records"]).read_text()) == {}
    assert joblib.load(out["model"])["trained"] is False
    assert Path(out["predictions"]).is_file()


def test_relevance_classifier_rule(tmp_path: Path) -> None:
    world = stage2_world(n_prompts=12)
    frames = {k: world[k] for k in ("votes", "baseline_votes", "prompts", "attributes")}
    frames["classifier_set"] = pd.DataFrame(
        {"item_id": pd.Series(dtype=str), "split": pd.Series(dtype=str)}
    )
    frames["prompt_embeddings"] = world["prompt_embeddings"]
    frames["attribute_embeddings"] = world["attribute_embeddings"]
    inputs = write(tmp_path, frames)
    out = outputs(tmp_path, "relevance_classifier")
    run_relevance_classifier(inputs, out, CFG, rule="relevance_classifier")
    records = json.loads(Path(out["records"]).read_text())
    assert {
        "stage2.classifier.final.f1",
        "stage2.classifier.final.precision",
        "stage2.classifier.final.recall",
    } <= set(records)
    assert not any(".pilot2." in k for k in records)  # no such round in this world
    assert "design relevance_items: users" in records["stage2.classifier.final.f1"]["method"]
    assert set(joblib.load(out["model"])["rounds"]) == {"final"}


@pytest.mark.parametrize("with_humans", [True, False])
def test_reward_models_rule(tmp_path: Path, with_humans: bool) -> None:
    world = stage3_world(n_users=8)
    if not with_humans:  # the real data: responses and judges, no human ratings
        world["ratings"] = world["ratings"][world["ratings"]["rater_kind"] == "model"]
    inputs = write(tmp_path, {k: v for k, v in world.items() if k != "prompts"})
    out = outputs(tmp_path, "reward_models")
    run_reward_models(inputs, out, CFG, rule="reward_models")
    records = json.loads(Path(out["records"]).read_text())
    if with_humans:
        assert {
            "stage3.reward_model.pointwise.spearman",
            "stage3.reward_model.pairwise.kendall",
        } <= set(records)
    else:
        assert records == {}
