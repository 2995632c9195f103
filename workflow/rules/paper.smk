# The paper: every record -> numbers.json and LaTeX macros -> generated tables, checked claims
# and the short provenance appendix -> paper/build/<dataset>/paper.pdf, and beside it the audit
# site (paper/build/<dataset>/site/, one page per number; each number in the PDF links to its
# page). Generated sources and build are per dataset (PAPER_GENERATED, PAPER_BUILD), so datasets'
# papers sit side by side. Included last: RECORD_FILES and FIGURE_FILES are complete by the time
# the rules below read them.

import os

from analysis.data import resolve_root as _resolve_root
from analysis.llm.store import iter_store as _iter_store
from analysis.workflow_config import MEMBER_KEY as _MEMBER_KEY
from analysis.paper.plan_history import plan_revision as _plan_revision
from analysis.paper.plan_history import study_file as _study_file
from analysis.paper.tables import TABLE_NAMES as _TABLE_NAMES
from analysis.software import package_fingerprint as _package_fingerprint

#: the hand-written paper sources (the generated ones are listed per rule below)
PAPER_TEX = [
    repo_file("paper/main.tex"),
    *sorted(
        repo_file(f"paper/sections/{p.name}")
        for p in (REPO / "paper/sections").glob("*.tex")
    ),
]
PAPER_SOURCES = [*PAPER_TEX, repo_file("paper/refs.bib")]
PAPER_TABLES = [f"{PAPER_GENERATED}/tables/{name}.tex" for name in _TABLE_NAMES]
#: the simulated world's coverage and recovery tables (a sentence on real data; rule below)
VALIDATION_TABLE = f"{PAPER_GENERATED}/tables/validation.tex"
RECOVERY_TABLE = f"{PAPER_GENERATED}/tables/recovery.tex"
VALIDATION_TABLES = [VALIDATION_TABLE, RECOVERY_TABLE]
CALL_SHARDS = [
    os.path.relpath(p)
    for _, _, p in _iter_store(_resolve_root(CFG["llm"]["store"], REPO))
]
#: the analysis plan: the claims and the study file with its margins (rule `claims` prints
#: when each threshold last changed, from git history; only that rule reads the history)
STUDY_FILE = _study_file(REPO, CFG["study"]["name"])
PLAN_FILES = ["paper/claims.yaml", STUDY_FILE]


if owns("calls"):

    rule call_usage:
        """Calls, tokens and cost of the stored calls this build asks (the keys of its model-call tables), per stage and model."""
        input:
            shards=CALL_SHARDS,
            tables=[path for _, _, path in MODEL_CALL_OUTPUTS],
        output:
            records=record_file("call_usage"),
            resamples=resample_file("call_usage"),
            status=results("paper/call_usage.json"),
        log:
            f"{CALL_LOGS}/call_usage.log",
        benchmark:
            f"{CALL_LOGS}/benchmarks/call_usage.tsv"
        resources:
            mem_mb=1000,
        params:
            cfg=subtree(CFG, "llm.store", "prompts.version"),
            code=code_hash(
                "analysis.paper.call_usage", "analysis.provenance", "analysis.llm"
            ),
        script:
            "../scripts/call_usage.py"


RECORD_FILES.append(record_file("call_usage"))


rule numbers:
    """Every record merged into numbers.json and rendered as one LaTeX macro per key; the records' resamples (their designs' parts) merged beside it."""
    input:
        records=RECORD_FILES,
        resamples=[resamples_path(f) for f in RECORD_FILES],
    output:
        json=report(
            PATHS.numbers,
            caption="../report/numbers.rst",
            category="Numbers and claims",
        ),
        tex=f"{PAPER_GENERATED}/numbers.tex",
        resamples=PATHS.resamples,
    log:
        f"{LOGS}/numbers.log",
    benchmark:
        f"{LOGS}/benchmarks/numbers.tsv"
    resources:
        mem_mb=500,
    params:
        code=code_hash(
            "analysis.provenance",
            "analysis.resamples",
            "analysis.paper.macros",
            "analysis.paper.latex",
        ),
    script:
        "../scripts/numbers.py"


