"""Print the real-data check of docs/statistics.md: our stage-2 numbers on the authors' exports.

    python -m tests.stats.realdata_summary [path/to/annotation-tool]

Reads the exports with the workflow's adapter (``analysis.data.annotation_tool``), computes
the stage-2 records with the workflow's default statistics config (``data=annotation_tool``)
and prints the comparison rows as Markdown. Only these summary numbers go into the docs; no
data are written anywhere.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from analysis import REPO_ROOT
from analysis.stats.settings import StatsSettings
from analysis.stats.study_stage2 import kappa_matrix_table, stage2_statistics
from analysis.workflow_config import compose_config, subtree

DEFAULT_ROOT = REPO_ROOT.parent / "shared" / "data" / "annotation-tool"


def load_votes(root: Path) -> pd.DataFrame:
    from analysis.data.annotation_tool import read_annotation_tool

    return read_annotation_tool(root).tables["relevance_votes"]


def fmt(rec, pct: bool = False) -> str:
    f = (lambda v: f"{v:.1%}") if pct else (lambda v: f"{v:.3f}")
    return f"{f(rec.value)} [{f(rec.ci_low)}, {f(rec.ci_high)}]"


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else DEFAULT_ROOT
    cfg = subtree(compose_config(["data=annotation_tool"]), "stats", "run.seed")
    result = stage2_statistics(load_votes(root), StatsSettings.from_rule_params(cfg))
    recs = {r.key: r for r in result.records}
    print(f"config: {cfg}\n")
    print("| key | value [95% CI] | n |")
    print("|---|---|---|")
    for key, rec in recs.items():
        if key.startswith(("stage2.final.", "stage2.pilot.")):
            pct = ".relevance_rate." in key
            print(f"| `{key}` | {fmt(rec, pct)} | {rec.n} |")
    table = kappa_matrix_table(result)
    pilot = table[table["round"] == "pilot"]
    order = pilot.drop_duplicates("rater_a").sort_values("order_a")["rater_a"].tolist()
    matrix = pilot.pivot(index="rater_a", columns="rater_b", values="kappa").loc[order, order]
    print("\npilot pairwise Cohen's kappa:\n")
    print(matrix.round(2).to_markdown())
    print("\nshared items per pair:\n")
    n = pilot.pivot(index="rater_a", columns="rater_b", values="n_items").loc[order, order]
    print(n.to_markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
