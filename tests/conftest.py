"""Shared fixtures: the repository root, the real annotation-tool data, workflow copies, and
the one full build of the bundled world that every test reading its outputs shares
(``bundled_build``)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from filelock import FileLock

from analysis import REPO_ROOT
from analysis.paper.verify import copy_sources
from analysis.simulation.truth import TRUTH_CACHE_VARIABLE
from analysis.software import (
    COMMIT_VARIABLE,
    CONFIG_CACHE_VARIABLE,
    EMBEDDING_CACHE_VARIABLE,
    commit_label,
    repository_commit,
)

REAL_DATA = (REPO_ROOT.parent / "shared" / "data" / "annotation-tool").resolve()


@pytest.fixture(scope="session")
def real_data_root() -> Path:
    """The authors' real exports; tests that need them skip (with this reason) where absent."""
    if not (REAL_DATA / "extracted" / "task5_items.jsonl").is_file():
        pytest.skip(f"real annotation-tool data not found at {REAL_DATA} (CI always has it)")
    return REAL_DATA


def make_workflow_copy(dest: Path) -> Path:
    """Copy the repository's source files to ``dest`` (a fresh clone, without any outputs: the
    copy ``recenter verify`` rebuilds in)."""
    copy_sources(REPO_ROOT, dest)
    # ../shared beside the copy, as in a CI checkout, so data.root=../shared/... resolves
    shared = REPO_ROOT.parent / "shared"
    if shared.is_dir() and not (dest.parent / "shared").exists():
        (dest.parent / "shared").symlink_to(shared)
    return dest


@pytest.fixture
def workflow_copy(tmp_path: Path) -> Path:
    return make_workflow_copy(tmp_path / "repo")