rule dataset_description:
    """Which dataset built this PDF, whether it is simulated, and every rater found in it."""
    input:
        summary=results("tables/skipped_records.json"),
    output:
        tex=f"{PAPER_GENERATED}/dataset.tex",
    log:
        f"{LOGS}/dataset_description.log",
    benchmark:
        f"{LOGS}/benchmarks/dataset_description.tsv"
    resources:
        mem_mb=200,
    params:
        cfg=subtree(CFG, "data", "paper.title"),
        code=code_hash("analysis.paper.dataset_info", "analysis.paper.latex"),
    script:
        "../scripts/dataset_description.py"


rule paper_tables:
    """The paper's booktabs tables, every cell a record (agreement, models, judges, usage)."""
    input:
        numbers=PATHS.numbers,
        usage=results("paper/call_usage.json"),
    output:
        tables=PAPER_TABLES,
    log:
        f"{LOGS}/paper_tables.log",
    benchmark:
        f"{LOGS}/benchmarks/paper_tables.tsv"
    resources:
        mem_mb=500,
    params:
        cfg=subtree(CFG, "data.simulated", "data.nouns"),
        code=code_hash(
            "analysis.paper.tables", "analysis.paper.macros", "analysis.paper.latex"
        ),
    script:
        "../scripts/paper_tables.py"


rule validation_table:
    """The simulated world's tables: coverage across worlds, and recovery of the worlds' truth."""
    input:
        numbers=PATHS.numbers,
    output:
        tex=VALIDATION_TABLE,
        recovery=RECOVERY_TABLE,
    log:
        f"{LOGS}/validation_table.log",
    benchmark:
        f"{LOGS}/benchmarks/validation_table.tsv"
    resources:
        mem_mb=500,
    params:
        code=code_hash("analysis.paper.validation", "analysis.paper.latex"),
    script:
        "../scripts/validation_table.py"


rule claims:
    """The paper's qualitative claims checked against the records (an unsupported one stops the build), with the margins of the scorecard and when each threshold last changed."""
    input:
        numbers=PATHS.numbers,
        claims=repo_file("paper/claims.yaml"),
        study=repo_file(STUDY_FILE),
    output:
        json=report(
            results("claims.json"),
            caption="../report/claims.rst",
            category="Numbers and claims",
        ),
        tex=f"{PAPER_GENERATED}/claims.tex",
        verdicts=f"{PAPER_GENERATED}/claim_verdicts.tex",
    log:
        f"{LOGS}/claims.log",
    benchmark:
        f"{LOGS}/benchmarks/claims.tsv"
    resources:
        mem_mb=500,
    params:
        cfg=subtree(CFG, "paper.claims_mode", "study", "data.nouns"),
        plan=_plan_revision(REPO, PLAN_FILES),
        code=code_hash(
            "analysis.paper.claims",
            "analysis.paper.plan_history",
            "analysis.paper.latex",
        ),
    script:
        "../scripts/claims.py"


# Its inputs are everything the PDF shows that this rule does not feed, so it runs again (and
# records the commit of now) whenever any of them was rebuilt; a new commit alone reruns nothing.
rule software_environment:
    """The software and the repository's commit that built this run's paper: packages, TeX Live, the OS."""
    input:
        numbers=f"{PAPER_GENERATED}/numbers.tex",
        dataset=f"{PAPER_GENERATED}/dataset.tex",
        tables=[*PAPER_TABLES, *VALIDATION_TABLES],
        claims=f"{PAPER_GENERATED}/claims.tex",
        verdicts=f"{PAPER_GENERATED}/claim_verdicts.tex",
        figures=FIGURE_FILES,
        sources=PAPER_SOURCES,
    output:
        environment=PATHS.environment,
        tex=f"{PAPER_GENERATED}/build.tex",
    log:
        f"{LOGS}/software_environment.log",
    benchmark:
        f"{LOGS}/benchmarks/software_environment.tsv"
    resources:
        mem_mb=200,
    params:
        packages=_package_fingerprint(),
    script:
        "../scripts/software_environment.py"


