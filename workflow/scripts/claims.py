"""Check the paper's claims against the records; stop on an unsupported one (unless report mode)."""

from pathlib import Path

from analysis.paper import claims
from analysis.paper.plan_history import claim_conditions, last_changes, study_margins
from analysis.provenance import dump_json, load_numbers
from analysis.settings import DataNouns, from_params
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    numbers = load_numbers(snakemake.input.numbers)
    mode = claims.resolve_mode(snakemake.params.cfg["paper.claims_mode"])
    nouns = from_params(DataNouns, snakemake.params.cfg["data.nouns"], "data.nouns")
    declared = claims.load_claims(snakemake.input.claims, nouns)
    results = claims.evaluate_claims(declared, numbers)
    for r in results:
        log.info("claim %s: %s (%s)", r.claim.id, r.verdict, "; ".join(r.outcome.evidence))
    if mode == "report" and any(r.verdict == claims.REFUTED for r in results):
        log.warning("claims not supported (report mode):\n%s", claims.failure_message(results))
    claims.check(results, mode)
    repo = Path.cwd()  # Snakemake's working directory: the repository (or a copy of it)
    history = last_changes(repo, snakemake.input.claims, claim_conditions)
    margins = last_changes(repo, snakemake.input.study, study_margins)
    log.info(
        "plan history (%s): %s", snakemake.params.plan, {k: c.text() for k, c in history.items()}
    )
    summary = claims.results_json(results, mode)
    for cid, change in history.items():
        summary["claims"][cid]["condition_last_changed"] = change.as_dict()
    summary["margins"] = {name: change.as_dict() for name, change in margins.items()}
    dump_json(summary, snakemake.output.json)
    out = snakemake.output
    tex = claims.render_claims_tex(results, mode, numbers, history)
    tex += claims.render_margins_tex(snakemake.params.cfg["study"]["published"], margins)
    Path(out.tex).write_text(tex, encoding="utf-8")
    Path(out.verdicts).write_text(claims.render_verdicts_tex(results, mode), encoding="utf-8")
