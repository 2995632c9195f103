"""The Snakemake glue of every rule script, in one place: logging, reading, running, writing.

Only this module (and ``workflow/scripts/``) sees the ``snakemake`` object; everything it calls
takes plain paths, tables and dicts. A rule script is then: open the log, read inputs, call one
library function, write outputs. The stage and figure modules are imported inside the functions
that run them, so a job loads only what its rule runs (importing every figure module, and with
them scipy and matplotlib, costs each job about a second). Anything longer than read, call,
write belongs in the package, where it is tested.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from analysis.provenance import merge_record_files
from analysis.settings import redact_secrets

if TYPE_CHECKING:
    from analysis.figures.estimates import Records
    from analysis.figures.style import StudyFigure


def rule_name(smk: Any) -> str:
    """The rule's name in this workflow, as its records and logs name it.

    A sweep loads the workflow once per member as a module whose rules carry the member's
    prefix (``workflow/rules/sweep.smk``); the prefix is left out here, so a variant's records
    are the same bytes whether it was built alone or in a sweep.
    """
    from analysis.workflow_config import MEMBER_KEY

    member = (getattr(smk, "config", None) or {}).get(MEMBER_KEY) or {}
    return str(smk.rule).removeprefix(member.get("prefix", ""))


class SecretRedactor(logging.Formatter):
    """A formatter whose lines show no API key or token: anything shaped like one
    (``settings.SECRET_SHAPES``: ``sk-``, ``hf_``, ``gsk_``, bearer tokens, ...) is replaced
    by ``[REDACTED]``, in the message and in a traceback alike."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_secrets(super().format(record))


@contextlib.contextmanager
def rule_logging(smk: Any) -> Iterator[logging.Logger]:
    """Send the ``logging`` output and any traceback of a rule script to its ``log:`` file.

    It also gives the job's ``threads`` to the OpenMP libraries the script loads from here on
    (torch, for MiniLM), as Snakemake does for ``shell:`` rules but not for scripts: otherwise
    torch takes every core of the machine whatever the job was given, and jobs that run side by
    side (``--cores``, a cluster node) compete for the same cores. No line it writes shows a
    value shaped like an API key (:class:`SecretRedactor`).
    """
    os.environ["OMP_NUM_THREADS"] = str(max(int(smk.threads), 1))
    log_path = Path(smk.log[0])
    log_path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_path, mode="w", encoding="utf-8")
    handler.setFormatter(SecretRedactor("%(levelname)s %(name)s: %(message)s"))
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(SecretRedactor())
    root = logging.getLogger()
    root.handlers = [handler, console]
    root.setLevel(logging.INFO)
    logger = logging.getLogger(f"rule.{rule_name(smk)}")
    try:
        yield logger
    except Exception:
        logger.exception("rule %s failed", smk.rule)
        raise
    finally:
        handler.close()


def read(path: str | Path) -> pd.DataFrame:
    """One parquet input."""
    return pd.read_parquet(path)


def write(table: pd.DataFrame, path: str | Path) -> None:
    """One parquet output (no index, folder created)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(path, index=False)


def read_records(paths: str | Path | Iterable[str | Path]) -> Records:
    """Merge one or several ``results/<dataset>/records/<rule>.json`` files (key -> record)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    return merge_record_files(list(paths))


