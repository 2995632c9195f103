"""The shared style and the figure files: deterministic bytes, provenance in every file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from analysis.figures.estimates import FigureDataError, RecordPoint, estimate, estimates_under
from analysis.figures.style import (
    CREATOR,
    OKABE_ITO,
    PRODUCER,
    StudyFigure,
    new_figure,
    placeholder_figure,
    save_figure,
    sidecar_path,
)
from analysis.provenance import sha256_file
from analysis.workflow_io import read_records, save_rule_figure


def pdf_info(data: bytes, key: str) -> str | None:
    """A literal string of the PDF's Info dictionary (``/Key (...)``), unescaped."""
    m = re.search(rb"/" + key.encode() + rb" \(", data)
    if m is None:
        return None
    out, depth, i = bytearray(), 1, m.end()
    while True:
        c = data[i : i + 1]
        if c == b"\\":
            out += data[i + 1 : i + 2]
            i += 2
            continue
        if c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
            if depth == 0:
                return out.decode("latin-1")
        out += c
        i += 1


def small_figure() -> StudyFigure:
    fig = new_figure("demo", "tests.figures:small_figure", width=2.0, height=1.5, caption="A demo.")
    ax = fig.add_subplot()
    ax.bar([0, 1, 2], [0.2, -0.4, 0.7], color=OKABE_ITO["blue"])
    ax.set_xlabel("−0.4 minus sign and ρ")
    fig.study.records = ["b.key", "a.key", "a.key"]
    return fig


def _write_inputs(folder: Path) -> list[Path]:
    folder.mkdir(parents=True)
    a = folder / "records.json"
    a.write_text('{"a.key": {"value": 1}}\n')
    b = folder / "table.parquet"
    b.write_bytes(b"not really parquet")
    return [a, b]


def _smk(out: Path, inputs: list[Path]) -> SimpleNamespace:
    """What a rule script sees as ``snakemake``, reduced to the fields the helper reads."""
    return SimpleNamespace(
        rule="demo_figure",
        input=[str(p) for p in inputs],
        params=SimpleNamespace(cfg={"data.name": "bundled"}),
        output=SimpleNamespace(
            pdf=str(out / "demo.pdf"), png=str(out / "demo.png"), sidecar=str(out / "demo.json")
        ),
    )


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """One figure saved twice (different SOURCE_DATE_EPOCH; once through the rule helper) and
    a placeholder saved once: embedding fonts is slow, so the module saves only three times."""
    root = tmp_path_factory.mktemp("saved")
    inputs = _write_inputs(root / "in")
    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("SOURCE_DATE_EPOCH", "1000000000")
        one = save_figure(
            small_figure(),
            root / "one" / "demo.pdf",
            root / "one" / "demo.png",
            {"rule": "demo_figure", "inputs": inputs},
        )
        mp.setenv("SOURCE_DATE_EPOCH", "1700000000")
        two = save_rule_figure(small_figure(), _smk(root / "two", inputs))
    finally:
        mp.undo()
    fig = placeholder_figure("demo", "m:f", title="A figure", reason="no stage-3 ratings")
    placeholder = save_figure(
        fig, root / "ph" / "demo.pdf", root / "ph" / "demo.png", {"rule": "r", "inputs": inputs}
    )
    return SimpleNamespace(
        root=root, inputs=inputs, one=one, two=two, placeholder=placeholder, placeholder_fig=fig
    )


