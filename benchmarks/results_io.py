"""One writer for what every benchmark script publishes.

Each script owns one key of ``benchmarks/results.json`` and one marked section of
``benchmarks/README.md``; several scripts may finish at about the same time, so both writes
are read-modify-write with an atomic replace and leave the other keys and sections alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results.json"
README = BENCH_DIR / "README.md"


def markers(name: str) -> tuple[str, str]:
    """The README markers around the section of benchmark ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def update_results(key: str, payload: dict) -> None:
    """Set ``results.json[key]`` (atomic replace; other keys are left as they are)."""
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[key] = payload
    tmp = RESULTS.with_suffix(f".json.{key}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, RESULTS)


def update_readme(name: str, section: str) -> None:
    """Replace the README section of ``name`` (between its markers), or append it."""
    start, end = markers(name)
    text = README.read_text() if README.exists() else "# Benchmarks\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + section.rstrip("\n") + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    README.write_text(text)
