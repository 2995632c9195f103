"""recenter: the reproducible artifact of *Re-Centering Humans in LLM Personalization*.

All study logic lives in this package; Snakemake rules only call into it.
"""

from pathlib import Path

__all__ = ["REPO_ROOT", "SNAKEFILE", "repo_root"]

#: The workflow's entry point, relative to the repository (the catalog's layout: plain
#: ``snakemake`` finds it, and its default profile ``workflow/profiles/default`` next to it).
SNAKEFILE = Path("workflow") / "Snakefile"


def repo_root(start: Path | str | None = None) -> Path:
    """The working copy holding ``start``: the nearest folder at or above with workflow/Snakefile.

    The one way the project finds its root (the package, rule scripts, tests and benchmarks):
    a rule script passes its own folder, so a reviewer's fresh copy resolves to that copy even
    when ``analysis`` is imported from elsewhere. Without ``start``, the copy holding this
    package; if the package sits outside any copy (a wheel install), the working directory,
    where the workflow runs.
    """
    here = Path(start if start is not None else __file__).resolve()
    for folder in (here, *here.parents):
        if (folder / SNAKEFILE).is_file():
            return folder
    if start is not None:
        raise FileNotFoundError(f"no {SNAKEFILE} at or above {here}: not inside a recenter copy")
    return Path.cwd().resolve()


#: Repository root (the folder that holds ``workflow/Snakefile``).
REPO_ROOT = repo_root()
