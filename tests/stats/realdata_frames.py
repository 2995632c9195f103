"""Canonical stage-2 vote tables built from the real annotation-tool exports (tests only).

The workflow reads the exports through the adapter (``analysis.data``); the statistics tests
only need the two stage-2 rounds the real-data check is about, so they build those votes
here with plain ``json`` and never depend on the adapter's progress. Nothing from the data
is copied into the repository: the frames exist in memory only.

* ``pilot``: the binary pilot, human ``annotations_v0/<annotator>_task3.jsonl`` and model
  ``relevance_task3/<model>.jsonl``, keyed by (``index`` = ``sample_index``, attribute text);
  null labels (an unfinished record) are dropped.
* ``final``: model votes ``relevance_task5/<model>.jsonl`` and the published human-majority
  label carried as ``ground_truth`` in ``task6/eval_results_task5_gt_attributes_*.jsonl``,
  keyed by (line of ``extracted/task5_items.jsonl``, attribute position).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.data.raters import normalize_model_id

COLUMNS = ["item_id", "user_id", "prompt_id", "rater", "rater_kind", "raw_rater", "round", "vote"]


def _lines(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _attr_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def pilot_votes(root: Path) -> pd.DataFrame:
    """The binary pilot round (humans and LLMs)."""
    rows: list[dict[str, Any]] = []
    prompt_of: dict[int, str] = {}
    for path in sorted((root / "annotations_v0").glob("*_task3.jsonl")):
        annotator = path.name[: -len("_task3.jsonl")].rstrip("_")
        for rec in _lines(path):
            prompt_of[int(rec["index"])] = f"prompt-{rec['prompt_index']}"
            for j in rec["relevance_judgments"]:
                if j.get("relevant") is None:
                    continue
                rows.append(
                    {
                        "item_id": f"pilot-{rec['index']}-{_attr_key(j['attribute'])}",
                        "user_id": rec["user_id"],
                        "sample_index": int(rec["index"]),
                        "rater": annotator,
                        "rater_kind": "human",
                        "raw_rater": annotator,
                        "vote": bool(j["relevant"]),
                    }
                )
    for path in sorted((root / "relevance_task3").glob("*.jsonl")):
        for rec in _lines(path):
            for j in rec["items"]:
                if j.get("relevant") is None:
                    continue
                rows.append(
                    {
                        "item_id": f"pilot-{rec['sample_index']}-{_attr_key(j['attribute'])}",
                        "user_id": rec["user_id"],
                        "sample_index": int(rec["sample_index"]),
                        "rater": normalize_model_id(rec["model"]),
                        "rater_kind": "model",
                        "raw_rater": rec["model"],
                        "vote": bool(j["relevant"]),
                    }
                )
    df = pd.DataFrame(rows)
    df["prompt_id"] = [prompt_of.get(i, f"sample-{i}") for i in df["sample_index"]]
    df["round"] = "pilot"
    return df[COLUMNS]


def final_votes(root: Path) -> pd.DataFrame:
    """The final round: the two surviving LLMs' votes and the published human majority."""
    items = _lines(root / "extracted" / "task5_items.jsonl")
    position = {
        (i, a["attribute"]): p
        for i, rec in enumerate(items)
        for p, a in enumerate(rec["profile_attributes"])
    }
    sample_of = {(rec["user_id"], rec["prompt_text"]): i for i, rec in enumerate(items)}

    def base(i: int, text: str) -> dict[str, Any]:
        return {
            "item_id": f"final-{i}-{position[(i, text)]}",
            "user_id": items[i]["user_id"],
            "prompt_id": f"prompt-{items[i]['prompt_index']}",
        }

    rows: list[dict[str, Any]] = []
    for path in sorted((root / "relevance_task5").glob("*.jsonl")):
        for rec in _lines(path):
            i = int(rec["sample_index"])
            for j in rec["items"]:
                rows.append(
                    base(i, j["attribute"])
                    | {
                        "rater": normalize_model_id(rec["model"]),
                        "rater_kind": "model",
                        "raw_rater": rec["model"],
                        "vote": bool(j["relevant"]),
                    }
                )
    gt_files = sorted((root / "task6").glob("eval_results_task5_gt_attributes_*.jsonl"))
    seen: set[str] = set()
    for rec in _lines(gt_files[0]):
        i = sample_of[(rec["user_id"], rec["prompt_text"])]
        for a in rec["profile_attributes"]:
            if a.get("ground_truth") is None:
                continue
            row = base(i, a["attribute"])
            if row["item_id"] in seen:
                continue
            seen.add(row["item_id"])
            rows.append(
                row
                | {
                    "rater": "human_majority",
                    "rater_kind": "human_majority",
                    "raw_rater": "ground_truth",
                    "vote": bool(a["ground_truth"]),
                }
            )
    df = pd.DataFrame(rows)
    df["round"] = "final"
    return df[COLUMNS]


def relevance_votes(root: Path) -> pd.DataFrame:
    """Both rounds, in the canonical ``relevance_votes`` columns the statistics read."""
    return pd.concat([pilot_votes(root), final_votes(root)], ignore_index=True)
