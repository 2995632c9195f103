"""Replay serves only what was stored: every record verifies itself (a digest over its content,
its key recomputed from its request, the fields replay reads), and among records of one key
the order is the store's own (revision, then position), never a clock.

Each store here is made by recording against the fake server, then damaged the way a disk, a
hand edit or a skewed clock would; replay must refuse, naming shard, line, key and field.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.llm.calls import ChatRequest, run_calls
from analysis.llm.models import ModelSpec
from analysis.llm.store import ShardWriter, StoreError, iter_shard, shard_path, validate_store
from analysis.settings import ClientSettings
from tests.fake_server import FakeOpenAI

QUESTIONS = [f"question {i}" for i in range(3)]


def _requests() -> list[ChatRequest]:
    return [ChatRequest.from_prompt(q, custom_id=q) for q in QUESTIONS]


def _run(model: ModelSpec, store: Path, settings: ClientSettings, mode: str = "replay"):
    return run_calls(
        model, _requests(), stage="s", store=store, mode=mode, settings=settings, progress=False
    )


def _recorded(model: ModelSpec, store: Path, settings: ClientSettings) -> Path:
    """The shard of the three calls, in request order (recording stores them as they finish)."""
    _run(model, store, settings, mode="record")
    path = shard_path(store, "s", model.name, "0")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(sorted(lines, key=lambda line: line.split(b"echo: question")[1])))
    return path


def _rewrite(path: Path, edit) -> list[dict]:
    """Rewrite the shard through the store's own writer after ``edit(records)``: the records
    are then what a writer stored (valid digests), only their content is what the test says."""
    records = [rec for _, rec in iter_shard(path)]
    edit(records)
    path.unlink()
    with ShardWriter(path) as writer:
        writer.append_many(records)
    return records


def test_a_changed_byte_in_a_stored_answer_is_refused_naming_shard_line_and_key(
    model: ModelSpec, store: Path, fast: ClientSettings, capsys
) -> None:
    path = _recorded(model, store, fast)
    key = [rec["key"] for _, rec in iter_shard(path)][1]
    data = path.read_bytes()
    assert data.count(b"echo: question 1") == 1
    path.write_bytes(data.replace(b"echo: question 1", b"echo: questioN 1"))
    with pytest.raises(StoreError) as err:
        _run(model, store, fast)
    assert f"{path}:2: key {key}: field 'digest'" in str(err.value)
    assert main(["calls", "--store", str(store), "--validate"]) == 1
    out = capsys.readouterr().err
    assert f"0.jsonl:2: key {key}: field 'digest'" in out and "INVALID (1 errors)" in out


def test_two_records_with_swapped_keys_are_refused(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    path = _recorded(model, store, fast)
    first, second = [rec["key"] for _, rec in iter_shard(path)][:2]
    data = path.read_bytes()
    swapped = data.replace(first.encode(), b"#" * 64).replace(second.encode(), first.encode())
    path.write_bytes(swapped.replace(b"#" * 64, second.encode()))
    with pytest.raises(StoreError, match=r"0\.jsonl:[12]: key [0-9a-f]{64}: field 'digest'"):
        _run(model, store, fast)
    errors = validate_store(store).errors
    for line, key in ((1, second), (2, first)):  # each now carries the other's key
        assert f"0.jsonl:{line}: key {key}: field 'digest'" in "\n".join(errors)
        assert f"0.jsonl:{line}: key {key}: field 'key': the stored request hashes to" in (
            "\n".join(errors)
        )


@pytest.mark.parametrize(
    "misfile",
    [
        lambda rec: rec["request"]["messages"][-1].update(content="another question"),
        lambda rec: rec["request"]["messages"][-1].update(extra="a field the request lacks"),
        lambda rec: rec["request"]["params"].update(temperature=0.5),
        lambda rec: rec["request"].update(sample_index=1),
        lambda rec: rec["model"].update(model="another-model"),
        lambda rec: rec.update(prompt_version="v9"),
    ],
    ids=["message", "message-field", "params", "sample", "model", "version"],
)
def test_a_record_whose_request_does_not_hash_to_its_key_is_refused(
    model: ModelSpec, store: Path, fast: ClientSettings, misfile
) -> None:
    """A record stored under another request's key (a writer's bug; its digest is intact), in
    whichever part of the key document it differs: replay compares the stored parts with the
    ones it asked for, and only equal parts skip the second hash."""
    path = _recorded(model, store, fast)
    key = _rewrite(path, lambda records: misfile(records[2]))[2]["key"]
    with pytest.raises(StoreError) as err:
        _run(model, store, fast)
    assert f"0.jsonl:3: key {key}: field 'key': the stored request hashes to" in str(err.value)


@pytest.mark.parametrize(
    ("damage", "field"),
    [
        (lambda rec: rec["response"].pop("choices"), "response.choices"),
        (lambda rec: rec["response"].update(choices=[]), "response.choices"),
        (
            lambda rec: rec["response"]["choices"][0].update(message="echo: as a string"),
            "response.choices[0].message",
        ),
        (
            lambda rec: rec["response"]["choices"][0]["message"].update(content=7),
            "response.choices[0].message.content",
        ),
        (lambda rec: rec["request"]["params"].update(response_format="json"), "request.params"),
        (lambda rec: rec.update(usage=None), "usage"),
    ],
)
def test_a_stored_response_replay_cannot_read_names_shard_line_and_field(
    model: ModelSpec, store: Path, fast: ClientSettings, damage, field: str, capsys
) -> None:
    """Such a record was stored intact (its digest holds), but replay could not use it: it is
    refused with the field named, and ``--validate`` says so too (it used to say 'valid')."""
    path = _recorded(model, store, fast)
    key = _rewrite(path, lambda records: damage(records[1]))[1]["key"]
    with pytest.raises(StoreError) as err:
        _run(model, store, fast)
    assert f"{path}:2: key {key}: field '{field}" in str(err.value)
    assert main(["calls", "--store", str(store), "--validate"]) == 1
    assert f"0.jsonl:2: key {key}: field '{field}" in capsys.readouterr().err


def test_a_truncated_compressed_shard_names_the_shard_and_the_last_readable_line(
    model: ModelSpec, store: Path, fast: ClientSettings, capsys
) -> None:
    path = _recorded(model, store, fast)
    packed = gzip.compress(path.read_bytes())
    gz = path.with_name("0.jsonl.gz")
    gz.write_bytes(packed[: len(packed) * 2 // 3])
    path.unlink()
    with pytest.raises(StoreError) as err:
        _run(model, store, fast)
    message = str(err.value)
    assert str(gz) in message and "truncated or damaged after line" in message
    assert main(["calls", "--store", str(store), "--validate"]) == 1
    assert f"{gz}: compressed shard is truncated" in capsys.readouterr().err


def test_a_future_dated_record_does_not_beat_a_later_refresh(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    """A record written on a machine whose clock ran ahead (year 2099) is refreshed: the
    refresh's answer is what the refresh run used, and what every later replay serves."""
    path = _recorded(model, store, fast)

    def from_a_fast_clock(records: list[dict]) -> None:
        records[0]["created"] = "2099-01-01T00:00:00.000000+00:00"
        records[0]["response"]["choices"][0]["message"]["content"] = "answer of the skewed run"

    _rewrite(path, from_a_fast_clock)
    assert _run(model, store, fast)[0].text == "answer of the skewed run"
    refreshed = _run(model, store, fast, mode="refresh")
    assert [r.text for r in refreshed] == [f"echo: {q}" for q in QUESTIONS]
    assert [r.text for r in _run(model, store, fast)] == [r.text for r in refreshed]
    assert validate_store(store).ok


