"""``recenter trace KEY --lineage``: the chain back to the raw files, each hash checked."""

from __future__ import annotations

import json
from base64 import urlsafe_b64encode
from pathlib import Path

import pytest

from analysis import REPO_ROOT
from analysis.cli import main
from analysis.data import read_dataset
from analysis.paper.lineage import metadata_path
from analysis.provenance import dump_json, sha256_file

KEY = "stage2.final.kappa.human_human"
RAW = "data/raw/demo"
STAGE2_FILES = [
    f"{RAW}/annotations/a_task5.jsonl",
    f"{RAW}/extracted/task5_items.jsonl",
    f"{RAW}/relevance_task5/m.jsonl",
]
OTHER_FILES = [f"{RAW}/annotations/a_task4.jsonl", f"{RAW}/extracted/task4_items.jsonl"]


def _meta(root: Path, path: str, rule: str, inputs: list[str]) -> None:
    target = metadata_path(root, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"rule": rule, "input": inputs, "input_checksums": {}}))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fake build: a stage-2 record, Snakemake metadata and the tables' raw sources."""
    root = tmp_path / "repo"
    for rel in STAGE2_FILES + OTHER_FILES + ["data/calls/s2/m/0.jsonl"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"content of {rel}\n")
    res = "results/demo"
    combined = f"{res}/stage2/relevance_votes.parquet"
    table = f"{res}/tables/relevance_votes.parquet"
    model = f"{res}/model_votes/m.parquet"
    for rel in (combined, table, model):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(rel.encode())
    _meta(root, combined, "relevance_votes", [table, model])
    _meta(root, model, "model_call_table", ["data/calls/s2/m/0.jsonl"])
    dump_json(
        {
            "relevance_votes": [{"path": p, "sha256": sha256_file(root / p)} for p in STAGE2_FILES],
            "attribute_judgments": [
                {"path": p, "sha256": sha256_file(root / p)} for p in OTHER_FILES
            ],
        },
        root / res / "tables" / "sources.json",
    )
    record = {
        "value": 0.43,
        "display": "0.43",
        "rule": "stage2_statistics",
        "code": "analysis.stats.study_stage2:x",
        "inputs": [{"path": combined, "sha256": sha256_file(root / combined)}],
        "calls": {},
    }
    usage = {
        "value": 1,
        "rule": "call_usage",
        "inputs": [
            {
                "path": "data/calls/s2/m/0.jsonl",
                "sha256": sha256_file(root / "data/calls/s2/m/0.jsonl"),
            }
        ],
        "calls": {"data/calls/s2/m/0.jsonl": 1},
    }
    dump_json({KEY: record, "calls.s2.m.calls": usage}, root / res / "numbers.json")
    return root


def _lineage(repo: Path, capsys) -> tuple[int, dict, str]:
    code = main(["trace", KEY, "--dataset", "demo", "--repo", str(repo), "--lineage"])
    out = capsys.readouterr()
    return code, json.loads(out.out)["lineage"], out.err


def test_metadata_path_is_snakemakes_encoding(tmp_path: Path) -> None:
    path = "results/demo/x.parquet"
    expected = urlsafe_b64encode(path.encode()).decode()
    assert metadata_path(tmp_path, path) == tmp_path / ".snakemake" / "metadata" / expected


def test_a_stage2_number_rests_on_the_stage2_exports_only(repo: Path, capsys) -> None:
    code, lin, _ = _lineage(repo, capsys)
    assert code == 0 and lin["current"]
    assert sorted(f["path"] for f in lin["raw_files"]) == sorted(STAGE2_FILES)
    assert [f["path"] for f in lin["call_shards"]] == ["data/calls/s2/m/0.jsonl"]
    assert all(f["matches"] for f in lin["raw_files"] + lin["call_shards"])
    rules = [s["rule"] for s in lin["steps"]]
    assert rules[:2] == ["stage2_statistics", "relevance_votes"]
    assert {"canonical_tables", "model_call_table"} <= set(rules)


def test_a_modified_raw_file_does_not_match(repo: Path, capsys) -> None:
    (repo / STAGE2_FILES[0]).write_text("edited by hand\n")
    code, lin, err = _lineage(repo, capsys)
    assert code == 1 and not lin["current"] and "lineage NOT current" in err
    assert lin["changed"] == [STAGE2_FILES[0]]
    bad = next(f for f in lin["raw_files"] if f["path"] == STAGE2_FILES[0])
    assert bad["matches"] is False and bad["sha256"] != bad["sha256_now"]


def test_adapter_names_the_files_each_table_rests_on() -> None:
    sources = read_dataset("annotation_tool", REPO_ROOT / "data" / "raw" / "bundled").sources
    votes = sources["relevance_votes"]
    assert "extracted/task5_items.jsonl" in votes
    assert any(p.startswith("relevance_task5/") for p in votes)
    assert any(p.endswith("_task5.jsonl") for p in votes)
    # the human-majority labels come from the gt_attributes responses files (task6/), which
    # are stage-2 labels; stage-1 files and stage-3 ratings are not behind a vote
    assert not any("task4" in p or p.endswith("_task6.jsonl") or "judge_task6" in p for p in votes)
    assert not any("task6_items" in p for p in votes)
    assert all(
        p.endswith("_task4.jsonl") or "task4_items" in p for p in sources["attribute_judgments"]
    )
