"""What the three intervention rules run: read inputs, train, write model, predictions, records.

Each ``run_*`` takes the rule's named inputs and outputs (paths) and its ``params.cfg``
subtree, so a rule script is one call and a test can run the same path on small files. A
model that the data set cannot support (no human labels) still writes all outputs: an
empty records file (absent keys, never zeros), empty predictions and a model file that says
why nothing was trained. The model file carries the sha256 of every input it was trained on.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import joblib
import pandas as pd

from analysis.learn.features import Embeddings
from analysis.learn.records import relevance_records, reward_records, verifier_records
from analysis.learn.relevance_classifier import train_relevance_rounds
from analysis.learn.reward_model import train_reward_models
from analysis.learn.settings import Settings, settings_from_params
from analysis.learn.verifier import train_verifier
from analysis.provenance import Record, input_hashes, write_records
from analysis.seeds import SeedScheme, derive_seed

log = logging.getLogger(__name__)


def _read(path: str | Path) -> pd.DataFrame:
    return pd.read_parquet(path)


def _embeddings(path: str | Path, kind: str) -> Embeddings:
    return Embeddings.from_frame(_read(path), kind)


def _write_model(path: str | Path, bundle: dict[str, Any], inputs: Mapping[str, str]) -> None:
    """joblib bundle: the fitted estimators plus the hashes of the data they were fit on."""
    bundle = {**bundle, "training_data": input_hashes(sorted(inputs.values()))}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    joblib.dump(bundle, path, compress=3)


def _write_predictions(path: str | Path, frame: pd.DataFrame) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    frame.reset_index(drop=True).to_parquet(path, index=False)


def _publish(
    bundle: dict[str, Any],
    predictions: pd.DataFrame,
    records: list[Record],
    *,
    inputs: Mapping[str, str],
    outputs: Mapping[str, str],
    cfg: Mapping[str, Any],
    rule: str,
) -> list[Record]:
    """Every output of an intervention rule: model file, predictions and records."""
    _write_model(outputs["model"], bundle, inputs)
    _write_predictions(outputs["predictions"], predictions)
    write_records(records, outputs["records"], rule=rule, inputs=list(inputs.values()), config=cfg)
    log.info("%s: %d records", rule, len(records))
    return records


def run_attribute_verifier(
    inputs: Mapping[str, str],
    outputs: Mapping[str, str],
    cfg: Mapping[str, Any],
    rule: str,
    threads: int = 1,
) -> list[Record]:
    """Rule ``attribute_verifier``: inputs attributes, conversations, judgments, users (their
    sources are the strata of the stage-1 designs), embeddings."""
    s: Settings = settings_from_params(cfg)
    seed = derive_seed(s.seed, "stage1.verifier", scheme=SeedScheme.learn)
    attributes = _read(inputs["attributes"])
    if "set" in attributes.columns:  # the stage-1 copy of an attribute when it has several
        attributes = attributes.sort_values("set", key=lambda c: c != "stage1", kind="stable")
    judgments = _read(inputs["judgments"])
    result = train_verifier(
        attributes,
        judgments,
        _read(inputs["conversations"]),
        _embeddings(inputs["attribute_embeddings"], "attributes"),
        _embeddings(inputs["reason_embeddings"], "reasons"),
        s.learn,
        seed,
        threads,
    )
    where = {"inputs": inputs, "outputs": outputs, "cfg": cfg, "rule": rule}
    if result is None:
        untrained = {"trained": False, "reason": "no human labels"}
        return _publish(untrained, pd.DataFrame(), [], **where)
    cv = s.learn.verifier
    bundle = {
        "trained": True,
        "round": result.round,
        "estimator": result.model,
        "threshold": result.threshold,
        "positive_class": "unsupported",
        "feature_names": result.feature_names,
        "seed": seed,
    }
    records = verifier_records(
        result,
        judgments,
        _read(inputs["users"]),
        s.stats,
        cv.learner,
        list(cv.bootstrap_units),
        s.learn.min_clusters,
    )
    return _publish(bundle, result.predictions, records, **where)


def run_relevance_classifier(
    inputs: Mapping[str, str],
    outputs: Mapping[str, str],
    cfg: Mapping[str, Any],
    rule: str,
    threads: int = 1,
) -> list[Record]:
    """Rule ``relevance_classifier``: one classifier per configured round with labels."""
    s = settings_from_params(cfg)
    seed = derive_seed(s.seed, "stage2.classifier", scheme=SeedScheme.learn)
    attributes = _read(inputs["attributes"])
    classifier_set = _read(inputs["classifier_set"])
    results = train_relevance_rounds(
        _read(inputs["votes"]),
        _read(inputs["baseline_votes"]),
        _read(inputs["prompts"]),
        attributes,
        _embeddings(inputs["prompt_embeddings"], "prompts"),
        _embeddings(inputs["attribute_embeddings"], "attributes"),
        classifier_set,
        s.learn,
        seed,
        threads,
    )
    bundle = {
        "trained": bool(results),
        "rounds": {
            r.round: {
                "estimator": r.model,
                "threshold": r.threshold,
                "mode": r.mode,
                "feature_names": r.feature_names,
            }
            for r in results
        },
        "seed": seed,
    }
    preds = [r.predictions.assign(round=r.round) for r in results]
    rc = s.learn.relevance
    records = relevance_records(
        results,
        s.stats,
        rc.learner,
        list(rc.bootstrap_units),
        s.learn.min_clusters,
        rc.min_reference_items,
    )
    predictions = pd.concat(preds) if preds else pd.DataFrame()
    where = {"inputs": inputs, "outputs": outputs, "cfg": cfg, "rule": rule}
    return _publish(bundle, predictions, records, **where)


def run_reward_models(
    inputs: Mapping[str, str],
    outputs: Mapping[str, str],
    cfg: Mapping[str, Any],
    rule: str,
    threads: int = 1,
) -> list[Record]:
    """Rule ``reward_models``: every configured variant, judges and the human ceiling."""
    s = settings_from_params(cfg)
    seed = derive_seed(s.seed, "stage3.reward_model", scheme=SeedScheme.learn)
    result = train_reward_models(
        _read(inputs["ratings"]),
        _read(inputs["responses"]),
        _read(inputs["attributes"]),
        _embeddings(inputs["response_embeddings"], "responses"),
        _embeddings(inputs["attribute_embeddings"], "attributes"),
        _embeddings(inputs["prompt_embeddings"], "prompts"),
        s.learn,
        seed,
        threads,
    )
    where = {"inputs": inputs, "outputs": outputs, "cfg": cfg, "rule": rule}
    if result is None:
        untrained = {"trained": False, "reason": "no human ratings"}
        return _publish(untrained, pd.DataFrame(), [], **where)
    bundle = {
        "trained": True,
        "round": result.round,
        "estimators": result.models,
        "feature_names": result.feature_names,
        "seed": seed,
    }
    rc = s.learn.reward
    records = reward_records(
        result,
        s.stats,
        rc.learner,
        list(rc.bootstrap_units),
        s.learn.min_clusters,
        rc.min_ceiling_examples,
    )
    return _publish(bundle, result.predictions, records, **where)
