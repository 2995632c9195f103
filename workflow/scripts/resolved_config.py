"""Write the resolved config of this run next to its results."""

import yaml

from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    with open(snakemake.output[0], "w", encoding="utf-8") as fh:
        yaml.safe_dump(snakemake.params.cfg, fh, sort_keys=True)
    log.info("wrote %s", snakemake.output[0])
