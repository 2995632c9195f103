"""Per-rule wall time, CPU time and peak memory of the last build, from Snakemake's own
``benchmark:`` files (``logs/<dataset>/benchmarks/*.tsv``, one per job), sorted by time.

    python benchmarks/rule_table.py [--dataset bundled]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent


def rule_table(folder: Path) -> pd.DataFrame:
    """One row per rule: jobs, summed wall and CPU seconds, the largest peak RSS (MB)."""
    rows = []
    for path in sorted(folder.glob("*.tsv")):
        bench = pd.read_csv(path, sep="\t")
        rows.append(
            {
                "rule": path.name.split(".")[0],
                "wall_s": float(bench["s"].mean()),
                "cpu_s": float(bench["cpu_time"].mean()),
                "max_rss_mb": float(bench["max_rss"].max()),
            }
        )
    if not rows:
        raise SystemExit(f"no benchmark files in {folder}: run the workflow first")
    jobs = pd.DataFrame(rows)
    table = jobs.groupby("rule").agg(
        jobs=("rule", "size"),
        wall_s=("wall_s", "sum"),
        cpu_s=("cpu_s", "sum"),
        max_rss_mb=("max_rss_mb", "max"),
    )
    return table.sort_values("wall_s", ascending=False).round(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="bundled")
    args = parser.parse_args()
    table = rule_table(REPO / "logs" / args.dataset / "benchmarks")
    print(table.to_string())
    print(f"\n{int(table['jobs'].sum())} jobs; summed wall {table['wall_s'].sum():.0f} s")


if __name__ == "__main__":
    main()
