"""A world K times the study: deterministic, numbered on, one crowd, its own streams."""

from __future__ import annotations

import filecmp
import json
from collections import Counter
from pathlib import Path

import pytest

from analysis.simulation import DEFAULT_PARAMETERS, simulate_world
from analysis.simulation import scale as S

P = DEFAULT_PARAMETERS


def _dumped(worlds: list) -> list[dict[str, list[str]]]:
    return [{k: [json.dumps(r) for r in v] for k, v in w.files.items()} for w in worlds]


@pytest.fixture(scope="module")
def two_blocks() -> list:
    return list(S.simulate_blocks(P, 2, 6))


def test_scale_one_with_five_models_is_the_committed_world() -> None:
    assert not S.is_scaled(P, 1, len(P.llm_names))
    assert S.scaled_parameters(P, 1, len(P.llm_names)) == P
    assert S.is_scaled(P, 2, 5) and S.is_scaled(P, 1, 6)


def test_same_seed_same_records(two_blocks: list) -> None:
    assert _dumped(two_blocks) == _dumped(list(S.simulate_blocks(P, 2, 6)))


def test_blocks_draw_from_their_own_streams(two_blocks: list) -> None:
    committed = simulate_world(P).files["extracted/task4_items.jsonl"]
    first = two_blocks[0].files["extracted/task4_items.jsonl"]
    assert [r["merged_attributes"] for r in committed] != [r["merged_attributes"] for r in first]


def test_scaled_counts_and_one_crowd(two_blocks: list) -> None:
    k = 2
    users = [r["user_id"] for w in two_blocks for r in w.files["extracted/task4_items.jsonl"]]
    assert (
        len(users)
        == len(set(users))
        == k * (P.n_wildchat_users + len(P.synthetic_benchmarks) * P.n_users_per_benchmark)
    )
    pairs = [r for w in two_blocks for r in w.files["extracted/task5_items.jsonl"]]
    assert [r["item_index"] for r in pairs] == list(range(k * P.n_pairs))
    assert len({r["prompt_index"] for r in pairs}) == k * P.n_prompts
    votes: Counter[int] = Counter()
    annotators: set[str] = set()
    for w in two_blocks:
        for rel, records in w.files.items():
            if rel.endswith("_task5.jsonl"):
                for r in records:
                    votes[r["index"]] += 1
                    annotators.add(r["annotator"])
    assert set(votes.values()) == {P.stage2_raters_per_item}  # 3 votes on every item
    assert len(annotators) == P.n_stage2_humans * k  # drawn from one pool of 6K
    # the crowd spans blocks: some annotator votes in both
    per_block = [
        {r["annotator"] for rel, rs in w.files.items() if rel.endswith("_task5.jsonl") for r in rs}
        for w in two_blocks
    ]
    assert per_block[0] & per_block[1]
    models = {rel for rel in two_blocks[0].files if rel.startswith("relevance_task5/")}
    assert models == {f"relevance_task5/sim-llm-{c}.jsonl" for c in "abcdef"}


def test_written_world_is_byte_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "truth_json", lambda *args: "{}\n")  # the truth has its own tests
    S.write_scaled_world(P, 2, 5, tmp_path / "a")
    S.write_scaled_world(P, 2, 5, tmp_path / "b")
    files = sorted(
        p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file()
    )
    assert files and all(
        filecmp.cmp(tmp_path / "a" / f, tmp_path / "b" / f, shallow=False) for f in files
    )
    lines = (tmp_path / "a" / "extracted" / "task5_items.jsonl").read_text().splitlines()
    assert len(lines) == 2 * P.n_pairs


def test_the_crowd_keeps_its_effects_across_blocks(two_blocks: list) -> None:
    """A person of the crowd has one yes-bias in every block (drawn once for the pool)."""
    first, second = (w.truth for w in two_blocks)
    assert len(first["stage2_human_offsets"]) == 2 * P.n_stage2_humans
    for key in ("stage1_leniency", "stage2_human_offsets", "stage3_severity", "llm_offsets"):
        assert (first[key] == second[key]).all(), key
    # the blocks' prompts and users draw their own effects
    assert not (first["user_support"] == second["user_support"]).all()


def test_bad_options_are_errors() -> None:
    with pytest.raises(ValueError, match="--scale"):
        S.scaled_parameters(P, 0, 5)
    with pytest.raises(ValueError, match="--models"):
        S.scaled_parameters(P, 2, 4)
