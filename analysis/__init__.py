"""recenter: the reproducible artifact of *Re-Centering Humans in LLM Personalization*.

All study logic lives in this package; Snakemake rules only call into it.
"""

from pathlib import Path

#: Repository root (the folder that holds the Snakefile).
REPO_ROOT = Path(__file__).resolve().parent.parent
