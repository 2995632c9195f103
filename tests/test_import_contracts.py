"""The package's layers, as written in .importlinter, hold (import-linter does the analysis)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from analysis import REPO_ROOT
from tests.conftest import assert_python_succeeds


def test_layer_contracts_are_kept() -> None:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports is not installed: pip install -e '.[test]'")
    done = subprocess.run([exe], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_statistics_and_records_import_without_hydra() -> None:
    """Importing a statistics module or the record type pulls in neither Hydra nor the paper."""
    code = (
        "import sys, analysis.stats.agreement, analysis.provenance; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('hydra', 'omegaconf') "
        "or m.startswith('analysis.paper')]; print(bad); sys.exit(1 if bad else 0)"
    )
    assert_python_succeeds(code)


def test_replay_loads_no_http_stack() -> None:
    """A model-call job that replays from the store never imports the openai client, its
    transport or the retry library (about half a second per job): only recording needs them."""
    code = (
        "import sys, tempfile\n"
        "from pathlib import Path\n"
        "import analysis.stages.requests\n"
        "from analysis.llm.calls import ChatRequest, ReplayMiss, run_calls\n"
        "from analysis.llm.models import ModelSpec\n"
        "from tests.settings_defaults import llm_settings\n"
        "model = ModelSpec('m', 'http://127.0.0.1:9/v1', None, {})\n"
        "try:\n"
        "    run_calls(model, [ChatRequest.from_prompt('q')], stage='s',\n"
        "              store=Path(tempfile.mkdtemp()), settings=llm_settings())\n"
        "except ReplayMiss:\n"
        "    pass\n"
        "else:\n"
        "    sys.exit('an empty store answered a call')\n"
        "heavy = ('openai', 'aiohttp', 'httpx2', 'tenacity')\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in heavy]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    assert_python_succeeds(code)


#: the data modules the simulator may import (the canonical schemas, their vocabulary and the
#: error type the schemas raise); every other data module is forbidden to it by name
SIMULATOR_MAY_IMPORT = {"analysis.data.schemas", "analysis.data.vocabulary", "analysis.data.errors"}


def test_simulator_contract_names_every_other_data_module() -> None:
    """A new data module is forbidden to the simulator unless the contract is changed on purpose."""
    import configparser
    import pkgutil

    import analysis.data

    parser = configparser.ConfigParser()
    parser.read(REPO_ROOT / ".importlinter")
    section = parser["importlinter:contract:simulator-sees-only-data"]
    forbidden = set(section["forbidden_modules"].split())
    modules = {f"analysis.data.{m.name}" for m in pkgutil.iter_modules(analysis.data.__path__)}
    expected = modules - SIMULATOR_MAY_IMPORT
    assert {m for m in forbidden if m.startswith("analysis.data")} == expected