def run_snakemake(
    workdir: Path,
    *args: str,
    timeout: int = 1500,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the real snakemake CLI in ``workdir`` (environment ``env``, default this process's)."""
    # The copy's own package is imported, so a code edit in the copy is what the workflow sees.
    env = dict(
        os.environ if env is None else env,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=str(workdir),
    )
    # Torch's OpenMP threads sleep when idle instead of spinning: under `make test` two xdist
    # workers and up to two builds share the cores, and spinning threads burn CPU-seconds that
    # another process needed. Wait policy changes no result (same bytes); an explicit setting wins.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # a copy has no .git: it is told which commit of this checkout it is (environment.json, PDF)
    env.setdefault(COMMIT_VARIABLE, checkout_commit())
    proc = subprocess.run(
        ["snakemake", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({proc.returncode}):\n"
            f"{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


@functools.cache
def checkout_commit() -> str:
    """This checkout's commit as a copy of it is told (``analysis.software.COMMIT_VARIABLE``)."""
    return commit_label(repository_commit(REPO_ROOT))


def build_paths(*overrides: str, tier: str = "analysis", root: Path = REPO_ROOT):
    """Where the build of ``overrides`` writes one tier of its outputs (``analysis.variants``):
    the dataset's folder, or a variant's for a configuration other than the default."""
    from analysis.variants import identify
    from analysis.workflow_config import compose_config

    config_dir = root / "config"
    cfg = compose_config(list(overrides), config_dir=config_dir)
    return identify(list(overrides), cfg, config_dir).paths(tier)


def assert_python_succeeds(
    code: str, env: dict[str, str] | None = None, cwd: Path = REPO_ROOT
) -> None:
    """Run ``code`` in a fresh interpreter in ``cwd`` (default the repository root; environment
    ``env``, default this process's); it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr


def fake_models_group(work: Path, name: str, base_url: str) -> str:
    """Add a models group to a workflow copy: one model served by the fake OpenAI-compatible
    server at ``base_url`` (tests/fake_server.py); returns the override selecting it."""
    spec = {
        name: {
            "description": "the fake OpenAI-compatible test server (echoes; not a model)",
            "base_url": base_url,
            "api_key_env": None,
            "params": {"temperature": 0.0, "max_tokens": 16},
            "price_input_per_mtok": 1.0,
            "price_output_per_mtok": 2.0,
            "max_concurrency": 2,
        }
    }
    (work / "config" / "models" / "fakeserver.yaml").write_text(yaml.safe_dump(spec))
    return "models=fakeserver"


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by Selenium (``tests/browser.py``), one per session (a
    missing browser is an error naming its package: the tests' install provides it)."""
    from tests.browser import headless_chromium

    with headless_chromium() as driver:
        yield driver


#: the pytest-xdist group of every test that uses ``bundled_build``: one worker runs them all, so
#: no other worker sits idle on the build's lock while the build runs
BUNDLED_GROUP = "bundled_build"


def _xdist_group(item: pytest.Item) -> str | None:
    """The worker group of a test: the shared build's, or its module's when the module has a
    module-scoped fixture (computed once per worker that runs one of its tests)."""
    if "bundled_build" in getattr(item, "fixturenames", ()):
        return BUNDLED_GROUP
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    if any(d.scope == "module" for fixturedefs in defs for d in fixturedefs):
        return f"module:{item.nodeid.split('::')[0]}"
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order and group the tests for ``make test``'s parallel run (pytest-xdist, ``-n auto --dist
    loadgroup``); without xdist only the order changes.

    - Every test that asks for ``bundled_build`` (or carries ``@pytest.mark.xdist_group`` of it)
      joins one group, run on one worker; so do the tests of a
      module with a module-scoped fixture (one worker computes it, not each).
    - The shared build's tests start first, then the other ``full_build`` ones (the real
      exports' build), then the other ``slow`` ones (stable order otherwise). xdist hands the
      first two work units to different workers, so the two longest builds start at once on
      both cores; a minutes-long test started last would leave the other core idle at the end
      (a real-exports build queued behind the shared one on the same worker cost a minute).
    """
    for item in items:
        group = _xdist_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))

    def rank(item: pytest.Item) -> int:
        mark = item.get_closest_marker("xdist_group")
        if mark is not None and mark.args[:1] == (BUNDLED_GROUP,):
            return 0
        if item.get_closest_marker("full_build") is not None:
            return 1
        return 2 if item.get_closest_marker("slow") is not None else 3

    items.sort(key=rank)


#: how the shared bundled build is made
BUNDLED_BUILD_ARGS = ("--cores", "2")
#: how the determinism test's second copy is made: another core count and every job on one
#: thread (the shared build runs two jobs at once and gives the trained models two threads), so
#: its byte-identical check also holds the results to not depending on either. Three cores on a
#: two-core machine: the copy's jobs may use the second core whenever the other xdist worker
#: leaves it idle (the shared build's group, which includes this test, is the suite's longest)
TWIN_BUILD_ARGS = ("--cores", "3", "--max-threads", "1")


def session_shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this test session that every pytest-xdist worker sees: the workers' base
    temporary folders (``popen-gwN``) sit in the session's own; without xdist it is that one."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def shared_session_caches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folders the whole session shares, set in this process's environment so every process a
    test starts inherits them:

    - composed configs (``CONFIG_CACHE_VARIABLE``): the suite starts snakemake more than a
      hundred times, mostly with the same config, and composing it costs each call about half
      a CPU-second;
    - the simulated truth's large draw (``TRUTH_CACHE_VARIABLE``): the same 40 worlds, about
      25 CPU-s, in the truth tests, the world's regeneration and the coverage benchmark.

    Each stores a result only after it was computed here, under a digest of everything that
    decides it (``stored_config_path``, ``stored_design_path``), so an edited copy computes
    afresh, and the tests that compare with committed files still check a fresh computation.
    """
    folder = session_shared_dir(tmp_path_factory) / "caches"
    os.environ[CONFIG_CACHE_VARIABLE] = str(folder / "config")
    os.environ[TRUTH_CACHE_VARIABLE] = str(folder / "truth")
    return folder


def bundled_build_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the shared bundled build and of the determinism test's twin: they
    share their MiniLM vectors (``EMBEDDING_CACHE_VARIABLE``), so the twin reads what the shared
    build encoded instead of loading the model six times again (about a minute of CPU). The
    vectors' own determinism across processes and thread counts is tested where they are made
    (tests/stages/test_embeddings.py)."""
    folder = session_shared_dir(tmp_path_factory) / "bundled_build" / "embeddings"
    return dict(os.environ, **{EMBEDDING_CACHE_VARIABLE: str(folder)})


@pytest.fixture(scope="session")
def bundled_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the repository after a full build of the bundled world
    (``snakemake --cores 2``): ``results/bundled/``, ``figures/bundled/``,
    ``paper/generated/bundled/``, ``paper/build/bundled/paper.pdf``, ``logs/bundled/``.

    Why shared: a full build costs minutes of CPU, and most checks only read its outputs. It is
    made once per session, whichever test (on whichever xdist worker) asks first; the others wait
    on a file lock and reuse it. READ-ONLY: a test that edits, deletes or reruns anything in it
    (beyond a dry run, ``snakemake -n``) must work on its own copy (``workflow_copy``), or every
    later test reads what it changed. A failed build fails every test that asks for it, once each,
    with snakemake's error, without building again.
    """
    root = session_shared_dir(tmp_path_factory) / "bundled_build"
    root.mkdir(exist_ok=True)
    repo, done, failed = root / "repo", root / "done", root / "failed"
    with FileLock(root / "build.lock"):
        if failed.exists():
            pytest.fail(f"the shared bundled build failed:\n{failed.read_text()}", pytrace=False)
        if not done.exists():
            make_workflow_copy(repo)
            try:
                run_snakemake(repo, *BUNDLED_BUILD_ARGS, env=bundled_build_env(tmp_path_factory))
            except (AssertionError, subprocess.TimeoutExpired) as err:
                failed.write_text(str(err))
                raise
            done.touch()
    return repo
