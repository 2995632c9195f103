"""``recenter diff A B``: what changed between two builds, with an interval for each change.

The sides are two variants, a variant and the default build, two ``numbers.json`` files, or
two commits (``--rev``, each built offline in a temporary worktree as ``recenter verify``
does, or read from their committed outputs). Every key is listed with both values and the
change. Where both records are statistics of the same resampled data (the same units, each
factor's resamples the same draws: equal digests, or with another ``stats.n_boot`` the first
min(B) of one seed's stream; the annotators' deletions matched by name:
:func:`analysis.stats.records.pair_resamples`), the change itself has a paired interval and a
two-sided p-value: the parts are differenced one resample and one deleted level at a time and
read by the record maker's interval reader (:func:`analysis.stats.records.paired_change`), the
interval the same statistic on the differenced data would get (a percentile interval for one
bootstrapped factor, the two-way t interval of a crossed design); a build diffed with itself
gives 0 [0, 0]. Where they cannot be paired (other data, another design or seed, an analytic
interval) the row says why and shows the two intervals. Output: a terminal table, markdown
(the audit site's page) or JSON.

It is also the refactor check (``recenter numbers-diff``, the old name, is an alias): a change
that should keep the numbers rebuilds before and after and compares every reported field;
provenance fields (code and config hashes, input hashes, rule names) may change, the reported
quantities may not, and the command exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from analysis.paths import BuildPaths, list_variants
from analysis.provenance import RecordError, load_numbers
from analysis.resamples import Resamples, read_resamples, resamples_path

if TYPE_CHECKING:
    from analysis.stats.records import Paired
    from analysis.stats.settings import StatsSettings

#: The fields of a record that the paper shows; everything else is provenance.
REPORTED_FIELDS: tuple[str, ...] = ("value", "ci_low", "ci_high", "n", "display")
#: Shown too, but compared only where both files carry it: records written before the field
#: existed have none, and gaining it is no change of a number.
COMPARED_WHEN_BOTH: tuple[str, ...] = ("ci_level",)


@dataclass(frozen=True)
class NumberChange:
    """One key whose reported fields differ, and whether the change is allowed."""

    key: str
    field: str
    old: Any
    new: Any
    allowed: bool
    why: str = ""


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def compare_numbers(
    old: dict[str, dict[str, Any]],
    new: dict[str, dict[str, Any]],
    *,
    ci_width_tolerance: float = 0.0,
    tolerant_keys: frozenset[str] | None = None,
) -> tuple[list[str], list[str], list[NumberChange]]:
    """(keys only in ``old``, keys only in ``new``, changed fields).

    A CI bound (and the display, which may print it) of a key in ``tolerant_keys`` (all keys
    when ``None``) may move by less than ``ci_width_tolerance`` times the old interval's width
    with value and n unchanged: the allowance for intervals whose bootstrap engine was merged.
    """
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    changes: list[NumberChange] = []
    for key in sorted(set(old) & set(new)):
        a, b = old[key], new[key]
        moved = [f for f in REPORTED_FIELDS if not _same(a.get(f), b.get(f))]
        moved += [
            f for f in COMPARED_WHEN_BOTH if f in a and f in b and not _same(a.get(f), b.get(f))
        ]
        if not moved:
            continue
        core_same = _same(a.get("value"), b.get("value")) and _same(a.get("n"), b.get("n"))
        width = (
            (a["ci_high"] - a["ci_low"])
            if a.get("ci_low") is not None and a.get("ci_high") is not None
            else None
        )
        eligible = (
            ci_width_tolerance > 0
            and core_same
            and width is not None
            and (tolerant_keys is None or key in tolerant_keys)
        )
        for f in moved:
            allowed, why = False, ""
            if eligible and f in ("ci_low", "ci_high") and b.get(f) is not None:
                shift = abs(b[f] - a[f])
                allowed = shift < ci_width_tolerance * width
                why = f"bound moved {shift:.4g} = {shift / width:.1%} of the interval's width"
            elif eligible and f == "display":
                allowed, why = True, "display of a tolerated interval"
            changes.append(NumberChange(key, f, a.get(f), b.get(f), allowed, why))
    return removed, added, changes


# ---------------------------------------------------------------- the two sides


class DiffError(ValueError):
    """A side cannot be read or built; the message says which and what to do."""


@dataclass
class Side:
    """One build's numbers, its records' resamples and its resolved config."""

    label: str
    numbers: dict[str, dict[str, Any]]
    resamples: dict[str, Resamples] = field(default_factory=dict)
    config: dict[str, Any] | None = None
    source: str = ""
    #: where the build lives in the checkout (None: a file given by path, or a commit's)
    build: BuildPaths | None = None


def _read_yaml(path: Path) -> dict[str, Any] | None:
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None


def read_side(numbers: Path, label: str | None = None) -> Side:
    """A build from its ``numbers.json``, with the resamples and config beside it when kept."""
    numbers = Path(numbers)
    res = Path(resamples_path(numbers))
    # a build's numbers.json has its config.yaml beside it, a rule's records/<rule>.json above
    folder = numbers.parent.parent if numbers.parent.name == "records" else numbers.parent
    return Side(
        label=label or str(numbers),
        numbers=load_numbers(numbers),
        resamples=read_resamples(res) if res.is_file() else {},
        config=_read_yaml(folder / "config.yaml"),
        source=str(numbers),
    )


def build_of(spec: str, dataset: str, root: Path) -> BuildPaths:
    """The build a side names: ``default``, a variant of ``dataset``, or ``<dataset>:<variant>``
    (``<dataset>:default`` for another dataset's default build)."""
    if ":" in spec:
        dataset, spec = spec.split(":", 1)
    if spec in ("default", ""):
        return BuildPaths(dataset)
    build = BuildPaths(dataset, spec)
    if not (root / build.numbers).is_file() and not (root / build.config).is_file():
        known = list_variants(root, dataset)
        raise DiffError(
            f"no variant '{spec}' of dataset {dataset} in {root} ({build.results} does not "
            f"exist); variants built there: {', '.join(known) or 'none'}; 'default' is the "
            "dataset's default build, a path names a numbers.json"
        )
    return build


def side_from_spec(spec: str, dataset: str | None, root: Path) -> Side:
    """A side given on the command line: a path to a ``numbers.json`` or to a build's results
    folder, else a build name (:func:`build_of`) of ``dataset`` (default: the config's) in the
    checkout ``root``."""
    path = Path(spec)
    if path.is_dir() and (path / "numbers.json").is_file():
        path = path / "numbers.json"
    if path.is_file():
        return read_side(path, spec)
    if dataset is None:
        from analysis.paper.trace import default_dataset

        dataset = default_dataset(root)
    build = build_of(spec, dataset, root)
    try:
        side = read_side(root / build.numbers, build.label)
    except RecordError as err:
        raise DiffError(f"{build.label}: {err}") from err
    side.build = build
    return side


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)


