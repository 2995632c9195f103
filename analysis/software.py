"""Which software built the numbers: every installed Python package, TeX Live, latexmk, the OS.

A reviewer who gets a different number must be able to tell whether the software differs. The
hashed lock pins most packages; the ones installed outside it (the CPU build of torch,
llama-cpp-python) are identified by a hash of their installed file list (``RECORD``: every
file with its own sha256), because their version string alone does not say which build it is.
The result is byte-stable on one machine (sorted keys, no timestamps, no paths).

Module-level imports are the standard library only: the benchmarks read
:func:`repository_commit` under a bare Python, before ``make`` has installed anything
(``benchmarks/bench_fresh.py``), so ``packaging`` is imported where a name is normalized.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Installed outside the hashed lock (their files differ per machine): identified by file hash.
OUTSIDE_LOCK: tuple[str, ...] = ("torch", "llama-cpp-python")


def _record_sha256(dist: importlib.metadata.Distribution) -> str | None:
    text = dist.read_text("RECORD")
    return hashlib.sha256(text.encode()).hexdigest() if text else None


def _first_line(cmd: list[str]) -> str | None:
    """The first line a tool prints about its version, or None where it is not installed."""
    if shutil.which(cmd[0]) is None:
        return None
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if lines else None


def _os_name() -> str:
    try:
        info = platform.freedesktop_os_release()
        return info.get("PRETTY_NAME", info.get("NAME", platform.system()))
    except OSError:
        return platform.platform(terse=True)


def installed_software() -> dict[str, Any]:
    """``{python, os, machine, tex, latexmk, packages: {name: version}, outside_lock: {...}}``."""
    from packaging.utils import canonicalize_name

    packages: dict[str, str] = {}
    outside: dict[str, dict[str, str | None]] = {}
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"] or "")
        if not name or name in packages:
            continue
        packages[name] = dist.version
        if name in OUTSIDE_LOCK:
            outside[name] = {"version": dist.version, "record_sha256": _record_sha256(dist)}
    latexmk = _first_line(["latexmk", "-v"])
    return {
        "python": platform.python_version(),
        "os": _os_name(),
        "machine": platform.machine(),
        "tex": _first_line(["pdflatex", "--version"]),
        "latexmk": latexmk.replace("Latexmk, ", "") if latexmk else None,
        "packages": dict(sorted(packages.items())),
        "outside_lock": dict(sorted(outside.items())),
    }


def software_differences(built: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """Human-readable differences between the software that built numbers and the current one."""
    out: list[str] = []
    for key in ("python", "os", "machine", "tex", "latexmk"):
        if built.get(key) != now.get(key):
            out.append(f"{key}: built with {built.get(key)!r}, now {now.get(key)!r}")
    old, new = built.get("packages", {}), now.get("packages", {})
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            out.append(f"package {name}: built with {old.get(name)}, now {new.get(name)}")
    old_files, new_files = built.get("outside_lock", {}), now.get("outside_lock", {})
    for name in sorted(set(old_files) | set(new_files)):
        a, b = old_files.get(name, {}), new_files.get(name, {})
        if a.get("record_sha256") != b.get("record_sha256"):
            out.append(f"package {name}: a different build of its files than the one that built")
    return out


def package_fingerprint() -> str:
    """sha256 of every installed package's name and version: cheap enough for each workflow parse,
    so installing or upgrading a package reruns the rule that records the software."""
    from packaging.utils import canonicalize_name

    metadata = (d.metadata for d in importlib.metadata.distributions())  # parsed once each
    rows = sorted(f"{canonicalize_name(m['Name'] or '')}=={m['Version']}" for m in metadata)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


#: a copy of the repository without ``.git`` (``recenter verify``, the tests' builds) is told which
#: commit it is a copy of through this variable: ``<sha>``, or ``<sha>-dirty`` for a tree that had
#: uncommitted changes (the form of ``git describe --always --dirty``)
COMMIT_VARIABLE = "RECENTER_COMMIT"
UNKNOWN_COMMIT = "unknown"
#: names a folder of MiniLM vectors that builds on one machine share (``analysis.stages.
#: embeddings``: stored per set of texts, byte for byte what encoding them gives); unset in a
#: reproduction, cleared by ``recenter verify`` (a verification encodes everything again)
EMBEDDING_CACHE_VARIABLE = "RECENTER_EMBEDDING_CACHE"
#: names a folder of composed configs that processes on one machine share
#: (``analysis.workflow_config.compose_config``: stored per digest of everything composition
#: reads); unset in a reproduction, cleared by ``recenter verify`` (a verification composes again)
CONFIG_CACHE_VARIABLE = "RECENTER_CONFIG_CACHE"


def _git(root: Path, *args: str) -> str | None:
    if shutil.which("git") is None:
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def repository_commit(root: Path) -> dict[str, Any]:
    """Which commit of the repository at ``root`` built this, and whether its tree had changes.

    ``{"commit": <sha> | "unknown", "uncommitted_changes": bool | None, "source": ...}``: from
    :data:`COMMIT_VARIABLE` where a copier set it, else from git (untracked files that git does
    not ignore count as changes: a new module is code), else unknown. A reviewer holding a PDF
    can then tell which code made it.
    """
    given = os.environ.get(COMMIT_VARIABLE, "").strip()
    if given:
        sha, dirty = given.removesuffix("-dirty"), given.endswith("-dirty")
        return {"commit": sha, "uncommitted_changes": dirty, "source": COMMIT_VARIABLE}
    if not (root / ".git").exists():  # not a folder inside some other checkout either
        return {"commit": UNKNOWN_COMMIT, "uncommitted_changes": None, "source": "no git checkout"}
    sha = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain")
    if not sha:
        return {"commit": UNKNOWN_COMMIT, "uncommitted_changes": None, "source": "git"}
    return {
        "commit": sha,
        "uncommitted_changes": None if status is None else bool(status),
        "source": "git",
    }


def commit_label(commit: Mapping[str, Any]) -> str:
    """``<sha>``, ``<sha>-dirty`` or ``unknown``: what :data:`COMMIT_VARIABLE` takes."""
    sha = str(commit.get("commit") or UNKNOWN_COMMIT)
    return f"{sha}-dirty" if sha != UNKNOWN_COMMIT and commit.get("uncommitted_changes") else sha


def commit_sentence(commit: Mapping[str, Any]) -> str:
    """The commit as a sentence says it: ``commit 1a2b3c4 (with uncommitted changes)``."""
    sha = str(commit.get("commit") or UNKNOWN_COMMIT)
    if sha == UNKNOWN_COMMIT:
        return "an unknown commit (the build was made from a copy without git history)"
    state = {True: " (with uncommitted changes)", False: "", None: " (tree state unknown)"}
    return f"commit {sha[:12]}{state[commit.get('uncommitted_changes')]}"
