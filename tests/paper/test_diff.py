"""``recenter diff`` (alias ``numbers-diff``): every key of two builds with the change, paired
intervals where both sides share their resamples; the refactor check compares every reported
field of every key."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from analysis.cli import main
from analysis.paper.diff import compare_numbers, diff_builds, read_side
from analysis.paths import BuildPaths
from analysis.provenance import dump_json
from analysis.resamples import Resamples, write_resamples


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


# ---------------------------------------------------------------- recenter diff: two builds


def _side_files(folder: Path, values: dict[str, float], reps: dict[str, np.ndarray], digest: str):
    """A build's numbers.json and resamples.npz (and a config) in ``folder``."""
    numbers = {}
    kept = {}
    for key, value in values.items():
        r = reps[key]
        numbers[key] = {
            **_rec(value, float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))),
            "fmt": ".2f",
            "ci_level": 0.95,
        }
        kept[key] = Resamples(r, digest)
    dump_json(numbers, folder / "numbers.json")
    write_resamples(kept, folder / "resamples.npz")
    return folder / "numbers.json"


def _draws(seed: int, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.5 + shift, 0.05, size=400)


def test_a_build_diffed_with_itself_changes_by_zero_on_a_zero_interval(tmp_path: Path) -> None:
    path = _side_files(tmp_path / "a", {"k": 0.5}, {"k": _draws(1)}, "d1")
    d = diff_builds(read_side(path), read_side(path))
    (row,) = d.keys
    assert row.status == "same" and row.paired
    assert row.change == 0.0 and row.ci == (0.0, 0.0) and row.p_value == 1.0
    assert row.change_display == "+0.00" and row.ci_display == "[+0.00, +0.00]"


def test_shared_resamples_give_the_change_a_paired_interval(tmp_path: Path) -> None:
    """The same draws shifted by a constant: the paired interval is that shift alone, far
    narrower than either side's interval, and its p-value says the change is real."""
    base = _draws(2)
    a = read_side(_side_files(tmp_path / "a", {"k": 0.5}, {"k": base}, "same"))
    b = read_side(_side_files(tmp_path / "b", {"k": 0.53}, {"k": base + 0.03}, "same"))
    (row,) = diff_builds(a, b).keys
    assert row.paired and row.status == "changed"
    assert row.change == pytest.approx(0.03)
    assert row.ci == pytest.approx((0.03, 0.03), abs=1e-6)  # float32 storage
    assert row.p_value == pytest.approx(1 / 400)  # floored at 1/B: every resample moved up
    assert row.n_resamples == 400


@pytest.mark.parametrize(
    ("digest_b", "n_b", "why"),
    [("other", 400, "other draws"), ("same", 300, "400 vs 300 resamples")],
)
def test_other_draws_are_not_paired_and_say_why(
    tmp_path: Path, digest_b: str, n_b: int, why: str
) -> None:
    a = read_side(_side_files(tmp_path / "a", {"k": 0.5}, {"k": _draws(3)}, "same"))
    b = read_side(_side_files(tmp_path / "b", {"k": 0.6}, {"k": _draws(4)[:n_b]}, digest_b))
    (row,) = diff_builds(a, b).keys
    assert not row.paired and row.ci is None and row.p_value is None
    assert why in row.note
    assert row.a.startswith("0.50 [") and row.b.startswith("0.60 [")  # both intervals shown


def test_a_side_without_resamples_is_compared_unpaired(tmp_path: Path) -> None:
    a = read_side(_side_files(tmp_path / "a", {"k": 0.5}, {"k": _draws(5)}, "same"))
    dump_json({"k": {**_rec(0.7, 0.6, 0.8), "fmt": ".2f"}}, tmp_path / "old" / "numbers.json")
    (row,) = diff_builds(a, read_side(tmp_path / "old" / "numbers.json")).keys
    assert not row.paired and "no bootstrap resamples kept on B" in row.note


