"""Where one build's files go: the one path helper of every rule and every tool.

A build is a dataset (``data.name``) and, for a configuration other than the dataset's
default, a variant name (``analysis.variants``). The default build writes where it always has,
``<kind>/<dataset>/...``; a variant writes the same tree under
``<kind>/<dataset>/variants/<name>/...``, so any number of variants sit beside the default
build without touching it. The kinds are the five output trees (:data:`KINDS`): results,
figures, logs (with the rules' benchmark files), the paper's generated sources and its build
(the PDF and the audit site beside it).

Paths are relative to the working directory, where Snakemake runs and writes (the repository
itself, or a host workflow's folder when recenter is used as a module), never to the folder
the sources came from. Tools (``recenter trace``, ``verify``, ``scorecard``, ``diff``, the
audit site) join them to the checkout they read. Like showyourwork's ``paths`` module, this is
the only place that spells these folders out; the rules reach it through
``workflow/rules/common.smk``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["KINDS", "SWEEP_RULE_SEPARATOR", "VARIANTS", "BuildPaths", "list_variants"]

#: the folder under a dataset's folder that holds its variants
VARIANTS = "variants"
#: ends the prefix of a sweep member's rules (``<variant>__<rule>``; no rule name holds it)
SWEEP_RULE_SEPARATOR = "__"
#: the output trees, each ``<tree>/<dataset>/`` for the default build
KINDS = ("results", "figures", "logs", "paper/generated", "paper/build")


@dataclass(frozen=True)
class BuildPaths:
    """The folders and files of one build (``variant=None``: the dataset's default build)."""

    dataset: str
    variant: str | None = None

    def folder(self, kind: str) -> str:
        """``<kind>/<dataset>`` or ``<kind>/<dataset>/variants/<variant>``."""
        if kind not in KINDS:
            raise ValueError(f"unknown output tree {kind!r}; known: {', '.join(KINDS)}")
        base = f"{kind}/{self.dataset}"
        return f"{base}/{VARIANTS}/{self.variant}" if self.variant else base

    @property
    def results(self) -> str:
        return self.folder("results")

    @property
    def figures(self) -> str:
        return self.folder("figures")

    @property
    def logs(self) -> str:
        return self.folder("logs")

    @property
    def benchmarks(self) -> str:
        """Each rule's wall time, CPU time and peak memory (``benchmarks/rule_table.py``)."""
        return f"{self.logs}/benchmarks"

    @property
    def paper_generated(self) -> str:
        return self.folder("paper/generated")

    @property
    def paper_build(self) -> str:
        return self.folder("paper/build")

    def result(self, rel: str) -> str:
        """A file of this build's results: ``<results>/<rel>``."""
        return f"{self.results}/{rel}"

    def record_file(self, rule: str) -> str:
        """The number records one rule writes."""
        return self.result(f"records/{rule}.json")

    @property
    def numbers(self) -> str:
        """Every record of the build, merged (rule ``numbers``)."""
        return self.result("numbers.json")

    @property
    def resamples(self) -> str:
        """Every bootstrap record's resamples, merged (``analysis.resamples``)."""
        return self.result("resamples.npz")

    @property
    def config(self) -> str:
        """The resolved config the build was made with (rule ``resolved_config``)."""
        return self.result("config.yaml")

    @property
    def variant_file(self) -> str:
        """What makes the build a variant: its overrides, the keys they change, each tier's
        folder (rule ``resolved_config``); ``recenter verify`` and ``diff --rev`` rebuild from
        it."""
        return self.result("variant.yaml")

    @property
    def environment(self) -> str:
        """The software that built it (rule ``software_environment``)."""
        return self.result("environment.json")

    @property
    def pdf(self) -> str:
        return f"{self.paper_build}/paper.pdf"

    @property
    def site(self) -> str:
        """The audit site beside the PDF (rule ``audit_site``)."""
        return f"{self.paper_build}/site"

    @property
    def targets(self) -> list[str]:
        """What rule ``all`` builds: the PDF, its audit site, the resolved config, and the HTML
        report's tables (the scorecard's and the per-rule runtimes')."""
        return [
            self.pdf,
            self.site,
            self.config,
            self.result("report/scorecard.html"),
            f"{self.logs}/rule_runtimes.html",
        ]

    @property
    def label(self) -> str:
        """How a person names the build: ``bundled`` or ``bundled/variants/<name>``."""
        return f"{self.dataset}/{VARIANTS}/{self.variant}" if self.variant else self.dataset

    def under(self, root: Path | str, path: str) -> Path:
        """One of this build's paths inside the checkout ``root``."""
        return Path(root) / path


def list_variants(root: Path | str, dataset: str) -> list[str]:
    """The variants of a dataset built in the checkout ``root`` (each has a resolved config)."""
    folder = Path(root) / BuildPaths(dataset).results / VARIANTS
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / "config.yaml").is_file())
