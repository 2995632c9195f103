"""Smoke tests: every benchmark script runs, with its smallest parameters, and publishes the
fields its README section reads.

Each script is run as a user runs it (``python benchmarks/<script>.py``, a process of its own)
with ``BENCH_OUTPUT_DIR`` pointing at a temporary folder, so results.json, the README and the
coverage worlds' lines are written there and the published figures are never touched. The
script renders its README section from what it stores (``readme_section``); a field it no
longer writes, or reads under another name, fails the run. No timing is asserted: speed is
measured by the benchmarks themselves (``benchmarks/README.md``), never in tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import REPO_ROOT

BENCH = REPO_ROOT / "benchmarks"


def head_commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def run_bench(
    script: str, *args: str, out: Path, repo: Path = REPO_ROOT, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """``python benchmarks/<script> args`` in ``repo``, writing into ``out``; it must exit 0."""
    env = dict(
        os.environ,
        BENCH_OUTPUT_DIR=str(out),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        OMP_WAIT_POLICY="PASSIVE",
    )
    proc = subprocess.run(
        [sys.executable, str(repo / "benchmarks" / script), *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def published(out: Path, key: str) -> tuple[dict, str]:
    """results.json[key] and the README section of ``name`` written into ``out``."""
    payload = json.loads((out / "results.json").read_text())[key]
    readme = (out / "README.md").read_text()
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    assert start in readme and end in readme, readme
    return payload, readme.split(start, 1)[1].split(end, 1)[0]


def assert_commit(payload: dict, section: str) -> None:
    """The payload records the commit measured, and the README section names it."""
    assert payload["git"]["commit"] == head_commit()
    assert payload["git"]["commit"][:7] in section


def test_bench_bootstrap(tmp_path: Path) -> None:
    run_bench(
        "bench_bootstrap.py",
        "--n-boot",
        "40",
        "--loop-resamples",
        "2",
        "--repeats",
        "1",
        out=tmp_path,
    )
    b, section = published(tmp_path, "bootstrap")
    assert b["n_boot"] == 40 and b["loop_resamples_timed"] == 2
    for field in ("fast_seconds", "loop_seconds_timed", "loop_seconds_extrapolated", "speedup"):
        assert b[field] > 0, field
    assert b["max_abs_difference"] < 1e-9
    assert set(b["group_means_95ci"]) == {"human_human", "human_model", "model_model"}
    for m in b["group_means_95ci"].values():
        assert m["ci_low"] <= m["estimate"] <= m["ci_high"]
    assert "| **speedup** |" in section and "extrapolated" in section
    # the declared two-way design's row (users x prompts crossed, annotators deleted)
    assert b["two_way_seconds"] > 0 and b["two_way_vs_one_way"] > 0 and b["two_way_speedup"] > 0
    assert set(b["two_way_group_means_95ci"]) == {"human_human", "human_model", "model_model"}
    for m in b["two_way_group_means_95ci"].values():
        assert m["ci_low"] <= m["estimate"] <= m["ci_high"]
    assert "| **two-way / one-way** |" in section
    assert_commit(b, section)


def test_bench_callstore(tmp_path: Path) -> None:
    run_bench(
        "bench_callstore.py",
        "--n-store",
        "16",
        "--latency-ms",
        "5",
        "--concurrency",
        "1",
        "2",
        "--rounds",
        "2",
        "--min-calls",
        "2",
        "--shards",
        "2",
        "--split-concurrency",
        "2",
        out=tmp_path,
    )
    c, section = published(tmp_path, "callstore")
    assert c["replay"]["n_calls"] == 16
    assert [r["concurrency"] for r in c["record"]] == [1, 2]
    rows = [*c["record"], c["record_sharded"], c["client_floor"]]
    for row in rows:
        assert row["calls"] > 0 and row["calls_per_second"] > 0 and row["fraction_of_bound"] > 0
    assert c["record_sharded"]["processes"] == 2
    assert "**Replay**" in section and "| concurrency | processes |" in section
    assert_commit(c, section)


def test_bench_coverage(tmp_path: Path) -> None:
    committed = (BENCH / "coverage_worlds.jsonl").read_bytes()
    run_bench("bench_coverage.py", "--worlds", "1", "--n-boot", "20", out=tmp_path)
    lines = (tmp_path / "coverage_worlds.jsonl").read_text().splitlines()
    assert [json.loads(x)["seed"] for x in lines] == [10_000]
    cov, section = published(tmp_path, "coverage")
    assert cov["worlds"] == 1 and cov["n_boot"] == [20]
    assert cov["world_commits"] == {head_commit(): 1}
    assert "stage2.final.kappa.human_human" in cov["estimands"]
    # the tie rule's split of the no-better share (issue 35) is in the study, in its family
    for key in ("stage3.worse_share", "stage3.equal_share"):
        assert cov["estimands"][key]["family"] == "stage3_shares", key
    # and the shares of the attainable kappa, with their differences
    for key in (
        "stage2.final.kappa_max.human_model",
        "stage2.final.kappa_share_of_max.model_model",
        "stage2.final.kappa_share_of_max_diff.model_model_minus_human_model",
    ):
        assert cov["estimands"][key]["family"] == "stage2_kappa", key
    for key in ("human", "sim-llm-a"):  # the mention effect within generators
        row = cov["estimands"][f"stage3.mention_delta_within_generator.{key}"]
        assert row["family"] == "stage3_mentions", key
    for row in cov["estimands"].values():
        for config in ("design", "user_only"):  # both intervals of every estimand
            assert row[config]["worlds"] == 1 and 0 <= row[config]["coverage"] <= 1
    assert {"design", "user_only"} <= set(cov["pooled"])
    assert "| `stage2.final.kappa.human_human` |" in section
    assert_commit(cov, section)
    assert (BENCH / "coverage_worlds.jsonl").read_bytes() == committed  # written elsewhere


def test_bench_suite_records_a_run_and_reads_it_against_the_target(tmp_path: Path) -> None:
    """A small test command stands in for ``make test``: the run's line has pytest's counts
    and time and the CPU of the processes it ran; a failing command is recorded as failed,
    exits with its status and is never read against the target."""
    committed = (BENCH / "suite_runs.jsonl").read_bytes()
    small = f"{sys.executable} -m pytest -q -p no:cacheprovider tests/test_repo_root.py"
    run_bench("bench_suite.py", "--command", small, "--note", "smoke", out=tmp_path)
    (run,) = [json.loads(x) for x in (tmp_path / "suite_runs.jsonl").read_text().splitlines()]
    assert run["returncode"] == 0 and run["note"] == "smoke"
    assert run["pytest"]["counts"]["passed"] >= 1 and run["pytest"]["seconds"] > 0
    assert run["cpu_seconds"] > 0 and run["wall_seconds"] > 0
    assert run["real_data"] == (REPO_ROOT.parent / "shared/data/annotation-tool").is_dir()
    suite, section = published(tmp_path, "suite")
    assert suite["runs"] == 1 and suite["target_minutes"] == 7.0
    (latest,) = suite["latest"].values()
    assert latest["verdict"].startswith(("met", "missed", "not the target's machine"))
    assert_commit(suite, section)
    assert "tests/test_repo_root.py" in section and "smoke" in section

    failing = f"{sys.executable} -m pytest -q tests/no_such_test_file.py"
    env = dict(os.environ, BENCH_OUTPUT_DIR=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_suite.py"), "--command", failing],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    runs = [json.loads(x) for x in (tmp_path / "suite_runs.jsonl").read_text().splitlines()]
    assert len(runs) == 2 and runs[1]["returncode"] == proc.returncode
    suite, section = published(tmp_path, "suite")
    assert suite["latest"] == {next(iter(suite["latest"])): latest}  # the passed run stays
    assert f"failed (exit status {proc.returncode})" in section
    assert (BENCH / "suite_runs.jsonl").read_bytes() == committed  # written elsewhere


def test_bench_fresh_records_each_step_and_stops_at_a_failure(tmp_path: Path) -> None:
    """Small commands stand in for the README's steps: each step's line has its wall time,
    CPU and what its output says (Snakemake's job count, pytest's counts); a failing step
    ends the run with its exit status; steps given on the command line are never read
    against the target, and the committed lines are left alone."""
    committed = (BENCH / "fresh_runs.jsonl").read_bytes()
    jobs = f"{sys.executable} -c \"print('57 of 57 steps (100%) done')\""
    tests = f"{sys.executable} -m pytest -q -p no:cacheprovider tests/test_repo_root.py"
    run_bench("bench_fresh.py", "--step", f"paper={jobs}", "--step", f"test={tests}", out=tmp_path)
    (run,) = [json.loads(x) for x in (tmp_path / "fresh_runs.jsonl").read_text().splitlines()]
    paper, test = run["steps"]
    assert run["returncode"] == 0 and paper["jobs"] == 57 and "pdf_pages" in paper
    assert test["pytest"]["counts"]["passed"] >= 1 and test["cpu_seconds"] > 0
    assert run["conditions"]["empty_pip_cache"] and not run["conditions"]["purged_system_packages"]
    fresh, section = published(tmp_path, "fresh")
    assert fresh["runs"] == 1 and fresh["paper_target_minutes"] == 6.0
    verdict = fresh["latest"]["verdict"]
    assert verdict == "make paper not run in full" or verdict.startswith("not the target's machine")
    assert_commit(fresh, section)
    assert "57 jobs" in section and "tests/test_repo_root.py" in section

    env = dict(os.environ, BENCH_OUTPUT_DIR=str(tmp_path))
    failing = [f"paper={sys.executable} -c 'raise SystemExit(3)'", f"test={tests}"]
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_fresh.py"), *(f"--step={s}" for s in failing)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    runs = [json.loads(x) for x in (tmp_path / "fresh_runs.jsonl").read_text().splitlines()]
    assert len(runs) == 2 and runs[1]["returncode"] == 3 and len(runs[1]["steps"]) == 1
    fresh, section = published(tmp_path, "fresh")
    assert fresh["latest"]["git"] == runs[0]["git"]  # the passed run stays the latest
    assert "**failed** (exit status 3)" in section and "failed (exit status 3)" in section
    assert (BENCH / "fresh_runs.jsonl").read_bytes() == committed  # written elsewhere


def test_bench_people_parts(tmp_path: Path) -> None:
    """One generated world (its truth comes from the session's cached large draw): every
    stage-2 statistic that deletes annotators has its parts, both intervals and its row, and
    the annotators' jackknife on one relabelled copy of the votes."""
    run_bench(
        "bench_people_parts.py",
        "--worlds",
        "1",
        "--n-boot",
        "20",
        "--sets",
        "generated",
        "--relabellings",
        "1",
        out=tmp_path,
    )
    (line,) = [
        json.loads(x) for x in (tmp_path / "people_parts_worlds.jsonl").read_text().splitlines()
    ]
    assert line["set"] == "generated" and line["seed"] == 10_000
    stats = line["statistics"]
    for key in (
        "stage2.final.ceiling.kappa_human_vs_rest",
        "stage2.final.vs_rest.gap_f1.sim-llm-a",
        "stage2.final.kappa.human_human",
    ):
        assert {"annotators", "user x annotator cells", "users"} <= set(stats[key]["parts"]), key
        assert None not in stats[key]["design"] and None not in stats[key]["rows_only"], key
    # the rows' interval leaves the people out, so it is narrower where people add variance
    ceiling = stats["stage2.final.ceiling.kappa_human_vs_rest"]
    assert (
        ceiling["rows_only"][1] - ceiling["rows_only"][0]
        < ceiling["design"][1] - ceiling["design"][0]
    )
    # the relabelled copy keeps the design, so its jackknife is defined, and it differs
    (null,) = ceiling["annotators_null"]
    assert null > 0 and null != ceiling["parts"]["annotators"]
    res, section = published(tmp_path, "people_parts")
    assert res["worlds"] == 1 and res["n_boot"] == 20 and set(res["sets"]) == {"generated"}
    assert res["sets"]["generated"]["stage2.final.ceiling.kappa_human_vs_rest"]["null_worlds"] == 1
    assert "| `stage2.final.vs_rest.gap_f1.sim-llm-a` |" in section
    assert_commit(res, section)


def test_bench_scale_tiny_run_and_slurm_dry_run(tmp_path: Path) -> None:
    # The published rows (K = 10, 100, the SLURM run) are kept (--local-from-results), so the
    # section, growth and extrapolation code read the committed payload's fields; K = 1 runs
    # again, only canonical_tables (--rules), and the SLURM run of K = 1 is planned, not run.
    committed = json.loads((BENCH / "results.json").read_text())["scale"]
    (tmp_path / "results.json").write_text(json.dumps({"scale": committed}))
    proc = run_bench(
        "bench_scale.py",
        "--local-from-results",
        "--scales",
        "1",
        "10",
        "100",
        "--rerun",
        "1",
        "--rules",
        "canonical_tables",
        "--slurm",
        "1",
        "--slurm-dry-run",
        out=tmp_path,
    )
    scale, section = published(tmp_path, "scale")
    row = scale["runs"]["1"]
    assert row["only_rules"] == ["canonical_tables"]
    assert row["judgments"] > 0 and row["total_wall_s"] > 0
    assert {"canonical_tables", "resolved_config"} <= set(row["rules"])
    assert row["git"]["commit"] == head_commit()
    assert scale["growth"]["between"] == [10, 100]
    assert "| 1 (only canonical_tables: not the scale's row) |" in section
    assert f"K = 1 {head_commit()[:7]}" in section
    assert "Through a one-node SLURM cluster" in section  # the committed SLURM row
    plan = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith('{"k"')))
    assert plan["dry_run"] and plan["jobs"]["canonical_tables"] == 1


