"""``run_stage_calls``: the config-driven entry point the stage rules use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.llm.calls import ChatRequest, ReplayMiss, calls_provenance, run_stage_calls
from analysis.llm.fake_server import FakeOpenAI
from analysis.llm.models import model_from_config
from analysis.workflow_config import compose_config, subtree


def test_stage_calls_follow_the_composed_config(server: FakeOpenAI, tmp_path: Path) -> None:
    store = tmp_path / "calls"
    cfg = compose_config(
        [
            f"llm.store={store}",
            "llm.max_retries=1",
            "llm.backoff_base_s=0.001",
            "llm.progress=false",
        ]
    )
    cfg["models"]["fake-model"] = {"base_url": server.base_url, "params": {"max_tokens": 5}}
    # the whole llm group: rule params (subtree) leave its runtime-only keys out
    params = {**subtree(cfg, "models", "prompts"), "llm": cfg["llm"]}
    reqs = [ChatRequest.from_prompt("hello", custom_id="x")]

    with pytest.raises(ReplayMiss, match="1 calls missing for fake-model/stage2"):
        run_stage_calls(params, "fake-model", reqs, stage="stage2")
    (made,) = run_stage_calls(params, "fake-model", reqs, stage="stage2", mode="record")
    (replayed,) = run_stage_calls(params, "fake-model", reqs, stage="stage2")
    assert made.text == replayed.text == "echo: hello" and replayed.cached

    rec = json.loads((store / "stage2" / "fake-model" / "0.jsonl").read_text())
    assert rec["prompt_version"] == cfg["prompts"]["version"]
    model = model_from_config("fake-model", cfg["models"]["fake-model"])
    assert calls_provenance(model, "stage2", [replayed], store) == {
        str(store / "stage2" / "fake-model"): 1
    }
    with pytest.raises(KeyError, match="not in the models group"):
        run_stage_calls(params, "nope", reqs, stage="stage2")
