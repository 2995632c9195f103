"""The paper compiles with the real latexmk, from fake records, byte-stably; the rules run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from analysis.paper import claims as C
from analysis.paper.compile import LatexError, compile_paper
from analysis.paper.macros import render_numbers_tex
from analysis.paper.provenance import render_figures_tex, render_provenance_tex
from analysis.provenance import attach_provenance
from tests.paper.fake_records import records_by_rule
from tests.paper.harness import make_paper_workdir

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("latexmk") is None, reason="latexmk (TeX Live) not installed"),
]
EPOCH = 1780272000

MINIMAL = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage{graphicx}
\usepackage{hyperref}
\input{\GeneratedDir/numbers}
\input{\GeneratedDir/claim_verdicts}
\input{\GeneratedDir/figures}
\begin{document}
Kappa \rcci{stage2.final.kappa.human_human}; alias \StageTwoFinalKappaHumanHuman;
share \rc{stage3.no_better_share}.
\IfRecordTF{stage9.absent}{PRESENT}{\NotAvailable{stage nine}}
\Claim{toy}{Models agree with models.}
\Claim{toyno}{Humans and models agree strongly.}
\ClaimsModeSentence
\StudyFigure{kappa_matrix}{A figure this build did not draw.}
BODYKEY
\clearpage
\input{\GeneratedDir/provenance}
\end{document}
"""


def pdf_text(pdf: Path) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) not installed")
    out = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True)
    return " ".join(out.stdout.split())


def minimal_paper(root: Path, body: str = "") -> Path:
    numbers: dict = {}
    for rule, recs in records_by_rule("full").items():
        numbers |= attach_provenance(recs, rule=rule, inputs=[])
    gen = root / "paper" / "generated" / "test"
    gen.mkdir(parents=True)
    (gen / "numbers.tex").write_text(render_numbers_tex(numbers))
    claim = C.Claim(
        "toy",
        "Models agree.",
        {"key": "stage2.final.kappa.model_model", "field": "ci_low", "op": ">", "value": 0.5},
    )
    refuted = C.Claim(
        "toyno",
        "Humans and models agree strongly.",
        {"key": "stage2.final.kappa.human_model", "field": "ci_low", "op": ">", "value": 0.8},
        "That humans and models agree strongly is not supported on this dataset.",
    )
    (gen / "claim_verdicts.tex").write_text(
        C.render_verdicts_tex(C.evaluate_claims([claim, refuted], numbers), "report")
    )
    (gen / "figures.tex").write_text(render_figures_tex([], root, root / "paper"))
    used = {"stage2.final.kappa.human_human", "stage3.no_better_share"}
    (gen / "provenance.tex").write_text(
        "\\usepackage{longtable}" * 0 + render_provenance_tex(numbers, used)
    )
    main = root / "paper" / "main.tex"
    tex = MINIMAL.replace("BODYKEY", body).replace(
        r"\usepackage{hyperref}",
        "\\usepackage{booktabs}\\usepackage{longtable}\n\\usepackage{hyperref}",
    )
    main.write_text(tex)
    return main


def build(main: Path) -> Path:
    """Compile a minimal paper as the workflow does: dataset ``test``, its own build folder."""
    paper = main.parent
    return compile_paper(
        main,
        paper / "build" / "test" / "paper.pdf",
        generated=paper / "generated" / "test",
        source_date_epoch=EPOCH,
    )


def test_minimal_paper_compiles_with_numbers_links_and_claims(tmp_path: Path) -> None:
    main = minimal_paper(tmp_path)
    pdf = build(main)
    text = pdf_text(pdf)
    assert "Kappa 0.43 [95% CI 0.39, 0.47]" in text
    assert "alias 0.43" in text and "share 54.6%" in text
    assert "(not available in this dataset: stage nine)" in text
    assert "Models agree with models.§" in text
    # a claim the data do not support: its negative sentence, not the claim, is printed
    assert "That humans and models agree strongly is not supported on this dataset.§" in text
    assert "Humans and models agree strongly." not in text
    assert "This PDF was built in report mode" in text
    assert "Figure kappa_matrix is not produced in this build." in text
    assert "Its audit site is the folder site beside the PDF" in " ".join(text.split())


def test_the_pdf_is_byte_stable(tmp_path: Path) -> None:
    main = minimal_paper(tmp_path / "a")
    first = build(main)
    first_bytes = first.read_bytes()
    second = build(main)
    assert second.read_bytes() == first_bytes
    assert b"/CreationDate (D:20260601000000Z)" in first_bytes


