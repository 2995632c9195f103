"""The API key never reaches the call store, logs, errors or batch state.

The endpoint requires the key and deliberately echoes the Authorization header in a response
body and in an error body; every file the run writes is then scanned for the key.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest

from analysis.llm.calls import CallError, ChatRequest, run_calls
from analysis.llm.models import ModelSpec
from analysis.llm.store import usage_summary, validate_store
from analysis.settings import ClientSettings
from tests.fake_server import FakeOpenAI
from tests.llm.conftest import KEY_ENV, TEST_KEY


def scan(root: Path) -> list[Path]:
    """Every file under ``root`` that contains the test key."""
    return [p for p in root.rglob("*") if p.is_file() and TEST_KEY.encode() in p.read_bytes()]


def test_key_reaches_the_endpoint_but_no_written_file(
    tmp_path: Path, fast: ClientSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, TEST_KEY)
    log_file = tmp_path / "logs" / "rule.log"
    log_file.parent.mkdir()
    handler = logging.FileHandler(log_file)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)  # the most talkative setting, third-party loggers included
    store = tmp_path / "calls"
    try:
        with FakeOpenAI(api_key=TEST_KEY, batch_polls_to_complete=1) as server:
            model = ModelSpec("keyed-model", server.base_url, KEY_ENV, {"temperature": 0})
            server.plan = {"leaky": ["leak500", "leak"], "fails": ["leak500"] * 10}
            reqs = [ChatRequest.from_prompt(p) for p in ("plain", "leaky", "fails")]
            with pytest.raises(CallError) as err:
                run_calls(
                    model,
                    reqs,
                    stage="s",
                    store=store,
                    mode="record",
                    settings=fast,
                    progress=False,
                )
            results = run_calls(
                model, reqs[:2], stage="s", store=store, progress=False, settings=fast
            )
            batch_settings = dataclasses.replace(fast, batch_poll_s=0.01)
            server.plan["b-leaky"] = ["leak"]
            run_calls(
                model,
                [ChatRequest.from_prompt(p) for p in ("b-plain", "b-leaky")],
                stage="s",
                store=store,
                mode="record",
                settings=batch_settings,
                executor="batch",
                shard="batch",
                progress=False,
            )
            # the key really was used: a wrong one is refused
            monkeypatch.setenv(KEY_ENV, "sk-wrong-key-000000")
            with pytest.raises(CallError, match="HTTP 401"):
                run_calls(
                    model,
                    [ChatRequest.from_prompt("new")],
                    stage="s",
                    store=store,
                    mode="record",
                    settings=fast,
                    progress=False,
                )
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()

    assert TEST_KEY not in str(err.value) and "[REDACTED]" in str(err.value)
    assert "[REDACTED]" in results[1].text  # the echoed header was scrubbed before storing
    assert all(TEST_KEY not in repr(r) for r in results)
    assert log_file.stat().st_size > 0
    assert scan(tmp_path) == []
    assert validate_store(store).ok
    assert set(usage_summary(store)["stage"]) == {"s"}


@pytest.mark.parametrize(
    "secret",
    [TEST_KEY, 'sk-"quoted\\key', "sk-tab\tkey-123"],  # the last two are escaped in JSON
)
def test_writer_scrubs_secrets_and_secret_fields_in_every_spelling(
    tmp_path: Path, secret: str
) -> None:
    """The writer serializes first and scrubs field by field only when the line shows a secret
    or a secret-named field: neither may slip through, in any JSON spelling."""
    from analysis.llm.store import REDACTED, ShardWriter, iter_shard

    path = tmp_path / "s" / "m" / "0.jsonl"
    records = [
        {"key": "a", "response": {"echo": f"Bearer {secret}"}},
        {"key": "b", "response": {"headers": {"Authorization": "x", "API_KEY": "y"}}},
        {"key": "c", "response": {"n": 2**70, "text": "plain"}},  # beyond orjson: stdlib path
    ]
    with ShardWriter(path, secrets=[secret]) as writer:
        writer.append_many(records)
    raw = path.read_bytes()
    assert secret.encode() not in raw and TEST_KEY.encode() not in raw
    stored = {rec["key"]: rec for _, rec in iter_shard(path)}
    assert stored["a"]["response"]["echo"] == f"Bearer {REDACTED}"
    assert stored["b"]["response"]["headers"] == {}
    assert stored["c"]["response"] == {"n": 2**70, "text": "plain"}
