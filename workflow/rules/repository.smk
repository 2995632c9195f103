# Where the repository is (the Snakefile's first include, before anything of the package is
# imported): the folder the rules read the config, the raw data, the call store and the paper's
# sources from. Functions only.

import hashlib
import subprocess
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.sourcecache import HostingProviderFile, LocalGitFile, LocalSourceFile


def repository_folder(basedir):
    """The repository as a folder, found from this file's folder (``workflow.current_basedir``).

    A local Snakefile's repository is the folder above it. A module from a repository at a
    ref (``github(...)``, ``gitlab(...)``, ``git+file:``) has no folder: Snakemake keeps a clone
    of it in its source cache, and the rules need the repository's tree (the package, the
    config, the raw data, the call store, the paper sources), so that tree is written once per
    ref under ``.snakemake/recenter-source/`` of the working directory.
    """
    if isinstance(basedir, LocalSourceFile):
        return Path(basedir.get_path_or_uri(secret_free=True)).parent
    if isinstance(basedir, LocalGitFile):
        git_dir, ref = Path(basedir.repo_path) / ".git", basedir.ref
    elif isinstance(basedir, HostingProviderFile):
        basedir.fetch_if_required()
        git_dir, ref = Path(basedir.hosted_repo.repo.git_dir), basedir.ref
    else:
        raise WorkflowError(
            f"recenter runs from a local folder, a git+file: URL or github(...)/gitlab(...), "
            f"not from {basedir.get_path_or_uri(secret_free=True)}: its rules need the "
            "repository's files, which a plain URL cannot list"
        )
    uri = basedir.get_path_or_uri(secret_free=True)
    dest = Path(
        ".snakemake", "recenter-source", hashlib.sha256(uri.encode()).hexdigest()[:16]
    )
    if not (dest / "workflow" / "Snakefile").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        tree = subprocess.run(
            ["git", f"--git-dir={git_dir}", "archive", "--format=tar", ref],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tree, check=True)
    return dest.resolve()
