"""Does the written world show the study's figures? Statistics read back from the files.

This is the bundled world's own check, not the project's statistics library
(``analysis.stats``): it reads the annotation-tool layout directly with the json module, so
it can run on a freshly written folder before any adapter or canonical table exists, and it
feeds the data card's "target vs realized" table and the calibration tests. Definitions
follow ``../shared/STUDY.md``:

* acceptance = share of stage-1 judgments that are *accepted* (``ok``); problematic = the
  rest; the real-vs-synthetic gap compares users by ``source``;
* relevance rates and pairwise Cohen's kappa (scikit-learn) over raters' shared items,
  averaged within the human-human, model-model and human-model groups;
* a personalized response is "no better than generic" when its mean human rating over its
  relevant attributes is at most 3;
* an attribute is mentioned explicitly when one second-person sentence of the response
  repeats at least 60% of its content words (``text.mentions_attribute``); a rater's mention
  delta is its mean rating of mentioned minus unmentioned attribute slots.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr, wilcoxon
from sklearn.metrics import cohen_kappa_score

from analysis.data.vocabulary import OVERGENERALIZATION, TASK_CONTEXT_CONFUSION
from analysis.simulation.parameters import STUDY_TARGETS, WorldParameters
from analysis.simulation.raters import (
    ITEM_TYPES,
    RELEVANCE_TARGET_KEYS,
    RelevanceModel,
    calibrate_relevance,
)
from analysis.simulation.simulate import simulate_world
from analysis.simulation.text import mentions_attribute

Files = dict[str, list[dict[str, Any]]]

#: pairs of raters sharing fewer items than this are left out of the kappa group means
MIN_SHARED_ITEMS = 30


def read_layout(root: Path) -> Files:
    """Every ``*.jsonl`` under ``root`` (relative posix path -> records); errors name line."""
    files: Files = {}
    for path in sorted(Path(root).rglob("*.jsonl")):
        records = []
        with path.open(encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, 1):
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{line_no}: not JSON ({exc.msg})") from exc
        files[path.relative_to(root).as_posix()] = records
    return files


def _annotations(files: Files, task: str) -> list[dict[str, Any]]:
    suffix = f"_task{task}.jsonl"
    return [
        r
        for name, records in files.items()
        if name.startswith("annotations") and name.endswith(suffix)
        for r in records
    ]


def stage1_statistics(files: Files) -> dict[str, float]:
    """Acceptance, the real-vs-synthetic gap and the shares of flags by structured reason.

    A flag is a non-accepted judgment; its reason is the judgment's ``flag_reason`` field, as
    the pipeline counts it (``analysis.stats.study_stage1.flag_reason_shares``), never a
    keyword of the free-text note.
    """
    users = files["extracted/task4_items.jsonl"]
    accepted, real = [], []
    per_attr: dict[tuple[int, int], list[str]] = defaultdict(list)
    reasons: list[str] = []
    for record in _annotations(files, "4"):
        source = users[record["index"]]["source"]
        for k, judgment in enumerate(record["attr_judgments"]):
            accepted.append(judgment["judgment"] == "ok")
            real.append(source == "sim-wildchat")
            per_attr[(record["index"], k)].append(judgment["judgment"])
            if judgment["judgment"] != "ok" and judgment.get("flag_reason"):
                reasons.append(judgment["flag_reason"])
    accepted_a, real_a = np.array(accepted), np.array(real)
    majority_ok = [sum(j == "ok" for j in js) * 2 > len(js) for js in per_attr.values()]
    reason_a = np.array(reasons, dtype=object)
    return {
        "stage1.n_users": float(len(users)),
        "stage1.n_attributes": float(sum(len(u["merged_attributes"]) for u in users)),
        "stage1.n_judgments": float(len(accepted)),
        "stage1.n_real_conversations": float(
            sum(len(u["conversations"]) for u in users if u["source"] == "sim-wildchat")
        ),
        "stage1.acceptance_rate": float(accepted_a.mean()),
        "stage1.majority_acceptance_rate": float(np.mean(majority_ok)),
        "stage1.problematic_rate_real": float(1 - accepted_a[real_a].mean()),
        "stage1.problematic_rate_synthetic": float(1 - accepted_a[~real_a].mean()),
        "stage1.problematic_gap_real_minus_synthetic": float(
            accepted_a[~real_a].mean() - accepted_a[real_a].mean()
        ),
        "stage1.n_flags": float(len(reason_a)),
        "stage1.flag_share_overgeneralization": float(
            np.mean(reason_a == OVERGENERALIZATION) if len(reason_a) else 0.0
        ),
        "stage1.flag_share_task_context_confusion": float(
            np.mean(reason_a == TASK_CONTEXT_CONFUSION) if len(reason_a) else 0.0
        ),
    }


def relevance_votes(files: Files) -> tuple[dict[str, dict[tuple[int, str], bool]], set[str]]:
    """rater -> {(sample_index, attribute text): vote}, and the set of human raters."""
    votes: dict[str, dict[tuple[int, str], bool]] = defaultdict(dict)
    humans = set()
    for record in _annotations(files, "5"):
        humans.add(record["annotator"])
        for j in record["relevance_judgments"]:
            votes[record["annotator"]][(record["index"], j["attribute"])] = bool(j["relevant"])
    for name, records in files.items():
        if name.startswith("relevance_task5/"):
            for record in records:
                for item in record["items"]:
                    key = (record["sample_index"], item["attribute"])
                    votes[record["model"]][key] = bool(item["relevant"])
    return dict(votes), humans


def pairwise_kappas(votes: dict[str, dict[tuple[int, str], bool]]) -> dict[tuple[str, str], float]:
    """Cohen's kappa of every rater pair on the items both rated (enough of them)."""
    out = {}
    for a, b in itertools.combinations(sorted(votes), 2):
        shared = sorted(votes[a].keys() & votes[b].keys())
        if len(shared) >= MIN_SHARED_ITEMS:
            out[(a, b)] = float(
                cohen_kappa_score([votes[a][k] for k in shared], [votes[b][k] for k in shared])
            )
    return out