rule provenance_appendix:
    """'Where every number comes from': the short appendix's generated paragraph (what the PDF prints, where its audit site is) and each figure's caption link."""
    input:
        numbers=PATHS.numbers,
        text=PAPER_TEX,
        tables=[*PAPER_TABLES, *VALIDATION_TABLES],
        claims=f"{PAPER_GENERATED}/claims.tex",
        figures=FIGURE_FILES,
    output:
        tex=f"{PAPER_GENERATED}/provenance.tex",
        figures=f"{PAPER_GENERATED}/figures.tex",
    log:
        f"{LOGS}/provenance_appendix.log",
    benchmark:
        f"{LOGS}/benchmarks/provenance_appendix.tsv"
    resources:
        mem_mb=500,
    params:
        site=f"{PAPER_BUILD}/site/index.html",
        code=code_hash(
            "analysis.paper.provenance",
            "analysis.paper.source_check",
            "analysis.paper.site_links",
            "analysis.paper.macros",
            "analysis.paper.latex",
        ),
    script:
        "../scripts/provenance_appendix.py"


rule paper_pdf:
    """The paper compiled offline by latexmk (pdflatex + bibtex), byte-stable via SOURCE_DATE_EPOCH."""
    input:
        main=repo_file("paper/main.tex"),
        sources=PAPER_SOURCES,
        numbers=f"{PAPER_GENERATED}/numbers.tex",
        dataset=f"{PAPER_GENERATED}/dataset.tex",
        tables=[*PAPER_TABLES, *VALIDATION_TABLES],
        claims=f"{PAPER_GENERATED}/claims.tex",
        verdicts=f"{PAPER_GENERATED}/claim_verdicts.tex",
        provenance=f"{PAPER_GENERATED}/provenance.tex",
        figure_map=f"{PAPER_GENERATED}/figures.tex",
        figures=FIGURE_FILES,
        build=f"{PAPER_GENERATED}/build.tex",
    output:
        pdf=report(
            f"{PAPER_BUILD}/paper.pdf",
            caption="../report/paper.rst",
            category="Paper",
        ),
        aux=f"{PAPER_BUILD}/paper.aux",
        latex=directory(f"{PAPER_BUILD}/latex"),
    log:
        f"{LOGS}/paper_pdf.log",
    benchmark:
        f"{LOGS}/benchmarks/paper_pdf.tsv"
    resources:
        mem_mb=1000,
    params:
        cfg=subtree(CFG, "paper.source_date_epoch", "data.name"),
        code=code_hash("analysis.paper.compile"),
    script:
        "../scripts/paper_pdf.py"


#: each rule's description, for the site's rule pages (every rule is defined by now but the
#: Snakefile's own, which write no record), by the name the records give it: a sweep member's
#: own rules without its prefix, not the other members' (rules/sweep.smk)
_PREFIX = (config.get(_MEMBER_KEY) or {}).get("prefix", "")
RULE_DOCS = {
    r.name.removeprefix(_PREFIX): r.docstring or ""
    for r in workflow.rules
    if r.name.startswith(_PREFIX) or not _PREFIX
}


rule audit_site:
    """The audit site beside the PDF: one page per number (interval, design, inputs, lineage, config, code, model calls, citing sentences), searchable offline."""
    input:
        numbers=PATHS.numbers,
        claims=results("claims.json"),
        scorecard=results("scorecard.csv"),
        software=PATHS.environment,
        sources=results("tables/sources.json"),
        text=PAPER_TEX,
        tables=[*PAPER_TABLES, *VALIDATION_TABLES],
        figures=FIGURE_FILES,
        shards=CALL_SHARDS,
        aux=f"{PAPER_BUILD}/paper.aux",
        # the text macros and switches the PDF expands (the dataset's nouns, simulated or not)
        macros=[f"{PAPER_GENERATED}/dataset.tex", f"{PAPER_GENERATED}/numbers.tex"],
    output:
        site=directory(PATHS.site),
        # the same site as one file: Snakemake's HTML report embeds no folder
        archive=report(
            f"{PAPER_BUILD}/site.zip", caption="../report/site.rst", category="Paper"
        ),
    log:
        f"{LOGS}/audit_site.log",
    benchmark:
        f"{LOGS}/benchmarks/audit_site.tsv"
    resources:
        mem_mb=1000,
    params:
        cfg=subtree(CFG, "data.name", "data.simulated", "paper.title"),
        rules=RULE_DOCS,
        code=code_hash(
            "analysis.paper.site",
            "analysis.paper.citations",
            "analysis.paper.site_links",
            "analysis.paper.lineage",
            "analysis.paper.provenance",
            "analysis.llm.store",
        ),
    script:
        "../scripts/audit_site.py"
