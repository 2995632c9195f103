# Rules of figures (docs/architecture.md): the study's seven figures from the canonical tables
# and the number records. Each rule writes a vector PDF (the paper includes it), a PNG preview
# and a JSON sidecar with the figure's source (rule, inputs with sha256, record keys drawn);
# the PDF and PNG carry the same source in their metadata. Figures a dataset cannot support
# are written as labelled "not available in this dataset" panels so the paper always builds.

FIGURE_CODE = code_hash("analysis.figures", "analysis.provenance")


rule pipeline_figure:
    """The three-stage pipeline diagram: what models and people do in each stage, with the dataset's human-judgment counts."""
    input:
        records=f"{RESULTS}/records/canonical_tables.json",
    output:
        pdf=report(
            f"{FIGURES}/pipeline.pdf",
            caption="../report/figure_pipeline.rst",
            category="Figures",
            labels={"figure": "pipeline", "file": "PDF (paper)"},
        ),
        png=report(
            f"{FIGURES}/pipeline.png",
            caption="../report/figure_pipeline.rst",
            category="Figures",
            labels={"figure": "pipeline", "file": "PNG preview"},
        ),
        sidecar=f"{FIGURES}/pipeline.json",
    params:
        cfg=subtree(CFG, "data.name"),
        code=FIGURE_CODE,
    log:
        f"{LOGS}/pipeline_figure.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/pipeline_figure.py"


FIGURE_FILES.append(f"{FIGURES}/pipeline.pdf")


rule attribute_quality_figure:
    """Stage-1 shares of accepted, uncertain and rejected human judgments by user source, real vs synthetic, with the acceptance CIs of the records."""
    input:
        judgments=f"{RESULTS}/tables/attribute_judgments.parquet",
        users=f"{RESULTS}/tables/users.parquet",
        records=f"{RESULTS}/records/stage1_statistics.json",
    output:
        pdf=report(
            f"{FIGURES}/attribute_quality.pdf",
            caption="../report/figure_attribute_quality.rst",
            category="Figures",
            labels={"figure": "attribute_quality", "file": "PDF (paper)"},
        ),
        png=report(
            f"{FIGURES}/attribute_quality.png",
            caption="../report/figure_attribute_quality.rst",
            category="Figures",
            labels={"figure": "attribute_quality", "file": "PNG preview"},
        ),
        sidecar=f"{FIGURES}/attribute_quality.json",
    params:
        cfg=subtree(CFG, "data.name"),
        code=FIGURE_CODE,
    log:
        f"{LOGS}/attribute_quality_figure.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/attribute_quality_figure.py"


FIGURE_FILES.append(f"{FIGURES}/attribute_quality.pdf")


rule kappa_matrix_figure:
    """The full pairwise Cohen's kappa matrix over human and model raters per stage-2 round, group blocks marked, group means from the records."""
    input:
        matrix=f"{RESULTS}/stage2/kappa_matrix.parquet",
        records=f"{RESULTS}/records/stage2_statistics.json",
    output:
        pdf=report(
            f"{FIGURES}/kappa_matrix.pdf",
            caption="../report/figure_kappa_matrix.rst",
            category="Figures",
            labels={"figure": "kappa_matrix", "file": "PDF (paper)"},
        ),
        png=report(
            f"{FIGURES}/kappa_matrix.png",
            caption="../report/figure_kappa_matrix.rst",
            category="Figures",
            labels={"figure": "kappa_matrix", "file": "PNG preview"},
        ),
        sidecar=f"{FIGURES}/kappa_matrix.json",
    params:
        cfg=subtree(CFG, "data.name"),
        code=FIGURE_CODE,
    log:
        f"{LOGS}/kappa_matrix_figure.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/kappa_matrix_figure.py"


FIGURE_FILES.append(f"{FIGURES}/kappa_matrix.pdf")


