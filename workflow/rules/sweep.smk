# A sweep (analysis/variants.py): the overrides hold Hydra's multirun syntax (a,b choice(...)
# range(...)) or a --configfile a `sweep:` list, and each member of the Cartesian product is one
# variant. Every member is this workflow loaded as a module with its own overrides; its rules
# carry its name as a prefix, so `snakemake -n` lists what would run per variant. All members
# form one DAG: a shared tier's rules (the canonical tables; the model calls and stage tables
# when the members agree on models, prompts, stages and llm) are defined by one member only, and
# their jobs run once for all.

import sys

print(
    f"recenter: a sweep of {len(SWEEP)} variants, one DAG:",
    *(
        f"  {m.prefix}*  {m.variant.label}  ({' '.join(m.variant.overrides)})"
        for m in SWEEP
    ),
    sep="\n",
    file=sys.stderr,
)


for _member in SWEEP:
    MEMBER_MODULE = _member.module
    MEMBER_PREFIX = _member.prefix

    module:
        name: MEMBER_MODULE
        snakefile:
            "../Snakefile"
        config:
            _member.module_config()

    use rule * from MEMBER_MODULE exclude all as MEMBER_PREFIX*


localrules:
    all,
