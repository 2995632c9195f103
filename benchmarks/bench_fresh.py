"""Time from nothing: the README's two commands on a machine that has only Python and pip
(on demand, not a test).

Run it in a fresh clone (no ``.venv``, nothing built), with a bare Python 3.11 (it imports only
the standard library and the checkout's ``analysis.software``): it runs the README's commands
as six timed steps, each on its own so its share is known (``make system-paper``, ``make
install``, then ``make paper`` for the rest; likewise ``make system-test``, ``make
install-test`` and ``make test``), and appends one line per run to ``fresh_runs.jsonl``: each
step's wall time, the CPU-seconds of everything it ran (as ``/usr/bin/time`` counts them),
its exit status, the workflow's job count and the PDF's pages (``make paper``) or pytest's
counts and time (``make test``), and the conditions: which system packages were purged
first, whether pip's cache and the local model's wheel cache were empty, whether
``../shared`` was beside the clone, the machine and its load.

"From nothing" means what a new user has: ``--purge-system`` (as root) first removes the
packages the Makefile would install from apt (TeX Live, poppler-utils, Chromium and
chromedriver; the Makefile's own lists), their now unneeded dependencies and apt's package
cache, so apt downloads them again; pip's cache (``PIP_CACHE_DIR``) and the llama.cpp wheel
cache (``LLAMA_CACHE``) are always fresh temporary folders, so every Python package is
downloaded and llama.cpp compiled again. A step that fails ends the run (the next steps need
it); the line records its exit status and is never read against a target.

The summary (``results.json["fresh"]`` and the section below in ``benchmarks/README.md``)
lists every run and reads the latest passed run on the latest machine against issue 33's
figures: ``make paper`` from nothing to the PDF under :data:`PAPER_TARGET_MINUTES` minutes,
TeX Live's install included, and its workflow step under :data:`WORK_GATE_MINUTES` minutes.
The README's "Time from nothing" says how it is measured and points here, so no time is typed
into the docs. Lines recorded by hand before this script existed carry ``"source": "hand"``
and the words they were given in.

    python benchmarks/bench_fresh.py --purge-system   # in a fresh clone, as root
    python benchmarks/bench_fresh.py --summarize      # only the summary
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_suite import REAL_DATA, pytest_summary
from results_io import (
    OUTPUT_DIR,
    REPO_ROOT,
    MeasuredRun,
    append_jsonl,
    commit_text,
    git_state,
    machine,
    markers,
    read_jsonl,
    run_context,
    run_measured,
    update_readme,
    update_results,
)

sys.path.insert(0, str(REPO_ROOT))  # analysis.software from the checkout: nothing is installed yet

#: one line per run (``BENCH_OUTPUT_DIR`` moves it with the other outputs)
RUNS = OUTPUT_DIR / "fresh_runs.jsonl"
START, END = markers("fresh")
#: the README's two commands, each as the steps the Makefile runs one after the other
STEPS: tuple[tuple[str, str, str], ...] = (
    ("paper", "system packages (apt)", "make system-paper"),
    ("paper", "Python packages into .venv/", "make install"),
    ("paper", "the work", "make paper"),
    ("test", "system packages (apt)", "make system-test"),
    ("test", "Python packages and the local model", "make install-test"),
    ("test", "the work", "make test"),
)
#: Makefile variables naming what apt installs for the README's commands
PURGED_VARIABLES = ("TEX_PACKAGES", "BROWSER_PACKAGES")
#: issue 33: make paper from nothing to the PDF, TeX Live's install included
PAPER_TARGET_MINUTES = 6.0
#: issue 33: the workflow part of make paper (its last step) on 2 cores
WORK_GATE_MINUTES = 3.0
#: Snakemake's last progress line, e.g. "57 of 57 steps (100%) done"
JOBS = re.compile(r"(\d+) of (\d+) steps \(100%\) done")
PDF = REPO_ROOT / "paper" / "build" / "bundled" / "paper.pdf"


def makefile_value(name: str) -> list[str]:
    """A Makefile variable's words, as make expands it (the one list of what apt installs)."""
    out = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval", f"print-value: ; @echo $({name})"]
        + ["print-value"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def purge_system() -> list[str]:
    """Remove the packages the README's commands install from apt, their unneeded
    dependencies and apt's cache, so the next install downloads them again."""
    packages = [p for name in PURGED_VARIABLES for p in makefile_value(name)]
    apt = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "purge", "-y", "-qq", *packages],
        ["apt-get", "autoremove", "--purge", "-y", "-qq"],
        ["apt-get", "clean"],
    ):
        subprocess.run(command, env=apt, check=True)
    return packages


def pdf_pages(pdf: Path) -> int | None:
    """The PDF's page count (pdfinfo, which make paper installs), or None without a PDF."""
    if not pdf.is_file():
        return None
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=False)
    found = re.search(r"^Pages:\s+(\d+)", info.stdout, re.MULTILINE)
    return int(found.group(1)) if found else None