def committed_side(root: Path, rev: str, build: BuildPaths) -> Side | None:
    """A build's outputs as committed at ``rev`` (``git show``), or None when not committed."""
    shown = _git(root, "show", f"{rev}:{build.numbers}")
    if shown.returncode != 0:
        return None
    numbers = json.loads(shown.stdout.decode("utf-8"))
    resamples: dict[str, Resamples] = {}
    res = _git(root, "show", f"{rev}:{build.resamples}")
    if res.returncode == 0:
        import tempfile

        with tempfile.NamedTemporaryFile(suffix=".npz") as fh:
            fh.write(res.stdout)
            fh.flush()
            resamples = read_resamples(fh.name)
    cfg = _git(root, "show", f"{rev}:{build.config}")
    return Side(
        label=f"{rev}:{build.label}",
        numbers=numbers,
        resamples=resamples,
        config=yaml.safe_load(cfg.stdout) if cfg.returncode == 0 else None,
        source=f"committed at {rev}",
    )


def revision_side(root: Path, rev: str, build: BuildPaths, cores: int, keep: bool) -> Side:
    """The build at commit ``rev``: its committed outputs, else built offline in a temporary
    worktree of that commit (:func:`analysis.paper.verify.revision_build`)."""
    from analysis.paper.verify import VerifyError, revision_build

    if _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode != 0:
        raise DiffError(f"'{rev}' is no commit of the repository at {root}")
    found = committed_side(root, rev, build)
    if found is not None:
        return found
    try:
        with revision_build(root, rev, build, cores=cores, keep=keep) as numbers:
            side = read_side(numbers, f"{rev}:{build.label}")
    except VerifyError as err:
        raise DiffError(f"{rev}: {err}") from err
    side.source = f"built at {rev} in a temporary worktree" + (f" ({numbers})" if keep else "")
    return side


