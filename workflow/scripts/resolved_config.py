"""Write the resolved config of this build next to its results, and what makes it a variant."""

import yaml

from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    for path, content in (
        (snakemake.output.config, snakemake.params.cfg),
        (snakemake.output.variant, snakemake.params.variant),
    ):
        with open(path, "w", encoding="utf-8") as fh:
            yaml.safe_dump(content, fh, sort_keys=True)
        log.info("wrote %s", path)
