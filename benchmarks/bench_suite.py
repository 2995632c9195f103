"""Time of the test suite as a user runs it (on demand, not a test).

Runs the README's test command (``make test``: the install check, the lint checks, then pytest
on one xdist worker per core, the full bundled reproduction included) in this checkout and
appends one line per run to ``suite_runs.jsonl``: the commit, whether the real exports are
beside the clone (``../shared/data/annotation-tool``: their tests and build run, as in CI, or
skip, as in a user's clone), pytest's counts and its own wall time, the whole command's wall
time, the CPU-seconds of everything it ran (user + system of the processes it waited for, as
``/usr/bin/time`` counts them), the machine, and the 1-minute load average at the start and the
end (the machine may be shared: a run under load says so).

The summary (``results.json["suite"]`` and the section below in ``benchmarks/README.md``)
gives every recorded run, oldest first, and reads the latest run of each setting on the latest
machine against the target: pytest under :data:`TARGET_MINUTES` minutes on an idle 2-core
machine (the install excluded). The README's "Test suite time" explains what the suite does to
stay fast and points here for the figures, so no time is typed into the docs.

A run whose command fails is recorded with its exit status and never read against the target.
Lines recorded by hand before this script existed (the README's table until 2026-11-28) carry
``"source": "hand"`` and the words they were given in.

    python benchmarks/bench_suite.py                         # make test, then the summary
    python benchmarks/bench_suite.py --note "after a build"  # a sentence kept with the run
    python benchmarks/bench_suite.py --summarize             # only the summary
"""

from __future__ import annotations

import argparse
import re
import sys

from results_io import (
    OUTPUT_DIR,
    REPO_ROOT,
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

#: one line per run of the suite (``BENCH_OUTPUT_DIR`` moves it with the other outputs)
RUNS = OUTPUT_DIR / "suite_runs.jsonl"
START, END = markers("suite")
#: the README's test command
COMMAND = "make test"
#: issue 18's target for pytest's wall time on an idle 2-core machine, install excluded
TARGET_MINUTES = 7.0
#: the real exports whose presence decides which tests run (tests/conftest.py: REAL_DATA)
REAL_DATA = REPO_ROOT.parent / "shared" / "data" / "annotation-tool"
#: pytest's last line, e.g. "==== 1129 passed, 24 skipped in 839.52s (0:13:59) ===="
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ \w+.*?) in (?P<seconds>[\d.]+)s\b")
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def pytest_summary(lines: list[str]) -> dict | None:
    """pytest's counts and seconds from its last summary line (None: no summary printed)."""
    for line in reversed(lines):
        match = SUMMARY.match(line.strip())
        if match:
            counts = {
                k.rstrip("s") if k.startswith("error") else k: int(n)
                for n, k in COUNT.findall(match["counts"])
            }
            return {"counts": counts, "seconds": float(match["seconds"])}
    return None


def run_suite(command: str, note: str) -> dict:
    """Run ``command`` in the checkout, echoing its output, and return the run's line."""
    git = git_state()
    host = machine()
    run = run_measured(command)
    return {
        "source": "bench_suite.py",
        "command": command,
        "git": git,
        "real_data": REAL_DATA.is_dir(),
        "returncode": run.returncode,
        "pytest": pytest_summary(run.tail),
        "wall_seconds": run.wall_seconds,
        "cpu_seconds": run.cpu_seconds,
        **run_context(host, note),
    }


def read_runs() -> list[dict]:
    """Every recorded run, oldest first."""
    return read_jsonl(RUNS)


def setting(run: dict) -> str:
    """The two settings a run can have: CI's (real exports beside) or a user's clone."""
    return "with ../shared (as CI)" if run.get("real_data") else "a user's clone (no ../shared)"


def verdict(run: dict) -> str:
    """The run read against the target (only a run of the script, passed, on 2 cores)."""
    if run.get("source") != "bench_suite.py":
        return "recorded by hand"
    if run["returncode"] != 0 or run["pytest"] is None:
        return f"failed (exit status {run['returncode']})"
    if run["machine"]["cpus_usable"] != 2:
        return f"not the target's machine ({run['machine']['cpus_usable']} usable cores)"
    minutes = run["pytest"]["seconds"] / 60
    met = "met" if minutes < TARGET_MINUTES else "missed"
    return f"{met} ({minutes:.1f} vs {TARGET_MINUTES:g} min)"


