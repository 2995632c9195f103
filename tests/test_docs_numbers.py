"""No result is typed into docs/*.md: a number there that equals a ``numbers.json`` value at
its printed precision fails. Docs say how to print results (``recenter scorecard``,
``recenter numbers``) and which key holds them; typed copies drift from the build."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from analysis import REPO_ROOT

#: a number as prose prints it: optional sign, digits with thousands commas, decimals, percent;
#: not part of an identifier or version (``gpt-5.4``, ``sha256``, ``1e-200``)
NUMBER = re.compile(r"(?<![\w.\-/])[-+]?\d[\d,]*(?:\.\d+)?%?(?![\w.]*\w)")


def _generic(display: str) -> bool:
    """Displays too common to mean a result: small bare integers; 0, a half and 1 in any
    format (a half is chance for an AUROC, half a price, half a second, half a line width, and
    a pooled coverage's p-value can print as 0.5)."""
    bare = display.lstrip("+-").rstrip("%").replace(",", "")
    try:
        x = float(bare)
    except ValueError:
        return True  # a text display (a verdict label, a published wording)
    if display.isdigit() and x < 1000:
        return True
    return x in (0.0, 0.5, 1.0, 50.0, 100.0)


def result_displays(numbers: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """printed value (sign dropped) -> one key printing it, for every distinctive record."""
    out: dict[str, str] = {}
    for key, rec in sorted(numbers.items()):
        display = str(rec.get("display") or "")
        if display and not _generic(display):
            out.setdefault(display.lstrip("+-"), key)
    return out


def typed_results(texts: Mapping[str, str], numbers: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``file:line: token (= key)`` for every number in ``texts`` a record prints."""
    displays = result_displays(numbers)
    hits = []
    for name, text in texts.items():
        for line_no, line in enumerate(text.splitlines(), 1):
            for token in NUMBER.findall(line):
                key = displays.get(token.lstrip("+-"))
                if key is not None:
                    hits.append(f"{name}:{line_no}: {token} (= {key})")
    return hits


#: fenced YAML blocks are config examples (a price, a temperature), never results
YAML_BLOCK = re.compile(r"^```ya?ml\n.*?^```", re.M | re.S)


def docs_texts() -> dict[str, str]:
    """docs/*.md with fenced YAML blocks blanked (line numbers kept)."""
    out = {}
    for path in sorted((REPO_ROOT / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        out[path.name] = YAML_BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return out


def _builds() -> Iterable[Path]:
    """This checkout's builds of the datasets the docs describe (``config/data/*.yaml``).

    A scaled simulated world (``data.name=sim-scale-K``) is a benchmark's, not the docs'
    subject: its thousands of numbers would flag a version or a config value by coincidence.
    """
    names = sorted(p.stem for p in (REPO_ROOT / "config" / "data").glob("*.yaml"))
    return [
        path for name in names if (path := REPO_ROOT / "results" / name / "numbers.json").is_file()
    ]


def test_the_check_catches_a_typed_result() -> None:
    numbers = {
        "stage2.final.kappa.model_model": {"display": "0.62"},
        "data.n_pairs.final": {"display": "164"},
        "stage1.acceptance_rate.overall": {"display": "57.8%"},
        "stage3.mention_delta.human": {"display": "+0.02"},
    }
    text = {
        "x.md": "kappa 0.62 [0.58, 0.65]; 57.8% accepted; delta 0.02; "
        "164 pairs; gpt-5.4 and stats.n_boot=2000"
    }
    hits = typed_results(text, numbers)
    assert [h.split(": ", 1)[1] for h in hits] == [
        "0.62 (= stage2.final.kappa.model_model)",
        "57.8% (= stage1.acceptance_rate.overall)",
        "0.02 (= stage3.mention_delta.human)",
    ]


@pytest.mark.slow
def test_docs_type_no_number_of_a_build(bundled_build: Path) -> None:
    """Against the session's bundled build and this checkout's builds of the configured
    datasets (the real-data build's numbers are checked in tests/test_workflow_realdata.py)."""
    hits = []
    for path in [bundled_build / "results" / "bundled" / "numbers.json", *_builds()]:
        numbers = json.loads(path.read_text(encoding="utf-8"))
        hits += [f"{h} in {path.parent.name}" for h in typed_results(docs_texts(), numbers)]
    assert not hits, "docs type results; print them instead (recenter scorecard / numbers):\n" + (
        "\n".join(hits)
    )
