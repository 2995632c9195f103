"""Merge every rule's records into numbers.json and render them as LaTeX macros; merge the
records' resamples (each its design's parts) into the build's resamples.npz beside it."""

from pathlib import Path

from analysis.paper.macros import render_numbers_tex
from analysis.provenance import dump_json, merge_record_files
from analysis.resamples import merge_resample_files, write_resamples
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    numbers = merge_record_files(snakemake.input.records)
    dump_json(numbers, snakemake.output.json)
    tex = render_numbers_tex(numbers, source=snakemake.output.json)
    Path(snakemake.output.tex).write_text(tex, encoding="utf-8")
    resamples = merge_resample_files(snakemake.input.resamples)
    write_resamples(resamples, snakemake.output.resamples)
    log.info(
        "%d records from %d files, %d with their resamples kept",
        len(numbers),
        len(snakemake.input.records),
        len(resamples),
    )
