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
LOCKED_EXTRAS = ("test", "cluster", "local-llm")


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def _lock() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of every requirement in requirements.lock."""
    text = (REPO_ROOT / "requirements.lock").read_text()
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


def test_packages_outside_the_lock_are_pinned_by_version_in_the_makefile() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert re.search(r"TORCH_PIN\s*:?=\s*torch==\d", makefile)
    assert re.search(r"LLAMA_PIN\s*:?=\s*llama-cpp-python==\d", makefile)
    assert "--require-hashes" in makefile


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
