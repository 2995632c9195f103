"""Facts the docs state about the code, checked against the code: how many figures the study
has (the registry says), the order of every rule's directives (docs/architecture.md), and
what they say of prompt v2 (its wording, quoted from its template)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from analysis import REPO_ROOT
from analysis.figures.registry import STUDY_FIGURES

WORDS = "one two three four five six seven eight nine ten eleven twelve".split()
#: "seven figures", "the 8 study figures", "eight figures of the study"
FIGURE_COUNT = re.compile(
    r"\b(" + "|".join(WORDS) + r"|\d+)\s+(?:study(?:'s)?\s+|paper\s+)?figures\b", re.I
)
RULE = re.compile(r"^(\s*)rule\b[^:]*:\s*$")


def _texts() -> dict[str, str]:
    paths = [
        REPO_ROOT / "README.md",
        *sorted((REPO_ROOT / "docs").glob("*.md")),
        *sorted((REPO_ROOT / "analysis" / "figures").glob("*.py")),
    ]
    return {str(p.relative_to(REPO_ROOT)): p.read_text(encoding="utf-8") for p in paths}


def figure_counts(text: str) -> list[int]:
    """Every count of figures ``text`` states."""
    out = []
    for m in FIGURE_COUNT.finditer(text):
        word = m.group(1).lower()
        out.append(int(word) if word.isdigit() else WORDS.index(word) + 1)
    return out


def test_figure_counts_in_the_docs_come_from_the_registry() -> None:
    assert figure_counts("the seven figures; 8 study figures") == [7, 8]  # the pattern reads both
    wrong = {
        path: counts
        for path, text in _texts().items()
        if (counts := [n for n in figure_counts(text) if n != len(STUDY_FIGURES)])
    }
    assert not wrong, f"the registry holds {len(STUDY_FIGURES)} figures; the docs say {wrong}"


def rule_directives(path: Path) -> list[tuple[str, list[str]]]:
    """(where, directives in order) of every rule in a Snakefile or rule file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        m = RULE.match(line)
        if not m:
            continue
        indent = len(m.group(1)) + 4
        directives = []
        for body in lines[i + 1 :]:
            if body.strip() and len(body) - len(body.lstrip()) < indent:
                break
            d = re.match(rf"^ {{{indent}}}(\w+):", body)
            if d:
                directives.append(d.group(1))
        out.append((f"{path.relative_to(REPO_ROOT)}:{i + 1}", directives))
    return out


def test_every_rule_uses_the_directive_order_of_the_docs() -> None:
    doc = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    line = next(ln for ln in doc.splitlines() if ln.startswith("Directive order:"))
    order = re.findall(r"`(\w+)`", line)
    rules = [
        r
        for p in [
            REPO_ROOT / "workflow" / "Snakefile",
            *(REPO_ROOT / "workflow/rules").glob("*.smk"),
        ]
        for r in rule_directives(p)
    ]
    assert len(rules) > 30
    wrong = {
        where: directives
        for where, directives in rules
        if [d for d in order if d in directives] != directives
    }
    assert not wrong, f"rules whose directives are not in the order {order}: {wrong}"


def test_config_readme_names_every_group_its_choices_and_the_runtime_keys() -> None:
    from analysis.settings import LLM_RUNTIME_KEYS

    readme = (REPO_ROOT / "config" / "README.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| ([^|]*) \|", readme, re.M)}
    groups = sorted(p.name for p in (REPO_ROOT / "config").iterdir() if p.is_dir())
    assert sorted(rows) == groups, "config/README.md: one table row per config group"
    for group in groups:
        choices = sorted(p.stem for p in (REPO_ROOT / "config" / group).glob("*.yaml"))
        assert sorted(re.findall(r"`(\w+)`", rows[group])) == choices, group
    runtime = readme.split("runtime-only `llm` keys", 1)[1].split("(how a run", 1)[0]
    assert sorted(re.findall(r"`(\w+)`", runtime)) == sorted(LLM_RUNTIME_KEYS)


def test_the_catalog_file_gives_the_readmes_commands() -> None:
    catalog = yaml.safe_load((REPO_ROOT / ".snakemake-workflow-catalog.yml").read_text())
    usage = catalog["usage"]
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    for command in re.findall(r"`([^`]+)`", usage["mandatory-flags"]["desc"]):
        if command.startswith(("make ", "snakemake ")):
            assert command.split(" --config")[0] in readme, command
    assert usage["report"] is True
    assert not any(usage["software-stack-deployment"].values())  # no rule has conda/containers
    assert (REPO_ROOT / "LICENSE").read_text().startswith("MIT License")
    assert 'license = { text = "MIT" }' in (REPO_ROOT / "pyproject.toml").read_text()


def test_prompt_v2_is_described_by_its_wording_not_by_an_effect() -> None:
    """v2 rewords one question; whether a model then says YES less often is what a build of it
    shows (the README's example: the local model does not), so wherever v2 is described the docs
    never call it stricter, and what they quote of it is the templates' own wording."""

    def words(text: str) -> str:
        return " ".join(text.split())

    prompts = REPO_ROOT / "config" / "prompts"
    templates = [
        words(" ".join(yaml.safe_load((prompts / f"{v}.yaml").read_text())["relevance"].values()))
        for v in ("v1", "v2")
    ]
    for path in ("docs/stages.md", "config/README.md", "config/prompts/v2.yaml"):
        text = words((REPO_ROOT / path).read_text(encoding="utf-8"))
        described = [s for s in re.split(r"(?<=[.;|])\s", text) if "v2" in s]
        assert described, f"{path} no longer describes prompt v2"
        for sentence in described:
            assert not re.search(r"strict", sentence, re.I), f"{path}: {sentence}"
        for quote in re.findall(r"\*([^*]+)\*", " ".join(described)):
            assert any(quote in t for t in templates), f"{path} quotes {quote!r}"