rule relevance_prf_figure:
    """Precision, recall and F1 against the human majority of retrieval baselines, each LLM and the trained classifier, with record CIs."""
    input:
        records=[
            f"{RESULTS}/records/stage2_statistics.json",
            f"{RESULTS}/records/baseline_votes.json",
            f"{RESULTS}/records/relevance_classifier.json",
        ],
    output:
        pdf=report(
            f"{FIGURES}/relevance_prf.pdf",
            caption="../report/figure_relevance_prf.rst",
            category="Figures",
            labels={"figure": "relevance_prf", "file": "PDF (paper)"},
        ),
        png=report(
            f"{FIGURES}/relevance_prf.png",
            caption="../report/figure_relevance_prf.rst",
            category="Figures",
            labels={"figure": "relevance_prf", "file": "PNG preview"},
        ),
        sidecar=f"{FIGURES}/relevance_prf.json",
    params:
        cfg=subtree(CFG, "data.name"),
        code=FIGURE_CODE,
    log:
        f"{LOGS}/relevance_prf_figure.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/relevance_prf_figure.py"


FIGURE_FILES.append(f"{FIGURES}/relevance_prf.pdf")


rule ratings_by_generator_figure:
    """Mean human rating of personalized vs generic responses per generator with record CIs, neutral line at 3."""
    input:
        records=f"{RESULTS}/records/stage3_statistics.json",
    output:
        pdf=report(
            f"{FIGURES}/ratings_by_generator.pdf",
            caption="../report/figure_ratings_by_generator.rst",
            category="Figures",
            labels={"figure": "ratings_by_generator", "file": "PDF (paper)"},
        ),
        png=report(
            f"{FIGURES}/ratings_by_generator.png",
            caption="../report/figure_ratings_by_generator.rst",
            category="Figures",
            labels={"figure": "ratings_by_generator", "file": "PNG preview"},
        ),
        sidecar=f"{FIGURES}/ratings_by_generator.json",
    params:
        cfg=subtree(CFG, "data.name"),
        code=FIGURE_CODE,
    log:
        f"{LOGS}/ratings_by_generator_figure.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/ratings_by_generator_figure.py"


FIGURE_FILES.append(f"{FIGURES}/ratings_by_generator.pdf")


rule mention_effect_figure:
    """Rating gap with vs without explicit attribute mentions, for people and each LLM judge, with record CIs."""
    input:
        records=f"{RESULTS}/records/stage3_statistics.json",
    output:
        pdf=report(
            f"{FIGURES}/mention_effect.pdf",
            caption="../report/figure_mention_effect.rst",
            category="Figures",
            labels={"figure": "mention_effect", "file": "PDF (paper)"},
        ),
        png=report(
            f"{FIGURES}/mention_effect.png",
            caption="../report/figure_mention_effect.rst",
            category="Figures",
            labels={"figure": "mention_effect", "file": "PNG preview"},
        ),
        sidecar=f"{FIGURES}/mention_effect.json",
    params:
        cfg=subtree(CFG, "data.name"),
        code=FIGURE_CODE,
    log:
        f"{LOGS}/mention_effect_figure.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/mention_effect_figure.py"


FIGURE_FILES.append(f"{FIGURES}/mention_effect.pdf")


rule mention_habit_vs_bias_figure:
    """Each model's explicit-mention rate as generator vs its mention bias as judge, with the Spearman record."""
    input:
        records=f"{RESULTS}/records/stage3_statistics.json",
    output:
        pdf=report(
            f"{FIGURES}/mention_habit_vs_bias.pdf",
            caption="../report/figure_mention_habit_vs_bias.rst",
            category="Figures",
            labels={"figure": "mention_habit_vs_bias", "file": "PDF (paper)"},
        ),
        png=report(
            f"{FIGURES}/mention_habit_vs_bias.png",
            caption="../report/figure_mention_habit_vs_bias.rst",
            category="Figures",
            labels={"figure": "mention_habit_vs_bias", "file": "PNG preview"},
        ),
        sidecar=f"{FIGURES}/mention_habit_vs_bias.json",
    params:
        cfg=subtree(CFG, "data.name"),
        code=FIGURE_CODE,
    log:
        f"{LOGS}/mention_habit_vs_bias_figure.log",
    resources:
        mem_mb=1000,
    conda:
        CONDA_ENV
    script:
        "../scripts/mention_habit_vs_bias_figure.py"


FIGURE_FILES.append(f"{FIGURES}/mention_habit_vs_bias.pdf")
