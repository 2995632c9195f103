"""A small workflow around the real ``workflow/rules/paper.smk``, fed with handmade records.

Until the upstream rules exist, the paper rules are exercised on their own: a temporary
folder gets the paper sources, a small call store, a figure with its sidecar and the fake
record files; a Snakefile there defines the globals the real Snakefile
defines and includes the real ``paper.smk``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from analysis import REPO_ROOT
from analysis.resamples import resamples_path, write_resamples
from tests.paper.fake_records import write_fake_records

SNAKEFILE = '''
from pathlib import Path

from analysis.paths import BuildPaths
from analysis.resamples import resamples_path
from analysis.workflow_config import code_hash, compose_config, subtree

# The folder is its own repository root (no git history: the claims say so).
REPO = Path(workflow.basedir)

CFG = compose_config(config.get("overrides", {overrides!r}))
CFG["data"]["name"] = "{dataset}"
CFG["data"]["simulated"] = {simulated}
CFG["llm"]["store"] = "data/calls"
DATASET = CFG["data"]["name"]
PATHS = BuildPaths(DATASET)
RESULTS = PATHS.results
FIGURES = PATHS.figures
LOGS = CALL_LOGS = PATHS.logs
PAPER_GENERATED = PATHS.paper_generated
PAPER_BUILD = PATHS.paper_build
RECORD_FILES = {records!r}
FIGURE_FILES = {figures!r}
# (stage, model, path) of the model-call tables: the calls this build asks (rule call_usage)
MODEL_CALL_OUTPUTS = {call_tables!r}


def results(path):
    return PATHS.result(path)


def record_file(rule):
    return PATHS.record_file(rule)


def resample_file(rule):
    return resamples_path(record_file(rule))


def repo_file(path):
    return path


def owns(tier):
    return True


include: "{paper_smk}"


rule all:
    """The paper."""
    input:
        f"{{PAPER_BUILD}}/paper.pdf",
    default_target: True
'''


def _call_store(store: Path, table: Path) -> None:
    """Three stored calls, and the model-call table of the build that asks them."""
    shard = store / "stage2_relevance" / "smollm2-135m" / "000.jsonl"
    shard.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {"key": f"k{i}", "usage": {"prompt_tokens": 100, "completion_tokens": 5}, "cost_usd": 0.0}
        for i in range(3)
    ]
    shard.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    table.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"call_key": [line["key"] for line in lines]}).to_parquet(table)


def _data_summary(path: Path) -> None:
    """The adapter's data summary, of which the data section prints the raters found."""
    raters = {
        "attribute_judgments": {"human": {"h1": 10, "h2": 10}},
        "relevance_votes": {"human": {"h1": 5}, "model": {"sim-llm-a": 5, "smollm2-135m": 5}},
        "preference_ratings": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"n_skipped": 0, "raters": raters}), encoding="utf-8")


def _figure(path: Path) -> None:
    """A one-page vector PDF and its sidecar, as the figure rules will write them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 1.5))
    ax.plot([0, 1], [0, 1])
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"CreationDate": None})
    plt.close(fig)
    sidecar = {
        "rule": "figure_pipeline",
        "code": "analysis.figures.pipeline:draw",
        "inputs": [{"path": "results/test/numbers.json", "sha256": "ab" * 32}],
        "keys": ["stage2.final.kappa.model_model"],
    }
    path.with_suffix(".json").write_text(json.dumps(sidecar), encoding="utf-8")


def make_paper_workdir(
    dest: Path, kind: str = "full", overrides: list[str] | None = None, simulated: bool = True
) -> Path:
    """Build the temporary workflow folder; returns it (run snakemake inside)."""
    dest.mkdir(parents=True, exist_ok=True)
    paper = dest / "paper"
    shutil.copytree(REPO_ROOT / "paper" / "sections", paper / "sections")
    for name in ("main.tex", "refs.bib", "claims.yaml"):
        shutil.copy2(REPO_ROOT / "paper" / name, paper / name)
    shutil.copytree(REPO_ROOT / "config" / "study", dest / "config" / "study")
    results = dest / "results" / "test"
    written = write_fake_records(results / "records", kind)
    for path in written:  # handmade records keep no bootstrap resamples
        write_resamples({}, resamples_path(path))
    records = [str(p.relative_to(dest)) for p in written]
    call_table = results / "stage2" / "votes" / "smollm2-135m.v1.parquet"
    _call_store(dest / "data" / "calls", call_table)
    _data_summary(results / "tables" / "skipped_records.json")
    figure = dest / "figures" / "test" / "pipeline.pdf"
    _figure(figure)
    (dest / "Snakefile").write_text(
        SNAKEFILE.format(
            overrides=list(overrides or []),
            dataset="test",
            simulated=simulated,
            records=records,
            figures=[str(figure.relative_to(dest))],
            call_tables=[("stage2_relevance", "smollm2-135m", str(call_table.relative_to(dest)))],
            paper_smk=str(REPO_ROOT / "workflow" / "rules" / "paper.smk"),
        ),
        encoding="utf-8",
    )
    return dest
