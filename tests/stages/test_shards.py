"""Sharding a model-call step (config llm.shards): the shards partition the items in order, and
their tables joined in shard order are the unsharded table, byte for byte, for every step."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analysis.llm.calls import CallResult, ChatRequest
from analysis.settings import StagesConfig
from analysis.stages.prompts import PromptSet
from analysis.stages.requests import ModelCaller
from analysis.stages.shards import Shard, join_shards, write_shard_table
from analysis.stages.steps import CALL_STEPS, relevance_step
from analysis.workflow_config import ConfigError, compose_config
from tests.settings_defaults import llm_settings
from tests.stages.conftest import fake_spec

#: CALL_STEPS input name -> the hand-made world's table
WORLD_TABLES = {
    "conversations": "conversations",
    "attributes": "attributes",
    "judgments": "attribute_judgments",
    "relevance_items": "relevance_items",
    "prompts": "prompts",
    "votes": "relevance_votes",
    "responses": "responses",
    "ratings": "preference_ratings",
}
#: well-formed answers of each step; about one request in four gets an empty, unreadable one
ANSWERS = {
    "attribute_extraction": json.dumps(
        {"attributes": [{"sentence": "The user keeps bees.", "reason": "said", "confidence": 0.7}]}
    ),
    "attribute_verification": '{"answer": "SUPPORTED"}',
    "model_relevance_votes": '{"answer": "YES"}',
    "model_responses": "A reply written for this test.",
    "model_preference_ratings": '{"rating": 4}',
    "model_control_ratings": '{"rating": 2}',
}


class ContentCaller:
    """Answers and call keys that depend on the request alone, as the real call store's do."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        self.model = fake_spec("fake-model")

    def __call__(self, requests: Sequence[ChatRequest]) -> list[CallResult]:
        results = []
        for request in requests:
            digest = hashlib.sha256(repr((request.custom_id, request.messages)).encode()).digest()
            unreadable = digest[0] % 4 == 0 and not request.custom_id.endswith("#repair")
            text = "" if unreadable else ANSWERS[self.rule]
            results.append(CallResult(digest.hex(), request.custom_id, text, {}, {}, False, None))
        return results


def _joined_file(shards: list[pd.DataFrame], folder: Path) -> bytes:
    """What the workflow writes: each shard's file (rule model_calls), then the joined table
    read back from them (rule model_call_table), as bytes."""
    folder.mkdir()
    paths = [folder / f"{i}.parquet" for i in range(len(shards))]
    for table, path in zip(shards, paths, strict=True):
        write_shard_table(table, path)
    joined = join_shards([pd.read_parquet(path) for path in paths])
    joined.to_parquet(folder / "joined.parquet", index=False)
    return (folder / "joined.parquet").read_bytes()


@pytest.mark.parametrize(("n_items", "count"), [(0, 1), (5, 1), (10, 3), (2, 4), (7, 7), (100, 8)])
def test_shards_partition_the_items_in_order(n_items: int, count: int) -> None:
    items = list(range(n_items))
    parts = [Shard(i, count).take(items) for i in range(count)]
    assert [x for part in parts for x in part] == items
    assert max(map(len, parts)) - min(map(len, parts)) <= 1


@pytest.mark.parametrize(("index", "count"), [(0, 0), (3, 3), (-1, 2)])
def test_a_shard_outside_its_count_is_refused(index: int, count: int) -> None:
    with pytest.raises(ValueError, match="shard"):
        Shard(index, count)


def test_shard_count_below_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="llm.shards"):
        compose_config("llm.shards=0")


@pytest.mark.parametrize("rule", sorted(CALL_STEPS))
@pytest.mark.parametrize("count", [3, 40])
def test_joined_shards_are_the_unsharded_table(
    rule: str,
    count: int,
    world: dict[str, pd.DataFrame],
    stages_cfg: StagesConfig,
    prompts: PromptSet,
    tmp_path: Path,
) -> None:
    step = CALL_STEPS[rule]
    tables = [world[WORLD_TABLES[name]] for name in step.inputs]
    caller = ContentCaller(rule)
    whole = step.run(*tables, stages_cfg, prompts, caller, 11)
    assert len(whole) >= 6, f"{rule}: too few rows to tell shards apart"
    assert (whole["parse_status"] != "ok").any(), f"{rule}: the repair path was not exercised"
    shards = [
        step.run(*tables, stages_cfg, prompts, caller, 11, shard=Shard(i, count))
        for i in range(count)
    ]
    assert sum(map(len, shards)) == len(whole)
    pd.testing.assert_frame_equal(join_shards(shards), join_shards([whole]))
    assert _joined_file(shards, tmp_path / "sharded") == _joined_file([whole], tmp_path / "whole")


def test_calls_recorded_in_shards_replay_unsharded_over_http(
    world: dict[str, pd.DataFrame],
    stages_cfg: StagesConfig,
    prompts: PromptSet,
    scripted_server: Any,
    tmp_path: Path,
) -> None:
    """Each shard job records into its own call-store file; replay reads them all, so a run
    with another shard count (here: none) needs no new call."""
    server = scripted_server(lambda body: '{"answer": "YES"}')
    spec = fake_spec("fake-voter", server.base_url)
    store = tmp_path / "calls"
    args = (world["relevance_items"], world["prompts"], world["attributes"], stages_cfg, prompts)
    shards = []
    for i in range(3):
        caller = ModelCaller(
            spec, "stage2_relevance", store, "record", "v1", shard=str(i), settings=llm_settings()
        )
        shards.append(relevance_step(*args, caller, 7, shard=Shard(i, 3)))
    files = sorted(p.name for p in (store / "stage2_relevance" / "fake-voter").glob("*.jsonl"))
    assert files == ["0.jsonl", "1.jsonl", "2.jsonl"]
    recorded = len(server.bodies)
    replay = ModelCaller(spec, "stage2_relevance", store, "replay", "v1", settings=llm_settings())
    whole = relevance_step(*args, replay, 7)
    assert len(server.bodies) == recorded  # nothing asked again
    pd.testing.assert_frame_equal(join_shards(shards), join_shards([whole]))
