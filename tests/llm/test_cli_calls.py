"""``recenter calls``: the usage table and ``--validate``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

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


def test_calls_of_one_build_leave_out_those_recorded_for_another_world(
    model: ModelSpec, tmp_path: Path, fast: ClientSettings, capsys
) -> None:
    """The store keeps a prompt version's calls recorded on an older world beside the ones the
    current world asks; ``--build`` counts only the keys the build's model-call tables hold
    (its shard tables and other variants' folders aside), and a statistics variant's are the
    default build's (its variant.yaml)."""
    repo = tmp_path / "checkout"
    (repo / "workflow").mkdir(parents=True)
    (repo / "workflow" / "Snakefile").write_text("")
    store = repo / "data" / "calls"

    def record(questions: list[str]) -> list[str]:
        results = run_calls(
            model, [ChatRequest.from_prompt(q) for q in questions], stage="stage2_relevance",
            store=store, mode="record", settings=fast, progress=False, prompt_version="v2",
        )  # fmt: skip
        return [r.key for r in results]

    record(["old world 1", "old world 2", "old world 3"])
    current = record(["new world 1", "new world 2"])
    v2 = repo / "results" / "bundled" / "variants" / "prompts-v2"
    for name, keys in (("votes/m.v2", [*current, ""]), ("votes/shards/m.v2.0-of-1", ["stale"])):
        (v2 / "stage2" / name).parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"call_key": keys, "repair_key": None}).to_parquet(
            v2 / "stage2" / f"{name}.parquet"
        )
    (v2 / "variant.yaml").write_text(
        yaml.safe_dump({"folders": {"calls": str(v2.relative_to(repo))}})
    )
    stats = repo / "results" / "bundled" / "variants" / "stats.n_boot-200"
    stats.mkdir(parents=True)
    (stats / "variant.yaml").write_text(
        yaml.safe_dump({"folders": {"calls": str(v2.relative_to(repo))}})
    )

    def calls(*args: str) -> tuple[int, str]:
        assert main(["calls", "--repo", str(repo), "--format", "json", *args]) == 0
        out, err = capsys.readouterr()
        return sum(row["calls"] for row in json.loads(out)), err

    every, err = calls("--prompt-version", "v2")
    assert every == 5 and "whatever world or config" in err
    for build in ("prompts-v2", "bundled:prompts-v2", str(v2), "stats.n_boot-200"):
        asked, err = calls("--prompt-version", "v2", "--build", build)
        assert asked == 2 and "(2 keys): 2 of the 5 stored" in err, build
    (v2 / "variant.yaml").unlink()  # only its model calls built yet: its own folder
    assert calls("--build", "prompts-v2")[0] == 2
    assert main(["calls", "--repo", str(repo), "--build", "default"]) == 2
    assert "no model-call tables in" in capsys.readouterr().err
    assert main(["calls", "--repo", str(repo), "--build", "other"]) == 2
    assert "0 builds of that name" in capsys.readouterr().err
