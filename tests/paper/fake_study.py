"""A fake study for the tests that build a checkout elsewhere (``recenter verify`` in a fresh
copy, ``recenter diff --rev`` in a temporary worktree): one rule turns ``data/value.txt`` into
the one number ``k.x`` of ``results/<dataset>/numbers.json``, in seconds."""

from __future__ import annotations

from pathlib import Path

SNAKEFILE = '''
import json

D = [o.split("=", 1)[1] for o in config["overrides"].split() if o.startswith("data=")][0]


rule numbers:
    """The numbers of the fake study."""
    input:
        "data/value.txt",
    output:
        f"results/{D}/numbers.json",
    run:
        v = float(open(input[0]).read())
        json.dump({"k.x": {"value": v, "display": f"{v:.2f}"}}, open(output[0], "w"))
'''


def write_fake_study(repo: Path, snakefile: str, value: str) -> None:
    """The fake study in ``repo``: its Snakefile at ``snakefile``, its input holding ``value``,
    its outputs git-ignored (so a build of a commit has none committed)."""
    for path, text in (
        (snakefile, SNAKEFILE),
        ("data/value.txt", value),
        (".gitignore", "results/\n.snakemake/\n"),
    ):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
