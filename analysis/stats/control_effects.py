"""What the stage-3 controls show about a judge: position consistency and mean ratings.

The stage (:mod:`analysis.stages.controls`) asks each judge the control questions and writes
the controls table; this module pairs a judge's ratings of the same slot (both orders, or a
control against the same slots judged normally) and states each share or mean with an
interval from the design ``rating_models`` (the slots' users and prompts crossed: the slots
of one prompt, or of one user, are not independent).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis.data.vocabulary import PARSED, RATING_SLOT
from analysis.provenance import Record
from analysis.stats.records import Statistic, make_records
from analysis.stats.resampling import Units, joined, plan, weighted_rows
from analysis.stats.settings import StatsSettings
from analysis.stats.weighted_bootstrap import evaluate_counts, weighted_ratio

MODULE = "analysis.stats.control_effects"


def position_consistency(main: pd.DataFrame, swapped: pd.DataFrame) -> pd.DataFrame:
    """Slots rated in both orders: ``rating_main``, ``rating_swapped``, ``same``, ``same_side``.

    ``same`` = identical mapped rating; ``same_side`` = both above 3, both 3, or both below 3.
    Only parsed ratings take part (failures are counted elsewhere, never guessed).
    """
    ok = list(PARSED)
    a = main[main["parse_status"].isin(ok)][[*RATING_SLOT, "model", "rating"]]
    b = swapped[swapped["parse_status"].isin(ok)][[*RATING_SLOT, "model", "rating"]]
    both = a.merge(b, on=[*RATING_SLOT, "model"], suffixes=("_main", "_swapped"))
    ra = both["rating_main"].astype(int).to_numpy()
    rb = both["rating_swapped"].astype(int).to_numpy()
    return both.assign(same=ra == rb, same_side=np.sign(ra - 3) == np.sign(rb - 3))


def control_records(
    main: pd.DataFrame,
    controls: pd.DataFrame,
    *,
    judge: str,
    settings: StatsSettings,
) -> list[Record]:
    """Position consistency and mean ratings (control vs the same slots judged normally)."""
    ok = list(PARSED)
    extra: dict[str, Any] = settings.with_caveat(judge, {"judge": judge})
    statistics: list[Statistic] = []

    def add(key: str, rows: pd.DataFrame, values: np.ndarray, what: str, fmt: str) -> None:
        if len(values) == 0:
            return
        units = Units(
            n=len(rows),
            users=rows["user_id"].astype(str).to_numpy(dtype=object),
            prompts=rows["prompt_id"].astype(str).to_numpy(dtype=object),
            items=joined(rows, RATING_SLOT),
            noun="rating slots",
        )
        slots = plan(settings, "rating_models", units, one_way="prompt")
        share = fmt.endswith("%")
        statistics.append(
            Statistic(
                key=key,
                estimate=weighted_rows(
                    slots,
                    weighted_ratio(values.astype(float), np.ones(len(values))),
                    units.n,
                    evaluate_counts,
                ),
                fmt=fmt,
                what=what,
                code=f"{MODULE}:control_records",
                n=int(len(values)),
                extra=extra,
                units=slots.units_with(np.ones(len(values))) if share else None,
            )
        )

    swapped = controls[controls["control"] == "swapped_order"]
    if len(swapped):
        pc = position_consistency(main, swapped)
        add(
            f"stage3.controls.position_consistency.{judge}",
            pc,
            pc["same"].to_numpy(),
            "share of slots whose mapped rating is identical when the two responses are shown "
            "in the other order",
            ".1%",
        )
        add(
            f"stage3.controls.position_side_consistency.{judge}",
            pc,
            pc["same_side"].to_numpy(),
            "share of slots whose mapped rating stays on the same side of 3 (better / same / "
            "worse) when the order is swapped",
            ".1%",
        )
    for control in ("no_context", "mismatched_profile"):
        rows = controls[(controls["control"] == control) & controls["parse_status"].isin(ok)]
        if not len(rows):
            continue
        add(
            f"stage3.controls.mean_rating.{control}.{judge}",
            rows,
            rows["rating"].astype(int).to_numpy(),
            f"mean rating (5 = personalized much better) under the {control} control",
            ".2f",
        )
        slots = rows[list(RATING_SLOT)].drop_duplicates()
        matched = main[main["parse_status"].isin(ok)].merge(slots, on=list(RATING_SLOT))
        add(
            f"stage3.controls.mean_rating.matched_for_{control}.{judge}",
            matched,
            matched["rating"].astype(int).to_numpy(),
            f"mean rating of the same slots judged normally (comparison for {control})",
            ".2f",
        )
    return make_records(statistics, settings)