def run_model_step(smk: Any) -> pd.DataFrame:
    """Run one shard of the rule's model-call step for the job's ``{model}``; write its table.

    The step is the rule's entry of :data:`analysis.stages.steps.CALL_STEPS`. The job's
    ``{shard}`` wildcard is its shard index; ``llm.shards`` (in the rule's config params) is the
    shard count. It first removes the model's joined table of the step (``params.joined``).
    The runtime-only ``llm`` keys (timeouts, retries, polling) and the model's (key variable,
    concurrency, server threads) come from the run's config, not from params, so changing them
    reruns nothing. Inputs are read by the step's
    input names, in its order. ``params.store``, set when files move through a storage
    provider, is the call store on the shared claim (``call_store_root``).
    """
    from analysis.llm.models import model_from_config
    from analysis.settings import (
        CALL_STEP_CONFIGS,
        LlmConfig,
        PromptsConfig,
        RunConfig,
        from_params,
    )
    from analysis.stages.prompts import PromptSet
    from analysis.stages.requests import caller_from_config
    from analysis.stages.shards import Shard, write_shard_table
    from analysis.stages.steps import CALL_STEPS
    from analysis.workflow_config import overrides_from_snakemake, runtime_keys

    # Snakemake removed this shard's old table before the job started, and with it the record
    # of why it reruns (changed params or code: the metadata of its output). Should the job fail
    # or be killed, the next run sees only a missing intermediate file, which it does not remake
    # while the joined table is newer than every input left (a Snakemake rule, not a bug), and
    # that table, joined from the old shards, would be read as current. Removed here, it is
    # missing too: a run that reads it rebuilds it, and every missing shard with it.
    Path(smk.params.joined).unlink(missing_ok=True)
    step = CALL_STEPS[smk.params.step]
    params = smk.params.cfg  # dotted subtree paths -> plain values (workflow_config.subtree)
    stages = {k.removeprefix("stages."): v for k, v in params.items() if k.startswith("stages.")}
    step_cfg = from_params(CALL_STEP_CONFIGS[step.config_stage], stages, "stages")
    seed = from_params(RunConfig, {"seed": params["run.seed"], "variant": None}, "run").seed
    repo = Path(smk.scriptdir).resolve().parents[1]  # scripts are in workflow/scripts
    runtime = runtime_keys(smk.config, repo / "config")
    llm_params = {**params["llm"], **runtime.llm}
    if smk.params.get("store"):  # the store on a storage provider's shared claim (cluster.md)
        llm_params["store"] = smk.params.store
    llm = from_params(LlmConfig, llm_params, "llm")
    shard = Shard(int(smk.wildcards.shard), llm.shards)
    prompts = PromptSet.from_config(from_params(PromptsConfig, params["prompts"], "prompts"))
    caller = caller_from_config(
        model_from_config(
            smk.wildcards.model,
            runtime.with_runtime_model_keys(smk.wildcards.model, smk.params.model),
        ),
        llm,
        stage=step.stage,
        prompt_version=prompts.version,
        shard=shard.name,
        # a replay miss prints the command that records it: with this run's own overrides
        overrides=shlex.join(overrides_from_snakemake(smk.config)),
    )
    tables = [pd.read_parquet(smk.input[name]) for name in step.inputs]
    table = step.run(*tables, step_cfg, prompts, caller, seed, shard=shard)
    write_shard_table(table, smk.output.table)
    logging.getLogger(f"rule.{rule_name(smk)}").info(
        "%s, shard %s of %s: %d %s, %s",
        smk.wildcards.model,
        shard.index,
        shard.count,
        len(table),
        step.unit,
        table.groupby(["parse_status"]).size().to_dict(),
    )
    return table


def draw_rule_figure(smk: Any) -> dict[str, Any]:
    """Draw the rule's figure (``params.figure``, an entry of the figure registry) and save it."""
    from analysis.figures.registry import STUDY_FIGURES
    from analysis.settings import DataNouns, from_params

    spec = STUDY_FIGURES[smk.params.figure]
    tables = [pd.read_parquet(smk.input[name]) for name in spec.tables]
    nouns = from_params(DataNouns, smk.params.cfg["data.nouns"], "data.nouns")
    return save_rule_figure(spec.draw(*tables, read_records(smk.input.records), nouns=nouns), smk)


def save_rule_figure(fig: StudyFigure, smk: Any) -> dict[str, Any]:
    """Write a rule's ``pdf``, ``png`` and ``sidecar`` outputs with the rule's provenance.

    The sidecar names the rule, every input file with its sha256, the config subtree the rule
    was given and, when that subtree holds ``data.name``, the dataset.
    """
    from analysis.figures.style import save_figure

    cfg = dict(getattr(smk.params, "cfg", None) or {})
    provenance: dict[str, Any] = {"rule": rule_name(smk), "inputs": list(smk.input), "config": cfg}
    if "data.name" in cfg:
        provenance["dataset"] = cfg["data.name"]
    meta = save_figure(fig, smk.output.pdf, smk.output.png, provenance, sidecar=smk.output.sidecar)
    state = "drawn" if meta["available"] else f"placeholder ({meta['reason']})"
    logging.getLogger(f"rule.{rule_name(smk)}").info(
        "figure %s %s from %d records", meta["figure"], state, len(meta["records"])
    )
    return meta
