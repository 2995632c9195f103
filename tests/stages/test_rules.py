"""The stage rules plan one job per configured model and shard, and none without models."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO_ROOT, run_snakemake

MODEL_RULES = {
    "attribute_extraction",
    "attribute_verification",
    "model_relevance_votes",
    "model_responses",
    "model_preference_ratings",
    "model_control_ratings",
}
TARGET = "results/{d}/parse_failures.parquet"


def _planned(*overrides: str) -> dict[str, int]:
    dataset = "annotation_tool" if "data=annotation_tool" in overrides else "bundled"
    proc = run_snakemake(
        REPO_ROOT,
        "-n",
        "--forceall",
        TARGET.format(d=dataset),
        "--config",
        f"overrides=[{','.join(overrides)}]",
        timeout=600,
    )
    table = re.search(r"Job stats:\n(.*?)\n\n", proc.stdout + "\n\n", re.S)
    rows = [ln.split() for ln in table.group(1).splitlines()[2:]] if table else []
    return {r[0]: int(r[1]) for r in rows if len(r) == 2 and r[0] != "total"}


@pytest.mark.slow
def test_one_job_per_model_and_shard_and_none_without_models() -> None:
    with_model = _planned("models=default")
    assert {r: with_model.get(r) for r in MODEL_RULES} == dict.fromkeys(MODEL_RULES, 1)
    assert with_model["model_call_table"] == len(MODEL_RULES)
    sharded = _planned("models=default", "llm.shards=4")
    assert {r: sharded.get(r) for r in MODEL_RULES} == dict.fromkeys(MODEL_RULES, 4)
    assert sharded["model_call_table"] == len(MODEL_RULES)
    without = _planned("models=none")
    assert not MODEL_RULES & set(without)
    assert without["parse_failures"] == 1
    narrowed = _planned("models=default", "stages.stage2.voters=[]")
    assert "model_relevance_votes" not in narrowed and "model_responses" in narrowed
