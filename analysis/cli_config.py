"""``recenter config``: show the resolved config, so a user sees what an override changes, and
which build it is (the default build or a variant, and where its outputs go); for a sweep, its
members."""

from __future__ import annotations

import argparse

import yaml

from analysis.variants import identify, plan_sweep
from analysis.workflow_config import compose_config, expand_sweep


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. stats.n_boot=500")


def run(args: argparse.Namespace) -> int:
    config_dir = args.repo / "config"
    members = expand_sweep(list(args.overrides))
    if len(members) > 1:
        print(
            f"# a sweep of {len(members)} variants (recenter config <one member> shows its config)"
        )
        for member in plan_sweep(members, config_dir):
            print(f"# {member.variant.label}: {' '.join(member.variant.overrides)}")
        return 0
    cfg = compose_config(members[0], config_dir=config_dir)
    variant = identify(members[0], cfg, config_dir)
    what = f"variant {variant.name}" if variant.name else "the default build"
    print(f"# {what} of dataset {variant.dataset}: outputs in {variant.paths().results}/")
    print(yaml.safe_dump(cfg, sort_keys=True), end="")
    return 0
