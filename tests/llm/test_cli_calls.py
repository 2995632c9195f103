"""``recenter calls``: the usage table and ``--validate``."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.cli import main
from analysis.llm.calls import ChatRequest, run_calls
from analysis.llm.models import ModelSpec
from analysis.settings import ClientSettings


def test_calls_prints_usage_and_validates(
    model: ModelSpec, store: Path, fast: ClientSettings, capsys
) -> None:
    reqs = [ChatRequest.from_prompt(f"q{i}") for i in range(3)]
    run_calls(
        model, reqs, stage="stage2", store=store, mode="record", settings=fast, progress=False
    )
    assert main(["calls", "--store", str(store), "--validate"]) == 0
    out, err = capsys.readouterr()
    assert "stage2" in out and "fake-model" in out and "cost_usd" in out
    assert "3 records, 3 keys: valid" in err

    assert main(["calls", "--store", str(store), "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["calls"] == 3 and row["prompt_tokens"] == 3

    shard = store / "stage2" / "fake-model" / "0.jsonl"
    lines = shard.read_text().splitlines(keepends=True)
    shard.write_text(lines[0] + "garbage\n" + "".join(lines[1:]))
    assert main(["calls", "--store", str(store), "--validate"]) == 1
    err = capsys.readouterr().err
    assert "0.jsonl:2: not valid JSON" in err and "INVALID" in err


def test_calls_on_an_empty_store(tmp_path: Path, capsys) -> None:
    assert main(["calls", "--store", str(tmp_path / "none")]) == 0
    assert "no calls stored" in capsys.readouterr().out


def test_calls_reads_the_checkout_it_runs_in_not_the_installed_one(
    model: ModelSpec, tmp_path: Path, fast: ClientSettings, capsys, monkeypatch
) -> None:
    """From a second checkout, the default store is that checkout's data/calls (said on stderr)."""
    copy = tmp_path / "second-checkout"
    (copy / "workflow").mkdir(parents=True)
    (copy / "workflow" / "Snakefile").write_text("")
    reqs = [ChatRequest.from_prompt(f"other {i}") for i in range(2)]
    run_calls(
        model,
        reqs,
        stage="stage9",
        store=copy / "data" / "calls",
        mode="record",
        settings=fast,
        progress=False,
    )
    monkeypatch.chdir(copy / "workflow")
    assert main(["calls", "--validate", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert f"repository {copy.resolve()}" in err and "2 records, 2 keys: valid" in err
    assert [row["stage"] for row in json.loads(out)] == ["stage9"]
    monkeypatch.chdir(tmp_path)
    assert main(["calls", "--repo", str(copy), "--format", "json"]) == 0
    assert [row["stage"] for row in json.loads(capsys.readouterr().out)] == ["stage9"]


def test_calls_outside_any_checkout_asks_for_repo(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["calls"]) == 2
    assert "no workflow/Snakefile at or above" in capsys.readouterr().err
