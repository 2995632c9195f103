"""The audit site from a small handmade build: entries, citations, calls, offline, stable bytes."""

from __future__ import annotations

import dataclasses
import json
import zipfile
from pathlib import Path

import pytest

from analysis.paper import site_links
from analysis.paper.citations import (
    read_citations,
    read_text_macros,
    resolve_branches,
    resolve_switches,
    to_text,
)
from analysis.paper.macros import alias_map, pdf_link
from analysis.paper.provenance import collect_figures
from analysis.paper.site import SiteInputs, read_scorecard, write_archive, write_site
from analysis.provenance import dump_json, sha256_file
from tests.paper.site_check import (
    broken_links,
    external_references,
    missing_fields,
    read_page,
)

KEY = "stage2.final.kappa.human_human"
ODD = "demo.Odd:key"  # upper case and a colon: its page name must travel to every file system
SHARD = "data/calls/stage2_relevance/sim-llm-a/0.jsonl"

TEXT = r"""\section{Stage 2: relevance}
\label{sec:stage2}
\paragraph{Agreement.} Some words first.
\IfRecordTF{KEY}{People agree at \rcci{KEY}, which Table~\ref{tab:agree} lists.}{%
Agreement is \NotAvailable{votes}.} \IfRecordTF{stage9.absent}{Never \rc{stage9.absent}.}{}
\Claim{toy}{Models agree more.} The odd one is \rc{ODDKEY}.

\begin{table}[tbp]\centering
\caption{Agreement, with \rc{KEY} once more.}\label{tab:agree}
\input{\GeneratedDir/tables/agreement}
\end{table}
\StudyFigure{kappa_matrix}{The matrix of \emph{every} pair.}
""".replace("ODDKEY", ODD).replace("KEY", KEY)


def call(i: int) -> dict:
    return {
        "key": f"{i:064x}",
        "stage": "stage2_relevance",
        "model_name": "sim-llm-a",
        "model": {"name": "sim-llm-a"},
        "prompt_version": "v1",
        "request": {
            "messages": [
                {"role": "system", "content": "You judge relevance."},
                {"role": "user", "content": f"Is fact {i} relevant? <answer>"},
            ],
            "params": {"temperature": 0},
        },
        "response": {
            "choices": [{"message": {"role": "assistant", "content": f"YES {i}"}}],
            "finish_reason": "stop",
        },
        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        "latency_s": 0.1,
        "created": "2026-06-01T00:00:00+00:00",
        "system_fingerprint": None,
        "cost_usd": 0.0,
        "executor": "direct",
    }


