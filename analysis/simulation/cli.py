"""``recenter simulate``: (re)write the bundled world, check it, or write a scaled world."""

from __future__ import annotations

import argparse
import dataclasses
import filecmp
import sys
import tempfile
from pathlib import Path
from typing import Any

from analysis import REPO_ROOT
from analysis.simulation import DEFAULT_PARAMETERS, simulate_world, write_world
from analysis.simulation.scale import is_scaled, scaled_parameters, write_scaled_world


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("data/raw/bundled"),
        help="folder to write (default: data/raw/bundled); a bundled world there is replaced",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help=f"seed of another world (default: the committed one's, {DEFAULT_PARAMETERS.seed})",
    )
    parser.add_argument(
        "--scale",
        type=int,
        default=1,
        help="K: a world K times the study (K times the users, prompts and annotator pools;"
        " default 1, the committed world); needs an --out of its own",
    )
    parser.add_argument(
        "--models",
        type=int,
        default=len(DEFAULT_PARAMETERS.llm_names),
        help="simulated models in all (default: the study's five; more are sim-llm-f, -g, ...)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write to a temporary folder and report files that differ from --out (exit 1 if any)",
    )


def _differences(expected: Path, actual: Path) -> list[str]:
    """Relative paths missing on either side or with different bytes."""

    def listing(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}

    want, have = listing(expected), listing(actual)
    out = sorted(want ^ have)
    out += sorted(
        rel for rel in want & have if not filecmp.cmp(expected / rel, actual / rel, shallow=False)
    )
    return out


def run(args: argparse.Namespace) -> int:
    params = DEFAULT_PARAMETERS
    if args.seed is not None:
        params = dataclasses.replace(params, seed=args.seed)
    if is_scaled(params, args.scale, args.models):
        return _run_scaled(args, params)
    world = simulate_world(params)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            write_world(world, Path(tmp))
            diff = _differences(Path(tmp), args.out)
        for rel in diff:
            print(f"differs: {args.out / rel}", file=sys.stderr)
        if diff:
            print("regenerate with: recenter simulate --out " + str(args.out), file=sys.stderr)
            return 1
        print(f"{args.out}: up to date ({len(world.files) + 2} files)")
        return 0
    written = write_world(world, args.out)
    print(f"wrote {len(written)} files to {args.out} (SIMULATED data; see its README.md)")
    return 0


def _run_scaled(args: argparse.Namespace, params: Any) -> int:
    """Write a scaled world (never over the committed one; nothing to --check against)."""
    if args.check:
        print("--check compares the committed world; drop --scale/--models", file=sys.stderr)
        return 2
    if args.out.resolve() == (REPO_ROOT / "data" / "raw" / "bundled").resolve():
        print("a scaled world needs its own --out (not the committed world's)", file=sys.stderr)
        return 2
    try:
        written = write_scaled_world(params, args.scale, args.models, args.out)
    except ValueError as exc:
        print(f"recenter simulate: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {len(written)} files to {args.out} (SIMULATED, scale {args.scale},"
        f" {args.models} models; see its README.md)"
    )
    names = scaled_parameters(params, args.scale, args.models).llm_names
    extra = f" data.models=[{','.join(names)}]" if len(names) > len(params.llm_names) else ""
    print(
        'run it: snakemake --cores 2 --config overrides="data=bundled'
        f' data.root={args.out.resolve()} data.name=sim-scale-{args.scale} models=none{extra}"'
    )
    return 0
