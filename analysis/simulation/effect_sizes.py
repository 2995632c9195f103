"""How large the bundled world's random effects are, estimated from the authors' real exports.

The world's intervals are judged by how often they cover the truth across worlds, so the
world must vary the way the study's data do: by prompt, by user and by rater. Where the
annotation tool's exports (``../shared/data/annotation-tool``, never committed) show that
variation, its size is estimated here; every other size is stated in ``parameters.py``
(marked *[stated]*) with its reason. Nothing here runs in a build: it is the tool that set
the *[from data]* parameters, and the tests re-run it on the exports when they are present.

From data:

* **Raters' offsets** (``rater_offset_sds``): the spread, on the logit scale, of the yes rates
  of raters who judged the same items (the pilot's stage-2 annotators and models, the pilot's
  stage-1 annotators' acceptance rates), less the binomial sampling variance of each rate
  (delta method). Pilot rounds are small (four people, four models, eight stage-1
  annotators), so these are rough.
* **Prompts and users in stage 2** (``unit_spreads`` and ``fit_unit_effects``): the final
  round's spread across prompts and across users of the human-majority relevance rate, and
  across prompts of the models' yes rate on items the majority calls irrelevant. These
  observed spreads mix the effects with the items' mix of types and with binomial noise, so
  the effects' sds are solved by simulation: the sds at which simulated worlds of the same
  design show, on average, the same spreads (moment matching).

Stated (no data): the stage-1 user effect (the pilot's five users cannot separate it from
noise) and everything of stage 3 (the study's stage-3 human ratings are not public).
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import logit

from analysis.simulation.parameters import WorldParameters
from analysis.simulation.simulate import World, simulate_world

#: a rater needs this many judged items to enter a rater-offset estimate
MIN_RATER_ITEMS = 100
#: the stage-2 unit effects that ``fit_unit_effects`` solves, with the spread each matches
UNIT_EFFECTS: dict[str, str] = {
    "prompt_relevance_sd": "prompt_majority_sd",
    "user_relevance_sd": "user_majority_sd",
    "prompt_difficulty_sd": "prompt_model_fp_sd",
}
#: seeds of the simulated worlds whose spreads are matched (the calibration's seeds)
FIT_SEEDS: tuple[int, ...] = tuple(range(10))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _logit_sd(rates: np.ndarray, counts: np.ndarray) -> float:
    """sd of the raters' logit rates less the mean binomial variance of a logit rate."""
    rates = np.clip(np.asarray(rates, dtype=np.float64), 1e-3, 1 - 1e-3)
    noise = float(np.mean(1.0 / (np.asarray(counts) * rates * (1 - rates))))
    excess = float(np.var(logit(rates), ddof=1)) - noise
    return float(np.sqrt(max(excess, 0.0)))


def _shared_item_rates(votes: dict[str, dict[tuple[Any, str], bool]]) -> tuple[np.ndarray, int]:
    """Yes rates of the raters with enough items, on the items all of them judged."""
    kept = {r: v for r, v in votes.items() if len(v) >= MIN_RATER_ITEMS}
    shared = set.intersection(*(set(v) for v in kept.values()))
    rates = np.array([np.mean([kept[r][k] for k in shared]) for r in sorted(kept)])
    return rates, len(shared)


def rater_offset_sds(root: Path) -> dict[str, float]:
    """Logit sds of the pilot raters' offsets: stage-2 people and models, stage-1 people."""
    root = Path(root)
    people: dict[str, dict[tuple[Any, str], bool]] = defaultdict(dict)
    for path in sorted((root / "annotations_v0").glob("*_task3.jsonl")):
        for record in _jsonl(path):
            for j in record["relevance_judgments"]:
                people[path.stem][(record["index"], j["attribute"])] = bool(j["relevant"])
    models: dict[str, dict[tuple[Any, str], bool]] = defaultdict(dict)
    for path in sorted((root / "relevance_task3").glob("*.jsonl")):
        for record in _jsonl(path):
            for item in record["items"]:
                models[path.stem][(record["sample_index"], item["attribute"])] = bool(
                    item["relevant"]
                )
    accepted: dict[str, list[bool]] = defaultdict(list)
    for path in sorted((root / "annotations_v0").glob("*_task1.jsonl")):
        for record in _jsonl(path):
            accepted[path.stem] += [j["judgment"] == "ok" for j in record["attr_judgments"]]
    h_rates, h_n = _shared_item_rates(people)
    m_rates, m_n = _shared_item_rates(models)
    a_rates = np.array([np.mean(v) for v in accepted.values()])
    a_n = np.array([len(v) for v in accepted.values()])
    return {
        "human_offset_sd": _logit_sd(h_rates, np.full(len(h_rates), h_n)),
        "model_offset_sd": _logit_sd(m_rates, np.full(len(m_rates), m_n)),
        "stage1_leniency_sd": _logit_sd(a_rates, a_n),
    }


