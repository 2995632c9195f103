"""Usage and cost of the stored model calls per stage and model, as records."""

from analysis.paper.call_usage import shard_counts, usage_records
from analysis.provenance import attach_provenance, dump_json
from analysis.workflow_io import rule_logging

with rule_logging(snakemake) as log:
    cfg = snakemake.params.cfg
    usage = usage_records(cfg["llm.store"])
    merged = {}
    for (stage, model), shards in sorted(usage.shards.items()):
        group = [r for r in usage.records if r.extra == {"stage": stage, "model": model}]
        merged |= attach_provenance(
            group,
            rule=snakemake.rule,
            inputs=shards,
            config=cfg,
            calls=shard_counts(shards),
        )
    dump_json(merged, snakemake.output.records)
    dump_json({"note": usage.note, "n_records": len(merged)}, snakemake.output.status)
    log.info("%d usage records; %s", len(merged), usage.note or "calls found")
