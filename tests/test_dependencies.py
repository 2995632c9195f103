"""Dependencies exactly as used: every third-party package the code imports is declared in
pyproject.toml (the runtime list or the extra of the code that imports it), and nothing is
declared that nothing uses.

The imports are parsed, not guessed: every ``import``/``from`` of the Python files and the
Snakefile and rule files under ``analysis/``, ``workflow/``, ``benchmarks/`` and ``tests/``, plus
the modules the code starts as ``python -m <module>`` or looks up with ``find_spec("<module>")``.
A module maps to its distribution through the installed metadata
(``importlib.metadata.packages_distributions``). A declared package that no code imports must
name where it is used instead (``USED_WITHOUT_IMPORT``: a command line tool, a plugin that
Snakemake or pytest loads, a pin of a transitive dependency, a model shipped as a package),
and that place is checked to still say so.

``test_every_module_imports_with_only_the_declared_runtime`` is the install check: it imports
every module of ``analysis`` in a fresh interpreter that can import only the standard library,
the runtime dependencies pyproject declares and what they require (their metadata's closure),
as a fresh ``pip install .`` would have them.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from analysis import REPO_ROOT
from tests.conftest import assert_python_succeeds

#: folder -> the declarations its imports may come from ("" = the runtime dependencies)
ALLOWED = {
    "analysis": ("",),
    "workflow": ("",),
    "benchmarks": ("", "bench"),
    "tests": ("", "test", "bench", "cluster", "local-llm"),
}
#: the project's own top-level modules (the package, the tests, the benchmark scripts)
FIRST_PARTY = {"analysis", "tests"} | {p.stem for p in (REPO_ROOT / "benchmarks").glob("*.py")}
#: declared but never imported: where each is used instead (file, text that shows the use)
USED_WITHOUT_IMPORT = {
    "snakemake-executor-plugin-slurm": ("workflow/profiles/slurm/config.yaml", "executor: slurm"),
    "snakemake-executor-plugin-kubernetes": (
        "workflow/profiles/kubernetes/config.yaml",
        "executor: kubernetes",
    ),
    "snakemake-storage-plugin-fs": (
        "workflow/profiles/kubernetes/config.yaml",
        "default-storage-provider: fs",
    ),
    "pytest-timeout": ("tests/llm/test_smollm2.py", "pytest.mark.timeout"),
    "pytest-xdist": ("Makefile", "-n auto --dist loadgroup"),
    "ruff": ("Makefile", "ruff check"),
    "import-linter": ("Makefile", "lint-imports"),
    "snakefmt": ("Makefile", "snakefmt --check"),
}
SMK_IMPORT = re.compile(r"^\s*(?:from|import)\s+([\w.]+)", re.M)


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def declared() -> dict[str, str]:
    """Distribution (canonical name) -> the declaration it is in ("" = runtime, else extra)."""
    project = _pyproject()["project"]
    out = {canonicalize_name(Requirement(r).name): "" for r in project["dependencies"]}
    for extra, reqs in project["optional-dependencies"].items():
        for r in reqs:
            out.setdefault(canonicalize_name(Requirement(r).name), extra)
    return out


def _top_modules(path: Path) -> tuple[set[str], set[str]]:
    """Top-level modules ``path`` imports (absolute imports only), and those it only looks up
    or runs (``find_spec``, ``import_module``, ``python -m``): an optional extra's package may
    be used so, behind a check that says which extra to install."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":  # Snakefile and *.smk: Python statements in Snakemake's grammar
        return {name.split(".")[0] for name in SMK_IMPORT.findall(text)}, set()
    found: set[str] = set()
    looked_up: set[str] = set()
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Call) and _called(node) in {"find_spec", "import_module"}:
            if node.args and isinstance(node.args[0], ast.Constant):
                looked_up.add(str(node.args[0].value))
        elif isinstance(node, ast.List | ast.Tuple):  # [sys.executable, "-m", "module", ...]
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            looked_up.update(
                str(b) for a, b in zip(words, words[1:], strict=False) if a == "-m" and b
            )
    top = {name.split(".")[0] for name in found}
    return top, {name.split(".")[0] for name in looked_up} - top


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