@pytest.fixture
def build(tmp_path: Path) -> tuple[Path, SiteInputs]:
    """A repository with records, a call-store shard, a figure, the text and a table."""
    root = tmp_path / "repo"
    votes = root / "results/demo/tables/relevance_votes.parquet"
    votes.parent.mkdir(parents=True)
    votes.write_bytes(b"votes")
    shard = root / SHARD
    shard.parent.mkdir(parents=True)
    shard.write_text("".join(json.dumps(call(i)) + "\n" for i in range(2)), encoding="utf-8")
    inputs = [{"path": "results/demo/tables/relevance_votes.parquet", "sha256": sha256_file(votes)}]
    numbers = {
        KEY: {
            "key": KEY,
            "value": 0.4312,
            "display": "0.43",
            "fmt": ".2f",
            "ci_low": 0.39,
            "ci_high": 0.47,
            "ci_level": 0.95,
            "n": 3973,
            "seed": 7,
            "method": "mean pairwise Cohen's kappa; cluster bootstrap over users",
            "rule": "stage2_statistics",
            "code": "analysis.stats.study_stage2:kappa_group_means",
            "inputs": inputs,
            "config": {"stats": {"n_boot": 2000, "units": ["user", "item"]}, "e": {}},
            "config_sha256": "c" * 64,
            "calls": {SHARD: 2},
            "extra": {"p_value": 0.001, "empty": []},
            "unit": "",
        },
        ODD: {
            "key": ODD,
            "value": 3,
            "fmt": ",d",
            "method": "a count",
            "rule": "other_rule",
            "code": "analysis.nowhere:count",
            "inputs": [],
            "config": {},
            "calls": {},
        },
    }
    dump_json(numbers, root / "results/demo/numbers.json")
    fig = root / "figures/demo/kappa_matrix.pdf"
    fig.parent.mkdir(parents=True)
    fig.write_bytes(b"%PDF-1.4 fake")
    fig.with_suffix(".png").write_bytes(b"\x89PNG fake")
    sidecar = {"rule": "kappa_matrix_figure", "code": "analysis.figures.kappa_matrix:f"}
    sidecar |= {"inputs": inputs, "records": [KEY]}
    fig.with_suffix(".json").write_text(json.dumps(sidecar))
    tex = root / "paper/sections/stage2.tex"
    tex.parent.mkdir(parents=True)
    tex.write_text(TEXT, encoding="utf-8")
    table = root / "paper/generated/demo/tables/agreement.tex"
    table.parent.mkdir(parents=True)
    table.write_text(rf"A & \rcint{{{KEY}}} & \rclink{{{KEY}}}{{0.001}} \\", encoding="utf-8")
    aux = root / "paper/build/demo/paper.aux"
    aux.parent.mkdir(parents=True)
    aux.write_text(
        "\\newlabel{sec:stage2}{{5}{9}{Stage 2}{section.5}{}}\n"
        "\\newlabel{tab:agree}{{6}{10}{Agreement}{table.6}{}}\n"
        "\\newlabel{fig:kappa_matrix}{{4}{11}{Matrix}{figure.4}{}}\n"
    )
    (root / "results/demo/scorecard.csv").write_text(
        f"name,key,published,verdict\nkappa_human_human,{KEY},0.43,reproduced\n"
    )
    claims = {
        "mode": "report",
        "claims": {
            "toy": {
                "verdict": "supported",
                "statement": "Models agree more.",
                "keys": [KEY],
                "condition": {"key": KEY, "field": "ci_low", "op": ">", "value": 0.0},
                "evidence": ["holds"],
            }
        },
    }
    figures = collect_figures(["figures/demo/kappa_matrix.pdf"], root)
    aliases = alias_map(numbers)
    cites = read_citations([tex], [table], figures, numbers, aliases, claims["claims"], aux)
    software = {"python": "3.11", "packages": {"jinja2": "3.1.6", "numpy": "2.4"}}
    software["repository"] = {"commit": "abc", "uncommitted_changes": False}
    inp = SiteInputs(
        numbers=numbers,
        dataset="demo",
        title="A title",
        simulated=True,
        citations=cites,
        claims=claims,
        scorecard=read_scorecard(root / "results/demo/scorecard.csv"),
        software=software,
        figures=figures,
        call_shards=[SHARD],
        rule_docs={"stage2_statistics": "Agreement statistics of stage 2."},
        absent={"stage9.absent", KEY},
        numbers_file="results/demo/numbers.json",
    )
    return root, inp


def test_every_number_has_a_page_with_every_field(build, tmp_path: Path) -> None:
    root, inp = build
    site = tmp_path / "site"
    counts = write_site(inp, site, root)
    assert counts == {"entries": 2, "rules": 3, "shards": 1}
    assert missing_fields(site, dict(inp.numbers)) == []
    for key in inp.numbers:
        assert key in read_page(site / site_links.entry_page(key)).ids
    assert site_links.entry_page(ODD) != f"numbers/{ODD}.html"  # no ':' or case in file names
    # and the link the PDF carries for a key is the same page and anchor
    assert pdf_link(KEY) == f"site/{site_links.entry_page(KEY)}\\#{KEY}"


