"""pyproject.toml is the source of truth; environment.yml must list the same dependencies."""

import tomllib

import yaml

from analysis import REPO_ROOT


def test_environment_yml_pip_section_equals_pyproject_dependencies() -> None:
    deps = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    env = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1, "environment.yml needs exactly one pip: section"
    listed = [d for d in pip_sections[0] if d != "-e ."]
    assert sorted(listed) == sorted(deps), (
        "environment.yml pip section differs from pyproject.toml [project].dependencies: "
        f"only in pyproject: {sorted(set(deps) - set(listed))}; "
        f"only in environment.yml: {sorted(set(listed) - set(deps))}"
    )
    assert "-e ." in pip_sections[0], "environment.yml must install the project itself"


def test_environment_yml_pins_the_supported_python() -> None:
    env = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]
