"""Figure 4: precision, recall and F1 against the human majority, per rater and round.

Raters, left to right: the retrieval baselines (BM25, MiniLM embeddings; rule
``baseline_votes``), each language model (rule ``stage2_statistics``) and the trained
relevance classifier (rule ``relevance_classifier``). One panel per round with any of them.
Values and intervals are the records
``stage2.<round>.{precision,recall,f1}_vs_majority.<rater>`` and
``stage2.classifier.<round>.{precision,recall,f1}``: the bars are scores against the majority of
all human raters (the study's definition). The comparison with people is drawn on one
reference: the dashed line is the leave-one-human-out human ceiling
``stage2.<round>.ceiling.f1_human_vs_rest`` and the diamond beside each model's F1 bar is
``stage2.<round>.vs_rest.f1.<model>``, the model scored against exactly the references the
ceiling uses (a bar against the dashed line would compare two different references).

The raters are not all scored on the same items (baselines on the prompts not used to set
their cut, the classifier out of fold on prompts it was not trained on, models on every item
they labelled): the heading of each group of bars names its item set, each rater's label
gives its number of items (the F1 record's ``n``), and the caption says so. A model whose
records carry a caveat (``stages.caveats``: the exercise-only local model) is left out and
named under the panels.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes

from analysis.figures.estimates import (
    CI_NOTE,
    RecordPoint,
    Records,
    caveat_of_record,
    draw_intervals,
    estimate,
    round_order,
)
from analysis.figures.style import (
    KIND_COLOURS,
    METRIC_COLOURS,
    MIN_FONT_PT,
    REFERENCE_COLOUR,
    TEXT_WIDTH,
    StudyFigure,
    new_figure,
    placeholder_figure,
    style_context,
)
from analysis.settings import NEUTRAL_NOUNS, DataNouns

NAME = "relevance_prf"
CODE = "analysis.figures.relevance_prf:relevance_prf_figure"
#: the placeholder's title; ``{people}`` in the dataset's words
TITLE = "Precision, recall and F1 against the majority of the {people}"
METRICS = ("precision", "recall", "f1")
METRIC_LABELS = {"precision": "precision", "recall": "recall", "f1": "F1"}
#: rater kinds in display order, with their headings: who, and on which items
KINDS = (
    ("baseline", "retrieval baselines\n(prompts not used to set the cut)"),
    ("model", "models\n(every item they labelled)"),
    ("classifier", "trained classifier\n(out of fold: unseen prompts)"),
)
CLASSIFIER = "trained classifier"
#: a panel is at least this many rater slots wide
MIN_SLOTS = 4
_VS_MAJORITY = re.compile(
    r"^stage2\.(?P<round>[^.]+)\.(?P<metric>precision|recall|f1)_vs_majority\.(?P<rater>.+)$"
)
#: the marker of a model's F1 against the ceiling's leave-one-out references
VS_REST_LABEL = "model's F1 against the ceiling's references"
#: the dashed line ({person}: the dataset's noun)
CEILING_LABEL = "ceiling: F1 of each {person} against the others' majority"
#: characters per line of a rater's name under its bars
NAME_WRAP = 12
#: characters per line of the note on raters left out (7-pt text across the text width)
NOTE_WRAP = 115
#: the diamond sits just right of the F1 bar (bars at -0.26, 0, +0.26), not hidden in it
VS_REST_OFFSET = 0.45
_CLASSIFIER = re.compile(r"^stage2\.classifier\.(?P<round>[^.]+)\.(?P<metric>precision|recall|f1)$")


@dataclass
class RaterScores:
    """One bar group: a rater of one round, its kind and its three metric estimates."""

    round: str
    rater: str
    kind: str
    metrics: dict[str, RecordPoint]


def rater_kind(record: dict) -> str:
    """``baseline`` for the retrieval baselines' records (rule ``baseline_votes``), else model."""
    if record.get("rule") == "baseline_votes" or str(record.get("code", "")).startswith(
        "analysis.stages.baselines"
    ):
        return "baseline"
    return "model"