def test_an_entry_shows_interval_design_inputs_lineage_code_calls_and_citations(
    build, tmp_path: Path
) -> None:
    root, inp = build
    site = tmp_path / "site"
    write_site(inp, site, root)
    html = (site / site_links.entry_page(KEY)).read_text()
    text = " ".join(html.split())
    assert "95% CI [0.39, 0.47]" in text and "cluster bootstrap over users" in text
    assert "n = 3,973" in text and sha256_file(root / inp.numbers[KEY]["inputs"][0]["path"]) in text
    assert "analysis.stats.study_stage2:kappa_group_means" in text and "commit <code>abc" in text
    assert "Agreement statistics of stage 2." in text
    # the citing sentence, as the PDF prints it, with this number marked; the guard's other
    # branch, the absent key's sentence and the claim's id are not printed
    assert "5 Stage 2: relevance · Agreement" in text
    assert (
        'People agree at <a href="../numbers/stage2.final.kappa.human_human.html'
        '#stage2.final.kappa.human_human" class="number current">0.43 [95% CI 0.39, 0.47]</a>, '
        "which Table 6 lists."
    ) in text
    assert "Never" not in text and "NotAvailable" not in text
    assert "Table 6 (<code>agreement</code>), page 10" in text
    assert "Agreement, with 0.43 once more." in text
    assert "Figure 4</a>, page 11" in text and "The matrix of every pair." in text
    assert "(supported): Models agree more." in text
    assert "Scorecard row" in text and "reproduced" in text
    assert f'href="../{site_links.entry_page(KEY).replace("numbers/", "calls/")}' not in text
    assert "calls/stage2_relevance/sim-llm-a/0.html" in text
    calls = " ".join((site / "calls/stage2_relevance/sim-llm-a/0.html").read_text().split())
    assert "You judge relevance." in calls and "Is fact 1 relevant? &lt;answer&gt;" in calls
    assert "YES 0" in calls and "YES 1" in calls
    odd = (site / site_links.entry_page(ODD)).read_text()
    assert "Some words first" not in odd and "The odd one is" in odd


def test_the_index_rules_figures_claims_software_and_absent_keys(build, tmp_path: Path) -> None:
    root, inp = build
    site = tmp_path / "site"
    write_site(inp, site, root)
    index = " ".join((site / "index.html").read_text().split())
    assert '<script src="assets/search.js"></script>' in index
    assert 'data-sections="5 Stage 2: relevance · Agreement|Stage 2: relevance"' in index
    assert "<code>stage9.absent</code>" in index  # asked for, not in this dataset
    assert (site / "assets/search.js").is_file() and (site / "assets/site.css").is_file()
    rule = " ".join((site / site_links.rule_page("stage2_statistics")).read_text().split())
    assert "Agreement statistics of stage 2." in rule and KEY in rule
    figures = (site / "figures.html").read_text()
    assert 'id="figure-kappa_matrix"' in figures and (site / "figures/kappa_matrix.png").is_file()
    claims = (site / "claims.html").read_text()
    assert 'id="claim-toy"' in claims and "Models agree more." in claims
    software = (site / "software.html").read_text()
    assert "<td>jinja2</td><td>3.1.6</td>" in software and "<td>numpy</td><td>2.4</td>" in software
    assert external_references(site) == []
    for page in site.rglob("*.html"):
        assert broken_links(page, read_page(page).links) == [], page


def test_the_site_is_byte_identical_when_written_again(build, tmp_path: Path) -> None:
    root, inp = build
    first, second = tmp_path / "a" / "site", tmp_path / "b" / "site"
    write_site(inp, first, root)
    write_site(inp, second, root)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)
    write_archive(first, tmp_path / "a.zip")
    write_archive(second, tmp_path / "b.zip")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        assert sorted(zf.namelist()) == sorted(f"site/{f.as_posix()}" for f in files)
    assert str(root) not in "".join((first / f).read_text(errors="ignore") for f in files)


