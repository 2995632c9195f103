# The paper: every record -> numbers.json and LaTeX macros -> generated tables, checked claims
# and the provenance appendix -> paper/build/paper.pdf. Included last: RECORD_FILES and
# FIGURE_FILES are complete by the time the rules below read them.

from pathlib import Path as _Path

from analysis.paper.call_usage import store_shards as _store_shards
from analysis.paper.tables import TABLE_NAMES as _TABLE_NAMES

#: the hand-written paper sources (the generated ones are listed per rule below)
PAPER_TEX = ["paper/main.tex", *sorted(str(p) for p in _Path("paper/sections").glob("*.tex"))]
PAPER_SOURCES = [*PAPER_TEX, "paper/refs.bib"]
PAPER_TABLES = [f"paper/generated/tables/{name}.tex" for name in _TABLE_NAMES]
CALL_SHARDS = [str(p) for p in _store_shards(CFG["llm"]["store"])]


rule call_usage:
    """Calls, tokens and cost of the model calls in the call store, per stage and model."""
    input:
        shards=CALL_SHARDS,
    output:
        records=f"{RESULTS}/records/call_usage.json",
        status=f"{RESULTS}/paper/call_usage.json",
    params:
        cfg=subtree(CFG, "llm.store"),
        code=code_hash("analysis.paper.call_usage", "analysis.provenance", "analysis.llm"),
    log:
        f"{LOGS}/call_usage.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/call_usage.py"


RECORD_FILES.append(f"{RESULTS}/records/call_usage.json")


rule numbers:
    """Every record merged into numbers.json and rendered as one LaTeX macro per key."""
    input:
        records=RECORD_FILES,
    output:
        json=report(
            f"{RESULTS}/numbers.json",
            caption="../report/numbers.rst",
            category="Numbers and claims",
        ),
        tex="paper/generated/numbers.tex",
    params:
        code=code_hash("analysis.provenance", "analysis.paper.macros", "analysis.paper.latex"),
    log:
        f"{LOGS}/numbers.log",
    resources:
        mem_mb=500,
    conda:
        CONDA_ENV
    script:
        "../scripts/numbers.py"


rule dataset_description:
    """Which dataset built this PDF and whether it is simulated, for the data section."""
    output:
        tex="paper/generated/dataset.tex",
    params:
        cfg=subtree(CFG, "data", "paper.title"),
        code=code_hash("analysis.paper.dataset_info", "analysis.paper.latex"),
    log:
        f"{LOGS}/dataset_description.log",
    resources:
        mem_mb=200,
    conda:
        CONDA_ENV
    script:
        "../scripts/dataset_description.py"


rule paper_tables:
    """The paper's booktabs tables, every cell a record (agreement, models, judges, usage)."""
    input:
        numbers=f"{RESULTS}/numbers.json",
        usage=f"{RESULTS}/paper/call_usage.json",
    output:
        tables=PAPER_TABLES,
    params:
        code=code_hash(
            "analysis.paper.tables", "analysis.paper.macros", "analysis.paper.latex"
        ),
    log:
        f"{LOGS}/paper_tables.log",
    resources:
        mem_mb=500,
    conda:
        CONDA_ENV
    script:
        "../scripts/paper_tables.py"


rule claims:
    """The paper's qualitative claims checked against the records; an unsupported one stops the build."""
    input:
        numbers=f"{RESULTS}/numbers.json",
        claims="paper/claims.yaml",
    output:
        json=report(
            f"{RESULTS}/claims.json",
            caption="../report/claims.rst",
            category="Numbers and claims",
        ),
        tex="paper/generated/claims.tex",
        verdicts="paper/generated/claim_verdicts.tex",
    params:
        cfg=subtree(CFG, "paper.claims_mode"),
        code=code_hash("analysis.paper.claims", "analysis.paper.latex"),
    log:
        f"{LOGS}/claims.log",
    resources:
        mem_mb=500,
    conda:
        CONDA_ENV
    script:
        "../scripts/claims.py"


rule provenance_appendix:
    """'Where every number comes from': one row per number the paper prints and per figure."""
    input:
        numbers=f"{RESULTS}/numbers.json",
        text=PAPER_TEX,
        tables=PAPER_TABLES,
        claims="paper/generated/claims.tex",
        figures=FIGURE_FILES,
    output:
        tex="paper/generated/provenance.tex",
        figures="paper/generated/figures.tex",
    params:
        code=code_hash(
            "analysis.paper.provenance",
            "analysis.paper.source_check",
            "analysis.paper.macros",
            "analysis.paper.latex",
        ),
    log:
        f"{LOGS}/provenance_appendix.log",
    resources:
        mem_mb=500,
    conda:
        CONDA_ENV
    script:
        "../scripts/provenance_appendix.py"


rule paper_pdf:
    """The paper compiled offline by latexmk (pdflatex + bibtex), byte-stable via SOURCE_DATE_EPOCH."""
    input:
        main="paper/main.tex",
        sources=PAPER_SOURCES,
        numbers="paper/generated/numbers.tex",
        dataset="paper/generated/dataset.tex",
        tables=PAPER_TABLES,
        claims="paper/generated/claims.tex",
        verdicts="paper/generated/claim_verdicts.tex",
        provenance="paper/generated/provenance.tex",
        figure_map="paper/generated/figures.tex",
        figures=FIGURE_FILES,
    output:
        pdf=report(
            "paper/build/paper.pdf",
            caption="../report/paper.rst",
            category="Paper",
        ),
    params:
        cfg=subtree(CFG, "paper.source_date_epoch"),
        code=code_hash("analysis.paper.compile"),
    log:
        f"{LOGS}/paper_pdf.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/paper_pdf.py"