# ---------------------------------------------------------------- one key


@dataclass(frozen=True)
class KeyDiff:
    """One key on both sides: values, the change, and its paired interval where there is one."""

    key: str
    status: str  # same | changed | only_a | only_b
    a: str | None  # the value as the paper prints it (with the interval when it has one)
    b: str | None
    change: float | None
    change_display: str | None
    paired: bool
    ci: tuple[float, float] | None
    ci_display: str | None
    p_value: float | None
    level: float | None
    n_resamples: int | None
    note: str
    #: how a paired change's parts were matched, where not one for one (the first min(B) of
    #: one seed's stream; deletions matched by name across other rater-pair subsets)
    matched: tuple[str, ...] = ()


def _shown(rec: Mapping[str, Any] | None) -> str | None:
    if rec is None:
        return None
    text = str(rec.get("display", rec.get("value")))
    low, high = rec.get("ci_low"), rec.get("ci_high")
    if low is None or high is None or rec.get("text") is not None:
        return text
    fmt = str(rec.get("fmt") or ".3g").lstrip("+")
    try:
        return f"{text} [{format(low, fmt)}, {format(high, fmt)}]"
    except (TypeError, ValueError):
        return f"{text} [{low:.3g}, {high:.3g}]"


def _signed(value: float, fmt: str) -> str:
    fmt = fmt.lstrip("+")
    if fmt.endswith("d"):
        if float(value).is_integer():
            return format(int(value), "+" + fmt)
        fmt = ".3g"
    try:
        return format(value, "+" + fmt)
    except (TypeError, ValueError):
        return format(value, "+.4g")


def stats_settings(params: Mapping[str, Any] | None) -> StatsSettings | None:
    """The interval reader's settings from a rule's params (``stats``, ``run.seed``: what a
    record's ``config`` holds) or a build's resolved config (``stats``, ``run.seed``); None
    where they are not there or not readable."""
    from analysis.stats.settings import StatsSettings

    if not isinstance(params, Mapping):
        return None
    if "run.seed" not in params:
        run = params.get("run")
        params = {"stats": params.get("stats"), "run.seed": (run or {}).get("seed")}
    try:
        return StatsSettings.from_rule_params(params)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


@dataclass
class Pairing:
    """What decides the pairing of every key of two builds: whether their data differ (the
    resample digests count clusters and draws, not which data they hold, so where both
    resolved configs are known their ``data`` groups must agree), and each settings the
    difference is read with (a record's own ``stats`` and seed, else its build's)."""

    why_not: str | None
    build_settings: StatsSettings | None
    _cache: dict[str, StatsSettings | None] = field(default_factory=dict)

    def settings(self, record: Mapping[str, Any]) -> StatsSettings | None:
        params = record.get("config")
        if not isinstance(params, Mapping):
            return self.build_settings
        key = str(record.get("config_sha256") or json.dumps(params, sort_keys=True, default=str))
        if key not in self._cache:
            self._cache[key] = stats_settings(params)
        return self._cache[key] or self.build_settings


def pairing_of(a: Side, b: Side) -> Pairing:
    """How the keys of ``a`` and ``b`` pair (:class:`Pairing`)."""
    settings = stats_settings(a.config)
    if a.config is not None and b.config is not None:
        changes = config_changes(a.config, b.config)
        other = [c["key"] for c in changes if c["key"].startswith("data.")]
        if other:
            return Pairing(f"other data ({', '.join(other)} differ)", settings)
    return Pairing(None, settings)