def stage2_statistics(files: Files) -> dict[str, float]:
    """Relevance rates, over-selection and the three kappa group means."""
    votes, humans = relevance_votes(files)
    models = sorted(set(votes) - humans)
    kappas = pairwise_kappas(votes)

    def group(kind_a: bool, kind_b: bool) -> float:
        vals = [k for (a, b), k in kappas.items() if {a in humans, b in humans} == {kind_a, kind_b}]
        return float(np.mean(vals))

    human_votes = [v for h in humans for v in votes[h].values()]
    model_rates = {m: float(np.mean(list(votes[m].values()))) for m in models}
    by_item: dict[tuple[int, str], list[bool]] = defaultdict(list)
    for h in humans:
        for key, v in votes[h].items():
            by_item[key].append(v)
    majority = {k: sum(v) * 2 > len(v) for k, v in by_item.items()}
    f1 = []
    for m in models:
        keys = sorted(majority)
        truth = np.array([majority[k] for k in keys])
        pred = np.array([votes[m][k] for k in keys])
        tp = float((truth & pred).sum())
        f1.append(2 * tp / (truth.sum() + pred.sum()))
    human_rate = float(np.mean(human_votes))
    out = {
        "stage2.n_pairs": float(len(files["extracted/task5_items.jsonl"])),
        "stage2.n_items": float(len(by_item)),
        "stage2.n_human_judgments": float(len(human_votes)),
        "stage2.human_yes_rate": human_rate,
        "stage2.majority_yes_rate": float(np.mean(list(majority.values()))),
        "stage2.llm_yes_rate": float(np.mean(list(model_rates.values()))),
        "stage2.llm_yes_rate_min": min(model_rates.values()),
        "stage2.llm_yes_rate_max": max(model_rates.values()),
        "stage2.over_selection_ratio": float(np.mean(list(model_rates.values())) / human_rate),
        "stage2.kappa_human_human": group(True, True),
        "stage2.kappa_llm_llm": group(False, False),
        "stage2.kappa_human_llm": group(True, False),
        "stage2.llm_f1_vs_majority_mean": float(np.mean(f1)),
    }
    return out


