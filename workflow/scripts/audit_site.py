"""Write the audit site beside the PDF: one page per number, rule, lineage and call-store shard."""

import json
from pathlib import Path

from analysis.paper.citations import read_citations, read_text_macros
from analysis.paper.macros import alias_map
from analysis.paper.provenance import collect_figures
from analysis.paper.site import SiteInputs, read_scorecard, write_archive, write_site
from analysis.paper.source_check import keys_guarded, keys_in_files
from analysis.provenance import load_numbers
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    inp, out, params = snakemake.input, snakemake.output, snakemake.params
    numbers = load_numbers(inp.numbers)
    claims = json.loads(Path(inp.claims).read_text(encoding="utf-8"))
    aliases = alias_map(numbers)
    figures = collect_figures(inp.figures, Path.cwd())
    sources = [Path(p) for p in inp.text]
    tables = [Path(p) for p in inp.tables]
    citations = read_citations(
        sources,
        tables,
        figures,
        numbers,
        aliases,
        claims.get("claims", {}),
        Path(inp.aux),
        read_text_macros(Path(p) for p in inp.macros),
    )
    printed = keys_in_files([*sources, *tables], aliases)
    guarded = set().union(*(keys_guarded(p.read_text(encoding="utf-8")) for p in sources))
    site = SiteInputs(
        numbers=numbers,
        dataset=params.cfg["data.name"],
        title=params.cfg["paper.title"],
        simulated=bool(params.cfg["data.simulated"]),
        citations=citations,
        claims=claims,
        scorecard=read_scorecard(Path(inp.scorecard)),
        software=json.loads(Path(inp.software).read_text(encoding="utf-8")),
        figures=figures,
        call_shards=list(inp.shards),
        rule_docs=params.rules,
        absent=printed | guarded,
        numbers_file=inp.numbers,
        scorecard_file=inp.scorecard,
        software_file=inp.software,
    )
    counts = write_site(site, Path(out.site), Path.cwd())
    write_archive(Path(out.site), Path(out.archive))
    log.info(
        "audit site %s: %d numbers, %d rules, %d call-store shards",
        out.site,
        counts["entries"],
        counts["rules"],
        counts["shards"],
    )
