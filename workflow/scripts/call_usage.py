"""Usage and cost of the stored model calls per stage and model, as records."""

from pathlib import Path

from analysis import repo_root
from analysis.data import resolve_root
from analysis.llm.store import table_keys
from analysis.paper.call_usage import shard_counts, usage_records
from analysis.provenance import attach_provenance, dump_json
from analysis.resamples import write_resamples
from analysis.workflow_io import rule_logging, rule_name

with rule_logging(snakemake) as log:
    cfg = snakemake.params.cfg
    # a relative store is the repository's (as for data.root), wherever the workflow runs
    usage = usage_records(
        resolve_root(cfg["llm.store"], repo_root(snakemake.scriptdir)),
        cfg["prompts.version"],
        asked=table_keys(Path(p) for p in snakemake.input.tables),
    )
    merged = {}
    for (stage, model), shards in sorted(usage.shards.items()):
        group = [r for r in usage.records if r.extra == {"stage": stage, "model": model}]
        merged |= attach_provenance(
            group,
            rule=rule_name(snakemake),
            inputs=shards,
            config=cfg,
            calls=shard_counts(shards),
        )
    dump_json(merged, snakemake.output.records)
    write_resamples({}, snakemake.output.resamples)  # counts of stored calls: no interval
    dump_json({"note": usage.note, "n_records": len(merged)}, snakemake.output.status)
    log.info("%d usage records; %s", len(merged), usage.note or "calls found")
