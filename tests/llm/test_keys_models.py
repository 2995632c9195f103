"""Call keys and model specs: what enters a key, what does not, and config validation."""

from __future__ import annotations

import dataclasses
import random

import pytest

from analysis.llm.calls import ChatRequest, call_key
from analysis.llm.keys import KeyMaker, effective_params, key_from_parts
from analysis.llm.models import (
    ModelConfigError,
    ModelSpec,
    model_from_config,
    models_from_config,
    normalize_base_url,
)
from analysis.workflow_config import compose_config

BASE = ModelSpec("m-1", "https://api.example.com/v1", "EXAMPLE_KEY", {"temperature": 0.0})
REQ = ChatRequest(({"role": "user", "content": "hello"},), {"max_tokens": 8}, 0, "item-1")


def key(model: ModelSpec = BASE, request: ChatRequest = REQ, version: str = "v1") -> str:
    return call_key(model, request, version)


def test_key_is_a_sha256_hex_digest() -> None:
    k = key()
    assert len(k) == 64 and int(k, 16) >= 0


@pytest.mark.parametrize(
    "changed",
    [
        dataclasses.replace(REQ, messages=({"role": "user", "content": "hello!"},)),
        dataclasses.replace(REQ, messages=({"role": "system", "content": "hello"},)),
        dataclasses.replace(
            REQ, messages=({"role": "system", "content": "s"}, {"role": "user", "content": "hello"})
        ),
        dataclasses.replace(REQ, params={"max_tokens": 9}),
        dataclasses.replace(REQ, params={"max_tokens": 8, "temperature": 0.7}),
        dataclasses.replace(REQ, params={"max_tokens": 8, "seed": 1}),
        dataclasses.replace(REQ, params={"max_tokens": 8, "n": 2}),
        dataclasses.replace(REQ, params={"max_tokens": 8, "top_p": 0.9}),
        dataclasses.replace(
            REQ, params={"max_tokens": 8, "response_format": {"type": "json_object"}}
        ),
        dataclasses.replace(REQ, params={"max_tokens": 8, "logprobs": True}),
        dataclasses.replace(REQ, sample_index=1),
    ],
)
def test_key_changes_with_any_message_or_param(changed: ChatRequest) -> None:
    assert key(request=changed) != key()


@pytest.mark.parametrize(
    "other",
    [
        dataclasses.replace(BASE, name="m-2"),
        dataclasses.replace(BASE, api_model="m-1-2025-01-01"),
        dataclasses.replace(BASE, base_url="https://other.example.org/v1"),
        dataclasses.replace(BASE, params={"temperature": 0.5}),
        dataclasses.replace(BASE, params={"temperature": 0.0, "seed": 7}),
    ],
)
def test_key_changes_with_the_model(other: ModelSpec) -> None:
    assert key(model=other) != key()


def test_key_changes_with_prompt_version() -> None:
    assert key(version="v2") != key()


@pytest.mark.parametrize(
    "same",
    [
        dataclasses.replace(BASE, price_input_per_mtok=5.0, price_output_per_mtok=9.0),
        dataclasses.replace(BASE, max_concurrency=64),
        dataclasses.replace(BASE, api_key_env="ANOTHER_VAR"),
        dataclasses.replace(BASE, base_url="HTTPS://API.EXAMPLE.COM:443/v1/"),
        dataclasses.replace(BASE, description="new words"),
    ],
)
def test_key_ignores_what_does_not_change_the_answer(same: ModelSpec) -> None:
    assert key(model=same) == key()


def test_key_ignores_custom_id_param_order_and_number_spelling() -> None:
    a = ChatRequest(REQ.messages, {"max_tokens": 8, "top_p": 1}, 0, "a")
    b = ChatRequest(REQ.messages, {"top_p": 1.0, "max_tokens": 8.0}, 0, "b")
    assert key(request=a) == key(request=b)


def test_request_param_overrides_model_default_and_none_means_unset() -> None:
    explicit = ChatRequest(REQ.messages, {"max_tokens": 8, "temperature": 0.0})
    assert key(request=explicit) == key(request=dataclasses.replace(REQ, custom_id=""))
    unset = dataclasses.replace(BASE, params={"temperature": 0.0, "seed": None})
    assert key(model=unset) == key()


def test_loopback_endpoints_share_a_key_across_ports() -> None:
    a = dataclasses.replace(BASE, base_url="http://127.0.0.1:8000/v1")
    b = dataclasses.replace(BASE, base_url="http://localhost:9123/v1/")
    assert key(model=a) == key(model=b)
    assert normalize_base_url("http://127.0.0.1:8000/v1") == "local/v1"
    assert normalize_base_url("https://api.example.com:8443/v1") == "api.example.com:8443/v1"