def _fixed_by_construction(rec: Mapping[str, Any]) -> bool:
    """Whether a record's value is fixed by the rule that made it (no resamples, no interval:
    :data:`analysis.stats.records.BY_CONSTRUCTION`)."""
    extra = rec.get("extra")
    return isinstance(extra, Mapping) and bool(extra.get("by_construction"))


def _pairing_of_key(
    ra: Resamples | None,
    rb: Resamples | None,
    pairing: Pairing,
    fixed: tuple[bool, bool] = (False, False),
) -> Paired | str:
    """The two records' parts matched for a paired change, or why they are not paired."""
    from analysis.stats.records import pair_resamples

    if any(fixed):
        sides = " and ".join(s for s, f in zip(("A", "B"), fixed, strict=True) if f)
        return (
            f"not paired: fixed by construction on {sides} (a value with no sampling error "
            "keeps no resamples and has no interval, so its change has none either)"
        )
    if ra is None or rb is None:
        missing = " and ".join(s for s, r in (("A", ra), ("B", rb)) if r is None)
        return (
            f"not paired: no resamples kept on {missing} (no interval, an analytic one, or a "
            "build from before each record kept its design's parts)"
        )
    if pairing.why_not is not None:
        return f"not paired: {pairing.why_not}"
    paired = pair_resamples(ra, rb)
    return f"not paired: {paired}" if isinstance(paired, str) else paired


def compare_key(key: str, a: Side, b: Side, pairing: Pairing | None = None) -> KeyDiff:
    """One key of both sides (:class:`KeyDiff`)."""
    pairing = pairing_of(a, b) if pairing is None else pairing
    ra_rec, rb_rec = a.numbers.get(key), b.numbers.get(key)
    if ra_rec is None or rb_rec is None:
        status = "only_b" if ra_rec is None else "only_a"
        return KeyDiff(
            key, status, _shown(ra_rec), _shown(rb_rec), None, None, False, None, None, None,
            None, None, f"only in {'B' if ra_rec is None else 'A'}",
        )  # fmt: skip
    fields = (*REPORTED_FIELDS, *(f for f in COMPARED_WHEN_BOTH if f in ra_rec and f in rb_rec))
    same = all(_same(ra_rec.get(f), rb_rec.get(f)) for f in fields)
    status = "same" if same else "changed"
    if ra_rec.get("text") is not None or rb_rec.get("text") is not None:
        note = "" if same else "a coded value (its text is shown)"
        return KeyDiff(
            key, status, _shown(ra_rec), _shown(rb_rec), None, None, False, None, None, None,
            None, None, note,
        )  # fmt: skip
    fmt = str(rb_rec.get("fmt") or ".4g")
    change = float(rb_rec["value"]) - float(ra_rec["value"])
    level = float(ra_rec.get("ci_level") or rb_rec.get("ci_level") or 0.95)
    res_a, res_b = a.resamples.get(key), b.resamples.get(key)
    fixed = (_fixed_by_construction(ra_rec), _fixed_by_construction(rb_rec))
    paired = _pairing_of_key(res_a, res_b, pairing, fixed)
    settings = pairing.settings(ra_rec)
    if not isinstance(paired, str) and settings is None:
        paired = (
            "not paired: no statistics settings to read the change with (neither the record's "
            "config nor a resolved config.yaml beside A)"
        )
    if isinstance(paired, str):
        return KeyDiff(
            key, status, _shown(ra_rec), _shown(rb_rec), change, _signed(change, fmt), False,
            None, None, None, level, None,
            paired if (res_a or res_b or any(fixed) or not same) else "",
        )  # fmt: skip
    from analysis.stats.records import NOT_ESTIMABLE, paired_change

    assert settings is not None
    reading = paired_change(paired, settings)
    iv = reading.interval
    n_boot = paired.n_boot or None
    matched = "".join(f"; {n}" for n in paired.notes)
    if iv.method == NOT_ESTIMABLE or iv.low is None or iv.high is None:
        return KeyDiff(
            key, status, _shown(ra_rec), _shown(rb_rec), change, _signed(change, fmt), True,
            None, None, None, iv.level, n_boot, f"paired, {iv.text}{matched}", paired.notes,
        )  # fmt: skip
    tested = reading.test(0.0)
    p = tested[0] if tested is not None else (1.0 if iv.low == iv.high == 0.0 else None)
    return KeyDiff(
        key=key,
        status=status,
        a=_shown(ra_rec),
        b=_shown(rb_rec),
        change=change,
        change_display=_signed(change, fmt),
        paired=True,
        ci=(float(iv.low), float(iv.high)),
        ci_display=f"[{_signed(iv.low, fmt)}, {_signed(iv.high, fmt)}]",
        p_value=p,
        level=iv.level,
        n_resamples=n_boot,
        note=f"paired: B - A on the same resamples of the design, {iv.text}"
        + (f"; {tested[2]}" if tested is not None else "")
        + matched,
        matched=paired.notes,
    )