def test_run_workflow_suite_on_one_target(tmp_path: Path) -> None:
    # `make bench`'s workflow suite on its cheapest target (the resolved config: one job), one
    # repeat of each measurement; the summary reads every suite's published headline fields.
    (tmp_path / "results.json").write_text((BENCH / "results.json").read_text())
    proc = run_bench(
        "run.py",
        "--suites",
        "workflow",
        "--target",
        "results/bundled/config.yaml",
        "--repeats",
        "1",
        out=tmp_path,
    )
    w, section = published(tmp_path, "workflow")
    assert w["cold"]["jobs"] == 1 and len(w["noop_rerun"]["seconds"]) == 1
    assert w["stats_rerun"]["rules_rerun"] == ["resolved_config"]
    assert w["stats_rerun"]["only_dependents"], w["stats_rerun"]
    assert w["peak_memory"]["process_tree_sampled_mb"] > 0
    assert "**Not the default reproduction:**" in section
    assert_commit(w, section)
    summary = proc.stdout.split("| suite | headline |", 1)[1]
    for suite in ("workflow", "bootstrap", "callstore"):
        assert f"| {suite} |" in summary


@pytest.mark.slow
def test_rule_table_of_the_bundled_build(bundled_build: Path) -> None:
    # Run in the built copy (its own script reads its own logs/), read-only.
    proc = subprocess.run(
        [sys.executable, str(bundled_build / "benchmarks" / "rule_table.py")],
        cwd=bundled_build,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0].split()
    assert header == ["jobs", "wall_s", "cpu_s", "max_rss_mb"]
    assert "paper_pdf" in proc.stdout and "canonical_tables" in proc.stdout
    assert " jobs; summed wall " in proc.stdout