def test_within_one_revision_the_later_line_wins_whatever_its_clock_says(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    """Two records of one key and one revision (written before revisions existed, or by two
    runs at once): the one appended later is served, even when its clock says it is older."""
    path = _recorded(model, store, fast)
    first = next(rec for _, rec in iter_shard(path))
    later = {
        **first,
        "created": "2000-01-01T00:00:00.000000+00:00",
        "response": {
            **first["response"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "appended"}}],
        },
    }
    with ShardWriter(path) as writer:
        writer.append(later)
    assert _run(model, store, fast)[0].text == "appended"


def test_the_committed_store_verifies_whole() -> None:
    """Every committed record carries its digest and revision, and verifies (the bundled build
    replays it with zero misses: the workflow tests)."""
    from analysis import REPO_ROOT

    report = validate_store(REPO_ROOT / "data" / "calls")
    assert report.ok, report.errors[:5]
    assert report.n_records > 0 and report.n_records == report.n_keys


def _legacy(path: Path) -> list[dict]:
    """The shard as a writer before digests wrote it: no digest, no revision, spaced JSON."""
    records = [rec for _, rec in iter_shard(path)]
    for rec in records:
        rec.pop("digest", None)
        rec.pop("revision", None)
    path.write_text("".join(json.dumps(rec, sort_keys=True) + "\n" for rec in records))
    return records


def test_records_written_before_digests_are_refused_until_upgraded(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings, capsys
) -> None:
    path = _recorded(model, store, fast)
    before = [r.text for r in _run(model, store, fast)]
    records = _legacy(path)
    # one key stored twice before revisions: the newer `created` was served, and still is
    stale = {**records[0], "created": "2000-01-01T00:00:00.000000+00:00"}
    stale["response"] = {
        **stale["response"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "older"}}],
    }
    with open(path, "a") as fh:
        fh.write(json.dumps(stale, sort_keys=True) + "\n")
    with pytest.raises(StoreError, match=r"field 'digest': missing .*recenter calls --upgrade"):
        _run(model, store, fast)
    assert main(["calls", "--store", str(store), "--upgrade", "--validate"]) == 0
    assert "4 of 4 records upgraded, 1 shards rewritten" in capsys.readouterr().err
    assert [r.text for r in _run(model, store, fast)] == before
    assert sum(server.served.values()) == 3  # nothing was called again
    twice = [rec for _, rec in iter_shard(path) if rec["key"] == records[0]["key"]]
    assert [(rec["created"][:4], rec["revision"]) for rec in twice] == [("2026", 1), ("2000", 0)]


def test_upgrade_blesses_no_damaged_record(
    model: ModelSpec, store: Path, fast: ClientSettings, capsys
) -> None:
    path = _recorded(model, store, fast)
    _legacy(path)
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"content": "question 2"', b'"content": "question 9"'))
    damaged = path.read_bytes()
    assert main(["calls", "--store", str(store), "--upgrade"]) == 1
    err = capsys.readouterr().err
    assert "0.jsonl:3: key" in err and "field 'key': the stored request hashes to" in err
    assert "not upgraded (1 errors)" in err and path.read_bytes() == damaged