# ---------------------------------------------------------------- both builds


def _flat(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, Mapping) and node:
        out: dict[str, Any] = {}
        for k, v in node.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: node}


def config_changes(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> list[dict]:
    """Every resolved-config key whose value differs (``run.variant`` aside: a name)."""
    if a is None or b is None:
        return []
    fa, fb = _flat(a), _flat(b)
    keys = sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k) and k != "run.variant")
    return [{"key": k, "a": fa.get(k), "b": fb.get(k)} for k in keys]


@dataclass
class BuildDiff:
    """Two builds compared key by key."""

    a: Side
    b: Side
    keys: list[KeyDiff]
    config: list[dict]

    def summary(self) -> dict[str, int]:
        count = {s: sum(k.status == s for k in self.keys) for s in ("same", "changed")}
        return {
            "keys": len(self.keys),
            **count,
            "only_a": sum(k.status == "only_a" for k in self.keys),
            "only_b": sum(k.status == "only_b" for k in self.keys),
            "paired": sum(k.paired for k in self.keys),
            "paired_changed": sum(k.paired and k.status == "changed" for k in self.keys),
        }

    def document(self) -> dict[str, Any]:
        """The comparison as plain data (``--format json``; the audit site reads it)."""
        return {
            "a": {"label": self.a.label, "source": self.a.source},
            "b": {"label": self.b.label, "source": self.b.source},
            "config_changes": self.config,
            "summary": self.summary(),
            "keys": [asdict(k) for k in self.keys],
        }


def diff_builds(a: Side, b: Side) -> BuildDiff:
    """Every key of either side (sorted), compared."""
    keys = sorted(set(a.numbers) | set(b.numbers))
    pairing = pairing_of(a, b)
    return BuildDiff(
        a, b, [compare_key(k, a, b, pairing) for k in keys], config_changes(a.config, b.config)
    )


# ---------------------------------------------------------------- output


def _p(p: float | None) -> str:
    if p is None:
        return ""
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def _gist(note: str) -> str:
    """One matching note without its factor and counts, so that keys matched alike count as
    one line: the prefix of resamples used, or deletions matched by name."""
    if "deleted levels matched by name" in note:
        return (
            "the annotators' and rater pairs' deletions matched by name (a level only one side "
            "has leaves the other at its value: another rater-pair subset)"
        )
    return note.split(": ", 1)[-1]


def _matching(d: BuildDiff, every: bool) -> list[str]:
    """``N keys: <how>`` for every way paired rows were matched other than one for one."""
    count: dict[str, int] = {}
    for k in _rows(d, every):
        for gist in dict.fromkeys(_gist(m) for m in k.matched):
            count[gist] = count.get(gist, 0) + 1
    return [f"{n} keys: {gist}" for gist, n in sorted(count.items())]


def _rows(d: BuildDiff, every: bool) -> list[KeyDiff]:
    return [k for k in d.keys if every or k.status != "same"]