def test_guards_and_claims_resolve_as_the_pdf_prints_them() -> None:
    present = {"a"}.__contains__
    claims = {"c": {"verdict": "not supported", "negative": "That it holds is not supported."}}
    text = r"\IfRecordTF{a}{A \IfRecordsTF{a,b}{both}{only a}}{none} \Claim{c}{It holds.}"
    assert resolve_branches(text, present, claims) == "A only a That it holds is not supported."
    untested = resolve_branches(r"\Claim{x}{It holds.}", present, {})
    assert untested == "[Not testable on this dataset: It holds.]"
    why = "with 5 models only rho = 1 reaches p < 0.05"
    undecided = {"x": {"verdict": "inconclusive", "why_inconclusive": why}}
    assert resolve_branches(r"\Claim{x}{It holds.}", present, undecided) == (
        f"[Inconclusive on this dataset ({why}): It holds.]"
    )
    text = r"Cohen's $\kappa$ --- 58.0\% of \emph{all} (\citep{a}); see~\ref{t}"
    assert to_text(text, {"t": "3"}) == "Cohen's κ — 58.0% of all ([a]); see 3"
    assert to_text(r"a~\textbf{b}\,c -- d", {}) == "a b c – d"


#: what rule dataset_description and rule numbers write for a simulated world
DATASET_TEX = r"""% Generated. Do not edit.
\newcommand\people{simulated raters}
\newcommand\People{Simulated raters}
\newcommand\RealUsers{real-like (simulated)}
\newcommand\DatasetRaters{stage~1: 9 \people{} and \texttt{sim-llm-a}}
\newcommand\Takes[1]{#1}
\newif\ifDatasetSimulated
\DatasetSimulatedtrue
"""
NUMBERS_TEX = "\\newif\\ifSmallRealModel\n% no \\SmallRealModeltrue: no small model here\n"


def test_sentences_read_the_dataset_nouns_and_switches_as_the_pdf_prints_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "dataset.tex").write_text(DATASET_TEX, encoding="utf-8")
    (tmp_path / "numbers.tex").write_text(NUMBERS_TEX, encoding="utf-8")
    macros = read_text_macros([tmp_path / "dataset.tex", tmp_path / "numbers.tex"])
    assert macros.switches == {"DatasetSimulated": True, "SmallRealModel": False}
    assert macros.words["people"] == "simulated raters" and "Takes" not in macros.words
    tex = tmp_path / "stage2.tex"
    tex.write_text(
        "\\section{Stage 2}\n"
        "In the final round the \\people{} agree with each other at \\rcci{KEY}.\n"
        "\\ifDatasetSimulated In this world \\People{} vote with noise (\\rc{KEY}).\n"
        "\\else Disagreement between people is not noise (\\rc{KEY}).\n\\fi\n"
        "\\ifSmallRealModel The small model is at \\rc{KEY}.\\fi\n"
        "Raters: \\DatasetRaters; users \\RealUsers{} at \\rc{KEY}.\n".replace("KEY", KEY),
        encoding="utf-8",
    )
    numbers = {KEY: {"key": KEY, "value": 0.43, "fmt": ".2f", "ci_low": 0.39, "ci_high": 0.47}}
    cites = read_citations([tex], [], [], numbers, {}, {}, None, macros)
    texts = [s.text for s in cites.sentences_of(KEY)]
    assert texts == [
        "In the final round the simulated raters agree with each other at 0.43 [0.39, 0.47].",
        "In this world Simulated raters vote with noise (0.43).",
        "Raters: stage 1: 9 simulated raters and sim-llm-a; users real-like (simulated) at 0.43.",
    ]
    # an \if the build does not define is left to the reader; nested ones are resolved
    nested = r"a\ifDatasetSimulated b\ifSmallRealModel c\else d\fi\else e\fi f\iffoo g\fi"
    assert resolve_switches(nested, macros.switches) == r"a b d f\iffoo g\fi"


