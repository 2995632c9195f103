"""The workflow itself: lint-clean, documented rules, reruns exactly what a change touches,
and a full reproduction on the bundled world that ends in a PDF, byte-identical in a second
fresh copy at another path built on another number of cores."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from tests.conftest import (
    REPO_ROOT,
    TWIN_BUILD_ARGS,
    bundled_build_env,
    make_workflow_copy,
    run_snakemake,
)
from tests.paper.honest_labels import pdf_caption_problems, table_problems
from tests.snakemake_lint import ACCEPTED, unexpected_lints
from tests.stats.test_p_values import numbers_disagreements
from tests.test_docs_numbers import docs_texts, typed_results


def test_snakemake_lint_is_clean() -> None:
    """Clean apart from the one accepted lint (tests/snakemake_lint.py says why)."""
    proc = run_snakemake(REPO_ROOT, "--lint", check=False, timeout=300)
    assert unexpected_lints(proc.stdout + proc.stderr) == []


def test_the_lint_filter_rejects_every_other_lint() -> None:
    text = (
        "Lints for rule a (line 1, x.smk):\n"
        f"    * {ACCEPTED}:\n      body\n"
        "Lints for rule b (line 9, x.smk):\n"
        "    * No log directive defined:\n      body\n"
    )
    assert unexpected_lints(text) == ["rule b: No log directive defined"]


def test_every_rule_has_a_description() -> None:
    proc = run_snakemake(REPO_ROOT, "--list-rules", timeout=300)
    rules = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
    missing = [r for r in rules if not re.fullmatch(r"\w+ \(.+\)", r)]
    assert len(rules) > 1, proc.stdout
    assert not missing, f"rules without a docstring: {missing}"


# A test-only Snakefile: one extra model-call step and one extra figure, each added as one
# registry entry, then the real workflow included unchanged.
EXTENDED_SNAKEFILE = """
from analysis.figures.registry import STUDY_FIGURES, FigureSpec
from analysis.figures.mention_effect import mention_effect_figure
from analysis.stages.steps import CALL_STEPS, CallStep, relevance_step

CALL_STEPS["model_extra_votes"] = CallStep(
    run=relevance_step,
    stage="stage2_extra",
    folder="stage2/extra_votes",
    config_stage="stage2",
    role="voters",
    inputs={"relevance_items": "tables/relevance_items.parquet",
            "prompts": "tables/prompts.parquet",
            "attributes": "tables/attributes.parquet"},
    unit="items",
    doc="Test-only extra model-call step.",
)
STUDY_FIGURES["extra"] = FigureSpec(
    draw=mention_effect_figure,
    tables={"votes": "stage2/relevance_votes.parquet"},
    records=("stage3_statistics",),
    doc="Test-only extra figure.",
)

