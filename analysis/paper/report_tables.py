"""The tables of the Snakemake HTML report (``snakemake --report``): the scorecard and the
per-rule runtimes, each a small self-contained HTML page.

Why HTML: the report shows an HTML item inline, in its own frame, while a CSV item is only a
download; so each table is rendered once, without scripts or remote styles (the report is
opened offline). The scorecard page is a function of ``scorecard.csv`` alone (byte-stable);
the runtime table is read from Snakemake's ``benchmark:`` files, so it describes one run and
lives under ``logs/``, never beside the results.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from analysis.paper.scorecard import CAVEAT_COLUMN

__all__ = ["html_table", "rule_table", "runtimes_html", "scorecard_html"]

STYLE = (
    "body{font-family:sans-serif;font-size:13px;margin:12px}"
    "table{border-collapse:collapse}"
    "th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}"
    "th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}"
)


def html_table(table: pd.DataFrame, title: str, note: str = "") -> str:
    """``table`` as a standalone HTML page (numbers right-aligned, missing cells empty)."""
    numeric = {c for c in table.columns if pd.api.types.is_numeric_dtype(table[c])}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    rows = []
    for record in table.itertuples(index=False):
        cells = []
        for column, value in zip(table.columns, record, strict=True):
            text = "" if pd.isna(value) else html.escape(str(value))
            attr = ' class="num"' if column in numeric else ""
            cells.append(f"<td{attr}>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note_html = f"<p>{html.escape(note)}</p>" if note else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{note_html}"
        f'<table id="table"><thead><tr>{head}</tr></thead><tbody>'
        + "\n".join(rows)
        + "</tbody></table></body></html>\n"
    )


def scorecard_html(csv: Path | str, dataset: str) -> str:
    """The scorecard (``results/<dataset>/scorecard.csv``) as the report's table."""
    table = pd.read_csv(csv, dtype={"published": str})
    note = (
        "Each figure the study published beside this build's estimate and interval, with the "
        "verdict and its reason (rule scorecard; the same rows as scorecard.csv)."
    )
    if CAVEAT_COLUMN in table.columns:  # a simulated build's file says so on every row
        caveats = sorted(set(table[CAVEAT_COLUMN].dropna().astype(str)))
        note = " ".join(f"{c[:1].upper()}{c[1:]}." for c in caveats) + " " + note
    return html_table(table, f"Does it reproduce? The scorecard of dataset {dataset}", note)


def rule_table(*folders: Path | str) -> pd.DataFrame:
    """One row per rule from the ``benchmark:`` files in ``folders`` (one per job; a variant's
    jobs write in each of its tiers' folders): jobs, summed wall and CPU seconds, the largest
    peak RSS (MB); sorted by wall time, slowest first."""
    rows = []
    # a wildcard holding a slash puts a job's file in a subfolder (model_call_table.stage1/...)
    files = [(Path(f), p) for f in folders for p in sorted(Path(f).rglob("*.tsv"))]
    for folder, path in files:
        bench = pd.read_csv(path, sep="\t")
        rows.append(
            {
                "rule": path.relative_to(folder).parts[0].split(".")[0],
                "wall_s": float(bench["s"].mean()),
                "cpu_s": float(bench["cpu_time"].mean()),
                "max_rss_mb": float(bench["max_rss"].max()),
            }
        )
    if not rows:
        where = ", ".join(str(f) for f in folders)
        raise FileNotFoundError(f"no benchmark files in {where}: run the workflow first")
    jobs = pd.DataFrame(rows)
    table = jobs.groupby("rule").agg(
        jobs=("rule", "size"),
        wall_s=("wall_s", "sum"),
        cpu_s=("cpu_s", "sum"),
        max_rss_mb=("max_rss_mb", "max"),
    )
    return table.sort_values("wall_s", ascending=False).round(1)


def runtimes_html(folders: Path | str | list[Path | str], dataset: str) -> str:
    """The per-rule runtime table of the benchmark files in ``folders``, as the report's page."""
    folders = folders if isinstance(folders, list) else [folders]
    table = rule_table(*folders).reset_index()
    return html_table(
        table,
        f"Runtime per rule, dataset {dataset}",
        f"{int(table['jobs'].sum())} jobs, the latest run of each: wall and CPU seconds summed "
        "over a rule's jobs, its largest peak memory (Snakemake's benchmark files, "
        f"{', '.join(Path(f).as_posix() for f in folders)}). Times depend on the machine and "
        "on what else ran.",
    )
