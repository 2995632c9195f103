"""Check the paper's claims against the records; stop on an unsupported one (unless report mode)."""

from pathlib import Path

from analysis.paper import claims
from analysis.provenance import dump_json, load_numbers
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    numbers = load_numbers(snakemake.input.numbers)
    mode = claims.resolve_mode(snakemake.params.cfg["paper.claims_mode"])
    results = claims.evaluate_claims(claims.load_claims(snakemake.input.claims), numbers)
    for r in results:
        log.info("claim %s: %s (%s)", r.claim.id, r.verdict, "; ".join(r.outcome.evidence))
    if mode == "report" and any(r.verdict == claims.REFUTED for r in results):
        log.warning("claims not supported (report mode):\n%s", claims.failure_message(results))
    claims.check(results, mode)
    dump_json(claims.results_json(results, mode), snakemake.output.json)
    out = snakemake.output
    Path(out.tex).write_text(claims.render_claims_tex(results, mode, numbers), encoding="utf-8")
    Path(out.verdicts).write_text(claims.render_verdicts_tex(results, mode), encoding="utf-8")
