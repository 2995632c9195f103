"""Glue for the figure rules' scripts: read the record inputs, save the three outputs.

Kept out of the figure modules so they stay pure (DataFrames and record dicts in, a figure
out); a rule script is then: read, call one figure function, :func:`save_rule_figure`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from analysis.figures.estimates import Records
from analysis.figures.style import StudyFigure, save_figure
from analysis.provenance import merge_record_files


def read_records(paths: str | Path | Iterable[str | Path]) -> Records:
    """Merge one or several ``results/<dataset>/records/<rule>.json`` files (key -> record)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    return merge_record_files(list(paths))


def save_rule_figure(fig: StudyFigure, smk: Any, log: logging.Logger | None = None) -> dict:
    """Write a rule's ``pdf``, ``png`` and ``sidecar`` outputs with the rule's provenance.

    The sidecar names the rule, every input file with its sha256, the config subtree the rule
    was given and, when that subtree holds ``data.name``, the dataset.
    """
    cfg = dict(getattr(smk.params, "cfg", None) or {})
    provenance: dict[str, Any] = {"rule": smk.rule, "inputs": list(smk.input), "config": cfg}
    if "data.name" in cfg:
        provenance["dataset"] = cfg["data.name"]
    meta = save_figure(fig, smk.output.pdf, smk.output.png, provenance, sidecar=smk.output.sidecar)
    if log is not None:
        state = "drawn" if meta["available"] else f"placeholder ({meta['reason']})"
        log.info("figure %s %s from %d records", meta["figure"], state, len(meta["records"]))
    return meta