def _summary_line(d: BuildDiff) -> str:
    s = d.summary()
    return (
        f"{s['keys']} keys: {s['changed']} changed, {s['same']} the same, {s['only_a']} only in "
        f"A, {s['only_b']} only in B; {s['paired']} on shared resamples (paired intervals, "
        f"{s['paired_changed']} of the changed)"
    )


def render_table(d: BuildDiff, every: bool = False) -> str:
    """The terminal table."""
    lines = [f"A: {d.a.label}  ({d.a.source})", f"B: {d.b.label}  ({d.b.source})"]
    if d.config:
        lines.append(
            "config: " + "; ".join(f"{c['key']}: {c['a']!r} -> {c['b']!r}" for c in d.config)
        )
    header = ("key", "A", "B", "B - A", "paired CI", "p")
    rows = [
        (k.key, k.a or "--", k.b or "--", k.change_display or "", k.ci_display or "", _p(k.p_value))
        for k in _rows(d, every)
    ]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines += ["", fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r).rstrip() for r in rows]
    matching = _matching(d, every)
    if matching:
        lines += ["", "paired on:", *(f"  {m}" for m in matching)]
    notes = sorted({k.note for k in _rows(d, every) if k.note and not k.paired})
    if notes:
        lines += ["", "not paired:", *(f"  {n.removeprefix('not paired: ')}" for n in notes)]
    lines += ["", _summary_line(d)]
    return "\n".join(lines) + "\n"


def _row_note(k: KeyDiff) -> str:
    """A row's note in the markdown and HTML tables: why it is not paired, or how it was
    matched where not one for one."""
    if not k.paired:
        return k.note
    return "; ".join(dict.fromkeys(_gist(m) for m in k.matched))


def render_markdown(d: BuildDiff, every: bool = False) -> str:
    """Markdown: the audit site's page of the comparison."""
    out = [
        f"# {d.b.label} against {d.a.label}",
        "",
        f"- A: `{d.a.label}` ({d.a.source})",
        f"- B: `{d.b.label}` ({d.b.source})",
        f"- {_summary_line(d)}",
        "",
    ]
    if d.config:
        out += ["## What differs in the config", "", "| key | A | B |", "|---|---|---|"]
        out += [f"| `{c['key']}` | {c['a']!r} | {c['b']!r} |" for c in d.config]
        out.append("")
    out += [
        "## Numbers",
        "",
        "A change is paired where both records are statistics of the same resampled data (the "
        "same units drawn alike, the annotators' deletions matched by name): its interval and "
        "p-value come from the change on each shared resample and deleted level.",
        "",
        "| key | A | B | B - A | paired CI | p | note |",
        "|---|---|---|---|---|---|---|",
    ]
    out += [
        f"| `{k.key}` | {k.a or '--'} | {k.b or '--'} | {k.change_display or ''} | "
        f"{k.ci_display or ''} | {_p(k.p_value)} | {_row_note(k)} |"
        for k in _rows(d, every)
    ]
    return "\n".join(out) + "\n"


def render_html(d: BuildDiff, every: bool = False, *, title: str = "", linked: bool = True) -> str:
    """A page of the audit site (``site_templates/diff.html``, the site's layout): each key
    links to its entry in B's site when ``linked`` (the page sits in that site)."""
    import jinja2

    from analysis.paper import site_links

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "site_templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    cfg = d.b.config or {}
    env.globals.update(
        entry_link=site_links.entry_link,
        site={
            "title": title or (cfg.get("paper") or {}).get("title", "recenter"),
            "dataset": d.b.label,
            "simulated": bool((cfg.get("data") or {}).get("simulated")),
            "commit": "see each side",
            "numbers_file": d.b.source,
        },
    )
    keys = [
        {
            **asdict(k),
            "linked": linked and k.b is not None,
            "p": _p(k.p_value),
            "note": _row_note(k),
        }
        for k in _rows(d, every)
    ]
    page = env.get_template("diff.html").render(
        root="../",
        a={"label": d.a.label, "source": d.a.source},
        b={"label": d.b.label, "source": d.b.source},
        summary=_summary_line(d) + ".",
        config=[{**c, "a": repr(c["a"]), "b": repr(c["b"])} for c in d.config],
        keys=keys,
    )
    return page


