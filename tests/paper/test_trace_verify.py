"""``recenter trace`` prints the provenance chain; ``recenter verify`` rebuilds and diffs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from analysis import REPO_ROOT
from analysis.cli import main
from analysis.paper.provenance import collect_figures, render_figures_tex, render_provenance_tex
from analysis.paper.verify import data_root_override, diff_numbers, source_files, verify
from analysis.provenance import dump_json, sha256_file
from tests.paper.fake_study import write_fake_study

KEY = "stage2.final.kappa.human_human"


@pytest.fixture
def traced_repo(tmp_path: Path) -> Path:
    """A results folder whose record points at two input files inside the (fake) repository."""
    root = tmp_path / "repo"
    votes = root / "results" / "demo" / "tables" / "relevance_votes.parquet"
    votes.parent.mkdir(parents=True)
    votes.write_bytes(b"votes v1")
    items = votes.with_name("relevance_items.parquet")
    items.write_bytes(b"items v1")
    record = {
        "value": 0.4312,
        "display": "0.43",
        "fmt": ".2f",
        "ci_low": 0.39,
        "ci_high": 0.47,
        "n": 3973,
        "method": "mean pairwise Cohen's kappa, bootstrap over users",
        "rule": "stage2_statistics",
        "code": "analysis.stats.study_stage2:kappa_group_means",
        "inputs": [
            {"path": str(p.relative_to(root)), "sha256": sha256_file(p)} for p in (items, votes)
        ],
        "config": {"stats": {"n_boot": 2000, "ci_level": 0.95}},
        "config_sha256": "c" * 64,
        "calls": {"data/calls/stage2_relevance/smollm2-135m/000.jsonl": 120},
    }
    dump_json({KEY: record}, root / "results" / "demo" / "numbers.json")
    return root


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_trace_prints_the_chain_as_json(traced_repo: Path, capsys) -> None:
    code, out, _ = run_cli(capsys, "trace", KEY, "--dataset", "demo", "--repo", str(traced_repo))
    assert code == 0
    doc = json.loads(out)
    for field in ("key", "value", "ci", "method", "rule", "inputs", "config", "code", "calls"):
        assert field in doc, field
    assert doc["key"] == KEY and doc["value"] == 0.4312 and doc["ci"] == [0.39, 0.47]
    assert doc["rule"] == "stage2_statistics"
    assert doc["code"] == "analysis.stats.study_stage2:kappa_group_means"
    assert doc["inputs"][0]["path"] == "results/demo/tables/relevance_items.parquet"
    assert all(len(i["sha256"]) == 64 for i in doc["inputs"])
    assert doc["config"] == {"stats": {"n_boot": 2000, "ci_level": 0.95}}
    assert doc["calls"] == {"data/calls/stage2_relevance/smollm2-135m/000.jsonl": 120}
    assert doc["site"] == f"paper/build/demo/site/numbers/{KEY}.html#{KEY}"


def test_trace_finds_the_repository_from_the_working_directory(
    traced_repo: Path, capsys, monkeypatch
) -> None:
    """Inside a second checkout, trace reads that checkout's numbers without --repo."""
    (traced_repo / "workflow").mkdir()
    (traced_repo / "workflow" / "Snakefile").write_text("")
    monkeypatch.chdir(traced_repo / "results")
    code, out, err = run_cli(capsys, "trace", KEY, "--dataset", "demo")
    assert code == 0 and json.loads(out)["value"] == 0.4312
    assert f"repository {traced_repo.resolve()}" in err


def test_trace_check_detects_a_changed_and_a_missing_input(traced_repo: Path, capsys) -> None:
    args = ("trace", KEY, "--dataset", "demo", "--repo", str(traced_repo), "--check")
    code, out, err = run_cli(capsys, *args)
    assert code == 0 and json.loads(out)["check"]["current"] is True and "current" in err
    votes = traced_repo / "results" / "demo" / "tables" / "relevance_votes.parquet"
    votes.write_bytes(b"votes v2")
    code, out, err = run_cli(capsys, *args)
    check = json.loads(out)["check"]
    assert code == 1
    assert check == {
        "current": False,
        "changed": ["results/demo/tables/relevance_votes.parquet"],
        "missing": [],
    }
    assert "NOT current" in err
    votes.unlink()
    code, out, _ = run_cli(capsys, *args)
    assert code == 1 and json.loads(out)["check"]["missing"] == [
        "results/demo/tables/relevance_votes.parquet"
    ]