def test_the_command_prints_a_table_markdown_and_json(tmp_path: Path, capsys) -> None:
    base = _draws(6)
    a = _side_files(tmp_path / "a", {"k": 0.5, "gone": 1.0}, {"k": base, "gone": base}, "s")
    b = _side_files(tmp_path / "b", {"k": 0.55, "new": 2.0}, {"k": base + 0.05, "new": base}, "s")
    (tmp_path / "a" / "config.yaml").write_text("stats: {n_boot: 400, cluster: user}\n")
    (tmp_path / "b" / "config.yaml").write_text("stats: {n_boot: 400, cluster: prompt}\n")
    assert main(["diff", str(a), str(b)]) == 1  # numbers moved
    table = capsys.readouterr().out
    assert "config: stats.cluster: 'user' -> 'prompt'" in table
    assert re.search(
        r"^k\s+0\.50 \[.*\]\s+0\.55 \[.*\]\s+\+0\.05\s+\[\+0\.05, \+0\.05\]", table, re.M
    )
    assert "3 keys: 1 changed, 0 the same, 1 only in A, 1 only in B" in table
    assert main(["diff", str(a), str(b), "--format", "md"]) == 1
    md = capsys.readouterr().out
    assert "| `stats.cluster` | 'user' | 'prompt' |" in md and "| `k` | 0.50 [" in md
    out = tmp_path / "diff.json"
    assert main(["diff", str(a), str(b), "--format", "json", "--output", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["summary"]["paired_changed"] == 1
    assert {k["key"]: k["status"] for k in doc["keys"]} == {
        "gone": "only_a",
        "k": "changed",
        "new": "only_b",
    }
    # the old name still works, and a build against itself is no difference
    assert main(["numbers-diff", str(a), str(a)]) == 0


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_two_commits_compare_from_their_committed_outputs(tmp_path: Path, capsys) -> None:
    """``--rev`` reads a commit's committed outputs when it has them (no build)."""
    repo = tmp_path / "repo"
    (repo / "workflow").mkdir(parents=True)
    (repo / "workflow" / "Snakefile").write_text("# a recenter checkout\n")
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    build = BuildPaths("demo")
    base = _draws(7)
    for value in (0.5, 0.6):
        _side_files(repo / build.results, {"k": value}, {"k": base + value - 0.5}, "s")
        _git(repo, "add", "-f", ".")
        _git(repo, "commit", "-q", "-m", f"value {value}")
    code = main(["diff", "--repo", str(repo), "--dataset", "demo", "--rev", "HEAD~1", "HEAD"])
    out = capsys.readouterr().out
    assert code == 1
    assert "A: HEAD~1:demo  (committed at HEAD~1)" in out
    assert re.search(r"^k\s+0\.50 .*\+0\.10\s+\[\+0\.10, \+0\.10\]", out, re.M)
    assert main(["diff", "--repo", str(repo), "--rev", "HEAD~1", "nope", "--dataset", "demo"]) == 2
    assert "'nope' is no commit" in capsys.readouterr().err


FAKE_SNAKEFILE = '''
import json

D = [o.split("=", 1)[1] for o in config["overrides"].split() if o.startswith("data=")][0]


rule numbers:
    """The numbers of the fake study."""
    input:
        "data/value.txt",
    output:
        f"results/{D}/numbers.json",
    run:
        v = float(open(input[0]).read())
        json.dump({"k.x": {"value": v, "display": f"{v:.2f}"}}, open(output[0], "w"))
'''


@pytest.mark.slow
def test_a_commit_without_committed_outputs_is_built_in_a_temporary_worktree(
    tmp_path: Path, capsys
) -> None:
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "workflow").mkdir()
    (repo / "workflow" / "Snakefile").write_text(FAKE_SNAKEFILE)
    (repo / ".gitignore").write_text("results/\n.snakemake/\n")
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    for value in ("1.0", "1.5"):
        (repo / "data" / "value.txt").write_text(value)
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", value)
    args = ["--repo", str(repo), "--dataset", "demo", "--cores", "1"]
    code = main(["diff", *args, "--rev", "HEAD~1", "HEAD"])
    captured = capsys.readouterr()
    out = captured.out
    assert code == 1, captured.err
    assert "A: HEAD~1:demo  (built at HEAD~1 in a temporary worktree)" in out
    assert re.search(r"^k\.x\s+1\.00\s+1\.50\s+\+0\.5", out, re.M)
    assert "no bootstrap resamples kept" in out  # the fake study keeps none
    listed = subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert len(listed.splitlines()) == 1  # the temporary worktrees are gone


def test_the_comparison_is_a_page_of_the_variants_audit_site(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "repo"
    (repo / "workflow").mkdir(parents=True)
    (repo / "workflow" / "Snakefile").write_text("# a recenter checkout\n")
    base = _draws(8)
    _side_files(repo / BuildPaths("demo").results, {"k": 0.5}, {"k": base}, "s")
    variant = BuildPaths("demo", "stats.n_boot-400")
    _side_files(repo / variant.results, {"k": 0.6}, {"k": base + 0.1}, "s")
    args = ["diff", "--repo", str(repo), "--dataset", "demo", "default", "stats.n_boot-400"]
    assert main([*args, "--site"]) == 1
    page = repo / variant.site / "diffs" / "demo.html"
    assert f"wrote the audit site's page {page}" in capsys.readouterr().err
    html = page.read_text()
    assert '<a href="../numbers/k.html#k"><code>k</code></a>' in html  # B's entry page
    assert "+0.10" in html and "[+0.10, +0.10]" in html
    assert main([*args, "--format", "html"]) == 1
    assert capsys.readouterr().out == html


def test_the_bundled_build_keeps_each_bootstrap_records_resamples(bundled_build: Path) -> None:
    """The shared build's ``resamples.npz``: one set of resamples per bootstrap record, as many
    as ``stats.n_boot``, for keys of ``numbers.json`` with an interval; diffed with itself, every
    one of them is paired and changes by +0 [+0, +0], and the command exits 0."""
    build = BuildPaths("bundled")
    side = read_side(bundled_build / build.numbers)
    stats = yaml.safe_load((bundled_build / build.config).read_text())["stats"]
    assert side.resamples, "the build kept no resamples"
    assert set(side.resamples) <= set(side.numbers)
    alpha = 1 - stats["ci_level"]
    for key, kept in side.resamples.items():
        rec = side.numbers[key]
        assert kept.n_boot == stats["n_boot"] and len(kept.digest) == 64, key
        if stats["ci_method"] == "percentile":  # the interval was read off these resamples
            reps = kept.replicates[np.isfinite(kept.replicates)]
            bounds = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
            assert bounds == pytest.approx([rec["ci_low"], rec["ci_high"]], rel=1e-5, abs=1e-6)
    d = diff_builds(side, side)
    paired = {k.key: k for k in d.keys if k.paired}
    assert set(paired) == {k for k, r in side.resamples.items() if np.isfinite(r.replicates).any()}
    assert all(k.ci == (0.0, 0.0) and k.change == 0.0 for k in paired.values())
    numbers = str(bundled_build / build.numbers)
    assert main(["diff", numbers, numbers]) == 0