@cache
def imports() -> dict[str, dict[str, dict[str, set[str]]]]:
    """Folder -> "import" or "lookup" -> distribution -> the files (third-party only)."""
    dists = packages_distributions()
    out: dict[str, dict[str, dict[str, set[str]]]] = {}
    for folder in ALLOWED:
        root = REPO_ROOT / folder
        files = [*root.rglob("*.py"), *root.rglob("*.smk"), *root.rglob("Snakefile")]
        for path in files:
            for kind, modules in zip(("import", "lookup"), _top_modules(path), strict=True):
                for module in modules - FIRST_PARTY:
                    if module in sys.stdlib_module_names or module == "__future__":
                        continue
                    names = dists.get(module)
                    assert names, (
                        f"{path.relative_to(REPO_ROOT)} uses {module!r}, which no installed "
                        "distribution provides: declare it in pyproject.toml and install it"
                    )
                    used = out.setdefault(folder, {}).setdefault(kind, {})
                    for dist in names:
                        used.setdefault(canonicalize_name(dist), set()).add(
                            str(path.relative_to(REPO_ROOT))
                        )
    return out


def test_every_import_is_declared_where_its_code_is_installed() -> None:
    decl = declared()
    problems = []
    for folder, kinds in imports().items():
        for kind, used in kinds.items():
            for dist, files in sorted(used.items()):
                if dist not in decl:
                    problems.append(f"{dist} (used by {sorted(files)[:3]}) is not declared")
                elif kind == "import" and decl[dist] not in ALLOWED[folder]:
                    problems.append(
                        f"{dist} is declared in [{decl[dist] or 'runtime'}] but {folder}/ "
                        f"imports it ({sorted(files)[:3]}): declare it in one of "
                        f"{[a or 'runtime' for a in ALLOWED[folder]]}"
                    )
    assert not problems, "\n".join(problems)


def test_nothing_is_declared_that_nothing_uses() -> None:
    used = {dist for kinds in imports().values() for u in kinds.values() for dist in u}
    unused = sorted(set(declared()) - used - set(USED_WITHOUT_IMPORT))
    assert not unused, f"declared in pyproject.toml, never imported or used: {unused}"
    for dist, (file, evidence) in USED_WITHOUT_IMPORT.items():
        assert dist in declared(), f"USED_WITHOUT_IMPORT names {dist}, which is not declared"
        assert dist not in used, f"{dist} is imported now: drop it from USED_WITHOUT_IMPORT"
        assert evidence in (REPO_ROOT / file).read_text(), (
            f"{dist}: {file} no longer says {evidence!r}; is it still used?"
        )


def test_the_fake_server_is_not_in_the_installed_package() -> None:
    assert not (REPO_ROOT / "analysis" / "llm" / "fake_server.py").exists()
    assert _pyproject()["tool"]["setuptools"]["packages"]["find"]["include"] == ["analysis*"]


#: run in a fresh interpreter: allow the standard library, the project and the closure of the
#: declared runtime requirements in the installed metadata; import every analysis module
IMPORT_EVERYTHING = r"""
import importlib, pkgutil, sys
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

def closure(reqs):
    seen, todo = set(), [(r, "") for r in reqs]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        extras = set(req.extras) | {""}
        key = (name, frozenset(extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue  # an optional platform package the resolver left out
        for sub in dist.requires or []:
            for e in extras:
                todo.append((Requirement(sub), e))
    return {name for name, _ in seen}

runtime = [Requirement(r) for r in RUNTIME]
allowed = closure(runtime)
dists = packages_distributions()

class OnlyDeclared:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if path is not None or top in sys.stdlib_module_names or top == "analysis":
            return None
        owners = {canonicalize_name(d) for d in dists.get(top, ())}
        if owners and not owners & allowed:
            raise ImportError(f"{name} is from {sorted(owners)}, not a declared dependency")
        return None

sys.meta_path.insert(0, OnlyDeclared())
import analysis
failed = []
for mod in pkgutil.walk_packages(analysis.__path__, "analysis."):
    try:
        importlib.import_module(mod.name)
    except Exception as err:
        failed.append(f"{mod.name}: {type(err).__name__}: {err}")
assert not failed, "\n".join(failed)
print(len(allowed))
"""


def test_every_module_imports_with_only_the_declared_runtime() -> None:
    runtime = _pyproject()["project"]["dependencies"]
    assert_python_succeeds(f"RUNTIME = {runtime!r}\n{IMPORT_EVERYTHING}")