def test_trace_of_an_unknown_key_suggests_near_ones(traced_repo: Path, capsys) -> None:
    code, _, err = run_cli(
        capsys,
        "trace",
        "stage2.final.kappa.human_humna",
        "--dataset",
        "demo",
        "--repo",
        str(traced_repo),
    )
    assert code == 2 and KEY in err


def test_the_short_appendix_says_what_the_pdf_prints_and_where_the_site_is(
    traced_repo: Path,
) -> None:
    numbers = json.loads((traced_repo / "results" / "demo" / "numbers.json").read_text())
    numbers["stage9.unused"] = dict(numbers[KEY], rule="other")
    tex = render_provenance_tex(
        numbers,
        {KEY},
        site="paper/build/demo/site/index.html",
        absent_keys={"stage3.no_better_share", KEY},
    ).replace(r"\allowbreak{}", "")
    assert "prints 1 of the 2 records" in tex
    assert r"\href{site/index.html}" in tex and "paper/build/demo/site/index.html" in tex
    assert "asks for 1 records this dataset cannot support" in tex
    assert r"\hypertarget" not in tex and "longtable" not in tex  # no rows: they are in the site


def test_figure_captions_link_to_the_figures_entry_in_the_site(tmp_path: Path) -> None:
    fig = tmp_path / "figures" / "demo" / "kappa_matrix.pdf"
    fig.parent.mkdir(parents=True)
    fig.write_bytes(b"%PDF-1.4 fake")
    (fig.parent / "kappa_matrix.png").write_bytes(b"png")
    sidecar = {"rule": "figure_kappa_matrix", "inputs": {"results/demo/x.parquet": "d" * 64}}
    fig.with_suffix(".json").write_text(json.dumps(sidecar))
    figures = collect_figures(
        ["figures/demo/kappa_matrix.png", "figures/demo/kappa_matrix.pdf"], tmp_path
    )
    assert [f.stem for f in figures] == ["kappa_matrix"]
    assert figures[0].paper_file == "figures/demo/kappa_matrix.pdf"
    fmap = render_figures_tex(figures, tmp_path, tmp_path / "paper")
    assert r"\csname rc@fig@kappa_matrix\endcsname{../figures/demo/kappa_matrix.pdf}" in fmap
    assert r"\href{site/figures.html\#figure-#2}{(Provenance.)}" in fmap


def test_diff_numbers_lists_changed_new_and_missing() -> None:
    here = {"a": {"value": 1.0, "display": "1.00"}, "b": {"value": 2}, "c": {"value": 3}}
    there = {"a": {"value": 1.5, "display": "1.50"}, "b": {"value": 2}, "d": {"value": 4}}
    diff = diff_numbers(here, there)
    assert not diff.identical
    assert diff.changed == {"a": {"value": (1.0, 1.5), "display": ("1.00", "1.50")}}
    assert diff.added == ["d"] and diff.removed == ["c"]
    assert diff_numbers(here, here).identical


def test_real_data_root_outside_the_repo_is_passed_as_absolute() -> None:
    assert data_root_override("bundled", REPO_ROOT) == []
    (override,) = data_root_override("annotation_tool", REPO_ROOT)
    assert override.startswith("data.root=/") and override.endswith("annotation-tool")


@pytest.mark.slow
def test_verify_rebuilds_in_a_fresh_copy_and_reports_changed_numbers(
    tmp_path: Path, capsys
) -> None:
    repo = tmp_path / "repo"
    write_fake_study(repo, "Snakefile", "1.0")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    dump_json(
        {"k.x": {"value": 1.0, "display": "1.00"}}, repo / "results" / "demo" / "numbers.json"
    )
    assert "results/demo/numbers.json" not in source_files(repo)
    assert "data/value.txt" in source_files(repo)

    diff = verify("demo", repo, cores=1, resolve_data_root=False)
    assert diff.identical
    assert not (repo / ".snakemake").exists()  # the rebuild ran elsewhere

    (repo / "data" / "value.txt").write_text("2.0")
    diff = verify("demo", repo, cores=1, resolve_data_root=False)
    assert diff.changed == {"k.x": {"value": (1.0, 2.0), "display": ("1.00", "2.00")}}