def test_an_unknown_key_is_a_latex_error_naming_it(tmp_path: Path) -> None:
    main = minimal_paper(tmp_path, body=r"\rc{stage2.final.kappa.human_humna}")
    with pytest.raises(LatexError, match="stage2.final.kappa.human_humna"):
        build(main)


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        ["snakemake", "--cores", "2", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def test_the_paper_rules_build_the_full_paper_from_records(tmp_path: Path) -> None:
    work = make_paper_workdir(tmp_path / "w", "full")
    snakemake(work)
    pdf = work / "paper" / "build" / "test" / "paper.pdf"
    text = pdf_text(pdf)
    assert "It is simulated." in text
    assert "Where every number comes from" in text
    assert "Claims checked at build time" in text
    assert "??" not in text  # no undefined reference or citation
    assert "(Provenance.)" in text  # the figure registered in FIGURE_FILES, linked
    provenance = (work / "paper" / "generated" / "test" / "provenance.tex").read_text()
    assert "records of this build" in provenance and r"\href{site/index.html}" in provenance
    assert r"\hypertarget" not in provenance  # the rows are the audit site's entries now
    numbers_tex = (work / "paper" / "generated" / "test" / "numbers.tex").read_text()
    key = "stage2.final.kappa.human_human"
    assert rf"rc@url@{key}\endcsname{{site/numbers/{key}.html\#{key}}}" in numbers_tex
    log = (work / "logs" / "test" / "paper_pdf.log").read_text()
    assert "latexmk" in log  # LaTeX's output goes to the rule log


def test_a_dataset_without_stage3_ratings_builds_and_says_so(tmp_path: Path) -> None:
    work = make_paper_workdir(tmp_path / "w", "real_like", simulated=False)
    snakemake(work)
    text = pdf_text(work / "paper" / "build" / "test" / "paper.pdf")
    assert "It holds real data" in text
    assert "(not available in this dataset: stage-3 ratings by the" in text
    assert "not testable on this dataset" in text.lower()  # the claims appendix
    assert "It is simulated." not in text


def test_a_claim_the_data_do_not_support_stops_a_strict_build(tmp_path: Path) -> None:
    """paper.claims_mode=strict stops on an unsupported claim; the default (report) prints it."""
    work = make_paper_workdir(tmp_path / "w", "full")
    claims = work / "paper" / "claims.yaml"
    claims.write_text(
        claims.read_text().replace(
            '      op: ">"\n      value: 0.5', '      op: ">"\n      value: 0.9'
        )
    )
    proc = snakemake(
        work,
        "paper/generated/test/claims.tex",
        "--config",
        "overrides=paper.claims_mode=strict",
        check=False,
    )
    assert proc.returncode != 0
    log = (work / "logs" / "test" / "claims.log").read_text()
    assert "personalization_often_no_better" in log
    assert "stage3.no_better_share lower CI bound = 0.516 > 0.9" in log  # judged on the CI
    snakemake(work, "paper/generated/test/claims.tex")
    tex = (work / "paper" / "generated" / "test" / "claims.tex").read_text()
    assert r"\textbf{not supported}" in tex


def test_two_datasets_build_side_by_side(tmp_path: Path) -> None:
    """Each dataset's PDF reads its own generated folder and leaves the other's build alone."""
    paper = tmp_path / "paper"
    for dataset in ("bundled", "realdata"):
        (paper / "generated" / dataset).mkdir(parents=True)
        (paper / "generated" / dataset / "name.tex").write_text(f"Built from {dataset}.")
    main = paper / "main.tex"
    main.write_text(
        "\\documentclass{article}\n\\providecommand{\\GeneratedDir}{generated/bundled}\n"
        "\\begin{document}\n\\input{\\GeneratedDir/name}\n\\end{document}\n"
    )
    pdfs = {
        dataset: compile_paper(
            main,
            paper / "build" / dataset / "paper.pdf",
            generated=paper / "generated" / dataset,
            source_date_epoch=EPOCH,
        )
        for dataset in ("bundled", "realdata")
    }
    assert "Built from bundled." in pdf_text(pdfs["bundled"])
    assert "Built from realdata." in pdf_text(pdfs["realdata"])
    assert not (paper / "build" / "paper.pdf").exists()


def test_the_build_removes_nothing_but_its_own_latex_folder(tmp_path: Path) -> None:
    """The build folder holds other rules' outputs (the audit site): compiling empties only
    latexmk's own work folder (declared by the paper rule), and refuses a work folder that
    would hold the sources (with data.name=.. the build folder was paper/ itself)."""
    main = minimal_paper(tmp_path)
    build_dir = main.parent / "build" / "test"
    (build_dir / "site").mkdir(parents=True)
    (build_dir / "site" / "index.html").write_text("<p>another rule's output</p>")
    (build_dir / "latex").mkdir()
    (build_dir / "latex" / "stale.aux").write_text("\\relax")
    pdf = build(main)
    assert pdf == build_dir / "paper.pdf" and pdf.is_file()
    assert (build_dir / "site" / "index.html").read_text() == "<p>another rule's output</p>"
    assert not (build_dir / "latex" / "stale.aux").exists()
    assert (build_dir / "latex" / "paper.log").is_file()
    sources = sorted(p.relative_to(main.parent) for p in main.parent.rglob("*.tex"))
    with pytest.raises(ValueError, match="would hold"):
        compile_paper(
            main,
            main.parent / "build" / "test" / "paper.pdf",
            generated=main.parent / "generated" / "test",
            source_date_epoch=EPOCH,
            workdir=main.parent,
        )
    assert sorted(p.relative_to(main.parent) for p in main.parent.rglob("*.tex")) == sources
