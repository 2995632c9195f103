"""The cached per-shard index (``<shard>.idx``): used only when it matches the shard's bytes,
rebuilt when stale or corrupt, kept in memory where the folder is read-only, and never a
cause of different replay results."""

from __future__ import annotations

import errno
import shutil
import subprocess
from pathlib import Path

import pytest

from analysis import REPO_ROOT
from analysis.llm import store as store_mod
from analysis.llm.calls import ChatRequest, run_calls
from analysis.llm.store import StoreError, index_path, load_index, record_line
from tests.llm.records import MODEL, key_of, lines, record
from tests.settings_defaults import llm_settings


def _record(i: int, answer: str | None = None) -> dict:
    return record(i, answer or f"answer {i} é")


def _shard(tmp_path: Path, n: int = 5, name: str = "0.jsonl") -> Path:
    folder = tmp_path / "s" / "m"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(lines(_record(i) for i in range(n)))
    return path


def _as_dict(index) -> dict:
    return {key: index[key] for key in sorted(index)}


def _text(index, i: int) -> str:
    return index[key_of(i)]["response"]["choices"][0]["message"]["content"]


def test_index_is_cached_beside_the_shard_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _shard(tmp_path)
    first = _as_dict(load_index(tmp_path, "s", "m"))
    assert index_path(path).name == "0.jsonl.idx" and index_path(path).is_file()
    assert b"answer" not in index_path(path).read_bytes()  # keys and offsets only

    def no_scan(*args: object) -> None:
        raise AssertionError("a valid cached index must not be rebuilt")

    monkeypatch.setattr(store_mod, "scan_shard", no_scan)
    assert _as_dict(load_index(tmp_path, "s", "m")) == first
    assert [p.name for p in store_mod.list_shards(path.parent)] == ["0.jsonl"]


def test_index_is_deterministic_in_the_shard_bytes(tmp_path: Path) -> None:
    a = _shard(tmp_path / "a")
    b = _shard(tmp_path / "b")
    load_index(tmp_path / "a", "s", "m")
    load_index(tmp_path / "b", "s", "m")
    assert index_path(a).read_bytes() == index_path(b).read_bytes()


def test_stale_index_is_rebuilt_after_the_shard_changes(tmp_path: Path) -> None:
    path = _shard(tmp_path, n=3)
    assert len(load_index(tmp_path, "s", "m")) == 3
    old = index_path(path).read_bytes()
    with open(path, "ab") as fh:  # an appended record, and a changed one of the same length
        fh.write(record_line(_record(3)))
    data = path.read_bytes().replace(record_line(_record(1)), record_line(_record(1, "answer 7 é")))
    path.write_bytes(data)
    index = load_index(tmp_path, "s", "m")
    assert len(index) == 4 and _text(index, 1) == "answer 7 é" and _text(index, 3) == "answer 3 é"
    assert index_path(path).read_bytes() != old


def test_same_size_edit_with_old_mtime_is_still_caught(tmp_path: Path) -> None:
    """Validation is by content hash: size and mtime alone would miss this edit."""
    import os

    path = _shard(tmp_path, n=3)
    load_index(tmp_path, "s", "m")
    stat = path.stat()
    changed = record_line(_record(2, "answer 9 é"))
    path.write_bytes(path.read_bytes().replace(record_line(_record(2)), changed))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert _text(load_index(tmp_path, "s", "m"), 2) == "answer 9 é"


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda raw: b"",
        lambda raw: b"not json at all\n{}",
        lambda raw: raw[: len(raw) // 2],  # torn write
        lambda raw: raw.replace(b'"revisions":[0', b'"revisions":[9'),  # checksum now wrong
        lambda raw: raw.replace(b'"version":2', b'"version":99'),
    ],
)
def test_corrupt_index_is_ignored_and_rebuilt(tmp_path: Path, corrupt) -> None:
    path = _shard(tmp_path)
    expected = _as_dict(load_index(tmp_path, "s", "m"))
    good = index_path(path).read_bytes()
    index_path(path).write_bytes(corrupt(good))
    assert _as_dict(load_index(tmp_path, "s", "m")) == expected
    assert index_path(path).read_bytes() == good


