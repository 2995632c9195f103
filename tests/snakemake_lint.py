"""``snakemake --lint`` with one accepted lint: the software definition per rule.

Snakemake's linter asks every rule for a ``conda:`` environment or a container. This workflow
declares its software as a hashed lock (requirements.lock) installed before the run, because
conda and its channels cannot be reached on the machines it is built and tested on, so a
``conda:`` directive could not be shown to work (issue 17). Every other lint fails.

    snakemake --lint 2>&1 | python tests/snakemake_lint.py
"""

from __future__ import annotations

import re
import sys

#: The one lint title accepted, for the reason in the module docstring.
ACCEPTED = "Specify a conda environment or container for each rule."


def unexpected_lints(text: str) -> list[str]:
    """``rule: lint title`` of every lint in ``snakemake --lint`` output except the accepted one."""
    out: list[str] = []
    target = "workflow"
    for line in text.splitlines():
        head = re.match(r"Lints for (rule \w+|snakefile \S+)", line)
        if head:
            target = head.group(1)
            continue
        item = re.match(r"\s+\* (.+?):?$", line)
        if item and item.group(1) != ACCEPTED:
            out.append(f"{target}: {item.group(1)}")
    return out


def main() -> int:
    text = sys.stdin.read()
    bad = unexpected_lints(text)
    for lint in bad:
        print(lint)
    print(f"snakemake --lint: {len(bad)} lints besides the accepted software-definition one")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
