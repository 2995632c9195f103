"""``recenter numbers-diff``: the refactor check compares every reported field of every key."""

from __future__ import annotations

from pathlib import Path

from analysis.cli import main
from analysis.paper.numbers_diff import compare_numbers
from analysis.provenance import dump_json


def _rec(value: float, lo: float | None = None, hi: float | None = None, n: int = 10) -> dict:
    return {"value": value, "ci_low": lo, "ci_high": hi, "n": n, "display": f"{value:.2f}"}


def test_identical_numbers_pass_and_provenance_is_ignored(tmp_path: Path) -> None:
    old = {"a": {**_rec(0.5, 0.4, 0.6), "rule": "x", "config_sha256": "1"}}
    new = {"a": {**_rec(0.5, 0.4, 0.6), "rule": "y", "config_sha256": "2"}}
    assert compare_numbers(old, new) == ([], [], [])
    dump_json(old, tmp_path / "old.json")
    dump_json(new, tmp_path / "new.json")
    assert main(["numbers-diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0


def test_a_moved_value_or_a_lost_key_fails(tmp_path: Path) -> None:
    old = {"a": _rec(0.5, 0.4, 0.6), "b": _rec(1.0)}
    new = {"a": _rec(0.51, 0.4, 0.6), "c": _rec(1.0)}
    removed, added, changes = compare_numbers(old, new)
    assert (removed, added) == (["b"], ["c"])
    assert {(c.key, c.field) for c in changes} == {("a", "value"), ("a", "display")}
    assert not any(c.allowed for c in changes)
    dump_json(old, tmp_path / "old.json")
    dump_json(new, tmp_path / "new.json")
    assert main(["numbers-diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 1


def test_ci_tolerance_allows_small_bound_moves_only_with_value_and_n_fixed() -> None:
    old = {"a": _rec(0.5, 0.40, 0.60), "b": _rec(0.5, 0.40, 0.60)}
    new = {"a": _rec(0.5, 0.41, 0.60), "b": _rec(0.5, 0.40, 0.65)}
    _, _, changes = compare_numbers(old, new, ci_width_tolerance=0.10)
    by_key = {c.key: c.allowed for c in changes}
    assert by_key == {"a": True, "b": False}  # 5% vs 25% of the width
    moved_value = {"a": _rec(0.51, 0.41, 0.60)}
    _, _, changes = compare_numbers(old, moved_value, ci_width_tolerance=0.10)
    assert not any(c.allowed for c in changes)


def test_ci_level_is_compared_only_where_both_records_carry_it() -> None:
    """A record gaining ``ci_level`` is no change; a changed level is one (not tolerated)."""
    old = {"a": _rec(0.5, 0.4, 0.6), "b": {**_rec(0.5, 0.4, 0.6), "ci_level": 0.95}}
    new = {
        "a": {**_rec(0.5, 0.4, 0.6), "ci_level": 0.95},
        "b": {**_rec(0.5, 0.4, 0.6), "ci_level": 0.9},
    }
    _, _, changes = compare_numbers(old, new, ci_width_tolerance=0.10)
    assert [(c.key, c.field, c.allowed) for c in changes] == [("b", "ci_level", False)]