def step_line(command: str, label: str, step: str, run: MeasuredRun, pdf: Path) -> dict:
    """One step's part of the run's line, with what its output says it did: the workflow's
    job count and the PDF's pages after Snakemake's last progress line, pytest's counts and
    time after its summary."""
    line: dict = {
        "command": command,
        "label": label,
        "step": step,
        "returncode": run.returncode,
        "wall_seconds": run.wall_seconds,
        "cpu_seconds": run.cpu_seconds,
    }
    jobs = [m for text in run.tail for m in JOBS.findall(text)]
    if jobs:
        line["jobs"] = int(jobs[-1][1])
        line["pdf_pages"] = pdf_pages(pdf)
    tests = pytest_summary(run.tail)
    if tests:
        line["pytest"] = tests
    return line


def measure(steps: tuple[tuple[str, str, str], ...], purge: bool, note: str) -> dict:
    """Run ``steps`` in order with empty caches, stopping at the first that fails."""
    git = git_state()
    host = machine()
    purged = purge_system() if purge else []
    with tempfile.TemporaryDirectory(prefix="bench-fresh-") as caches:
        env = {
            **os.environ,
            "PIP_CACHE_DIR": str(Path(caches) / "pip"),
            "LLAMA_CACHE": str(Path(caches) / "wheels"),
        }
        done = []
        for command, label, step in steps:
            print(f"bench_fresh: {command}: {step}", flush=True)
            done.append(step_line(command, label, step, run_measured(step, env=env), PDF))
            if done[-1]["returncode"] != 0:
                break
    return {
        "source": "bench_fresh.py",
        "git": git,
        "steps": done,
        "returncode": next((s["returncode"] for s in done if s["returncode"]), 0),
        "conditions": {
            "purged_system_packages": purged,
            "empty_pip_cache": True,
            "empty_llama_wheel_cache": True,
            "shared_beside": REAL_DATA.is_dir(),
        },
        **run_context(host, note),
    }


def read_runs() -> list[dict]:
    """Every recorded run, oldest first."""
    return read_jsonl(RUNS)


def command_seconds(run: dict, command: str) -> float:
    """The wall time of one of the README's commands: the sum of its steps."""
    return sum(s["wall_seconds"] for s in run["steps"] if s["command"] == command)


def verdict(run: dict) -> str:
    """make paper read against issue 33's target and gate (a passed run of the script on 2
    cores that ran make paper from nothing)."""
    if run.get("source") != "bench_fresh.py":
        return "recorded by hand"
    if run["returncode"] != 0:
        return f"failed (exit status {run['returncode']})"
    if run["machine"]["cpus_usable"] != 2:
        return f"not the target's machine ({run['machine']['cpus_usable']} usable cores)"
    paper = [s for s in run["steps"] if s["command"] == "paper"]
    if len(paper) != sum(c == "paper" for c, _, _ in STEPS):
        return "make paper not run in full"
    if not run["conditions"]["purged_system_packages"]:
        return "not from nothing (system packages were installed)"
    total, work = command_seconds(run, "paper") / 60, paper[-1]["wall_seconds"] / 60
    parts = [
        f"make paper {total:.1f} min: target {PAPER_TARGET_MINUTES:g}"
        f" {'met' if total < PAPER_TARGET_MINUTES else 'missed'}",
        f"the work {work:.1f} min: gate {WORK_GATE_MINUTES:g}"
        f" {'met' if work < WORK_GATE_MINUTES else 'missed'}",
    ]
    return "; ".join(parts)


def summarize(runs: list[dict]) -> dict:
    """How many runs, and the latest passed run on the latest machine with its verdict."""
    measured = [r for r in runs if r.get("source") == "bench_fresh.py"]
    latest = None
    if measured:
        cpu = measured[-1]["machine"]["cpu_model"]
        passed = [r for r in measured if r["machine"]["cpu_model"] == cpu and not r["returncode"]]
        latest = passed[-1] if passed else None
    return {
        "paper_target_minutes": PAPER_TARGET_MINUTES,
        "work_gate_minutes": WORK_GATE_MINUTES,
        "latest": None if latest is None else {"git": latest["git"], "verdict": verdict(latest)},
        "runs": len(runs),
    }


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _step_cell(step: dict) -> str:
    text = f"{step['wall_seconds']:,.0f} s ({step['cpu_seconds']:,.0f} CPU-s)"
    if step["returncode"]:
        return f"{text}, **failed** (exit status {step['returncode']})"
    if step.get("jobs") is not None:
        text += f", {step['jobs']} jobs"
    if step.get("pdf_pages") is not None:
        text += f", a {step['pdf_pages']}-page PDF"
    if step.get("pytest"):
        counts = ", ".join(f"{n:,} {k}" for k, n in step["pytest"]["counts"].items())
        text += f", {counts} (pytest {_minutes(step['pytest']['seconds'])})"
    return text


