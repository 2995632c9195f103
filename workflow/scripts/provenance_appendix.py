"""Write the provenance appendix (one row per printed number and per figure, and the software
that built them) and figures.tex."""

import json
from pathlib import Path

from analysis.paper.macros import alias_map
from analysis.paper.provenance import (
    collect_figures,
    render_figures_tex,
    render_provenance_tex,
    render_software_tex,
)
from analysis.paper.source_check import keys_guarded, keys_in_files
from analysis.provenance import load_numbers
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    inp, out = snakemake.input, snakemake.output
    numbers = load_numbers(inp.numbers)
    sources = [Path(p) for p in [*inp.text, *inp.tables, inp.claims]]
    used = keys_in_files(sources, alias_map(numbers))
    guarded = set().union(*(keys_guarded(p.read_text(encoding="utf-8")) for p in sources))
    figures = collect_figures(inp.figures, Path.cwd())
    tex = render_provenance_tex(numbers, used, figures, Path.cwd(), absent_keys=guarded | used)
    software = json.loads(Path(inp.software).read_text(encoding="utf-8"))
    tex += render_software_tex(software)
    Path(out.tex).write_text(tex, encoding="utf-8")
    Path(out.figures).write_text(
        render_figures_tex(figures, Path.cwd(), Path("paper")), encoding="utf-8"
    )
    missing = sorted((used | guarded) - set(numbers))
    log.info("%d numbers used, %d figures", len(used & set(numbers)), len(figures))
    if missing:
        log.warning("keys the paper asks for that this dataset lacks: %s", ", ".join(missing))
