"""Glue for rule scripts: logging into the rule's log file and reading the canonical tables.

Rule scripts stay five lines long: open the log, read inputs, call a pure function from the
package, write outputs. Anything longer belongs in the package, where it is tested.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def rule_logging(smk: Any) -> Iterator[logging.Logger]:
    """Send the ``logging`` output and any traceback of a rule script to its ``log:`` file."""
    log_path = Path(smk.log[0])
    log_path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_path, mode="w", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers = [handler, logging.StreamHandler(sys.stderr)]
    root.setLevel(logging.INFO)
    logger = logging.getLogger(f"rule.{smk.rule}")
    try:
        yield logger
    except Exception:
        logger.exception("rule %s failed", smk.rule)
        raise
    finally:
        handler.close()