include: "@SNAKEFILE@"
"""


@pytest.mark.slow
def test_one_registry_entry_adds_a_model_call_step_and_a_figure(tmp_path: Path) -> None:
    snakefile = tmp_path / "Snakefile"
    snakefile.write_text(
        EXTENDED_SNAKEFILE.replace("@SNAKEFILE@", str(REPO_ROOT / "workflow" / "Snakefile"))
    )
    args = ("-s", str(snakefile), "--nolock")
    listed = run_snakemake(REPO_ROOT, *args, "--list-rules", timeout=300).stdout
    assert "model_extra_votes (Test-only extra model-call step.)" in listed
    assert "extra_figure (Test-only extra figure.)" in listed
    proc = run_snakemake(
        REPO_ROOT,
        *args,
        "-n",
        "--forceall",
        "results/bundled/parse_failures.parquet",
        "figures/bundled/extra.pdf",
        "--config",
        "overrides=[models=default]",
        timeout=600,
    )
    table = re.search(r"Job stats:\n(.*?)\n\n", proc.stdout + "\n\n", re.S)
    assert table is not None, proc.stdout
    rows = [ln.split() for ln in table.group(1).splitlines()[2:]]
    jobs = {r[0]: int(r[1]) for r in rows if len(r) == 2 and r[0] != "total"}
    # one shard job and one join per (step, model): six registered steps plus the extra one
    assert jobs["model_extra_votes"] == 1 and jobs["model_call_table"] == 7
    assert jobs["extra_figure"] == 1 and jobs["parse_failures"] == 1
    assert "results/bundled/stage2/extra_votes/shards/" in proc.stdout
    assert "input: results/bundled/stage2/relevance_votes.parquet" in proc.stdout


def _tree_digest(root: Path, subdirs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for sub in subdirs:
        base = root / sub
        for path in sorted(p for p in base.rglob("*") if p.is_file()):
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _jobs_in_dry_run(workdir: Path, *args: str) -> set[str]:
    proc = run_snakemake(workdir, "-n", *args, timeout=600)
    table = re.search(r"Job stats:\n(.*?)\n\n", proc.stdout + "\n\n", re.S)
    if table is None:
        return set()
    rows = [ln.split() for ln in table.group(1).splitlines()[2:]]
    return {row[0] for row in rows if row and row[0] != "total"}


@pytest.mark.slow
def test_full_bundled_reproduction_is_complete_and_deterministic(
    bundled_build: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The session's shared build (conftest's bundled_build, --cores 2) and, after it, a second
    # fresh copy at another path with other core and thread counts (TWIN_BUILD_ARGS), which
    # reads the MiniLM vectors the first encoded (conftest's bundled_build_env) and makes
    # everything else again. Their outputs must be byte-identical: across runs, paths, core and
    # thread counts. The shared build is only read here: the reruns and the module edit below
    # happen in the twin, which this test owns.
    workflow_copy = bundled_build
    twin = make_workflow_copy(tmp_path / "twin" / "repo")
    run_snakemake(twin, *TWIN_BUILD_ARGS, env=bundled_build_env(tmp_path_factory))
    pdf = workflow_copy / "paper/build/bundled/paper.pdf"
    assert pdf.is_file() and pdf.read_bytes().startswith(b"%PDF")
    assert not (workflow_copy / "paper/build/paper.pdf").exists()  # per dataset only
    numbers = json.loads((workflow_copy / "results/bundled/numbers.json").read_text())
    # The study's sizes (../shared/STUDY.md): 550 real conversations, 5,949 / 11,919 / 1,101
    # human judgments in stages 1 / 2 / 3.
    assert numbers["data.n_conversations.real"]["value"] == 550
    judgments = [numbers[f"data.n_judgments.stage{i}"]["value"] for i in (1, 2, 3)]
    assert judgments == [5949, 11919, 1101]
    for record in numbers.values():
        assert record["rule"] and record["code"] and record["method"]
        assert all(len(i["sha256"]) == 64 for i in record["inputs"])
    # every p-value agrees with its interval (or the record says why not), issue 15
    assert numbers_disagreements(numbers) == []

    # Does it reproduce? The scorecard's verdicts are records; a simulated build says so in
    # every table and caption and calls no simulated user real; docs type none of its numbers.
    # On simulated data a match is true by construction: the verdicts say so (issue 35).
    assert numbers["repro.kappa_model_model.verdict"]["display"] == "reproduced (simulated data)"
    assert numbers["repro.kappa_model_model.verdict"]["extra"]["verdict"] == "reproduced"
    assert numbers["repro.f1_trained.verdict"]["display"] == "different method (simulated data)"
    scorecard_csv = (workflow_copy / "results/bundled/scorecard.csv").read_text()
    assert scorecard_csv.splitlines()[0].endswith(",margin,caveat")
    assert "by construction" in scorecard_csv.splitlines()[1]
    assert table_problems(workflow_copy / "paper/generated/bundled") == []
    assert pdf_caption_problems(pdf) == []
    assert typed_results(docs_texts(), numbers) == []

    # Byte-identical results, generated paper sources, figures, audit site and PDF.
    compared = ("results", "paper/generated", "figures", "paper/build/bundled/paper.pdf")
    trees = (*compared[:3], "paper/build/bundled/site")
    first, second = (_tree_digest(copy, trees) for copy in (workflow_copy, twin))
    changed_files = sorted(k for k in first.keys() | second.keys() if first.get(k) != second.get(k))
    assert not changed_files, f"not byte-identical across runs and cores: {changed_files[:20]}"
    assert any(k.startswith("paper/build/bundled/site/numbers/") for k in first)
    assert pdf.read_bytes() == (twin / compared[3]).read_bytes()

    # Nothing left to do: a no-op rerun schedules no job.
    assert _jobs_in_dry_run(twin) == set()

    # Runtime-only keys (timeouts, retries, progress, executor; a model's key variable,
    # concurrency and server threads) are no rule params: no rerun.
    runtime = (
        "llm.timeout_s=7 llm.max_retries=1 llm.progress=false llm.executor=batch "
        "models.smollm2-135m.server.n_threads=1 models.smollm2-135m.max_concurrency=3"
    )
    assert _jobs_in_dry_run(twin, "--config", f"overrides={runtime}") == set()

    # Changing one statistics setting reruns the statistics and what reads them, not the data.
    changed = _jobs_in_dry_run(twin, "--config", "overrides=stats.n_boot=301")
    assert "canonical_tables" not in changed
    assert any(job.endswith("statistics") for job in changed), changed
    assert "paper_pdf" in changed

    # Editing one statistics module reruns only the rules that run it (and their dependents).
    module = twin / "analysis/stats/study_stage3.py"
    module.write_text(module.read_text() + "\n# an edit\n")
    edited = _jobs_in_dry_run(twin)
    assert "stage3_statistics" in edited and "stage2_statistics" not in edited, edited
    assert "canonical_tables" not in edited