def test_forged_index_with_valid_checksums_fails_closed(tmp_path: Path) -> None:
    """An index whose checksums were recomputed over wrong offsets is not served from."""
    path = _shard(tmp_path)
    load_index(tmp_path, "s", "m")
    data = path.read_bytes()
    real = store_mod.scan_shard(path, data)
    forged = store_mod.ShardIndex(
        real.keys, real.revisions, list(reversed(real.offsets)), real.lengths, 0, []
    )
    digest = store_mod.hashlib.sha256(data).hexdigest()
    index_path(path).write_bytes(store_mod._index_bytes(forged, digest))
    with pytest.raises(StoreError, match=r"0\.jsonl\.idx"):
        load_index(tmp_path, "s", "m")[key_of(0)]


def test_read_only_folder_keeps_the_index_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _shard(tmp_path)

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Path, "write_bytes", read_only)
    index = load_index(tmp_path, "s", "m")
    assert len(index) == 5 and _text(index, 4) == "answer 4 é"
    assert not index_path(path).exists()
    assert [p.name for p in path.parent.iterdir()] == ["0.jsonl"]  # no temporary left


def test_replay_results_are_identical_with_and_without_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same calls served with a fresh, a cached, a missing (read-only) and a corrupt index,
    including a key stored twice (the later one of its shard wins) and a torn last line."""
    requests = [ChatRequest.from_prompt(f"q{i}", custom_id=f"c{i}") for i in range(6)]
    folder = tmp_path / "s" / "m"
    folder.mkdir(parents=True)
    records = []
    for i in range(6):
        for version in ("old", "new") if i == 2 else ("new",):
            records.append(record(i, f"{version} {i}"))
    (folder / "0.jsonl").write_bytes(lines(records[:4]))
    (folder / "1.jsonl").write_bytes(lines(records[4:]) + b'{"key": "torn')

    def replay() -> list:
        return run_calls(
            MODEL,
            requests,
            stage="s",
            store=tmp_path,
            prompt_version="v1",
            progress=False,
            settings=llm_settings(),
        )

    fresh = replay()
    assert [r.text for r in fresh] == [f"new {i}" for i in range(6)]
    assert replay() == fresh  # cached index
    for idx in folder.glob("*.idx"):
        idx.write_bytes(b"garbage")
    assert replay() == fresh  # corrupt index
    for idx in folder.glob("*.idx"):
        idx.unlink()
    with monkeypatch.context() as m:
        m.setattr(Path, "write_bytes", lambda *a, **k: (_ for _ in ()).throw(PermissionError()))
        assert replay() == fresh  # in memory only
    assert not list(folder.glob("*.idx"))


def test_committed_store_index_files_are_git_ignored(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("needs the git checkout of the repository")
    shard = next((REPO_ROOT / "data" / "calls").rglob("*.jsonl"))
    for name in (index_path(shard), shard.with_name(f".{shard.name}.idx.123.tmp")):
        proc = subprocess.run(
            ["git", "check-ignore", "-q", str(name.relative_to(REPO_ROOT))],
            cwd=REPO_ROOT,
            check=False,
        )
        assert proc.returncode == 0, f"{name} is not git-ignored"


def test_integers_beyond_64_bits_are_replayed_exactly(tmp_path: Path) -> None:
    """orjson reads such an integer as a float; the index marks the record for the stdlib."""
    folder = tmp_path / "s" / "m"
    folder.mkdir(parents=True)
    big, small = 2**70 + 1, -(2**63) - 1
    a, b, c = record(0), record(1), record(2)
    a["response"]["n"] = big
    b["response"]["x"] = 1e300
    c["response"]["ids"] = ["12345678901234567890123", small]  # digits in a string, then a number
    (folder / "0.jsonl").write_bytes(lines([a, b, c]))
    for _ in range(2):  # fresh, then cached index
        index = load_index(tmp_path, "s", "m")
        assert index[key_of(0)]["response"]["n"] == big
        assert type(index[key_of(0)]["response"]["n"]) is int
        assert index[key_of(1)]["response"]["x"] == 1e300
        assert index[key_of(2)]["response"]["ids"] == ["12345678901234567890123", small]