def _rows(run: dict) -> list[str]:
    if run.get("source") != "bench_fresh.py":
        return [
            f"| {'by hand' if i == 0 else ''} | {run['what'] if i == 0 else ''} | {row['step']} |"
            f" {row['figures']} |"
            for i, row in enumerate(run["rows"])
        ]
    cond = run["conditions"]
    what = (
        f"at {commit_text(run['git'])}; {run['machine']['cpu_model']},"
        f" {run['machine']['cpus_usable']} cores; load {run['load_average_1min']['start']} to"
        f" {run['load_average_1min']['end']};"
        + (" apt packages purged first" if cond["purged_system_packages"] else " apt packages kept")
        + ", empty pip and wheel caches"
        + ("; ../shared beside" if cond["shared_beside"] else "; no ../shared")
        + (f"; {run['note']}" if run.get("note") else "")
    )
    rows = [
        f"| {run['finished'][:10] if i == 0 else ''} | {what if i == 0 else ''} |"
        f" `{s['step']}`: {s['label']} | {_step_cell(s)} |"
        for i, s in enumerate(run["steps"])
    ]
    totals = ", ".join(
        f"`make {c}` {_minutes(command_seconds(run, c))}"
        for c in dict.fromkeys(s["command"] for s in run["steps"])
    )
    rows.append(f"| | | total | {totals}; {verdict(run)} |")
    return rows


def readme_section(runs: list[dict], summary: dict) -> str:
    latest = summary["latest"]
    lines = [
        START,
        '## Time from nothing (`bench_fresh.py`, key `"fresh"`)',
        "",
        "The README's two commands in a fresh clone, each as the steps the Makefile runs (apt,"
        " then the Python packages into `.venv/`, then the work), timed one by one by"
        " `bench_fresh.py`, one line per run in `fresh_runs.jsonl`: wall time and the CPU-seconds"
        " of everything the step ran. From nothing: the apt packages the commands install purged"
        " first (with their unneeded dependencies and apt's cache), pip's cache and the local"
        " model's wheel cache empty. Targets (issue 33): `make paper` from nothing to the PDF"
        f" under {PAPER_TARGET_MINUTES:g} minutes, TeX Live's install included; its workflow step"
        f" under {WORK_GATE_MINUTES:g} minutes on 2 cores. `make test`'s own target (pytest under"
        " 7 minutes) is read in the section on the test suite's time.",
        "",
        "Latest on the latest machine: "
        + (
            "no run of the script yet"
            if latest is None
            else f"{latest['verdict']} at {commit_text(latest['git'])}"
        )
        + ".",
        "",
        "```bash",
        "python benchmarks/bench_fresh.py --purge-system  # in a fresh clone, as root",
        "python benchmarks/bench_fresh.py --summarize     # only this table",
        "```",
        "",
        "| date | what ran | step | wall, CPU and what it did |",
        "|---|---|---|---|",
        *(row for run in runs for row in _rows(run)),
        END,
    ]
    return "\n".join(lines) + "\n"


def parse_steps(given: list[str]) -> tuple[tuple[str, str, str], ...]:
    """``--step COMMAND=SHELL`` replacements (the smoke test's, or a partial rerun's)."""
    steps = []
    for text in given:
        command, sep, step = text.partition("=")
        if not sep or command not in ("paper", "test") or not step.strip():
            raise SystemExit(f"--step {text!r}: expected paper=<command> or test=<command>")
        steps.append((command, "given on the command line", step))
    return tuple(steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--purge-system",
        action="store_true",
        help="first remove the apt packages the commands install, and apt's cache (as root)",
    )
    parser.add_argument(
        "--step",
        action="append",
        default=[],
        metavar="paper=COMMAND",
        help="run these steps instead of the README's (repeatable; not read against the target)",
    )
    parser.add_argument("--note", default="", help="a sentence kept with the run")
    parser.add_argument("--summarize", action="store_true", help="only rebuild the summary")
    args = parser.parse_args(argv)
    status = 0
    if not args.summarize:
        steps = parse_steps(args.step) or STEPS
        if steps is STEPS and (REPO_ROOT / ".venv").exists():
            raise SystemExit(
                f"{REPO_ROOT / '.venv'} exists: time from nothing needs a fresh clone"
                " (git clone, then run this script there)"
            )
        run = measure(steps, args.purge_system, args.note)
        append_jsonl(RUNS, run)
        print(f"fresh: {verdict(run)}", flush=True)
        status = run["returncode"]
    runs = read_runs()
    summary = update_results("fresh", summarize(runs))
    update_readme("fresh", readme_section(runs, summary))
    return status


if __name__ == "__main__":
    sys.exit(main())
