"""Write the generated part of the short provenance appendix (what the PDF prints, where its audit
site is) and figures.tex (each figure's file, and a caption link to its entry in the site)."""

from pathlib import Path

from analysis.paper.macros import alias_map
from analysis.paper.provenance import collect_figures, render_figures_tex, render_provenance_tex
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
    tex = render_provenance_tex(
        numbers, used, figures, site=snakemake.params.site, absent_keys=guarded | used
    )
    Path(out.tex).write_text(tex, encoding="utf-8")
    Path(out.figures).write_text(
        render_figures_tex(figures, Path.cwd(), Path("paper")), encoding="utf-8"
    )
    missing = sorted((used | guarded) - set(numbers))
    log.info("%d numbers used, %d figures", len(used & set(numbers)), len(figures))
    if missing:
        log.warning("keys the paper asks for that this dataset lacks: %s", ", ".join(missing))
