"""Write which dataset built the paper (name, description, simulated or not)."""

import json
from pathlib import Path

from analysis.paper.dataset_info import render_dataset_tex
from analysis.settings import DataConfig, from_params
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    data = from_params(DataConfig, snakemake.params.cfg["data"], "data")
    summary = json.loads(Path(snakemake.input.summary).read_text(encoding="utf-8"))
    tex = render_dataset_tex(
        data, title=snakemake.params.cfg["paper.title"], raters=summary["raters"]
    )
    Path(snakemake.output.tex).write_text(tex, encoding="utf-8")
    log.info("dataset %s (simulated: %s)", data.name, data.simulated)
