"""``caller_from_config``: a model caller from the run's typed ``llm`` settings."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from analysis.llm.calls import ChatRequest, ReplayMiss, calls_provenance
from analysis.llm.models import model_from_config
from analysis.settings import LlmMode
from analysis.stages.requests import caller_from_config
from tests.fake_server import FakeOpenAI
from tests.settings_defaults import default_settings


def test_a_caller_follows_the_typed_llm_settings(tmp_path: Path) -> None:
    store = tmp_path / "calls"
    cfg = default_settings()
    llm = dataclasses.replace(
        cfg.llm, store=str(store), max_retries=1, backoff_base_s=0.001, progress=False
    )
    reqs = [ChatRequest.from_prompt("hello", custom_id="x")]
    with FakeOpenAI() as server:
        model = model_from_config(
            "fake-model", {"base_url": server.base_url, "params": {"max_tokens": 5}}
        )
        replay = caller_from_config(model, llm, stage="stage2", prompt_version=cfg.prompts.version)
        assert replay.settings is llm and replay.executor == "direct" and replay.mode == "replay"
        with pytest.raises(ReplayMiss, match="1 calls missing for fake-model/stage2"):
            replay(reqs)
        record = caller_from_config(
            model,
            dataclasses.replace(llm, mode=LlmMode.record),
            stage="stage2",
            prompt_version=cfg.prompts.version,
        )
        (made,) = record(reqs)
    (replayed,) = replay(reqs)  # the server is gone: replay needs none
    assert made.text == replayed.text == "echo: hello" and replayed.cached

    rec = json.loads((store / "stage2" / "fake-model" / "0.jsonl").read_text())
    assert rec["prompt_version"] == cfg.prompts.version
    assert calls_provenance(model, "stage2", [replayed], store) == {
        str(store / "stage2" / "fake-model"): 1
    }


def test_a_relative_store_is_relative_to_the_repository() -> None:
    from analysis import REPO_ROOT

    cfg = default_settings()
    model = model_from_config("fake-model", {"base_url": "http://127.0.0.1:9/v1"})
    caller = caller_from_config(model, cfg.llm, stage="s", prompt_version="v1")
    assert caller.store == REPO_ROOT / cfg.llm.store
