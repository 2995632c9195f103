"""Where each thing lives in the audit site, as a link relative to the PDF or to a site page.

The PDF (``paper/build/<dataset>/paper.pdf``) and its audit site (the folder ``site/`` beside
it) are written by two rules; both take their links from here, so a number's link in the PDF
and the file the site writes for it cannot drift apart. Paths inside the site are
POSIX-relative to the site folder; :func:`from_pdf` prefixes the site folder's name for the
PDF's links.
"""

from __future__ import annotations

import hashlib
import re

#: the site's folder, beside the PDF
SITE_DIR = "site"
#: a file name keeps these characters of a key (others would not travel to every file system)
_PLAIN = re.compile(r"^[A-Za-z0-9._+-]+$")


def page_name(name: str) -> str:
    """A file name for ``name`` (a record key, rule, claim id): the name itself when it is
    plain and lower-case-unique enough, else the plain characters and a short hash of it."""
    if _PLAIN.match(name) and name == name.lower():
        return name
    plain = re.sub(r"[^a-z0-9._+-]", "_", name.lower())
    return f"{plain}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def entry_page(key: str) -> str:
    """The page of one number, relative to the site folder."""
    return f"numbers/{page_name(key)}.html"


def entry_link(key: str) -> str:
    """The page and anchor of one number (the anchor is the key itself)."""
    return f"{entry_page(key)}#{key}"


def rule_page(rule: str) -> str:
    return f"rules/{page_name(rule)}.html"


def figure_link(stem: str) -> str:
    return f"figures.html#figure-{stem}"


def claim_link(claim_id: str) -> str:
    return f"claims.html#claim-{claim_id}"


def from_pdf(site_path: str) -> str:
    """A site path as the PDF links it: relative to the PDF's folder."""
    return f"{SITE_DIR}/{site_path}"