def stage3_statistics(files: Files) -> dict[str, float]:
    """Human vs judge ratings, the no-better share, and the mention analysis."""
    items = files["extracted/task6_items.jsonl"]
    human_rows: list[tuple[int, str, int, bool]] = []
    for record in _annotations(files, "6"):
        item = items[record["index"]]
        for attr, rating in record["ratings"].items():
            named = mentions_attribute(item["response_personalized"], attr)
            human_rows.append((record["index"], attr, int(rating), named))
    judges: dict[str, dict[tuple[int, str], tuple[int, bool]]] = defaultdict(dict)
    for name, records in files.items():
        if name.startswith("judge_task6/"):
            for record in records:
                item = items[record["sample_index"]]
                for attr, rating in record["ratings"].items():
                    named = mentions_attribute(item["response_personalized"], attr)
                    judges[record["model"]][(record["sample_index"], attr)] = (int(rating), named)
    per_item: dict[int, list[int]] = defaultdict(list)
    for index, _, rating, _ in human_rows:
        per_item[index].append(rating)
    ratings = np.array([r for _, _, r, _ in human_rows], dtype=float)
    named = np.array([n for *_, n in human_rows], dtype=bool)
    out: dict[str, float] = {
        "stage3.n_items": float(len(items)),
        "stage3.n_human_ratings": float(len(human_rows)),
        "stage3.human_mean_rating": float(ratings.mean()),
        "stage3.share_no_better_than_generic": float(
            np.mean([np.mean(v) <= 3 for v in per_item.values()])
        ),
        "stage3.human_mention_delta": float(ratings[named].mean() - ratings[~named].mean()),
    }
    judge_mean, diffs, deltas = [], [], {}
    for judge in sorted(judges):
        table = judges[judge]
        jr = np.array([table[(i, a)][0] for i, a, _, _ in human_rows], dtype=float)
        diffs.append(jr - ratings)
        judge_mean.append(jr.mean())
        all_r = np.array([v[0] for v in table.values()], dtype=float)
        all_n = np.array([v[1] for v in table.values()], dtype=bool)
        deltas[judge] = float(all_r[all_n].mean() - all_r[~all_n].mean())
        out[f"stage3.judge_mention_delta.{judge}"] = deltas[judge]
    diff = np.concatenate(diffs)
    out["stage3.judge_mean_rating"] = float(np.mean(judge_mean))
    out["stage3.judge_minus_human"] = float(diff.mean())
    out["stage3.judge_vs_human_wilcoxon_p"] = float(wilcoxon(diff, alternative="greater").pvalue)
    out["stage3.min_judge_mention_delta"] = min(deltas.values())
    by_generator: dict[str, list[bool]] = defaultdict(list)
    per_generator_rating: dict[str, list[int]] = defaultdict(list)
    for index, _, rating, _ in human_rows:
        per_generator_rating[items[index]["model_tag"]].append(rating)
    for name, records in files.items():
        if name.startswith("task6/eval_results_task5_gt_attributes_"):
            for record in records:
                relevant = [
                    a["attribute"] for a in record["profile_attributes"] if a["ground_truth"]
                ]
                if relevant:
                    by_generator[record["model"]].append(
                        any(mentions_attribute(record["response"], a) for a in relevant)
                    )
    rates = {g: float(np.mean(v)) for g, v in by_generator.items()}
    for g, rate in sorted(rates.items()):
        out[f"stage3.generator_mention_rate.{g}"] = rate
        out[f"stage3.generator_human_mean.{g}"] = float(np.mean(per_generator_rating[g]))
    out["stage3.min_generator_mention_rate"] = min(rates.values())
    common = sorted(set(rates) & set(deltas))
    rho = spearmanr([rates[g] for g in common], [deltas[g] for g in common]).statistic
    out["stage3.spearman_mention_rate_vs_judge_delta"] = float(rho)
    return out