def summarize(runs: list[dict]) -> dict:
    """How many runs, and the latest passed run of each setting on the latest
    machine with its verdict."""
    measured = [r for r in runs if r.get("source") == "bench_suite.py"]
    latest: dict[str, dict] = {}
    if measured:
        cpu = measured[-1]["machine"]["cpu_model"]
        for run in measured:
            if run["machine"]["cpu_model"] == cpu and run["returncode"] == 0:
                latest[setting(run)] = run
    return {
        "target_minutes": TARGET_MINUTES,
        "latest": {
            name: {"git": run["git"], "verdict": verdict(run)}
            for name, run in sorted(latest.items())
        },
        "runs": len(runs),
    }


def _minutes(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds / 60:.1f} min"


def _row(run: dict) -> str:
    if run.get("source") != "bench_suite.py":
        return (
            f"| by hand | {run['what']} | {run['tests']} | {run['wall']} | {run['cpu']} |"
            f" {run['load']} | recorded by hand |"
        )
    counts = (run["pytest"] or {}).get("counts", {})
    tests = ", ".join(f"{n:,} {k}" for k, n in counts.items())
    load = run["load_average_1min"]
    what = (
        f"`{run['command']}` at {commit_text(run['git'])}, {setting(run)};"
        f" {run['machine']['cpu_model']}, {run['machine']['cpus_usable']} cores"
        + (f"; {run['note']}" if run.get("note") else "")
    )
    pytest_s = (run["pytest"] or {}).get("seconds")
    return (
        f"| {run['finished'][:10]} | {what} | {tests} | {_minutes(pytest_s)}"
        f" ({_minutes(run['wall_seconds'])} in all) | {run['cpu_seconds']:,.0f} |"
        f" {load['start']} to {load['end']} | {verdict(run)} |"
    )


def readme_section(runs: list[dict], summary: dict) -> str:
    lines = [
        START,
        '## Test suite time (`bench_suite.py`, key `"suite"`)',
        "",
        "The README's test command (`make test`) run in a checkout by `bench_suite.py`, one line"
        " per run in `suite_runs.jsonl`: pytest's wall time (and the whole command's, with the"
        " install check and lint), the CPU-seconds of everything it ran (user + system), and"
        ' the 1-minute load average at its start and end. "With ../shared" is CI\'s setting'
        " (the real exports' tests and build run); a user's clone skips them. Target: pytest"
        f" under {TARGET_MINUTES:g} minutes on an idle 2-core machine, install excluded."
        " Oldest first; lines recorded by hand (the README's table before this script) keep"
        " their words.",
        "",
        "Latest on the latest machine: "
        + (
            "; ".join(
                f"{name}: {v['verdict']} at {commit_text(v['git'])}"
                for name, v in summary["latest"].items()
            )
            or "no run of the script yet"
        )
        + ".",
        "",
        "```bash",
        "python benchmarks/bench_suite.py              # runs make test here, then this table",
        "python benchmarks/bench_suite.py --summarize  # only the table",
        "```",
        "",
        "| date | what ran | tests | pytest | CPU-s | load | target |",
        "|---|---|---|---|---:|---|---|",
        *(_row(r) for r in runs),
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--command", default=COMMAND, help="the test command (default: make test)")
    parser.add_argument("--note", default="", help="a sentence kept with the run")
    parser.add_argument("--summarize", action="store_true", help="only rebuild the summary")
    args = parser.parse_args(argv)
    status = 0
    if not args.summarize:
        run = run_suite(args.command, args.note)
        append_jsonl(RUNS, run)
        print(f"suite: {verdict(run)}; {run['cpu_seconds']:,.0f} CPU-seconds", flush=True)
        status = run["returncode"]
    runs = read_runs()
    summary = update_results("suite", summarize(runs))
    update_readme("suite", readme_section(runs, summary))
    return status


if __name__ == "__main__":
    sys.exit(main())
