"""Each kind of extension (a model, a prompt version, a dataset, a figure, a statistic, a
claim) added to a temporary copy with exactly the files docs/architecture.md and the README
say it touches, then run: one dry run of the paper with all of them, and the new dataset's
canonical tables built (its one cheap job). The documented counts are read from both tables,
so a count that is wrong in either fails here."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

from analysis.paper.claims import load_claims
from tests.conftest import REPO_ROOT, assert_python_succeeds, make_workflow_copy, run_snakemake
from tests.data.tiny_world import tiny_world, write_world

KINDS = ("a model", "a prompt version", "a dataset", "a figure", "a statistic", "a claim")


def documented_counts(path: Path) -> dict[str, int]:
    """``kind -> files`` of the extension table (``| a model | 1 | ... |``) in a markdown file."""
    text = path.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (a [\w ]+?) \| (\d+) \|", text, re.M)
    return {kind: int(n) for kind, n in rows if kind in KINDS}


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _insert_before_last(path: Path, marker: str, text: str) -> None:
    """Insert ``text`` before the last ``marker`` of a file (a registry's closing brace)."""
    body = path.read_text(encoding="utf-8")
    i = body.rindex(marker)
    path.write_text(body[:i] + text + body[i:], encoding="utf-8")


def add_model(repo: Path) -> list[str]:
    (repo / "config/models/extra.yaml").write_text(
        textwrap.dedent(
            """\
            # A test-only endpoint (never called: the test dry-runs).
            extra-model:
              base_url: http://127.0.0.1:9/v1
              api_key_env: null
              params: {temperature: 0.0, max_tokens: 64}
            """
        )
    )
    return ["config/models/extra.yaml"]


#: a prompt version no checkout has (v2 is the README's committed example)
NEW_PROMPTS = "v9"


def add_prompt_version(repo: Path) -> list[str]:
    path = repo / f"config/prompts/{NEW_PROMPTS}.yaml"
    assert not path.exists()
    v1 = (repo / "config/prompts/v1.yaml").read_text(encoding="utf-8")
    new = v1.replace("version: v1 ", f"version: {NEW_PROMPTS} ", 1)
    assert new != v1
    path.write_text(new, encoding="utf-8")
    return [f"config/prompts/{NEW_PROMPTS}.yaml"]


def add_dataset(repo: Path, raw: Path) -> list[str]:
    (repo / "analysis/data/mirror.py").write_text(
        textwrap.dedent(
            '''\
            """A test-only layout: the annotation-tool files one folder down, in export/."""

            from pathlib import Path

            from analysis.data import layout
            from analysis.data.annotation_tool import AdapterResult, read_annotation_tool


            def read_mirror(root: Path, known_models=(), **options) -> AdapterResult:
                return read_annotation_tool(Path(root) / "export", known_models, **options)


            def raw_files(root: Path) -> list[str]:
                return layout.raw_files(Path(root) / "export")
            '''
        )
    )
    _insert_before_last(
        repo / "analysis/data/adapters.py",
        "}\n",
        '    "mirror": DatasetAdapter(\n'
        '        read="analysis.data.mirror:read_mirror",\n'
        '        files="analysis.data.mirror:raw_files",\n'
        '        doc="A test-only layout.",\n'
        "    ),\n",
    )
    (repo / "config/data/mirror.yaml").write_text(
        textwrap.dedent(
            f"""\
            name: mirror
            adapter: mirror
            root: {raw}
            simulated: true
            description: "a test-only copy of a tiny world"
            models: []
            distinct_annotators: []
            distinct_attributes: []
            nouns:
              people: simulated raters
              person: simulated rater
              users: simulated users
              chat_users: simulated chat users
              models: simulated models
            """
        )
    )
    return ["analysis/data/mirror.py", "analysis/data/adapters.py", "config/data/mirror.yaml"]


def add_figure(repo: Path) -> list[str]:
    (repo / "analysis/figures/vote_share.py").write_text(
        textwrap.dedent(
            '''\
            """A test-only figure: the share of YES among the stage-2 votes."""

            from analysis.figures.estimates import Records
            from analysis.figures.style import COLUMN_WIDTH, StudyFigure, new_figure, style_context

            NAME = "vote_share"
            CODE = "analysis.figures.vote_share:vote_share_figure"


            def vote_share_figure(votes, records: Records, *, nouns=None) -> StudyFigure:
                fig = new_figure(NAME, CODE, width=COLUMN_WIDTH, height=1.5, caption="Votes.")
                with style_context():
                    fig.add_subplot().bar(["yes"], [float(votes["vote"].mean())])
                return fig
            '''
        )
    )
    _insert_before_last(
        repo / "analysis/figures/registry.py",
        "}\n",
        '    "vote_share": FigureSpec(\n'
        '        draw="analysis.figures.vote_share:vote_share_figure",\n'
        '        tables={"votes": "stage2/relevance_votes.parquet"},\n'
        '        records=("stage2_statistics",),\n'
        '        doc="Share of YES among the stage-2 votes (a test-only figure).",\n'
        "    ),\n",
    )
    (repo / "workflow/report/figure_vote_share.rst").write_text("Share of YES votes.\n")
    _append(
        repo / "paper/sections/stage2.tex",
        "\n\\StudyFigure[0.5\\linewidth]{vote_share}{Share of YES among the votes.}\n",
    )
    return [
        "analysis/figures/vote_share.py",
        "analysis/figures/registry.py",
        "workflow/report/figure_vote_share.rst",
        "paper/sections/stage2.tex",
    ]


def add_statistic(repo: Path) -> list[str]:
    (repo / "analysis/stats/vote_share.py").write_text(
        textwrap.dedent(
            '''\
            """A test-only statistic: the share of YES among the human stage-2 votes."""

            import numpy as np
            import pandas as pd

            from analysis.provenance import Record
            from analysis.stats.records import SHARE, Statistic, make_records
            from analysis.stats.resampling import Units, plan, weighted_rows
            from analysis.stats.settings import StatsSettings
            from analysis.stats.weighted_bootstrap import evaluate_counts, weighted_ratio


            def vote_share_records(votes: pd.DataFrame, settings: StatsSettings) -> list[Record]:
                human = votes[votes["rater_kind"] == "human"]
                units = Units(
                    n=len(human),
                    users=human["user_id"].astype(str).to_numpy(dtype=object),
                    prompts=human["prompt_id"].astype(str).to_numpy(dtype=object),
                    noun="votes",
                )
                rows = plan(settings, "relevance_items", units, one_way="user")
                yes, ones = human["vote"].astype(float).to_numpy(), np.ones(len(human))
                estimate = weighted_rows(rows, weighted_ratio(yes, ones), units.n, evaluate_counts)
                share = Statistic(
                    key="stage2.extra.human_yes_share",
                    estimate=estimate,
                    fmt=".1%",
                    what="share of YES among the human votes",
                    code="analysis.stats.vote_share:vote_share_records",
                    n=len(human),
                    units=rows.units_with(ones),
                    limits=SHARE,
                )
                return make_records([share], settings)
            '''
        )
    )
    _append(
        repo / "workflow/rules/statistics.smk",
        textwrap.dedent(
            '''

            rule vote_share:
                """Share of YES among the human stage-2 votes (a test-only statistic)."""
                input:
                    votes=results("stage2/relevance_votes.parquet"),
                output:
                    records=record_file("vote_share"),
                    resamples=resample_file("vote_share"),
                log:
                    f"{LOGS}/vote_share.log",
                benchmark:
                    f"{LOGS}/benchmarks/vote_share.tsv"
                resources:
                    mem_mb=500,
                params:
                    cfg=subtree(CFG, "stats", "run.seed", "stages.caveats"),
                    code=code_hash("analysis.stats.vote_share"),
                script:
                    "../scripts/vote_share.py"


            RECORD_FILES.append(record_file("vote_share"))
            '''
        ),
    )
    (repo / "workflow/scripts/vote_share.py").write_text(
        textwrap.dedent(
            '''\
            """Rule vote_share: the test-only statistic's record."""

            import pandas as pd

            from analysis.provenance import write_records
            from analysis.stats.settings import StatsSettings
            from analysis.stats.vote_share import vote_share_records
            from analysis.workflow_io import rule_logging, rule_name

            with rule_logging(snakemake):
                votes = pd.read_parquet(snakemake.input.votes)
                settings = StatsSettings.from_rule_params(snakemake.params.cfg)
                write_records(
                    vote_share_records(votes, settings),
                    snakemake.output.records,
                    rule=rule_name(snakemake),
                    inputs=list(snakemake.input),
                    config=snakemake.params.cfg,
                )
            '''
        )
    )
    _append(
        repo / "paper/sections/stage2.tex",
        "\nPeople say YES to \\rc{stage2.extra.human_yes_share}.\n",
    )
    return [
        "analysis/stats/vote_share.py",
        "workflow/rules/statistics.smk",
        "workflow/scripts/vote_share.py",
        "paper/sections/stage2.tex",
    ]


def add_claim(repo: Path) -> list[str]:
    _append(
        repo / "paper/claims.yaml",
        textwrap.indent(
            textwrap.dedent(
                """
              - id: people_say_yes_sometimes
                statement: People mark some attributes relevant.
                negative: That people mark attributes relevant is not supported on this dataset.
                condition:
                  key: stage2.extra.human_yes_share
                  field: ci_low
                  op: ">"
                  value: 0.0
            """
            ),
            "  ",
        ),
    )
    _append(
        repo / "paper/sections/stage2.tex",
        "\n\\Claim{people_say_yes_sometimes}{People mark some attributes relevant.}\n",
    )
    return ["paper/claims.yaml", "paper/sections/stage2.tex"]


#: the added statistic on the tiny world's votes, as its rule would run it
STATISTIC_CHECK = """
from pathlib import Path

import pandas as pd

from analysis.stats.settings import StatsSettings
from analysis.stats.vote_share import vote_share_records
from analysis.workflow_config import compose_config, subtree

cfg = compose_config(["data=mirror"], config_dir=Path("config").resolve())
settings = StatsSettings.from_rule_params(subtree(cfg, "stats", "run.seed", "stages.caveats"))
votes = pd.read_parquet("results/mirror/tables/relevance_votes.parquet")
(record,) = vote_share_records(votes, settings)
assert record.key == "stage2.extra.human_yes_share"
assert record.ci_low <= record.value <= record.ci_high, record
"""


@pytest.mark.slow
def test_each_extension_touches_the_documented_files_and_builds(tmp_path: Path) -> None:
    readme = documented_counts(REPO_ROOT / "README.md")
    architecture = documented_counts(REPO_ROOT / "docs/architecture.md")
    assert set(readme) == set(architecture) == set(KINDS), (readme, architecture)
    assert readme == architecture

    repo = make_workflow_copy(tmp_path / "repo")
    raw = tmp_path / "mirror"
    write_world(raw / "export", tiny_world())
    touched = {
        "a model": add_model(repo),
        "a prompt version": add_prompt_version(repo),
        "a dataset": add_dataset(repo, raw),
        "a figure": add_figure(repo),
        "a statistic": add_statistic(repo),
        "a claim": add_claim(repo),
    }
    assert {kind: len(files) for kind, files in touched.items()} == readme
    for files in touched.values():
        assert all((repo / f).is_file() for f in files)
    assert "people_say_yes_sometimes" in {c.id for c in load_claims(repo / "paper/claims.yaml")}

    # the model and the prompt version (a variant of the model calls), the figure, the
    # statistic and the claim: planned in one dry run of the whole paper
    overrides = f"overrides=models=extra prompts={NEW_PROMPTS}"
    proc = run_snakemake(repo, "-n", "--config", overrides, timeout=600)
    jobs = set(re.findall(r"^(?:local)?rule (\w+):", proc.stdout, re.M))
    assert {"vote_share_figure", "vote_share", "claims", "attribute_extraction"} <= jobs
    variant = f"models-extra__prompts-{NEW_PROMPTS}"
    shard = f"stage2/votes/shards/extra-model.{NEW_PROMPTS}.0-of-1"
    assert f"results/bundled/variants/{variant}/{shard}" in proc.stdout
    assert f"results/bundled/variants/{variant}/records/vote_share.json" in proc.stdout
    assert f"figures/bundled/variants/{variant}/vote_share.pdf" in proc.stdout

    # the dataset: its canonical tables, built
    run_snakemake(
        repo,
        "--cores",
        "1",
        "results/mirror/records/canonical_tables.json",
        "--config",
        "overrides=data=mirror",
        timeout=600,
    )
    assert (repo / "results/mirror/tables/relevance_votes.parquet").is_file()

    # the statistic, run on the new dataset's votes by the copy's own package
    assert_python_succeeds(STATISTIC_CHECK, env={**os.environ, "PYTHONPATH": str(repo)}, cwd=repo)
