"""``recenter config``: show the resolved config, so a user sees what an override changes."""

from __future__ import annotations

import argparse

import yaml

from analysis.workflow_config import compose_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. stats.n_boot=500")


def run(args: argparse.Namespace) -> int:
    cfg = compose_config(args.overrides, config_dir=args.repo / "config")
    print(yaml.safe_dump(cfg, sort_keys=True), end="")
    return 0