def realized_statistics(root: Path) -> dict[str, float]:
    """All calibration statistics of the world written under ``root``."""
    files = read_layout(Path(root))
    return {**stage1_statistics(files), **stage2_statistics(files), **stage3_statistics(files)}


#: sampling sd of each calibrated statistic across realizations of the default world
#: (measured over seeds 0-39, random effects included: each world draws its own prompts',
#: users' and raters' effects); the scale of ``seed_score`` and of the tests' tolerances
SAMPLING_SD: dict[str, float] = {
    "stage1.acceptance_rate": 0.041,
    "stage1.problematic_gap_real_minus_synthetic": 0.023,
    "stage2.human_yes_rate": 0.024,
    "stage2.llm_yes_rate": 0.027,
    "stage2.kappa_human_human": 0.044,
    "stage2.kappa_llm_llm": 0.025,
    "stage2.kappa_human_llm": 0.041,
    "stage3.share_no_better_than_generic": 0.064,
    "stage3.human_mention_delta": 0.106,
    "stage3.min_judge_mention_delta": 0.070,
    "stage3.min_generator_mention_rate": 0.019,
    "stage3.spearman_mention_rate_vs_judge_delta": 0.044,
}


def seed_score(stats: dict[str, float], targets: dict[str, float]) -> float:
    """Sum of squared standardized misses: how typical one realization is of the model.

    The committed world's seed is the lowest-scoring of a fixed range of seeds, so the
    default dataset shows the study's figures up to ordinary sampling error rather than an
    unlucky draw; the generative model itself is calibrated in expectation.
    """
    return float(sum(((stats[k] - t) / SAMPLING_SD[k]) ** 2 for k, t in targets.items()))


#: seeds whose item-type shares the stage-2 calibration averages over
CALIBRATION_SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)


def calibrate_default_relevance(params: WorldParameters) -> RelevanceModel:
    """Solve the stage-2 rater model of ``params`` for the study's relevance figures.

    The expectations depend on how often items are same-domain, style, adjacent or
    unrelated; that mix comes from the world's users and pairs, so it is averaged over
    ``CALIBRATION_SEEDS``. The ``[calibrated]`` values in ``parameters.py`` are this
    function's output, rounded to 4 digits (a test keeps them in step).
    """
    shares = []
    for seed in CALIBRATION_SEEDS:
        truth = simulate_world(dataclasses.replace(params, seed=seed)).truth
        types = truth["stage2_type"]
        shares.append(np.bincount(types, minlength=len(ITEM_TYPES)) / len(types))
    targets = {k: STUDY_TARGETS[f"stage2.{k}"] for k in RELEVANCE_TARGET_KEYS}
    return calibrate_relevance(params.relevance_model(), np.mean(shares, axis=0), targets)


def representative_seed(params: WorldParameters, seeds: range = range(40)) -> int:
    """The seed among ``seeds`` whose world scores lowest on ``seed_score`` (~2 min for 40).

    This is how the committed world's seed was chosen; rerun it after changing the model.
    """
    from analysis.simulation.write import write_world

    scores = []
    for seed in seeds:
        world = simulate_world(dataclasses.replace(params, seed=seed))
        with tempfile.TemporaryDirectory() as tmp:
            write_world(world, Path(tmp))
            scores.append((seed_score(realized_statistics(Path(tmp)), STUDY_TARGETS), seed))
    return min(scores)[1]