def collect_scores(
    records: Records, left_out: dict[str, str] | None = None
) -> dict[str, list[RaterScores]]:
    """Every round's raters with their P/R/F1 estimates, ordered baselines, models, classifier.

    Raters whose records carry a caveat are skipped and, when ``left_out`` is given, entered in
    it (rater -> caveat)."""
    found: dict[tuple[str, str], RaterScores] = {}
    for key in sorted(records):
        m = _VS_MAJORITY.match(key)
        c = _CLASSIFIER.match(key) if m is None else None
        if m is None and c is None:
            continue
        why = caveat_of_record(records[key])
        if why is not None:
            if left_out is not None:
                left_out[m["rater"] if m is not None else CLASSIFIER] = why
            continue
        est = estimate(records, key)
        assert est is not None
        if m is not None:
            rnd, metric, rater = m["round"], m["metric"], m["rater"]
            kind = rater_kind(dict(records[key]))
        else:
            assert c is not None
            rnd, metric, rater, kind = c["round"], c["metric"], CLASSIFIER, "classifier"
        scores = found.setdefault((rnd, rater), RaterScores(rnd, rater, kind, {}))
        scores.metrics[metric] = est
    order = {k: i for i, (k, _) in enumerate(KINDS)}
    out: dict[str, list[RaterScores]] = {}
    for rnd in round_order([r for r, _ in found]):
        raters = [s for (r, _), s in found.items() if r == rnd]
        out[rnd] = sorted(raters, key=lambda s: (order[s.kind], s.rater))
    return out


def rater_label(scores: RaterScores) -> str:
    """The rater's name, wrapped at its hyphens, over its number of items (the F1 record's n)."""
    name = "\n".join(textwrap.wrap(scores.rater.replace("-", "- "), NAME_WRAP)).replace("- ", "-")
    f1 = scores.metrics.get("f1")
    n = f1.record.get("n") if f1 is not None else None
    return name + (f"\nn={int(n):,}" if isinstance(n, int | float) else "")


