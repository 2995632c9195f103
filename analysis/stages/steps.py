"""One function per model-call step: select items, render, call, parse, tabulate.

Each takes the canonical tables it reads, the config subtrees, and a ``caller`` bound to one
model (:class:`analysis.stages.requests.ModelCaller`, or any callable with a ``model``
attribute and the same signature), and returns that model's table with one row per item,
parse failures included; ``shard`` limits it to one slice of its items (config ``llm.shards``,
:mod:`analysis.stages.shards`). :data:`CALL_STEPS` is the one registry of model-call steps:
the workflow generates each step's rule, shard join and parse-failure input from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.settings import (
    CallStepCommon,
    Stage1StepConfig,
    Stage2StepConfig,
    Stage3StepConfig,
    StagesConfig,
)
from analysis.stages.labels import LabelRequest, label_request
from analysis.stages.parsing import call_and_parse, parse_response_text
from analysis.stages.prompts import PromptSet
from analysis.stages.shards import WHOLE, Shard


def _repair(common: CallStepCommon) -> dict[str, int]:
    return {"repair_attempts": common.repair_attempts, "echo_chars": common.repair_echo_chars}


def _label(
    kind: str, common: CallStepCommon, caller: Any, prompts: PromptSet, max_tokens: int
) -> tuple[LabelRequest, dict[str, Any]]:
    """The label form of this run and the request params (output budget + response format)."""
    label = label_request(kind, str(common.label_format), caller.model, prompts)
    return label, {"max_tokens": max_tokens, **label.params}


def _call_labels(
    requests: list[Any],
    label: LabelRequest,
    caller: Any,
    prompts: PromptSet,
    common: CallStepCommon,
) -> list[Any]:
    return call_and_parse(
        requests,
        label.parser,
        caller,
        prompts=prompts,
        repair_kind=label.kind,
        repair_fields=label.repair_fields(),
        **_repair(common),
    )


def extraction_step(
    conversations: pd.DataFrame,
    stages_cfg: Stage1StepConfig | StagesConfig,
    prompts: PromptSet,
    caller: Any,
    seed: int,
    *,
    shard: Shard = WHOLE,
) -> pd.DataFrame:
    """Stage 1: attributes of each chosen conversation, as JSON (one row per conversation)."""
    from analysis.stages import extraction
    from analysis.stages.requests import json_response_format

    cfg = stages_cfg.stage1
    chosen = shard.take(
        extraction.select_conversations(conversations, cfg.max_conversations_per_model, seed)
    )
    params = {
        "max_tokens": cfg.extraction_max_tokens,
        "response_format": json_response_format(
            caller.model, extraction.EXTRACTION_SCHEMA, "attributes"
        ),
    }
    limit = cfg.max_attributes_per_conversation
    requests = extraction.extraction_requests(
        conversations,
        chosen,
        prompts,
        max_chars=cfg.conversation_chars,
        max_attributes=limit,
        params=params,
    )
    outcomes = call_and_parse(
        requests,
        extraction.extraction_parser(limit),
        caller,
        prompts=prompts,
        repair_kind="attributes_json",
        **_repair(stages_cfg),
    )
    return extraction.extraction_table(chosen, outcomes, caller.model.name)


def verification_step(
    attributes: pd.DataFrame,
    judgments: pd.DataFrame,
    conversations: pd.DataFrame,
    stages_cfg: Stage1StepConfig | StagesConfig,
    prompts: PromptSet,
    caller: Any,
    seed: int,
    *,
    shard: Shard = WHOLE,
) -> pd.DataFrame:
    """Stage 1: SUPPORTED/UNSUPPORTED per chosen attribute (one row per attribute)."""
    from analysis.stages import verification

    cfg = stages_cfg.stage1
    chosen = shard.take(
        verification.select_attributes(
            attributes, judgments, conversations, cfg.max_attributes_per_model, seed
        )
    )
    label, params = _label("supported", stages_cfg, caller, prompts, cfg.verification_max_tokens)
    requests = verification.verification_requests(
        chosen,
        conversations,
        prompts,
        max_chars=cfg.conversation_chars,
        params=params,
        answer_format=label.answer_format,
    )
    outcomes = _call_labels(requests, label, caller, prompts, stages_cfg)
    return verification.verification_table(chosen, outcomes, caller.model.name)


def relevance_step(
    items: pd.DataFrame,
    prompts_table: pd.DataFrame,
    attributes: pd.DataFrame,
    stages_cfg: Stage2StepConfig | StagesConfig,
    prompts: PromptSet,
    caller: Any,
    seed: int,
    *,
    shard: Shard = WHOLE,
) -> pd.DataFrame:
    """Stage 2: YES/NO per chosen item (one row per item)."""
    from analysis.stages import relevance

    cfg = stages_cfg.stage2
    chosen = shard.take(
        relevance.select_items(items, prompts_table, attributes, cfg.max_items_per_model, seed)
    )
    label, params = _label("yes_no", stages_cfg, caller, prompts, cfg.vote_max_tokens)
    requests = relevance.relevance_requests(
        chosen, prompts, params=params, answer_format=label.answer_format
    )
    outcomes = _call_labels(requests, label, caller, prompts, stages_cfg)
    return relevance.relevance_table(chosen, outcomes, caller.model.name)


def generation_step(
    votes: pd.DataFrame,
    prompts_table: pd.DataFrame,
    attributes: pd.DataFrame,
    stages_cfg: Stage3StepConfig | StagesConfig,
    prompts: PromptSet,
    caller: Any,
    seed: int,
    *,
    shard: Shard = WHOLE,
) -> pd.DataFrame:
    """Stage 3: generic and personalized responses per chosen pair (one row per response)."""
    from analysis.stages import generation

    cfg = stages_cfg.stage3
    relevant = generation.relevant_attributes(votes)
    pairs = shard.take(generation.select_pairs(relevant, cfg.max_pairs_per_generator, seed))
    requests, rows = generation.generation_requests(
        pairs,
        relevant,
        prompts_table,
        attributes,
        prompts,
        model=caller.model.name,
        words=cfg.response_words,
        params={"max_tokens": cfg.generation_max_tokens},
    )
    outcomes = call_and_parse(
        requests,
        parse_response_text,
        caller,
        prompts=prompts,
        repair_kind="text",
        **_repair(stages_cfg),
    )
    return generation.generation_table(rows, outcomes)


def _judge_setup(
    responses: pd.DataFrame,
    votes: pd.DataFrame,
    ratings: pd.DataFrame,
    prompts_table: pd.DataFrame,
    attributes: pd.DataFrame,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, str]]]:
    from analysis.stages import generation, judging

    relevant = generation.relevant_attributes(votes)
    items = judging.judge_items(responses, relevant, ratings)
    texts = judging.texts_for_judging(responses, prompts_table, attributes)
    return relevant, items, texts


def judging_step(
    responses: pd.DataFrame,
    votes: pd.DataFrame,
    ratings: pd.DataFrame,
    prompts_table: pd.DataFrame,
    attributes: pd.DataFrame,
    stages_cfg: Stage3StepConfig | StagesConfig,
    prompts: PromptSet,
    caller: Any,
    seed: int,
    *,
    shard: Shard = WHOLE,
) -> pd.DataFrame:
    """Stage 3: one mapped 1-5 rating per chosen slot (one row per slot)."""
    from analysis.stages import judging

    cfg = stages_cfg.stage3
    _, items, texts = _judge_setup(responses, votes, ratings, prompts_table, attributes)
    chosen = shard.take(
        judging.in_call_order(judging.select_judge_items(items, cfg.max_ratings_per_judge, seed))
    )
    label, params = _label("rating", stages_cfg, caller, prompts, cfg.judge_max_tokens)
    requests, orders = judging.judge_requests(
        chosen,
        texts,
        prompts,
        judge=caller.model.name,
        seed=seed,
        max_chars=cfg.judge_response_chars,
        params=params,
        answer_format=label.answer_format,
    )
    outcomes = _call_labels(requests, label, caller, prompts, stages_cfg)
    return judging.judge_table(chosen, orders, outcomes, caller.model.name)


def controls_step(
    responses: pd.DataFrame,
    votes: pd.DataFrame,
    ratings: pd.DataFrame,
    prompts_table: pd.DataFrame,
    attributes: pd.DataFrame,
    stages_cfg: Stage3StepConfig | StagesConfig,
    prompts: PromptSet,
    caller: Any,
    seed: int,
    *,
    shard: Shard = WHOLE,
) -> pd.DataFrame:
    """Stage 3 controls switched on in config, on a prefix of the judging items.

    The controls' requests form one list (control by control) and the shard takes its slice
    of that list, so joined shards keep the unsharded control-major order.
    """
    from analysis.stages import controls, judging

    cfg = stages_cfg.stage3
    ccfg = cfg.controls
    relevant, items, texts = _judge_setup(responses, votes, ratings, prompts_table, attributes)
    cap = min(ccfg.max_ratings_per_judge, cfg.max_ratings_per_judge)
    chosen = judging.in_call_order(judging.select_judge_items(items, cap, seed))
    label, params = _label("rating", stages_cfg, caller, prompts, cfg.judge_max_tokens)
    requests: list[Any] = []
    rows: list[pd.DataFrame] = []
    for control in (c for c in controls.CONTROLS if getattr(ccfg, c)):
        control_requests, control_rows = controls.control_requests(
            chosen,
            control,
            texts,
            prompts,
            judge=caller.model.name,
            seed=seed,
            max_chars=cfg.judge_response_chars,
            params=params,
            answer_format=label.answer_format,
            pool=relevant,
        )
        requests += control_requests
        rows.append(control_rows)
    table = (
        pd.concat(rows, ignore_index=True)
        if rows
        else pd.DataFrame(columns=list(controls.CONTROL_COLUMNS[:-2]))
    )
    outcomes = _call_labels(shard.take(requests), label, caller, prompts, stages_cfg)
    return controls.control_table(shard.take(table), outcomes)


@dataclass(frozen=True)
class CallStep:
    """Everything the workflow needs to run one step as a rule, in one place.

    ``workflow/rules/model_calls.smk`` generates the step's rule (named by its key in
    :data:`CALL_STEPS`), the join of its shards and its parse-failure input from this entry, so
    adding a step is one entry here plus its function.
    """

    #: the step's function: the input tables in ``inputs`` order, then config, prompts, caller
    run: Callable[..., pd.DataFrame]
    #: call-store stage (``data/calls/<stage>/``) and parse-failure label
    stage: str
    #: where the model tables go: ``results/<dataset>/<folder>/<model>.<prompt version>.parquet``
    folder: str
    #: ``stages.<config_stage>.<role>`` lists the step's models; the rule reads that subtree
    config_stage: str
    role: str
    #: rule input name -> file under ``results/<dataset>/``, in the function's argument order
    inputs: Mapping[str, str]
    #: what one row of the step's table is (for the rule log)
    unit: str
    #: the rule's description (``snakemake --list-rules``)
    doc: str


_JUDGE_INPUTS = {
    "responses": "stage3/responses.parquet",
    "votes": "tables/relevance_votes.parquet",
    "ratings": "tables/preference_ratings.parquet",
    "prompts": "tables/prompts.parquet",
    "attributes": "tables/attributes.parquet",
}

#: model-call rule name -> its step, in the order of the parse-failure table
CALL_STEPS: dict[str, CallStep] = {
    "attribute_extraction": CallStep(
        run=extraction_step,
        stage="stage1_extraction",
        folder="stage1/extracted",
        config_stage="stage1",
        role="extractors",
        inputs={"conversations": "tables/conversations.parquet"},
        unit="conversations",
        doc="One shard of one extractor's attributes (sentence, reason, confidence) per "
        "conversation.",
    ),
    "attribute_verification": CallStep(
        run=verification_step,
        stage="stage1_verification",
        folder="stage1/verification",
        config_stage="stage1",
        role="verifiers",
        inputs={
            "attributes": "tables/attributes.parquet",
            "judgments": "tables/attribute_judgments.parquet",
            "conversations": "tables/conversations.parquet",
        },
        unit="attributes",
        doc="One shard of one verifier's SUPPORTED/UNSUPPORTED label per stage-1 attribute.",
    ),
    "model_relevance_votes": CallStep(
        run=relevance_step,
        stage="stage2_relevance",
        folder="stage2/votes",
        config_stage="stage2",
        role="voters",
        inputs={
            "relevance_items": "tables/relevance_items.parquet",
            "prompts": "tables/prompts.parquet",
            "attributes": "tables/attributes.parquet",
        },
        unit="items",
        doc="One shard of one model's YES/NO votes per sampled final-round relevance item.",
    ),
    "model_responses": CallStep(
        run=generation_step,
        stage="stage3_generation",
        folder="stage3/generated",
        config_stage="stage3",
        role="generators",
        inputs={
            "votes": "tables/relevance_votes.parquet",
            "prompts": "tables/prompts.parquet",
            "attributes": "tables/attributes.parquet",
        },
        unit="responses",
        doc="One shard of one generator's generic and personalized responses per "
        "(user, prompt) pair.",
    ),
    "model_preference_ratings": CallStep(
        run=judging_step,
        stage="stage3_judging",
        folder="stage3/judged",
        config_stage="stage3",
        role="judges",
        inputs=_JUDGE_INPUTS,
        unit="slots",
        doc="One shard of one judge's 1-5 ratings (5 = personalized much better) per rating slot.",
    ),
    "model_control_ratings": CallStep(
        run=controls_step,
        stage="stage3_controls",
        folder="stage3/controls",
        config_stage="stage3",
        role="judges",
        inputs=_JUDGE_INPUTS,
        unit="control ratings",
        doc="One shard of one judge's ratings under the controls (no context, mismatched, "
        "swapped).",
    ),
}
