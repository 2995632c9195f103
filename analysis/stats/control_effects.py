"""What the stage-3 controls show about a judge: position consistency and mean ratings.

The stage (:mod:`analysis.stages.controls`) asks each judge the control questions and writes
the controls table; this module pairs a judge's ratings of the same slot (both orders, or a
control against the same slots judged normally) and states each share or mean with a
cluster-bootstrap interval over prompts (the slots of one prompt are not independent).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis.data.vocabulary import PARSED, RATING_SLOT
from analysis.provenance import Record
from analysis.stats.bootstrap import bootstrap_mean

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
    n_boot: int,
    ci_level: float,
    ci_method: str,
    seed: int,
    caveat: str | None = None,
) -> list[Record]:
    """Position consistency and mean ratings (control vs the same slots judged normally)."""
    ok = list(PARSED)
    extra_base: dict[str, Any] = {"judge": judge}
    if caveat:
        extra_base["caveat"] = caveat
    records: list[Record] = []

    def add(key: str, values: np.ndarray, clusters: np.ndarray, method: str, fmt: str) -> None:
        if len(values) == 0:
            return
        ci = bootstrap_mean(
            values.astype(float), clusters=clusters, cluster_name="prompt", n_boot=n_boot, seed=seed
        ).ci(ci_level, ci_method)
        records.append(
            Record(
                key=key,
                value=float(np.mean(values)),
                fmt=fmt,
                method=f"{method}; {ci.text}",
                code=f"{MODULE}:control_records",
                ci_low=ci.low,
                ci_level=ci.level,
                ci_high=ci.high,
                n=int(len(values)),
                seed=seed,
                extra=dict(extra_base),
            )
        )

    swapped = controls[controls["control"] == "swapped_order"]
    if len(swapped):
        pc = position_consistency(main, swapped)
        clusters = pc["prompt_id"].to_numpy()
        add(
            f"stage3.controls.position_consistency.{judge}",
            pc["same"].to_numpy(),
            clusters,
            "share of slots whose mapped rating is identical when the two responses are shown "
            "in the other order",
            ".1%",
        )
        add(
            f"stage3.controls.position_side_consistency.{judge}",
            pc["same_side"].to_numpy(),
            clusters,
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
            rows["rating"].astype(int).to_numpy(),
            rows["prompt_id"].to_numpy(),
            f"mean rating (5 = personalized much better) under the {control} control",
            ".2f",
        )
        slots = rows[list(RATING_SLOT)].drop_duplicates()
        matched = main[main["parse_status"].isin(ok)].merge(slots, on=list(RATING_SLOT))
        add(
            f"stage3.controls.mean_rating.matched_for_{control}.{judge}",
            matched["rating"].astype(int).to_numpy(),
            matched["prompt_id"].to_numpy(),
            f"mean rating of the same slots judged normally (comparison for {control})",
            ".2f",
        )
    return records
