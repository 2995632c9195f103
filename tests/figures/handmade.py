"""Small handmade tables and records for the figure tests (values checkable by hand)."""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd


def rec(value: float, low: float | None = None, high: float | None = None, **extra: Any) -> dict:
    """A record as ``numbers.json`` holds it (only the fields figures read)."""
    out: dict[str, Any] = {"value": value, "ci_low": low, "ci_high": high}
    out.update(extra)
    return out


def stage1_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Users of one real and two synthetic sources; 3 humans judge 2 attributes per user.

    Accepted shares (final round): wildchat 3/12 = 0.25, synthetic:cupid 5/6, synthetic:prefeval
    4/6, pooled synthetic 9/12 = 0.75. A pilot-round row and a model row must be ignored.
    """
    users = pd.DataFrame(
        {
            "user_id": ["u1", "u2", "u3", "u4"],
            "source": ["wildchat", "wildchat", "synthetic:cupid", "synthetic:prefeval"],
            "source_kind": ["real", "real", "synthetic", "synthetic"],
        }
    )
    labels = {
        "u1": ["accepted", "rejected", "uncertain", "rejected", "rejected", "accepted"],
        "u2": ["rejected", "uncertain", "accepted", "rejected", "uncertain", "rejected"],
        "u3": ["accepted", "accepted", "accepted", "accepted", "accepted", "rejected"],
        "u4": ["accepted", "accepted", "uncertain", "accepted", "accepted", "rejected"],
    }
    rows = []
    for user, labs in labels.items():
        for i, lab in enumerate(labs):
            rows.append(
                {
                    "attribute_id": f"{user}-a{i // 3}",
                    "user_id": user,
                    "rater": f"h{i % 3}",
                    "rater_kind": "human",
                    "round": "final",
                    "label": lab,
                }
            )
    rows.append(
        {
            "attribute_id": "u1-a0",
            "user_id": "u1",
            "rater": "llm",
            "rater_kind": "model",
            "round": "final",
            "label": "accepted",
        }
    )
    rows.append(
        {
            "attribute_id": "u1-a0",
            "user_id": "u1",
            "rater": "h9",
            "rater_kind": "human",
            "round": "pilot",
            "label": "accepted",
        }
    )
    return pd.DataFrame(rows), users


def stage1_records() -> dict[str, dict]:
    """Acceptance records consistent with :func:`stage1_tables` (the CIs are made up)."""
    return {
        "stage1.acceptance_rate.wildchat": rec(0.25, 0.1, 0.4, extra={"round": "final"}),
        "stage1.acceptance_rate.synthetic:cupid": rec(5 / 6, 0.6, 1.0),
        "stage1.acceptance_rate.synthetic:prefeval": rec(4 / 6, 0.4, 0.9),
        "stage1.acceptance_rate.synthetic": rec(0.75, 0.55, 0.9),
        "stage1.acceptance_rate.real": rec(0.25, 0.1, 0.4),
        "stage1.acceptance_rate.overall": rec(0.5, 0.35, 0.65, extra={"round": "final"}),
    }


def kappa_long(round_name: str, humans: list[str], models: list[str]) -> pd.DataFrame:
    """A long kappa table like rule stage2_statistics writes: both orders, no diagonal.

    kappa(i, j) = 0.1 * (i + j) / 2 + 0.05 * kind-bonus, symmetric by construction.
    """
    raters = [(h, "human") for h in humans] + [(m, "model") for m in models]
    rows = []
    for (i, (a, ka)), (j, (b, kb)) in itertools.permutations(enumerate(raters), 2):
        k = 0.1 * (i + j) / 2 + (0.05 if ka == kb else 0.0)
        rows.append(
            {
                "round": round_name,
                "rater_a": a,
                "rater_b": b,
                "kind_a": ka,
                "kind_b": kb,
                "order_a": i,
                "order_b": j,
                "kappa": k,
                "ci_low": k - 0.1,
                "ci_high": k + 0.1,
                "n_items": 50,
            }
        )
    return pd.DataFrame(rows)


def stage2_records() -> dict[str, dict]:
    """P/R/F1 of two baselines, two LLMs (one with a dotted id) and the classifier, final round;
    one LLM in the pilot round; kappa group means and a human ceiling."""
    out: dict[str, dict] = {}
    base = {"rule": "baseline_votes", "code": "analysis.stages.baselines:evaluate_baseline"}
    llm = {"rule": "stage2_statistics", "code": "analysis.stats.study_stage2:x"}
    for rater, (p, r), meta in [
        ("bm25", (0.2, 0.3), base),
        ("minilm-embedding", (0.3, 0.5), base),
        ("gpt-5.4", (0.4, 0.8), llm),
        ("sim-llm-a", (0.35, 0.9), llm),
    ]:
        f1 = 2 * p * r / (p + r)
        for metric, v in (("precision", p), ("recall", r), ("f1", f1)):
            out[f"stage2.final.{metric}_vs_majority.{rater}"] = rec(v, v - 0.05, v + 0.05, **meta)
    for metric, v in (("precision", 0.6), ("recall", 0.7), ("f1", 0.646)):
        out[f"stage2.classifier.final.{metric}"] = rec(v, v - 0.04, v + 0.04)
    out["stage2.classifier.final.auroc"] = rec(0.8, 0.7, 0.9)
    out["stage2.classifier.final.reference.gpt-5.4.f1"] = rec(0.5, 0.4, 0.6)
    for metric, v in (("precision", 0.5), ("recall", 0.6), ("f1", 0.545)):
        out[f"stage2.pilot.{metric}_vs_majority.gpt-5.4"] = rec(v, v - 0.1, v + 0.1, **llm)
    out["stage2.final.ceiling.f1_human_vs_rest"] = rec(0.62, 0.55, 0.7)
    out["stage2.final.vs_rest.f1.gpt-5.4"] = rec(0.58, 0.5, 0.66, **llm)
    out["stage2.final.vs_rest.gap_f1.gpt-5.4"] = rec(-0.04, -0.1, 0.02, **llm)
    out["stage2.final.kappa.human_human"] = rec(0.43, 0.38, 0.48)
    out["stage2.final.kappa.model_model"] = rec(0.6, 0.55, 0.65)
    out["stage2.final.kappa.human_model"] = rec(0.3, 0.25, 0.35)
    out["stage2.final.kappa_vs_majority.gpt-5.4"] = rec(0.3, 0.2, 0.4)
    return out


GENERATORS = {"gpt-5.4": 3.2, "sim-llm-b": 2.8, "sim-llm-c": 3.05, "sim-llm-d": 3.4}
MENTION_RATE = {"gpt-5.4": 0.4, "sim-llm-b": 0.05, "sim-llm-c": 0.3, "sim-llm-d": 0.6}
MENTION_DELTA = {"gpt-5.4": 0.5, "sim-llm-b": -0.39, "sim-llm-c": 0.3, "sim-llm-d": 0.7}


def stage3_records(with_spearman: bool = True) -> dict[str, dict]:
    """Mean ratings, mention rates and deltas of four models; the human delta; Spearman."""
    out: dict[str, dict] = {}
    for g, v in GENERATORS.items():
        out[f"stage3.mean_rating.{g}"] = rec(v, v - 0.1, v + 0.12)
    out["stage3.mean_rating.human"] = rec(3.1, 3.02, 3.18)
    out["stage3.judge_mean_rating.gpt-5.4"] = rec(4.1, 4.0, 4.2)
    out["stage3.mention_delta.human"] = rec(0.03, -0.05, 0.11)
    for g in GENERATORS:
        r, d = MENTION_RATE[g], MENTION_DELTA[g]
        out[f"stage3.mention_rate.{g}"] = rec(r, r - 0.04, r + 0.04)
        out[f"stage3.mention_delta.{g}"] = rec(d, d - 0.12, d + 0.1)
    if with_spearman:
        out["stage3.mention_habit_vs_bias.spearman"] = rec(1.0, None, None, n=4)
    return out
