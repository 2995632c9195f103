"""The audit site: a static, offline HTML site beside the PDF with one entry per number.

Rule ``audit_site`` writes ``paper/build/<dataset>/site/`` from the build's records. Each
number's page (``numbers/<key>.html``, anchor ``#<key>``, the link target of that number in the
PDF) holds its value and interval, method and resampling design, n, seed, the rule, the rule's
inputs with sha256 and the lineage back to the raw files, the config subtree the rule read,
the code (``module:function``, the hash of its module, the commit), the model calls behind it,
every sentence, table, figure and claim of the paper that prints it, its scorecard row if any,
and every field of the record as stored. Around the entries: an index searchable by key, text
and section (``assets/search.js``, plain JavaScript in the folder), a page per rule, per
lineage, per call-store shard (every call's messages and answer), and pages for the figures,
claims, scorecard, call usage and software.

Pages are rendered by Jinja2 from ``site_templates/``; every asset is a file of the folder, so
the site opens from disk with no network. The output depends only on its inputs: sorted
everywhere, no time stamps, no absolute paths, so two builds write the same bytes.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from analysis.llm.store import SHARD_SUFFIXES, iter_shard
from analysis.paper import site_links
from analysis.paper.citations import Citations
from analysis.paper.lineage import lineage
from analysis.paper.macros import ci_level_of, display_ci, display_value
from analysis.paper.provenance import FigureInfo
from analysis.paper.scorecard import SIMULATED_CAVEAT
from analysis.software import commit_label
from analysis.workflow_config import code_hash

TEMPLATES = Path(__file__).with_name("site_templates")
#: static files copied as they are
ASSETS = ("assets/site.css", "assets/search.js")
#: the section of a number the paper prints nowhere (the index's section filter offers it)
NOT_PRINTED = "(not printed in the paper)"
#: at most this many raw files are listed on a number's own page; its lineage page has all
MAX_RAW_FILES_SHOWN = 40
#: a config subtree of at most this many keys is shown on the number's page too; every subtree
#: has a page of its own (``config/<sha256>.html``), shared by the numbers of one rule
MAX_CONFIG_SHOWN = 25
#: fields of the call-usage records, in the order of the usage table
USAGE_FIELDS = ("calls", "keys", "prompt_tokens", "completion_tokens", "cost_usd")


@dataclass
class SiteInputs:
    """Everything the site is made of (read by the rule's script, passed in here)."""

    numbers: Mapping[str, Mapping[str, Any]]
    dataset: str
    title: str
    simulated: bool
    citations: Citations
    claims: Mapping[str, Any]
    scorecard: Sequence[Mapping[str, str]]
    software: Mapping[str, Any]
    figures: Sequence[FigureInfo]
    call_shards: Sequence[str]
    rule_docs: Mapping[str, str] = field(default_factory=dict)
    absent: Iterable[str] = ()
    numbers_file: str = ""
    scorecard_file: str = ""
    software_file: str = ""


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """``[(path, JSON text)]`` of every leaf of a record (``extra.p_value``, ``inputs[0].path``);
    an empty mapping or list is a leaf of its own, so no field disappears."""
    if isinstance(value, Mapping) and value:
        out: list[tuple[str, str]] = []
        for k in sorted(value, key=str):
            out += flatten(value[k], f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, list) and value:
        out = []
        for i, item in enumerate(value):
            out += flatten(item, f"{prefix}[{i}]")
        return out
    return [(prefix, json.dumps(value, sort_keys=True, ensure_ascii=False))]


@cache
def module_hash(module: str) -> str | None:
    """sha256 of a module's source and the package modules it imports (as rules' code params
    are computed); None for a module this checkout does not have."""
    try:
        return code_hash(module)
    except (ImportError, ValueError, OSError):
        return None


def _ci_level_text(rec: Mapping[str, Any]) -> str:
    if display_ci(rec) is None or rec.get("ci_level") is None:
        return ""
    return f"{ci_level_of(rec):.0%}"


def _signature(rec: Mapping[str, Any]) -> str:
    """Records with the same inputs and calls share one lineage."""
    return json.dumps([rec.get("inputs"), rec.get("calls")], sort_keys=True, default=str)


def config_page(rec: Mapping[str, Any]) -> str | None:
    """The page of a record's config subtree (named by its sha256), or None without one."""
    if not rec.get("config"):
        return None
    sha = str(rec.get("config_sha256") or "")
    if not sha:
        sha = hashlib.sha256(json.dumps(rec["config"], sort_keys=True).encode()).hexdigest()
    return f"config/{sha[:16]}.html"


def _shard_page(path: str) -> str:
    stem = re.sub(r"\.jsonl(\.gz)?$", "", path)
    parts = [site_links.page_name(p) for p in Path(stem).parts[-3:]]
    return "calls/" + "/".join(parts) + ".html"


class Site:
    """The site's pages as data, then rendered."""

    def __init__(self, inp: SiteInputs, root: Path) -> None:
        self.inp = inp
        self.root = root
        self.numbers = inp.numbers
        self.claims = dict((inp.claims or {}).get("claims") or {})
        self.commit = commit_label(inp.software.get("repository") or {})
        self.lineages: dict[str, dict[str, Any]] = {}
        self.lineage_of: dict[str, str] = {}
        self.shard_keys: dict[str, set[str]] = {}
        self._configs: dict[str, list[tuple[str, str]]] = {}
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=False,
            keep_trailing_newline=True,
        )
        self.env.globals.update(
            entry_link=site_links.entry_link,
            rule_page=site_links.rule_page,
            figure_link=site_links.figure_link,
            claim_link=site_links.claim_link,
            max_config=MAX_CONFIG_SHOWN,
            site=self._site_globals(),
        )

    def _site_globals(self) -> dict[str, Any]:
        return {
            "title": self.inp.title,
            "dataset": self.inp.dataset,
            "simulated": self.inp.simulated,
            "commit": self.commit,
            "numbers_file": self.inp.numbers_file,
        }

    # -- lineage -----------------------------------------------------------------------------
    def _lineages(self) -> None:
        """One lineage per distinct (inputs, calls) of the records; ids are content hashes."""
        groups: dict[str, list[str]] = {}
        for key in sorted(self.numbers):
            groups.setdefault(_signature(self.numbers[key]), []).append(key)
        for signature, keys in groups.items():
            lid = hashlib.sha256(signature.encode()).hexdigest()[:12]
            first = keys[0]
            lin = lineage(first, self.numbers[first], self.numbers, self.inp.dataset, self.root)
            lin["steps"] = lin["steps"][1:]  # the first step writes one record; the page has many
            lin["id"], lin["keys"] = lid, keys
            lin["page"] = f"lineage/{lid}.html"
            for f in lin["files"]:
                shard = f["kind"] == "call-store shard" and (self.root / f["path"]).is_file()
                f["page"] = _shard_page(f["path"]) if shard else None
            self.lineages[lid] = lin
            for key in keys:
                self.lineage_of[key] = lid
                for f in lin["call_shards"]:
                    if (self.root / f["path"]).is_file():
                        self.shard_keys.setdefault(f["path"], set()).add(key)
                for shard in self.numbers[key].get("calls") or {}:
                    for path in self._shard_files(shard):
                        self.shard_keys.setdefault(path, set()).add(key)

    # -- entries -----------------------------------------------------------------------------
    def _scorecard_rows(self) -> dict[str, dict[str, str]]:
        """key -> scorecard row: the estimate's key and the row's own ``repro.<name>.*`` keys."""
        out: dict[str, dict[str, str]] = {}
        for row in self.inp.scorecard:
            if row.get("key"):
                out.setdefault(row["key"], dict(row))
            prefix = f"repro.{row.get('name', '')}."
            for key in self.numbers:
                if key.startswith(prefix):
                    out.setdefault(key, dict(row))
        return out

    def _claims_of(self) -> dict[str, list[dict[str, str]]]:
        out: dict[str, list[dict[str, str]]] = {}
        for cid in sorted(self.claims):
            claim = self.claims[cid]
            for key in claim.get("keys") or []:
                out.setdefault(key, []).append(
                    {
                        "id": cid,
                        "verdict": str(claim.get("verdict", "")),
                        "statement": str(claim.get("statement", "")),
                    }
                )
        return out

    def entry(self, key: str, scorecard: Mapping[str, Any], claims: Mapping[str, Any]) -> dict:
        rec = self.numbers[key]
        cites = self.inp.citations
        code = str(rec.get("code") or "")
        module = code.split(":", 1)[0]
        lin = self.lineages[self.lineage_of[key]]
        calls: dict[str, tuple[int | str, str]] = {}
        for shard, count in sorted((rec.get("calls") or {}).items()):
            files = self._shard_files(shard)
            if files == [shard]:
                calls[shard] = (int(count), "read by this record's rule")
            for path in files if files != [shard] else []:
                calls[path] = ("all", f"in {shard}, {int(count):,d} calls read by its rule")
        for f in lin["call_shards"]:
            if (self.root / f["path"]).is_file():
                how = "replayed by a model-call step in its lineage"
                calls.setdefault(f["path"], ("all", how))
        # fields with a section (or page) of their own are not repeated in the record's table
        shown_elsewhere = {"config"} if config_page(rec) else set()
        shown_elsewhere |= {"inputs"} if rec.get("inputs") else set()
        sections = cites.sections_of(key) or [NOT_PRINTED]
        sentences = cites.sentences_of(key)
        search = " ".join(
            [key, str(rec.get("method") or ""), str(rec.get("rule") or "")]
            + [s.text for s in sentences]
            + [f.caption for f in cites.floats_of(key)]
        )
        return {
            "key": key,
            "display": display_value(rec),
            "ci": display_ci(rec),
            "level": _ci_level_text(rec),
            "n": rec.get("n"),
            "n_text": f"{int(rec['n']):,d}" if rec.get("n") is not None else "",
            "seed": rec.get("seed"),
            "unit": rec.get("unit") or "",
            "method": rec.get("method") or "",
            "rule": str(rec.get("rule") or ""),
            "rule_doc": self.inp.rule_docs.get(str(rec.get("rule") or ""), ""),
            "code": code,
            "module": module,
            "code_hash": module_hash(module) if module else None,
            "inputs": rec.get("inputs") or [],
            "config": self._config_rows(rec),
            "config_sha256": rec.get("config_sha256"),
            "config_page": config_page(rec),
            "lineage": {
                "page": lin["page"],
                "n_steps": len(lin["steps"]),
                "rules": sorted({str(step["rule"]) for step in lin["steps"]}),
                "raw_files": lin["raw_files"][:MAX_RAW_FILES_SHOWN],
                "n_raw": len(lin["raw_files"]),
                "call_shards": lin["call_shards"],
                "current": lin["current"],
                "changed": lin["changed"],
                "missing": lin["missing"],
            },
            "calls": [
                {"shard": s, "count": c, "how": how, "page": _shard_page(s)}
                for s, (c, how) in sorted(calls.items())
            ],
            "sentences": sentences,
            "floats": cites.floats_of(key),
            "claims": claims.get(key, []),
            "scorecard": scorecard.get(key),
            "sections": sections,
            "search_text": re.sub(r"\s+", " ", search).lower(),
            "fields": flatten({k: v for k, v in rec.items() if k not in shown_elsewhere}),
        }

    def _config_rows(self, rec: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The config subtree's fields, flattened once per subtree."""
        page = config_page(rec)
        if page is None:
            return []
        if page not in self._configs:
            self._configs[page] = flatten({"config": rec["config"]})
        return self._configs[page]

    # -- model calls -------------------------------------------------------------------------
    def _shard_files(self, path: str) -> list[str]:
        """The shard files a record's call entry names: the file, or a call-store folder's."""
        full = self.root / path
        if full.is_dir():
            return sorted(
                f"{path}/{p.name}"
                for p in full.iterdir()
                if p.is_file() and p.name.endswith(SHARD_SUFFIXES)
            )
        return [path] if full.is_file() else []

    def shard(self, path: str) -> dict[str, Any]:
        full = self.root / path
        calls = []
        for line, rec in iter_shard(full):
            request = rec.get("request") or {}
            response = rec.get("response") or {}
            choice = (response.get("choices") or [{}])[0] or {}
            message = choice.get("message") or {}
            usage = rec.get("usage") or {}
            calls.append(
                {
                    "line": line,
                    "key": str(rec.get("key", "")),
                    "model": rec.get("model_name", ""),
                    "prompt_version": rec.get("prompt_version", ""),
                    "params": json.dumps(request.get("params") or {}, sort_keys=True),
                    "messages": [
                        {"role": str(m.get("role", "")), "content": str(m.get("content", ""))}
                        for m in request.get("messages") or []
                    ],
                    "answer": str(message.get("content") or ""),
                    "finish_reason": choice.get("finish_reason"),
                    "usage": ", ".join(f"{k} {v}" for k, v in sorted(usage.items())),
                    "created": rec.get("created", ""),
                    "raw": json.dumps(rec, sort_keys=True, indent=1, ensure_ascii=False),
                }
            )
        parts = Path(re.sub(r"\.jsonl(\.gz)?$", "", path)).parts
        return {
            "path": path,
            "stage": parts[-3] if len(parts) >= 3 else "",
            "model": parts[-2] if len(parts) >= 2 else "",
            "sha256": hashlib.sha256(full.read_bytes()).hexdigest(),
            "calls": calls,
            "keys": sorted(self.shard_keys.get(path, ())),
            "n": len(calls),
            "page": _shard_page(path),
        }

    # -- writing -----------------------------------------------------------------------------
    def _write(self, out: Path, rel: str, template: str, **context: Any) -> None:
        depth = rel.count("/")
        html = self.env.get_template(template).render(root="../" * depth, **context)
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")

    def write(self, out: Path) -> dict[str, int]:
        """Render every page into ``out`` (created; left-over files of an older site go)."""
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for asset in ASSETS:
            (out / asset).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(TEMPLATES / asset, out / asset)
        self._lineages()
        scorecard, claims = self._scorecard_rows(), self._claims_of()
        entries = [self.entry(k, scorecard, claims) for k in sorted(self.numbers)]
        for e in entries:
            self._write(out, site_links.entry_page(e["key"]), "entry.html", e=e)
        sections = sorted({s for e in entries for s in e["sections"]} - {NOT_PRINTED})
        self._write(
            out,
            "index.html",
            "index.html",
            entries=entries,
            sections=[*sections, NOT_PRINTED],
            absent=sorted(set(self.inp.absent) - set(self.numbers)),
        )
        rules = self._rules(entries)
        self._write(out, "rules.html", "rules.html", rules=rules)
        for r in rules:
            self._write(out, site_links.rule_page(r["name"]), "rule.html", r=r)
        for lin in self.lineages.values():
            self._write(out, lin["page"], "lineage.html", lin=lin)
        configs: dict[str, dict[str, Any]] = {}
        for e in entries:
            if e["config_page"]:
                blank = {"items": e["config"], "sha256": e["config_sha256"]}
                page = configs.setdefault(e["config_page"], {**blank, "keys": [], "rules": set()})
                page["keys"].append(e["key"])
                page["rules"].add(e["rule"])
        for page_path, page in sorted(configs.items()):
            page["rules"] = sorted(page["rules"])
            self._write(out, page_path, "config.html", c=page)
        listed = {f for p in self.inp.call_shards for f in self._shard_files(p)}
        shards = [self.shard(p) for p in sorted(listed | set(self.shard_keys))]
        for s in shards:
            self._write(out, s["page"], "calls.html", s=s)
        self._write(
            out,
            "usage.html",
            "usage.html",
            usage=self._usage(),
            usage_fields=USAGE_FIELDS,
            shards=shards,
        )
        self._write(out, "figures.html", "figures.html", figures=self._figures(out))
        self._write(
            out,
            "claims.html",
            "claims.html",
            claims=self._claim_pages(),
            mode_sentence=f"This build ran in {self.inp.claims.get('mode', 'report')} mode.",
        )
        columns = list(self.inp.scorecard[0]) if self.inp.scorecard else []
        self._write(
            out,
            "scorecard.html",
            "scorecard.html",
            rows=self.inp.scorecard,
            columns=columns,
            keys=set(self.numbers),
            scorecard_file=self.inp.scorecard_file,
            caveat=SIMULATED_CAVEAT if self.inp.simulated else "",
        )
        sw = self.inp.software
        self._write(
            out,
            "software.html",
            "software.html",
            software_file=self.inp.software_file,
            platform=[
                ("Python", sw.get("python")),
                ("Operating system", sw.get("os")),
                ("Machine", sw.get("machine")),
                ("TeX", sw.get("tex")),
                ("latexmk", sw.get("latexmk")),
            ],
            outside=sorted((sw.get("outside_lock") or {}).items()),
            packages=sorted((sw.get("packages") or {}).items()),
        )
        return {"entries": len(entries), "rules": len(rules), "shards": len(shards)}

    def _rules(self, entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        by_rule: dict[str, list[Mapping[str, Any]]] = {}
        for e in entries:
            by_rule.setdefault(e["rule"], []).append(e)
        figures: dict[str, list[str]] = {}
        for fig in self.inp.figures:
            if fig.meta.get("rule"):
                figures.setdefault(str(fig.meta["rule"]), []).append(fig.stem)
                by_rule.setdefault(str(fig.meta["rule"]), [])
        wrote: dict[str, set[str]] = {}
        step_inputs: dict[str, set[str]] = {}
        for lin in self.lineages.values():
            for step in lin["steps"]:
                rule = str(step["rule"])
                by_rule.setdefault(rule, [])
                wrote.setdefault(rule, set()).add(str(step["writes"]))
                step_inputs.setdefault(rule, set()).update(str(i) for i in step["inputs"])
        recorded = {f["path"]: f["sha256"] for lin in self.lineages.values() for f in lin["files"]}
        out = []
        for name in sorted(by_rule):
            es = by_rule[name]
            inputs: dict[str, str] = {}
            for path in sorted(step_inputs.get(name, ())):
                inputs[path] = recorded.get(path) or ""
            configs: dict[str, dict[str, Any]] = {}
            codes: dict[str, dict[str, Any]] = {}
            for e in es:
                rec = self.numbers[e["key"]]
                for i in rec.get("inputs") or []:
                    inputs.setdefault(i["path"], i.get("sha256", ""))
                sha = str(rec.get("config_sha256") or "")
                if rec.get("config"):
                    configs.setdefault(sha, {"items": e["config"], "sha256": sha})
                codes.setdefault(
                    e["code"], {"code": e["code"], "module": e["module"], "hash": e["code_hash"]}
                )
            for fig in self.inp.figures:
                if fig.meta.get("rule") == name:
                    code = str(fig.meta.get("code") or "")
                    if code:
                        module = code.split(":", 1)[0]
                        codes.setdefault(
                            code, {"code": code, "module": module, "hash": module_hash(module)}
                        )
                    for i in _inputs(fig.meta.get("inputs")):
                        inputs.setdefault(i["path"], i["sha256"])
            out.append(
                {
                    "name": name,
                    "doc": self.inp.rule_docs.get(name, ""),
                    "keys": [e["key"] for e in es],
                    "entries": es,
                    "inputs": [{"path": p, "sha256": s} for p, s in sorted(inputs.items())],
                    "configs": [configs[k] for k in sorted(configs)],
                    "code": [codes[k] for k in sorted(codes)],
                    "figures": sorted(figures.get(name, [])),
                    "wrote": sorted(wrote.get(name, ())),
                }
            )
        return out

    def _usage(self) -> list[dict[str, Any]]:
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for key in sorted(self.numbers):
            rec = self.numbers[key]
            extra = rec.get("extra") or {}
            if rec.get("rule") != "call_usage" or "stage" not in extra:
                continue
            stage, model = str(extra["stage"]), str(extra.get("model", ""))
            field_name = key.rsplit(".", 1)[-1]
            row = rows.setdefault((stage, model), {"stage": stage, "model": model, "cells": {}})
            row["cells"][field_name] = {"key": key, "display": display_value(rec)}
        return [rows[k] for k in sorted(rows)]

    def _figures(self, out: Path) -> list[dict[str, Any]]:
        floats = {f.name: f for f in self.inp.citations.floats if f.kind == "figure"}
        pages = []
        for fig in self.inp.figures:
            image = None
            png = self.root / Path(fig.paper_file or f"{fig.stem}.pdf").with_suffix(".png")
            if png.is_file():
                image = f"figures/{site_links.page_name(fig.stem)}.png"
                (out / image).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(png, out / image)
            files = _inputs(fig.meta.get("files")) or [
                {"path": f, "sha256": ""} for f in sorted(fig.files)
            ]
            cited = floats.get(fig.stem)
            unavailable = None
            if fig.meta.get("available") is False:
                unavailable = str(fig.meta.get("reason") or "not stated")
            pages.append(
                {
                    "stem": fig.stem,
                    "number": cited.number if cited else "",
                    "caption": (cited.caption if cited and cited.caption else "")
                    or str(fig.meta.get("caption") or ""),
                    "image": image,
                    "rule": fig.meta.get("rule"),
                    "code": fig.meta.get("code"),
                    "unavailable": unavailable,
                    "keys": [k for k in fig.keys if k in self.numbers],
                    "files": files,
                    "inputs": _inputs(fig.meta.get("inputs")),
                }
            )
        return pages

    def _claim_pages(self) -> list[dict[str, Any]]:
        out = []
        for cid in sorted(self.claims):
            c = self.claims[cid]
            out.append(
                {
                    "id": cid,
                    "verdict": str(c.get("verdict", "")),
                    "statement": str(c.get("statement", "")),
                    "negative": str(c.get("negative") or ""),
                    "keys": [k for k in c.get("keys") or [] if k in self.numbers],
                    "evidence": [str(x) for x in c.get("evidence") or []],
                    "condition": json.dumps(c.get("condition"), indent=1, sort_keys=True),
                }
            )
        return out


def _inputs(raw: Any) -> list[dict[str, str]]:
    """``[{path, sha256}]`` from a sidecar's list of files (objects or bare paths)."""
    out = []
    for item in raw or []:
        if isinstance(item, Mapping):
            out.append({"path": str(item.get("path", "")), "sha256": str(item.get("sha256", ""))})
        else:
            out.append({"path": str(item), "sha256": ""})
    return sorted(out, key=lambda i: i["path"])


def read_scorecard(path: Path) -> list[dict[str, str]]:
    """The scorecard's rows (``results/<dataset>/scorecard.csv``), or none where it is absent."""
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return [dict(row) for row in csv.DictReader(fh)]


def write_archive(site: Path, archive: Path) -> None:
    """The site as one zip (for Snakemake's report, which embeds files, not folders): files in
    sorted order under ``site/``, fixed time stamps and modes, so the same site gives the same
    bytes."""
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in site.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(
                f"site/{path.relative_to(site).as_posix()}", (1980, 1, 1, 0, 0, 0)
            )
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())


def write_site(inp: SiteInputs, out: Path, root: Path) -> dict[str, int]:
    """Write the site for ``inp`` into ``out`` (``root``: the repository the paths are in)."""
    return Site(inp, root).write(out)
