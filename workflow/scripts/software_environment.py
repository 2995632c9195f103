"""Rule software_environment: the installed software and the repository's commit of this build
(environment.json), and the commit as the PDF's title page prints it (build.tex)."""

from pathlib import Path

from analysis import REPO_ROOT
from analysis.paper.dataset_info import render_build_tex
from analysis.provenance import dump_json
from analysis.software import commit_label, installed_software, repository_commit
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    commit = repository_commit(REPO_ROOT)
    software = {**installed_software(), "repository": commit}
    dump_json(software, snakemake.output.environment)
    Path(snakemake.output.tex).write_text(render_build_tex(commit), encoding="utf-8")
    log.info(
        "commit %s (%s), %d packages, %s, %s",
        commit_label(commit),
        commit["source"],
        len(software["packages"]),
        software["os"],
        software["tex"],
    )