def test_identity_never_contains_the_key_variable_or_prices() -> None:
    ident = BASE.identity()
    assert "EXAMPLE_KEY" not in str(ident) and "price" not in str(ident)


def test_managed_server_identity_is_the_weights_file_not_its_location() -> None:
    by_package = ModelSpec(
        "local-m",
        None,
        None,
        {},
        server={"kind": "llama_cpp", "package": "pkg", "file": "w.gguf", "n_threads": 2},
    )
    by_path = ModelSpec(
        "local-m",
        None,
        None,
        {},
        server={"kind": "llama_cpp", "path": "/somewhere/else/w.gguf", "n_threads": 8},
    )
    assert by_package.identity() == by_path.identity()
    assert by_package.identity()["server"] == {"kind": "llama_cpp", "file": "w.gguf"}


@pytest.mark.parametrize(
    ("cfg", "fragment"),
    [
        ({"base_url": "http://x/v1", "temprature": 0}, "unknown key(s) ['temprature']"),
        ({"base_url": None}, "set base_url"),
        ({"base_url": "http://x/v1", "api_key_env": "sk-abc def"}, "NAME of an environment"),
        ({"base_url": None, "server": {"kind": "vllm", "file": "x"}}, "server.kind 'vllm'"),
        ({"base_url": "http://x/v1", "params": {"stream": True}}, "stream"),
        ({"base_url": "http://x/v1", "max_concurrency": 0}, "max_concurrency"),
    ],
)
def test_model_config_errors_name_model_and_field(cfg: dict, fragment: str) -> None:
    with pytest.raises(ModelConfigError) as err:
        model_from_config("my-model", cfg)
    assert "my-model" in str(err.value) and fragment in str(err.value)


def test_bad_model_name_is_rejected() -> None:
    with pytest.raises(ModelConfigError, match="lowercase id"):
        model_from_config("GPT 4", {"base_url": "http://x/v1"})


def test_config_groups_compose_and_build_specs() -> None:
    cfg = compose_config()
    assert cfg["llm"]["mode"] == "replay"
    specs = models_from_config(cfg["models"])
    smol = specs["smollm2-135m"]
    assert smol.base_url is None and smol.server and smol.server["kind"] == "llama_cpp"
    assert "NOT a good annotator" in smol.description
    assert compose_config(["models=none"])["models"] == {}
    for mode in ("record", "refresh"):
        assert compose_config([f"llm={mode}"])["llm"]["mode"] == mode


def test_unknown_llm_key_is_a_config_error() -> None:
    from analysis.workflow_config import ConfigError

    with pytest.raises(ConfigError, match="llm"):
        compose_config(["+llm.retries=3"])


#: every ASCII character (controls, quote, backslash), and a few that JSON encoders treat apart
_CHARS = [chr(i) for i in range(0x80)] + ["é", "😀", "\u2028", "\u2029", "\ufeff", "\x80", "\xa0"]
_OVERRIDES = [
    {},
    {"max_tokens": 2},
    {"temperature": 1e-05},  # the stdlib writes 1e-05, orjson 0.00001
    {"temperature": 1e16},
    {"temperature": 1.0},
    {"seed": True},
    {"seed": 1},
    {"stop": ["a", "b"]},
    {"top_p": None},
    {"logit_bias": {"5": -1e20}},
    {"response_format": {"type": "json_object"}},
]


def test_key_maker_equals_the_reference_key_byte_for_byte() -> None:
    """The fast path (parts serialized once, orjson for string-only messages) must give the
    reference key for every input, or stored calls would be orphaned."""
    identity = {"name": "m", "endpoint": "x", "weights": [1, 2.5e-07]}
    defaults = {"temperature": 0.0, "top_p": 0.95, "seed": 7}
    maker = KeyMaker(identity, defaults, "v1")
    rnd = random.Random(1)
    for i in range(3000):
        text = "".join(rnd.choice(_CHARS) for _ in range(rnd.randint(0, 24)))
        messages = [{"role": "system", "content": text}, {"role": "user", "content": text[::-1]}]
        if i % 7 == 0:
            messages[1]["weight"] = 0.5  # not string-only: the reference path
        overrides = rnd.choice(_OVERRIDES)
        expected = key_from_parts(
            identity, messages, effective_params(defaults, overrides), i % 3, "v1"
        )
        assert maker.key(messages, overrides, i % 3) == expected, (messages, overrides)
