"""Read an audit site back from disk: its anchors, links and the record fields each page shows.

Used by the site's unit tests and by the tests on the shared bundled build: every field of every
record is on the site, every link of the PDF lands on an existing anchor.
"""

from __future__ import annotations

import json
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from analysis.paper import site_links
from analysis.paper.site import config_page, flatten


class _Page(HTMLParser):
    """Ids, links, resources and ``data-field`` texts of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.resources: list[str] = []
        self.fields: dict[str, str] = {}
        self._field: list[tuple[str | None, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))
        if tag in ("script", "img", "link", "iframe", "source") and (a.get("src") or a.get("href")):
            self.resources.append(str(a.get("src") or a.get("href")))
        if tag in ("br", "img", "link", "meta", "input"):
            return
        self._field.append((a.get("data-field"), []))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("br", "img", "link", "meta", "input") or not self._field:
            return
        name, parts = self._field.pop()
        text = "".join(parts)
        if self._field:
            self._field[-1][1].append(text)
        if name is not None:
            self.fields[name] = " ".join(text.split())

    def handle_data(self, data: str) -> None:
        if self._field:
            self._field[-1][1].append(data)


@cache
def read_page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def _shown(text: str, expected_json: str) -> bool:
    """A field shows its JSON, or a string field its plain text (file tables)."""
    if text == " ".join(expected_json.split()):
        return True
    value = json.loads(expected_json)
    return isinstance(value, str) and text == " ".join(value.split())


def missing_fields(site: Path, numbers: dict[str, dict[str, Any]]) -> list[str]:
    """``key: field`` for every field of every record that its pages do not show."""
    out = []
    for key, rec in sorted(numbers.items()):
        page = site / site_links.entry_page(key)
        if not page.is_file():
            out.append(f"{key}: no page {page.name}")
            continue
        shown = dict(read_page(page).fields)
        cfg = config_page(rec)
        if cfg is not None:
            shown.update(read_page(site / cfg).fields)
        for path, text in flatten(dict(rec)):
            if path not in shown or not _shown(shown[path], text):
                out.append(f"{key}: {path} = {text} (shown: {shown.get(path)!r})")
    return out


def resolve(base: Path, link: str) -> tuple[Path, str] | None:
    """The file and anchor a relative link from ``base``'s folder points to (None: absolute)."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc:
        return None
    return (base.parent / unquote(parts.path)).resolve(), unquote(parts.fragment)


def broken_links(base: Path, links: list[str]) -> list[str]:
    """Links from the page or PDF ``base`` that name a missing file or anchor."""
    out = []
    for link in links:
        target = resolve(base, link)
        if target is None:
            out.append(f"{link}: not a relative link")
            continue
        path, anchor = target
        if not path.is_file():
            out.append(f"{link}: no file {path}")
        elif anchor and anchor not in read_page(path).ids:
            out.append(f"{link}: no anchor #{anchor} in {path.name}")
    return out


def external_references(site: Path) -> list[str]:
    """Every link or resource of the site that leaves the folder (network or absolute path)."""
    out = []
    for page in sorted(site.rglob("*.html")):
        parsed = read_page(page)
        for ref in parsed.resources + parsed.links:
            target = resolve(page, ref)
            if target is None or not target[0].is_relative_to(site.resolve()):
                out.append(f"{page.relative_to(site)}: {ref}")
    return out