def test_captions_read_the_dataset_nouns_and_belong_to_their_own_table(tmp_path: Path) -> None:
    # a float's caption with a noun; a caption a source defines once (with a noun) and a
    # generated long table prints; a table set in a `center` between two floats, which has no
    # caption and must not take a neighbour's
    (tmp_path / "dataset.tex").write_text(DATASET_TEX, encoding="utf-8")
    macros = read_text_macros([tmp_path / "dataset.tex"])
    tex = tmp_path / "appendix.tex"
    tex.write_text(
        "\\section{Appendix}\n"
        "\\begin{table}[htbp]\\centering\n"
        "\\caption{Agreement of the \\people.}\\label{tab:agree}\n"
        "\\input{\\GeneratedDir/tables/agreement}\n"
        "\\end{table}\n\n"
        "\\newcommand\\SupportCaption{What the \\people{} can support.}\n"
        "\\input{\\GeneratedDir/tables/support}\n\n"
        "\\begin{center}\n\\input{\\GeneratedDir/tables/usage}\n\\end{center}\n\n"
        "\\begin{table}[htbp]\\centering\n"
        "\\input{\\GeneratedDir/tables/model}\n"
        "\\caption{\\People{} and one model.}\\label{tab:model}\n"
        "\\end{table}\n",
        encoding="utf-8",
    )
    tables = tmp_path / "tables"
    tables.mkdir()
    cell = f"A & \\rc{{{KEY}}} \\\\\n"
    for name in ("agreement", "usage", "model"):
        (tables / f"{name}.tex").write_text(cell, encoding="utf-8")
    (tables / "support.tex").write_text(
        "\\begin{longtable}{@{}lr@{}}\n\\caption{\\SupportCaption}\\label{tab:support}\\\\\n"
        + cell
        + "\\end{longtable}\n",
        encoding="utf-8",
    )
    aux = tmp_path / "paper.aux"
    aux.write_text(
        "\\newlabel{tab:agree}{{1}{2}{}{table.1}{}}\n"
        "\\newlabel{tab:support}{{2}{3}{\\SupportCaption \\relax }{table.2}{}}\n"
        "\\newlabel{tab:model}{{3}{4}{}{table.3}{}}\n"
    )
    numbers = {KEY: {"key": KEY, "value": 0.43, "fmt": ".2f"}}
    cites = read_citations([tex], sorted(tables.glob("*.tex")), [], numbers, {}, {}, aux, macros)
    floats = {f.name: (f.label, f.number, f.caption) for f in cites.floats_of(KEY)}
    assert floats == {
        "agreement": ("tab:agree", "1", "Agreement of the simulated raters."),
        "support": ("tab:support", "2", "What the simulated raters can support."),
        "usage": ("", "", ""),
        "model": ("tab:model", "3", "Simulated raters and one model."),
    }
    # the definition prints nothing, so it is no sentence of the text
    assert not any("support" in s.text for s in cites.sentences)


def test_a_simulated_build_s_scorecard_page_says_its_verdicts_are_by_construction(
    build, tmp_path: Path
) -> None:
    """On simulated data every "reproduced" is true by construction: the page says so above
    the table; a real build's page has no such note (issue 35)."""
    from analysis.paper.scorecard import SIMULATED_CAVEAT

    root, inp = build
    write_site(inp, tmp_path / "sim", root)
    page = " ".join((tmp_path / "sim/scorecard.html").read_text().split())
    assert 'id="simulated-caveat"' in page
    assert "Simulated data: the simulator was calibrated to the published figures" in page
    assert page.index("simulated-caveat") < page.index("<table>")
    assert SIMULATED_CAVEAT[1:] in page
    write_site(dataclasses.replace(inp, simulated=False), tmp_path / "real", root)
    assert "simulated-caveat" not in (tmp_path / "real/scorecard.html").read_text()
