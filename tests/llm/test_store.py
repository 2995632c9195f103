"""The call store on disk: durable appends, torn lines, newest-wins, validation, usage."""

from __future__ import annotations

import gzip
import json
import multiprocessing
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.llm.calls import ChatRequest, run_calls
from analysis.llm.models import ModelSpec
from analysis.llm.store import (
    ShardWriter,
    StoreError,
    StoreFollower,
    iter_shard,
    load_index,
    shard_path,
    usage_summary,
    validate_store,
)
from analysis.settings import ClientSettings
from tests.fake_server import FakeOpenAI
from tests.settings_defaults import llm_settings


def _record(stage: str, model: ModelSpec, store: Path, fast: ClientSettings, n: int = 3) -> Path:
    reqs = [ChatRequest.from_prompt(f"question {i}", custom_id=f"i{i}") for i in range(n)]
    run_calls(model, reqs, stage=stage, store=store, mode="record", settings=fast, progress=False)
    return shard_path(store, stage, model.name, "0")


def test_recorded_shard_is_json_lines_with_every_field(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    path = _record("stage2", model, store, fast)
    assert path == store / "stage2" / "fake-model" / "0.jsonl"
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    rec = json.loads(lines[0])
    for field in (
        "key",
        "model",
        "request",
        "response",
        "usage",
        "latency_s",
        "created",
        "system_fingerprint",
        "prompt_version",
        "cost_usd",
        "executor",
    ):
        assert field in rec, field
    assert rec["request"]["params"] == {"max_tokens": 32, "temperature": 0}
    assert rec["system_fingerprint"] == "fp_fake"
    # 2 prompt tokens at $1/M + 3 completion tokens at $2/M
    assert rec["cost_usd"] == pytest.approx((2 * 1.0 + 3 * 2.0) / 1e6)
    assert validate_store(store).ok


def test_torn_last_line_is_ignored_then_truncated_by_the_next_writer(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    path = _record("s", model, store, fast, n=2)
    good = path.read_bytes()
    torn = b'{"key": "abc", "stage": "s", "resp'
    path.write_bytes(good + torn)
    assert len(load_index(store, "s", "fake-model")) == 2  # readers skip the torn tail
    report = validate_store(store)
    assert report.ok and any("torn last line" in w for w in report.warnings)
    _record("s", model, store, fast, n=3)  # appends one new call after repairing the tail
    data = path.read_bytes()
    assert data.startswith(good) and torn not in data and data.endswith(b"\n")
    assert len(data.splitlines()) == 3
    assert validate_store(store).ok and not validate_store(store).warnings


def test_complete_last_record_without_newline_is_kept_and_completed(
    server: FakeOpenAI, model: ModelSpec, store: Path, fast: ClientSettings, capsys
) -> None:
    """A hand edit (or a kill exactly before the newline) leaves a complete record with no
    trailing newline: it is a paid call, so readers serve it and the next writer keeps it."""
    path = _record("s", model, store, fast, n=2)
    good = path.read_bytes()
    path.write_bytes(good[:-1])  # the second record loses only its newline
    assert len(load_index(store, "s", "fake-model")) == 2
    report = validate_store(store)
    assert report.ok and report.n_records == 2 and report.n_keys == 2
    assert not any("torn" in w for w in report.warnings)
    assert main(["calls", "--store", str(store), "--validate"]) == 0
    err = capsys.readouterr().err
    assert "2 records, 2 keys: valid" in err and "torn" not in err
    _record("s", model, store, fast, n=3)  # the rerun makes only the third call
    assert sum(server.served.values()) == 3
    data = path.read_bytes()
    assert data.startswith(good) and data.endswith(b"\n") and len(data.splitlines()) == 3
    assert validate_store(store).ok and not validate_store(store).warnings


def test_file_with_one_complete_record_and_no_newline(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    path = _record("s", model, store, fast, n=1)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert [n for n, _ in iter_shard(path)] == [1]
    with ShardWriter(path):
        pass
    assert path.read_bytes().endswith(b"}\n") and len(path.read_bytes().splitlines()) == 1


def test_file_without_any_newline_is_all_torn(tmp_path: Path) -> None:
    path = tmp_path / "s" / "m" / "0.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"key": "half')
    assert list(iter_shard(path)) == []
    with ShardWriter(path):
        pass
    assert path.read_bytes() == b""


def test_corrupt_middle_line_fails_closed_naming_file_and_line(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    path = _record("s", model, store, fast, n=3)
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = "{not json}\n"
    path.write_text("".join(lines))
    with pytest.raises(StoreError, match=r"0\.jsonl:2: not valid JSON"):
        load_index(store, "s", "fake-model")
    report = validate_store(store)
    assert not report.ok and any(":2: not valid JSON" in e for e in report.errors)


def test_validate_recomputes_keys_and_checks_folders(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    path = _record("s", model, store, fast, n=2)
    recs = [rec for _, rec in iter_shard(path)]
    recs[0]["request"]["params"]["temperature"] = 0.9  # edited: the key no longer matches
    del recs[1]["usage"]
    path.unlink()
    with ShardWriter(path) as writer:  # a writer's digest: only the key is wrong
        writer.append_many(recs)
    moved = store / "other-stage" / "fake-model" / "0.jsonl"
    moved.parent.mkdir(parents=True)
    moved.write_bytes(path.read_bytes().splitlines(keepends=True)[0])
    errors = validate_store(store).errors
    assert any(
        f":1: key {recs[0]['key']}: field 'key': the stored request hashes to" in e for e in errors
    )
    assert any(":2: key" in e and "field 'usage': missing" in e for e in errors)
    assert any("field 'stage'" in e and "other-stage" in e for e in errors)


def test_compressed_shards_are_read(model: ModelSpec, store: Path, fast: ClientSettings) -> None:
    path = _record("s", model, store, fast, n=3)
    path.with_name("0.jsonl.gz").write_bytes(gzip.compress(path.read_bytes()))
    path.unlink()
    assert len(load_index(store, "s", "fake-model")) == 3
    assert validate_store(store).ok
    results = run_calls(
        model,
        [ChatRequest.from_prompt(f"question {i}") for i in range(3)],
        stage="s",
        store=store,
        progress=False,
        settings=fast,
    )
    assert all(r.cached for r in results)


def _append_many(path: str, worker: int, n: int) -> None:
    with ShardWriter(Path(path)) as writer:
        for i in range(n):
            writer.append({"key": f"w{worker}-{i}", "pad": "x" * 5000, "created": str(i)})


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    """Two processes appending 5 kB lines to one shard: every line arrives whole."""
    path = tmp_path / "s" / "m" / "0.jsonl"
    ctx = multiprocessing.get_context("fork")  # no threads run in this test
    procs = [ctx.Process(target=_append_many, args=(str(path), w, 60)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    keys = [rec["key"] for _, rec in iter_shard(path)]
    assert sorted(keys) == sorted(f"w{w}-{i}" for w in range(2) for i in range(60))


def test_a_follower_steps_over_its_own_runs_records_and_reads_every_other(
    tmp_path: Path,
) -> None:
    """Recording follows its folder for the records other runs stored. Its own blocks that
    come next are stepped over unread; when another run appends to the same shard (the same
    shard name), what follows that run's block is read with it, own lines included."""
    path = tmp_path / "s" / "m" / "0.jsonl"
    with ShardWriter(path) as own, ShardWriter(path) as other:
        follower = StoreFollower(path.parent, own=own)
        everything = StoreFollower(path.parent)  # no writer of its own: reads every record

        def rec(key: str) -> dict[str, str]:
            return {"key": key, "created": "2026-01-01T00:00:00"}

        own.append_many([rec("own-1"), rec("own-2")])
        assert follower.update() == {}
        own.append(rec("own-3"))
        assert follower.update() == {}
        other.append(rec("other-1"))
        own.append(rec("own-4"))
        assert set(follower.update()) == {"other-1", "own-4"}
        own.append(rec("own-5"))
        other.append_many([rec("other-2"), rec("other-3")])
        assert set(follower.update()) == {"other-1", "own-4", "other-2", "other-3"}
        assert own.appended == {}  # every own block stepped over or read: none kept
        assert other.appended is None  # nobody follows the other writer: nothing tracked
        assert len(everything.update()) == 8


def test_usage_summary_counts_calls_tokens_cost_per_stage_and_model(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    _record("stage1", model, store, fast, n=2)
    _record("stage2", model, store, fast, n=3)
    frame = usage_summary(store)
    assert list(frame["stage"]) == ["stage1", "stage2"]
    assert list(frame["calls"]) == [2, 3] and list(frame["keys"]) == [2, 3]
    assert list(frame["prompt_tokens"]) == [4, 6] and list(frame["completion_tokens"]) == [6, 9]
    assert frame["cost_usd"].tolist() == pytest.approx([16e-6, 24e-6])


def test_usage_summary_of_one_prompt_version_counts_its_calls_only(
    model: ModelSpec, store: Path, fast: ClientSettings
) -> None:
    """A prompt variant's calls share the shards with the default build's: each build counts
    its own (the call-usage records; ``recenter calls --prompt-version``)."""
    reqs = [ChatRequest.from_prompt(f"question {i}", custom_id=f"i{i}") for i in range(3)]
    for version, n in (("v1", 3), ("v2", 2)):
        run_calls(
            model, reqs[:n], stage="s", store=store, mode="record", settings=fast,
            progress=False, prompt_version=version,
        )  # fmt: skip
    assert usage_summary(store)["calls"].tolist() == [5]
    assert usage_summary(store, "v1")["calls"].tolist() == [3]
    v2 = usage_summary(store, "v2")
    assert v2["calls"].tolist() == [2] and v2["latency_s"].tolist()[0] >= 0.0
    assert usage_summary(store, "v9").empty


def test_usage_summary_of_an_empty_store_has_the_columns(tmp_path: Path) -> None:
    frame = usage_summary(tmp_path / "nothing")
    assert frame.empty and "cost_usd" in frame.columns


def test_stage_and_shard_names_cannot_escape_the_store(
    model: ModelSpec, store: Path, server: FakeOpenAI
) -> None:
    with pytest.raises(StoreError, match="shard '../x'"):
        run_calls(
            model,
            [ChatRequest.from_prompt("q")],
            stage="s",
            store=store,
            shard="../x",
            settings=llm_settings(),
        )
    with pytest.raises(StoreError, match="stage 'a/b'"):
        run_calls(
            model, [ChatRequest.from_prompt("q")], stage="a/b", store=store, settings=llm_settings()
        )
