"""Fixtures of the call-layer tests: a fault-injecting OpenAI-compatible server, a model spec
pointing at it, tiny retry sleeps, and an empty call store per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from analysis.llm.models import ModelSpec
from analysis.settings import ClientSettings
from tests.fake_server import FakeOpenAI
from tests.settings_defaults import llm_settings

#: the key the tests use; every file written in a test is scanned for it
TEST_KEY = "sk-test-3f9a1c77e2b04d5e8a6b"
KEY_ENV = "RECENTER_TEST_API_KEY"


@pytest.fixture
def fast() -> ClientSettings:
    """Retries with millisecond sleeps, so fault tests run in seconds. The timeout stays
    generous: the machine is shared, and a spurious timeout would make a second attempt."""
    return llm_settings(timeout_s=10, max_retries=3, backoff_base_s=0.002, backoff_max_s=0.01)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


@pytest.fixture
def model(server: FakeOpenAI) -> ModelSpec:
    return ModelSpec(
        name="fake-model",
        base_url=server.base_url,
        api_key_env=None,
        params={"temperature": 0.0, "max_tokens": 32},
        price_input_per_mtok=1.0,
        price_output_per_mtok=2.0,
        max_concurrency=4,
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "calls"
