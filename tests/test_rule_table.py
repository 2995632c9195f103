"""benchmarks/rule_table.py: per-rule totals from Snakemake's benchmark files, sorted by time."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from analysis import REPO_ROOT

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _load():
    spec = importlib.util.spec_from_file_location(
        "rule_table", REPO_ROOT / "benchmarks/rule_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bench(path: Path, seconds: float, rss: float, cpu: float) -> None:
    path.write_text(HEADER + f"{seconds}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")


def test_rule_table_sums_jobs_per_rule_and_sorts_by_wall_time(tmp_path: Path) -> None:
    _bench(tmp_path / "numbers.tsv", 1.0, 100.0, 0.9)
    _bench(tmp_path / "model_responses.sim-a.0.tsv", 3.0, 300.0, 2.0)
    _bench(tmp_path / "model_responses.sim-b.0.tsv", 4.0, 250.0, 3.0)
    table = _load().rule_table(tmp_path)
    assert list(table.index) == ["model_responses", "numbers"]
    row = table.loc["model_responses"]
    assert (row["jobs"], row["wall_s"], row["cpu_s"], row["max_rss_mb"]) == (2, 7.0, 5.0, 300.0)


def test_rule_table_reads_benchmark_files_in_subfolders(tmp_path: Path) -> None:
    # a wildcard with a slash (model_call_table's {calls}: stage1/attributes) makes a subfolder
    (tmp_path / "model_call_table.stage1").mkdir()
    _bench(tmp_path / "model_call_table.stage1" / "attributes.sim-a.tsv", 2.0, 120.0, 1.0)
    _bench(tmp_path / "model_call_table.stage2.votes.sim-a.tsv", 1.0, 100.0, 0.5)
    table = _load().rule_table(tmp_path)
    assert table.loc["model_call_table", "jobs"] == 2
    assert table.loc["model_call_table", "wall_s"] == 3.0
