"""Rule software_environment: write the installed software of this build to environment.json."""

from analysis.provenance import dump_json
from analysis.software import installed_software
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    software = installed_software()
    dump_json(software, snakemake.output[0])
    log.info("%d packages, %s, %s", len(software["packages"]), software["os"], software["tex"])
