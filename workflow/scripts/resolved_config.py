"""Write the resolved config of this run next to its results."""

import yaml

from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:  # noqa: F821
    with open(snakemake.output[0], "w", encoding="utf-8") as fh:  # noqa: F821
        yaml.safe_dump(snakemake.params.cfg, fh, sort_keys=True)  # noqa: F821
    log.info("wrote %s", snakemake.output[0])  # noqa: F821
