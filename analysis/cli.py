"""The ``recenter`` console script.

Each subcommand lives in the module that owns its job; this file only maps names to modules.
A subcommand module defines ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from analysis import repo_root
from analysis.workflow_config import ConfigError

#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "config": ("analysis.cli_config", "print the resolved Hydra config for a set of overrides"),
    "simulate": ("analysis.simulation.cli", "write the simulated bundled world's files"),
    "calls": ("analysis.llm.cli", "call-store usage and cost per stage and model; --validate"),
    "trace": ("analysis.paper.trace", "print where one number comes from (JSON); --check"),
    "verify": ("analysis.paper.verify", "rebuild every number offline and diff against results"),
    "scorecard": (
        "analysis.paper.scorecard",
        "the study's published figures against a build, with verdicts (md, csv or json)",
    ),
    "numbers": ("analysis.paper.print_numbers", "print records by key or glob, with CI and n"),
    "diff": (
        "analysis.paper.diff",
        "compare two builds (variants, default, numbers.json, or --rev commits), paired "
        "intervals of each change where they share resamples",
    ),
}
#: old names that stay working: alias -> subcommand
ALIASES = {"numbers-diff": "diff"}

#: subcommands that read a working copy (its config, call store or results): they get ``--repo``
READS_REPO = frozenset({"config", "calls", "trace", "verify", "scorecard", "numbers", "diff"})


def _repo_option() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--repo",
        type=Path,
        help="the recenter copy to read (default: the one holding the working directory, "
        "found by walking up to workflow/Snakefile, as git finds its repository)",
    )
    return parent


def resolve_repo(args: argparse.Namespace) -> Path:
    """The copy a subcommand reads: ``--repo`` as given, else the one around the working directory.

    Never the copy the package was installed from: a reviewer running ``recenter`` inside a
    second checkout must read that checkout's results and call store.
    """
    return Path(args.repo).resolve() if args.repo else repo_root(Path.cwd())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="recenter", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in SUBCOMMANDS.items():
        parents = [_repo_option()] if name in READS_REPO else []
        aliases = [alias for alias, target in ALIASES.items() if target == name]
        sp = sub.add_parser(
            name, help=help_text, description=help_text, parents=parents, aliases=aliases
        )
        importlib.import_module(module).add_arguments(sp)
        sp.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.command = ALIASES.get(args.command, args.command)
    if args.command in READS_REPO:
        try:
            args.repo = resolve_repo(args)
        except FileNotFoundError as err:
            print(f"recenter {args.command}: {err}; pass --repo", file=sys.stderr)
            return 2
        print(f"recenter {args.command}: repository {args.repo}", file=sys.stderr)
    try:
        return int(importlib.import_module(args._module).run(args) or 0)
    except ConfigError as err:
        print(f"recenter {args.command}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
