"""Rule canonical_tables through the real snakemake CLI on the tiny world (in a folder whose
name is not ASCII)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.data.tables import read_tables
from analysis.data.schemas import TABLE_NAMES
from tests.conftest import run_snakemake
from tests.data.tiny_world import EXPECTED_ROWS, tiny_world, write_world


@pytest.mark.slow  # three snakemake runs, each parsing every rule file (~40 s on 2 cores)
def test_rule_writes_tables_report_and_records_and_reruns_on_new_files(
    workflow_copy: Path, tmp_path: Path
) -> None:
    # a data.root with non-ASCII characters, typed as a user types it (Hydra's lexer refused it)
    raw = write_world(tmp_path / "données_brutes", tiny_world())
    overrides = f"overrides=data=annotation_tool data.name=tiny data.root={raw}"
    target = "results/tiny/records/canonical_tables.json"
    run_snakemake(workflow_copy, "--cores", "1", target, "--config", overrides)

    tables = read_tables(workflow_copy / "results/tiny/tables")
    assert {n: len(tables[n]) for n in TABLE_NAMES} == EXPECTED_ROWS
    report = json.loads((workflow_copy / "results/tiny/tables/skipped_records.json").read_text())
    assert report["n_skipped"] == 9
    records = json.loads((workflow_copy / target).read_text())
    assert records["data.n_judgments.total"]["value"] == 25
    assert records["data.n_judgments.total"]["rule"] == "canonical_tables"
    assert len(records["data.n_users"]["inputs"]) == len(tiny_world()) - 3  # data files only

    dry = run_snakemake(workflow_copy, "-n", "--cores", "1", target, "--config", overrides)
    assert "Nothing to be done" in dry.stdout + dry.stderr
    # a new annotator's file is found by pattern and declared as input: the rule reruns
    files = tiny_world()
    write_world(raw, {"annotations/zoe_task5.jsonl": files["annotations/bob_task5.jsonl"]})
    (raw / "annotations/zoe_task5.jsonl").write_text(
        (raw / "annotations/zoe_task5.jsonl").read_text().replace('"bob"', '"zoe"')
    )
    dry = run_snakemake(workflow_copy, "-n", "--cores", "1", target, "--config", overrides)
    assert "canonical_tables" in dry.stdout
