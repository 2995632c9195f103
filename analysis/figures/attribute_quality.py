"""Figure 2: how people judge extracted attributes, by the source of the user.

One horizontal stacked bar per source (real sources first, then synthetic benchmarks, each
block under a heading in the dataset's words), split into the shares of human judgments that
accept, are unsure about or reject the attribute; where a source kind has several sources, a
pooled bar per kind follows. The shares come from the human ``attribute_judgments`` (one count
per judgment, as the acceptance records count them); the interval, drawn where the accepted
share ends, is the CI of the record ``stage1.acceptance_rate.<source>`` (``.real`` /
``.synthetic`` for pooled bars). The records hold intervals for the accepted share only (the
share the study's claims are about; its complement is the share not accepted), so the
uncertain and rejected segments carry none, and the legend and caption say so.

Like the stage-1 records, the figure describes one round: ``final``, else ``pilot`` (the
round named in the records' ``extra.round`` wins). Rounds are never pooled.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from analysis.figures.estimates import (
    CI_NOTE,
    FigureDataError,
    RecordPoint,
    Records,
    draw_intervals,
    estimate,
)
from analysis.figures.style import (
    CI_COLOUR,
    COLUMN_WIDTH,
    LABEL_COLOURS,
    MIN_FONT_PT,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)
from analysis.settings import NEUTRAL_NOUNS, DataNouns

NAME = "attribute_quality"
CODE = "analysis.figures.attribute_quality:attribute_quality_figure"
TITLE = "Attribute quality by source"
LABELS = ("accepted", "uncertain", "rejected")
SOURCE_KINDS = ("real", "synthetic")
JUDGMENT_COLUMNS = ("attribute_id", "user_id", "rater_kind", "round", "label")
USER_COLUMNS = ("user_id", "source", "source_kind")
#: largest difference between a record's acceptance rate and the share drawn from the table
TOLERANCE = 1e-9


def _require(df: pd.DataFrame, table: str, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise FigureDataError(f"table {table}: missing column(s) {missing}")


def _key_part(name: str) -> str:
    """A source id as it appears in a record key (whitespace runs become ``_``)."""
    return "_".join(str(name).split())


def _round(human: pd.DataFrame, records: Records) -> str:
    """The round the stage-1 records describe (their ``extra.round``), else final, else pilot."""
    rec = records.get("stage1.acceptance_rate.overall") or {}
    named = (rec.get("extra") or {}).get("round") if isinstance(rec, dict) else None
    present = sorted(set(human["round"].astype(str)))
    if named in present:
        return str(named)
    for candidate in ("final", "pilot"):
        if candidate in present:
            return candidate
    return present[0]


def label_shares(human: pd.DataFrame, users: pd.DataFrame, round_name: str) -> pd.DataFrame:
    """Shares of accepted / uncertain / rejected human judgments of one round, per source.

    Rows: ``source``, ``source_kind``, ``n`` (judgments) and one share per label; real sources
    first, then synthetic, each sorted by name. A judgment whose user is not in ``users`` or
    whose label is unknown is an error naming the row and field.
    """
    df = human.loc[human["round"].astype(str) == round_name, ["user_id", "label"]].astype(str)
    bad = ~df["label"].isin(LABELS)
    if bad.any():
        row = df.index[bad.to_numpy()][0]
        raise FigureDataError(
            f"table attribute_judgments row {row}: field 'label' = {df.loc[row, 'label']!r} "
            f"is not one of {LABELS}"
        )
    u = users.loc[:, list(USER_COLUMNS)].astype(str).drop_duplicates("user_id")
    df = df.merge(u, on="user_id", how="left")
    unknown = df["source"].isna()
    if unknown.any():
        row = int(np.flatnonzero(unknown.to_numpy())[0])
        raise FigureDataError(
            f"table attribute_judgments: field 'user_id' = {df['user_id'].iloc[row]!r} is not "
            "in the users table"
        )
    counts = pd.crosstab([df["source_kind"], df["source"]], df["label"])
    counts = counts.reindex(columns=list(LABELS), fill_value=0)
    n = counts.sum(axis=1)
    shares = counts.div(n, axis=0).reset_index()
    shares.insert(2, "n", n.to_numpy())
    rank = {k: i for i, k in enumerate(SOURCE_KINDS)}
    shares["_kind_rank"] = shares["source_kind"].map(lambda k: rank.get(k, len(rank)))
    shares = shares.sort_values(["_kind_rank", "source_kind", "source"]).drop(columns="_kind_rank")
    return shares.reset_index(drop=True)


def kind_label(kind: str, sources: Iterable[str], nouns: DataNouns = NEUTRAL_NOUNS) -> str:
    """The heading of a source kind's block: the dataset's word for its chat users (the study's
    WildChat users), or the benchmark personas; simulated sources (``sim-*``, the bundled
    world's convention) are called simulated, never real."""
    pooled = [s for s in sources if not str(s).startswith("all ")]
    simulated = bool(pooled) and all(str(s).startswith("sim-") for s in pooled)
    if kind == "real":
        words = nouns.chat_users
        if simulated and "simulated" not in words:
            words = f"{words} (simulated)"
        return words
    if kind == "synthetic":
        return "benchmark personas" + (" (simulated)" if simulated else "")
    return kind


def with_pooled(shares: pd.DataFrame) -> pd.DataFrame:
    """Per-source rows plus, for a kind with several sources, a pooled row (``pooled=True``);
    ``record`` names the acceptance record of each row (source id, or the kind when pooled)."""
    rows = []
    for kind, block in shares.groupby("source_kind", sort=False):
        for _, r in block.iterrows():
            rows.append({**r.to_dict(), "pooled": False, "record": _key_part(r["source"])})
        if len(block) > 1:
            n = block["n"].to_numpy(dtype=float)
            pooled = {lab: float(block[lab].to_numpy(dtype=float) @ n / n.sum()) for lab in LABELS}
            rows.append(
                {
                    "source": f"all {kind}",
                    "source_kind": kind,
                    "n": int(n.sum()),
                    **pooled,
                    "pooled": True,
                    "record": str(kind),
                }
            )
    return pd.DataFrame(rows)


def attribute_quality_figure(
    judgments: pd.DataFrame,
    users: pd.DataFrame,
    records: Records,
    *,
    nouns: DataNouns | None = None,
) -> StudyFigure:
    """Stacked shares of accepted / uncertain / rejected per source, CI on the accepted share."""
    _require(judgments, "attribute_judgments", JUDGMENT_COLUMNS)
    _require(users, "users", USER_COLUMNS)
    nouns = nouns or NEUTRAL_NOUNS
    human = judgments.loc[judgments["rater_kind"].astype(str) == "human"]
    caption = (
        f"Attribute quality by source of the user: shares of the judgments of {nouns.people} "
        "that accept, are unsure about, or reject an extracted attribute (unit: one judgment)."
    )
    if human.empty:
        return placeholder_figure(
            NAME,
            CODE,
            title=TITLE,
            reason="the dataset has no human stage-1 attribute judgments",
            caption=caption,
        )
    rnd = _round(human, records)
    rows = with_pooled(label_shares(human, users, rnd))
    n_rows = len(rows)
    kinds = list(dict.fromkeys(rows["source_kind"]))
    fig = new_figure(
        NAME,
        CODE,
        width=COLUMN_WIDTH,
        height=0.85 + 0.2 * n_rows + 0.22 * len(kinds),
        caption=(
            f"{caption} Judgments of the {rnd} round. The interval is that of the accepted "
            f"share (the records hold none for the other two). {CI_NOTE}"
        ),
    )
    used: list[str] = []
    with style_context():
        ax = fig.add_subplot()
        # each kind's block opens with a heading row of its own (no label runs into another)
        ypos, headings, y = [], [], 0.0
        for kind in kinds:
            in_kind = (rows["source_kind"] == kind).to_numpy()
            headings.append((y, kind_label(str(kind), rows.loc[in_kind, "source"], nouns)))
            y += 0.85
            for _ in range(int(in_kind.sum())):
                ypos.append(y)
                y += 1.0
            y += 0.2
        ypos_arr = np.asarray(ypos)
        left = np.zeros(n_rows)
        for lab in LABELS:
            width = rows[lab].to_numpy(dtype=float)
            bars = ax.barh(
                ypos_arr,
                width,
                left=left,
                height=0.72,
                color=LABEL_COLOURS[lab],
                edgecolor="white",
                linewidth=0.4,
                label=lab,
            )
            for bar, pooled in zip(bars, rows["pooled"], strict=True):
                bar.set_gid(f"share-{lab}")
                if pooled:
                    bar.set_hatch("////")
            left += width
        positions: list[float] = []
        ests: list[RecordPoint] = []
        for pos, key in zip(ypos_arr, rows["record"], strict=True):
            est = estimate(records, f"stage1.acceptance_rate.{key}")
            if est is not None:
                drawn = float(rows.loc[rows["record"] == key, "accepted"].iloc[0])
                if abs(est.value - drawn) > TOLERANCE:
                    raise FigureDataError(
                        f"record {est.key} = {est.value:.6f} but the {rnd}-round judgments give "
                        f"an accepted share of {drawn:.6f}: records and tables come from "
                        "different data (rerun the statistics rules)"
                    )
                positions.append(float(pos))
                ests.append(est)
                used.append(est.key)
        coll = draw_intervals(ax, positions, ests, horizontal=True, cap=0.18)
        labels = [f"{s}  (n={int(n):,})" for s, n in zip(rows["source"], rows["n"], strict=True)]
        ax.set_yticks(ypos_arr, labels)
        for y_head, text in headings:
            ax.text(
                -0.02,
                y_head,
                text,
                transform=ax.get_yaxis_transform(),
                ha="right",
                va="center",
                fontsize=MIN_FONT_PT,
                fontstyle="italic",
                gid="block-label",
            )
        ax.set_ylim(y - 0.2, -0.6)
        ax.set_xlim(0, 1)
        ax.set_xticks(np.linspace(0, 1, 6), [f"{int(t * 100)}%" for t in np.linspace(0, 1, 6)])
        ax.set_xlabel("share of judgments")
        ax.spines["left"].set_visible(False)
        ax.tick_params(axis="y", length=0)
        handles, names = ax.get_legend_handles_labels()
        if coll is not None:
            level = float(ests[0].record.get("ci_level") or 0.95)
            handles.append(Line2D([], [], color=CI_COLOUR, linewidth=1.0))
            names.append(f"{level:.0%} CI of the accepted share")
        fig.legend(handles, names, loc="outside upper center", ncols=2, handlelength=1.2)
    fig.study.records = sorted(used)
    return fig