def relevance_prf_figure(records: Records, *, nouns: DataNouns | None = None) -> StudyFigure:
    """Grouped P/R/F1 bars per rater with record CIs, one panel per round."""
    nouns = nouns or NEUTRAL_NOUNS
    caption = (
        "Precision, recall and F1 against the majority of the "
        f"{nouns.people} for the retrieval baselines, the models and the trained relevance "
        "classifier."
    )
    left_out: dict[str, str] = {}
    by_round = collect_scores(records, left_out)
    if not by_round:
        return placeholder_figure(
            NAME,
            CODE,
            title=nouns.fill(TITLE),
            reason=(
                f"no stage-2 rater has precision/recall/F1 records against a majority of the "
                f"{nouns.people}"
            ),
            caption=caption,
            width=TEXT_WIDTH,
        )
    notes = [f"Not drawn: {rater} ({why})" for rater, why in sorted(left_out.items())]
    fig = new_figure(
        NAME,
        CODE,
        width=TEXT_WIDTH,
        height=0.75 + 2.35 * len(by_round) + 0.25 * len(notes),
        caption=(
            f"{caption} The item sets differ: baselines are scored on the prompts not used to "
            "set their cut, the classifier out of fold on prompts it was not trained on, each "
            "model on every item it labelled; n under each name counts its items. Bars are "
            f"scored against the majority of all {nouns.people} (the study's definition); the "
            f"dashed line is the ceiling (each {nouns.person} against the majority of the "
            "others) and each diamond is the model's F1 against exactly those references, the "
            f"comparison with the {nouns.people}. {' '.join(notes)} {CI_NOTE}"
        ),
    )
    used: list[str] = []
    width = 0.26
    with style_context():
        axes = fig.subplots(len(by_round), 1, squeeze=False)[:, 0]
        for ax, (rnd, raters) in zip(axes, by_round.items(), strict=True):
            x = np.arange(len(raters), dtype=float)
            for j, metric in enumerate(METRICS):
                pos = x + (j - 1) * width
                ests = [s.metrics.get(metric) for s in raters]
                have = [i for i, e in enumerate(ests) if e is not None]
                bars = ax.bar(
                    pos[have],
                    [ests[i].value for i in have],  # type: ignore[union-attr]
                    width=width * 0.95,
                    color=METRIC_COLOURS[metric],
                    label=METRIC_LABELS[metric],
                )
                for bar in bars:
                    bar.set_gid(f"bar-{metric}")
                drawn = [ests[i] for i in have]
                draw_intervals(ax, list(pos[have]), drawn, cap=width * 0.25)  # type: ignore[arg-type]
                used += [e.key for e in drawn]  # type: ignore[union-attr]
            ceiling = estimate(records, f"stage2.{rnd}.ceiling.f1_human_vs_rest")
            if ceiling is not None:
                used.append(ceiling.key)
                ax.axhline(
                    ceiling.value,
                    color=REFERENCE_COLOUR,
                    linestyle="--",
                    linewidth=0.8,
                    label=CEILING_LABEL.format(person=nouns.person),
                    gid="ceiling",
                )
            used += _draw_vs_rest(ax, records, rnd, raters, x + VS_REST_OFFSET)
            ax.set_xticks(x, [rater_label(s) for s in raters])
            ax.tick_params(axis="x", length=0)
            for tick, s in zip(ax.get_xticklabels(), raters, strict=True):
                tick.set_color(KIND_COLOURS[s.kind] if s.kind != "baseline" else "#555555")
            kinds = [s.kind for s in raters]
            for boundary in np.flatnonzero(np.asarray(kinds[1:]) != np.asarray(kinds[:-1])):
                ax.axvline(boundary + 0.5, color="#CCCCCC", linewidth=0.6, gid="kind-separator")
            for kind, label in KINDS:
                idx = [i for i, k in enumerate(kinds) if k == kind]
                if idx:
                    ax.text(
                        float(np.mean(idx)),
                        1.02,
                        label,
                        transform=ax.get_xaxis_transform(),
                        ha="center",
                        va="bottom",
                        fontsize=MIN_FONT_PT,
                        fontstyle="italic",
                        linespacing=1.1,
                    )
            # at least MIN_SLOTS rater slots wide, so one or two raters do not get huge bars
            half = max(len(raters), MIN_SLOTS) / 2
            centre = (len(raters) - 1) / 2
            ax.set_xlim(centre - half - 0.1, centre + half + 0.1)
            ax.set_ylim(0, 1.0)
            ax.set_ylabel(f"score against the\nmajority of {nouns.people}")
            ax.set_title(f"{rnd} round", fontsize=8, loc="left", pad=22)
        handles, labels = axes[0].get_legend_handles_labels()
        for ax in axes[1:]:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 3))
        if notes:
            note = fig.supxlabel(
                "\n".join(line for n in notes for line in textwrap.wrap(n, NOTE_WRAP)),
                x=0.01,
                ha="left",
                fontsize=MIN_FONT_PT,
                color="#333333",
            )
            note.set_gid("left-out")
    fig.study.records = sorted(set(used))
    return fig


def _draw_vs_rest(
    ax: Axes, records: Records, rnd: str, raters: list[RaterScores], positions: np.ndarray
) -> list[str]:
    """Diamonds (with intervals) of each model's F1 against the ceiling's references."""
    drawn: list[tuple[float, RecordPoint]] = []
    for pos, s in zip(positions, raters, strict=True):
        est = estimate(records, f"stage2.{rnd}.vs_rest.f1.{s.rater}")
        if s.kind == "model" and est is not None:
            drawn.append((float(pos), est))
    if not drawn:
        return []
    ax.plot(
        [p for p, _ in drawn],
        [e.value for _, e in drawn],
        linestyle="none",
        marker="D",
        markersize=3.5,
        color="black",
        markeredgecolor="white",
        markeredgewidth=0.4,
        zorder=5,
        label=VS_REST_LABEL,
        gid="f1-vs-rest",
    )
    coll = draw_intervals(ax, [p for p, _ in drawn], [e for _, e in drawn], color="black")
    if coll is not None:
        coll.set_gid("ci-vs-rest")
    return [e.key for _, e in drawn]
