"""Every figure has its module, rule, script and report caption, and is registered for the paper."""

from __future__ import annotations

import importlib
import re

import pytest

from analysis import REPO_ROOT
from analysis.figures import FIGURE_MODULES

RULES = (REPO_ROOT / "workflow" / "rules" / "figures.smk").read_text(encoding="utf-8")


def rule_body(rule: str) -> str:
    m = re.search(rf"^rule {rule}:\n(.*?)(?=^\S|\Z)", RULES, re.S | re.M)
    assert m, f"figures.smk has no rule {rule}"
    return m.group(1)


@pytest.mark.parametrize("name", sorted(FIGURE_MODULES))
def test_figure_is_wired_end_to_end(name: str) -> None:
    module = importlib.import_module(FIGURE_MODULES[name])
    assert callable(getattr(module, f"{name}_figure")) and module.NAME == name
    rule = f"{name}_figure"
    body = rule_body(rule)
    for part in (
        f'f"{{FIGURES}}/{name}.pdf"',
        f'f"{{FIGURES}}/{name}.png"',
        f'sidecar=f"{{FIGURES}}/{name}.json"',
        f'caption="../report/figure_{name}.rst"',
        "code=FIGURE_CODE",
        f'f"{{LOGS}}/{rule}.log"',
        "conda:\n        CONDA_ENV\n    script:",
        f'"../scripts/{rule}.py"',
    ):
        assert part in body, f"rule {rule} lacks {part!r}"
    assert f'FIGURE_FILES.append(f"{{FIGURES}}/{name}.pdf")' in RULES
    script = REPO_ROOT / "workflow" / "scripts" / f"{rule}.py"
    assert f"from analysis.figures.{name} import {name}_figure" in script.read_text()
    assert (REPO_ROOT / "workflow" / "report" / f"figure_{name}.rst").is_file()


def test_no_other_figure_rules() -> None:
    rules = set(re.findall(r"^rule (\w+):", RULES, re.M))
    assert rules == {f"{n}_figure" for n in FIGURE_MODULES}