def _spreads(label: np.ndarray, prompt: np.ndarray, user: np.ndarray, model_yes: np.ndarray):
    """The three stage-2 spreads of one dataset (items x models for ``model_yes``)."""
    frame = {"label": label.astype(float), "prompt": prompt, "user": user}
    by_prompt = _group_means(frame["label"], prompt)
    by_user = _group_means(frame["label"], user)
    negative = ~label.astype(bool)
    fp = [
        _group_means(model_yes[negative, m].astype(float), prompt[negative]).std(ddof=1)
        for m in range(model_yes.shape[1])
    ]
    return {
        "prompt_majority_sd": float(by_prompt.std(ddof=1)),
        "user_majority_sd": float(by_user.std(ddof=1)),
        "prompt_model_fp_sd": float(np.mean(fp)),
    }


def _group_means(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    _, index = np.unique(groups, return_inverse=True)
    return np.bincount(index, weights=values) / np.bincount(index)


def unit_spreads(root: Path) -> dict[str, float]:
    """The final round's spreads across prompts and users (majority label, models' votes)."""
    root = Path(root)
    labels: dict[tuple[str, str, int], bool] = {}
    for path in sorted((root / "task6").glob("eval_results_task5_gt_attributes_*.jsonl")):
        for record in _jsonl(path):
            prompt = str(record["prompt_id"]).rsplit("_", 1)[-1]
            for k, a in enumerate(record["profile_attributes"]):
                labels[(record["user_id"], prompt, k)] = bool(a["ground_truth"])
    keys = sorted(labels)
    position = {k: i for i, k in enumerate(keys)}
    files = sorted((root / "relevance_task5").glob("*.jsonl"))
    votes = np.zeros((len(keys), len(files)), dtype=bool)
    seen = np.zeros((len(keys), len(files)), dtype=bool)
    for m, path in enumerate(files):
        for record in _jsonl(path):
            for k, item in enumerate(record["items"]):
                i = position.get((record["user_id"], str(record["prompt_index"]), k))
                if i is not None:
                    votes[i, m], seen[i, m] = bool(item["relevant"]), True
    if not seen.all():
        raise ValueError(f"{root}: a model vote is missing for {int((~seen).sum())} items")
    return _spreads(
        np.array([labels[k] for k in keys]),
        np.array([k[1] for k in keys]),
        np.array([k[0] for k in keys]),
        votes,
    )


def world_spreads(world: World) -> dict[str, float]:
    """The same spreads in a simulated world."""
    t = world.truth
    return _spreads(
        t["stage2_majority"], t["stage2_prompt"], t["stage2_user"], t["stage2_llm_votes"]
    )


def simulated_spreads(
    params: WorldParameters, seeds: tuple[int, ...] = FIT_SEEDS
) -> dict[str, float]:
    """Mean spreads over worlds of ``params`` drawn with ``seeds``."""
    rows = [world_spreads(simulate_world(dataclasses.replace(params, seed=s))) for s in seeds]
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


def fit_unit_effects(
    params: WorldParameters, target: dict[str, float], rounds: int = 3
) -> WorldParameters:
    """The stage-2 prompt and user effects' sds at which simulated spreads match ``target``.

    Each spread's variance is modelled as its value without the effect plus a multiple of
    the effect's variance, re-estimated each round from the current sds (secant steps).
    """
    zero = simulated_spreads(dataclasses.replace(params, **dict.fromkeys(UNIT_EFFECTS, 0.0)))
    current = params
    for _ in range(rounds):
        got = simulated_spreads(current)
        update = {}
        for name, spread in UNIT_EFFECTS.items():
            sd = getattr(current, name)
            slope = (got[spread] ** 2 - zero[spread] ** 2) / max(sd**2, 1e-6)
            need = (target[spread] ** 2 - zero[spread] ** 2) / max(slope, 1e-9)
            update[name] = float(np.sqrt(max(need, 0.0)))
        current = dataclasses.replace(current, **update)
    return current


def fit_world(params: WorldParameters, root: Path, rounds: int = 2) -> WorldParameters:
    """Every *[from data]* size and the *[calibrated]* probabilities, solved together.

    The rater offsets' sds come straight from the pilot (rounded to 2 digits); the unit
    effects' sds and the five free stage-2 probabilities depend on each other (a spread
    depends on the rates, the rates' expectation on the effects), so the two solves
    alternate ``rounds`` times. The output, rounded, is what ``parameters.py`` holds.
    """
    from analysis.simulation.calibration import calibrate_default_relevance

    sds = rater_offset_sds(root)
    current = dataclasses.replace(
        params,
        stage2_human_offset_sd=round(sds["human_offset_sd"], 2),
        llm_offset_sd=round(sds["model_offset_sd"], 2),
        stage1_leniency_sd=round(sds["stage1_leniency_sd"], 2),
    )
    target = unit_spreads(root)
    for _ in range(rounds):
        current = current.with_relevance_model(calibrate_default_relevance(current))
        fitted = fit_unit_effects(current, target)
        current = dataclasses.replace(
            current, **{k: round(getattr(fitted, k), 2) for k in UNIT_EFFECTS}
        )
    return current.with_relevance_model(calibrate_default_relevance(current))
