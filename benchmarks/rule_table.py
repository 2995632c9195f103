"""Per-rule wall time, CPU time and peak memory of the last build, from Snakemake's own
``benchmark:`` files (``logs/<dataset>/benchmarks/*.tsv``, one per job; a variant's in each of
its tiers' log folders), sorted by time.

    python benchmarks/rule_table.py [--dataset bundled] [--variant NAME]

The table is :func:`analysis.paper.report_tables.rule_table`, the same one the workflow puts in
its HTML report (rule ``rule_runtimes``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from analysis.paper.report_tables import rule_table

__all__ = ["rule_table"]

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="bundled")
    parser.add_argument("--variant", help="a variant's build (its variant.yaml names its logs)")
    args = parser.parse_args()
    folders = [REPO / "logs" / args.dataset / "benchmarks"]
    if args.variant:
        described = REPO / "results" / args.dataset / "variants" / args.variant / "variant.yaml"
        logs = yaml.safe_load(described.read_text(encoding="utf-8"))["logs"]
        folders = sorted({REPO / folder / "benchmarks" for folder in logs.values()})
    try:
        table = rule_table(*folders)
    except FileNotFoundError as err:
        raise SystemExit(str(err)) from err
    print(table.to_string())
    print(f"\n{int(table['jobs'].sum())} jobs; summed wall {table['wall_s'].sum():.0f} s")


if __name__ == "__main__":
    main()