def site_page(d: BuildDiff, build: BuildPaths, root: Path) -> Path:
    """Where ``--site`` writes the page: in B's audit site, ``site/diffs/<A>.html`` (a new
    build of the site replaces the folder: write the page again after it)."""
    from analysis.paper import site_links

    name = site_links.page_name(d.a.label.replace("/", "_").replace(":", "_"))
    return root / build.site / "diffs" / f"{name}.html"


def render(d: BuildDiff, fmt: str, every: bool = False) -> str:
    if fmt == "json":
        return json.dumps(d.document(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if fmt == "html":
        return render_html(d, every)
    return render_markdown(d, every) if fmt == "md" else render_table(d, every)


# ---------------------------------------------------------------- recenter diff


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "a",
        help="the first build: 'default', a variant name, <dataset>:<variant>, a numbers.json "
        "or a build's results folder; with --rev a commit",
    )
    parser.add_argument("b", help="the second build, named the same ways")
    parser.add_argument("--dataset", help="dataset of named builds (default: data.name)")
    parser.add_argument(
        "--rev",
        action="store_true",
        help="A and B are commits: compare the build (--variant, default the default build) at "
        "each, from its committed outputs or built offline in a temporary worktree",
    )
    parser.add_argument("--variant", help="with --rev: the variant built at both commits")
    parser.add_argument("--cores", type=int, default=2, help="with --rev: cores per build")
    parser.add_argument("--keep", action="store_true", help="with --rev: keep the builds")
    parser.add_argument(
        "--format",
        choices=("table", "md", "json", "html"),
        default="table",
        help="output format (html: a page in the audit site's layout)",
    )
    parser.add_argument(
        "--site",
        action="store_true",
        help="also write the comparison as a page of B's audit site (site/diffs/<A>.html; B "
        "must be a build of this checkout)",
    )
    parser.add_argument("--all", action="store_true", help="list unchanged keys too")
    parser.add_argument("--output", type=Path, help="write to this file instead of stdout")
    parser.add_argument(
        "--ci-width-tolerance",
        type=float,
        default=0.0,
        help="refactor check: allow a CI bound to move by less than this share of the old "
        "width (value and n unchanged); default 0: everything must be identical",
    )


def sides(args: argparse.Namespace) -> tuple[Side, Side]:
    """The two builds the command line names."""
    from analysis.paper.trace import default_dataset

    root = Path(args.repo)
    dataset = args.dataset
    if args.rev:
        build = BuildPaths(dataset or default_dataset(root), args.variant)
        return tuple(  # type: ignore[return-value]
            revision_side(root, rev, build, args.cores, args.keep) for rev in (args.a, args.b)
        )
    if args.variant:
        raise DiffError("--variant names the build compared across commits: use it with --rev")
    return side_from_spec(args.a, dataset, root), side_from_spec(args.b, dataset, root)


def run(args: argparse.Namespace) -> int:
    try:
        a, b = sides(args)
    except (DiffError, RecordError) as err:
        print(f"recenter diff: {err}", file=sys.stderr)
        return 2
    d = diff_builds(a, b)
    text = render(d, args.format, args.all)
    if args.site:
        if b.build is None:
            print("recenter diff: --site needs B to be a build of the checkout", file=sys.stderr)
            return 2
        page = site_page(d, b.build, Path(args.repo))
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(render_html(d, args.all), encoding="utf-8")
        print(f"recenter diff: wrote the audit site's page {page}", file=sys.stderr)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf-8")
        print(f"recenter diff: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    removed, added, changes = compare_numbers(
        a.numbers, b.numbers, ci_width_tolerance=args.ci_width_tolerance
    )
    bad = len(removed) + len(added) + sum(not c.allowed for c in changes)
    if args.ci_width_tolerance:
        tolerated = sorted({c.key for c in changes if c.allowed})
        print(
            f"refactor check: {bad} differences, {len(tolerated)} keys within the CI tolerance",
            file=sys.stderr,
        )
    return 1 if bad else 0