def test_saving_twice_gives_identical_bytes(saved: SimpleNamespace) -> None:
    root = saved.root
    for name in ("demo.pdf", "demo.png"):
        assert (root / "one" / name).read_bytes() == (root / "two" / name).read_bytes(), name
    one, two = dict(saved.one), dict(saved.two)
    assert [f["sha256"] for f in one.pop("files")] == [f["sha256"] for f in two.pop("files")]
    assert {k: v for k, v in two.items() if k not in ("config", "dataset")} == one
    pdf = (root / "one" / "demo.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and b"/CreationDate" not in pdf and b"/ModDate" not in pdf
    assert (root / "one" / "demo.png").read_bytes().startswith(b"\x89PNG")


def test_pdf_png_and_sidecar_name_the_source(saved: SimpleNamespace) -> None:
    out = saved.root / "one"
    hashes = {p.name: sha256_file(p) for p in saved.inputs}
    pdf = (out / "demo.pdf").read_bytes()
    assert pdf_info(pdf, "Creator") == CREATOR and pdf_info(pdf, "Producer") == PRODUCER
    assert "rule demo_figure" in (pdf_info(pdf, "Subject") or "")
    keywords = json.loads(pdf_info(pdf, "Keywords") or "{}")
    assert keywords["rule"] == "demo_figure"
    assert keywords["code"] == "tests.figures:small_figure"
    assert keywords["records"] == ["a.key", "b.key"]
    assert sorted(i["sha256"] for i in keywords["inputs"]) == sorted(hashes.values())
    png_text = Image.open(out / "demo.png").text
    assert json.loads(png_text["Comment"]) == keywords
    assert png_text["Software"] == CREATOR

    sidecar = json.loads(sidecar_path(out / "demo.pdf").read_text())
    assert sidecar == saved.one
    assert sidecar["figure"] == "demo" and sidecar["available"] is True
    assert sidecar["caption"] == "A demo." and "reason" not in sidecar
    assert [Path(i["path"]).name for i in sidecar["inputs"]] == ["records.json", "table.parquet"]
    assert {Path(i["path"]).name: i["sha256"] for i in sidecar["inputs"]} == hashes
    files = {Path(f["path"]).name: f["sha256"] for f in sidecar["files"]}
    assert files == {n: sha256_file(out / n) for n in ("demo.pdf", "demo.png")}


def test_rule_helper_writes_the_declared_outputs(saved: SimpleNamespace) -> None:
    out = saved.root / "two"
    assert saved.two["dataset"] == "bundled" and saved.two["config"] == {"data.name": "bundled"}
    assert json.loads((out / "demo.json").read_text()) == saved.two
    assert read_records(saved.inputs[0]) == {"a.key": {"value": 1}}


def test_placeholder_says_why_and_sidecar_says_unavailable(saved: SimpleNamespace) -> None:
    texts = [t.get_text() for t in saved.placeholder_fig.axes[0].texts]
    assert any("not available in this dataset:\nno stage-3 ratings" in t for t in texts)
    assert saved.placeholder["available"] is False
    assert saved.placeholder["reason"] == "no stage-3 ratings"
    pdf = (saved.root / "ph" / "demo.pdf").read_bytes()
    assert json.loads(pdf_info(pdf, "Keywords") or "{}")["available"] is False


def test_provenance_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="rule"):
        save_figure(small_figure(), tmp_path / "a.pdf", tmp_path / "a.png", {"inputs": []})
    with pytest.raises(FileNotFoundError, match="missing.json"):
        save_figure(
            small_figure(),
            tmp_path / "a.pdf",
            tmp_path / "a.png",
            {"rule": "r", "inputs": [tmp_path / "missing.json"]},
        )


def test_figures_do_not_touch_pyplot() -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    small_figure()
    placeholder_figure("x", "m:f", title="t", reason="r")
    assert plt.get_fignums() == before


def test_estimates_read_values_and_reject_bad_records() -> None:
    records = {
        "s.mean.gpt-5.4": {"value": 3.2, "ci_low": 3.0, "ci_high": 3.4},
        "s.mean.human": {"value": 3, "ci_low": None, "ci_high": None},
        "s.other": {"value": 1},
    }
    found = estimates_under(records, "s.mean")
    assert list(found) == ["gpt-5.4", "human"]
    assert found["gpt-5.4"] == RecordPoint(
        "s.mean.gpt-5.4", 3.2, 3.0, 3.4, records["s.mean.gpt-5.4"]
    )
    assert not found["human"].has_ci
    assert estimate(records, "absent") is None
    with pytest.raises(FigureDataError, match="record bad: has only one"):
        estimate({"bad": {"value": 1.0, "ci_low": 0.5}}, "bad")
    with pytest.raises(FigureDataError, match="record bad: field 'value'"):
        estimate({"bad": {"value": "high"}}, "bad")
    with pytest.raises(FigureDataError, match="above 'ci_high'"):
        estimate({"bad": {"value": 1.0, "ci_low": 2.0, "ci_high": 1.5}}, "bad")
