"""The audit site of the shared bundled build, read from disk and in a real browser.

The default run writes the site beside the PDF; it has a page for every key of numbers.json
with every field of the record; every link of the PDF lands on an existing page and anchor; the
appendix that replaced the old 57 pages of rows is at most two pages; and in headless Chromium
the site opens from disk, its search finds a key, and a headline number's page shows its
interval, inputs and citing sentences.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from analysis.paper import site_links
from tests.paper.site_check import broken_links, external_references, missing_fields, read_page
from tests.settings_defaults import compose_config_plain

DATASET = "bundled"
#: the keys of the index rows the search leaves visible
VISIBLE_KEYS = (
    "return Array.from(document.querySelectorAll('#entries tbody tr'))"
    ".filter(function (r) { return !r.hidden; })"
    ".map(function (r) { return r.querySelector('a').textContent; })"
)
#: a headline number: the text prints it and its page must show interval, inputs and sentence
HEADLINE = "stage2.final.kappa.human_human"


def site_of(build: Path) -> Path:
    return build / "paper" / "build" / DATASET / "site"


def numbers_of(build: Path) -> dict:
    return json.loads((build / "results" / DATASET / "numbers.json").read_text())


def pdf_links(pdf: Path) -> list[str]:
    """Every URI link annotation of the PDF (relative links to the site included)."""
    from pypdf import PdfReader

    out = []
    for page in PdfReader(pdf).pages:
        for annot in page.get("/Annots") or []:
            action = annot.get_object().get("/A")
            if action is not None and action.get_object().get("/URI") is not None:
                out.append(str(action.get_object()["/URI"]))
    return out


def test_the_default_run_writes_a_page_for_every_number_with_every_field(
    bundled_build: Path,
) -> None:
    site, numbers = site_of(bundled_build), numbers_of(bundled_build)
    assert (site / "index.html").is_file()
    for key in numbers:
        assert key in read_page(site / site_links.entry_page(key)).ids, key
    assert missing_fields(site, numbers) == []
    assert external_references(site) == []
    # what the old appendix printed besides the rows: the software and the call usage
    env = json.loads((bundled_build / "results" / DATASET / "environment.json").read_text())
    software = " ".join((site / "software.html").read_text().split())
    for name, version in env["packages"].items():
        assert f"<td>{name}</td><td>{version}</td>" in software, name
    usage = (site / "usage.html").read_text()
    calls = [k for k, r in numbers.items() if r["rule"] == "call_usage"]
    assert calls and all(site_links.entry_link(k) in usage for k in calls)


def test_every_link_of_the_pdf_lands_on_an_anchor_of_the_site(bundled_build: Path) -> None:
    pdf = bundled_build / "paper" / "build" / DATASET / "paper.pdf"
    links = pdf_links(pdf)
    to_site = [link for link in links if link.startswith(site_links.SITE_DIR + "/")]
    assert len(to_site) > 100
    assert f"{site_links.SITE_DIR}/{site_links.entry_link(HEADLINE)}" in to_site
    assert broken_links(pdf, links) == []  # every link is relative, to a file and anchor


def test_the_appendix_on_provenance_is_at_most_two_pages(bundled_build: Path) -> None:
    pdf = bundled_build / "paper" / "build" / DATASET / "paper.pdf"
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    pages = text.split("\f")

    def page_of(heading: str) -> int:
        return next(i for i, p in enumerate(pages) if heading in p)

    start, end = page_of("Where every number comes from"), page_of("Claims checked at build time")
    assert end - start <= 1, f"appendix A runs from page {start + 1} to page {end + 1}"
    appendix = " ".join(" ".join(pages[start : end + 1]).split())
    assert "recenter trace KEY" in appendix and "site/index.html" in appendix


def test_in_a_browser_the_site_opens_from_disk_and_finds_a_number(
    bundled_build: Path, browser
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    site = site_of(bundled_build)
    browser.get((site / "index.html").as_uri())
    n_rows = len(browser.find_elements(By.CSS_SELECTOR, "#entries tbody tr"))
    assert n_rows == len(numbers_of(bundled_build))

    def shown() -> list[str]:  # the keys of the rows the search leaves visible
        return browser.execute_script(VISIBLE_KEYS)

    browser.find_element(By.ID, "q-key").send_keys(HEADLINE)
    keys = shown()
    assert HEADLINE in keys and all(HEADLINE in k for k in keys) and len(keys) < n_rows
    assert browser.find_element(By.ID, "q-count").text == f"{len(keys)} of {n_rows} numbers"
    row = browser.find_element(By.CSS_SELECTOR, f'#entries tr[data-key="{HEADLINE}"]')
    section = row.get_attribute("data-sections").split("|")[0]
    browser.find_element(By.ID, "q-key").clear()
    browser.find_element(By.ID, "q-key").send_keys("kappa")
    browser.find_element(By.ID, "q-text").send_keys("agree with each other")
    Select(browser.find_element(By.ID, "q-section")).select_by_value(section)
    found = shown()
    assert HEADLINE in found and len(found) < n_rows
    sections = browser.execute_script(
        "return Array.from(document.querySelectorAll('#entries tbody tr'))"
        ".filter(function (r) { return !r.hidden; })"
        ".map(function (r) { return r.getAttribute('data-sections'); })"
    )
    assert all(section in s.split("|") for s in sections)
    # every resource the page uses is a file of the folder (no network), and the script ran
    loaded = browser.execute_script(
        "return Array.from(document.querySelectorAll('script[src], link[href], img[src]'))"
        ".map(function (e) { return e.src || e.href; })"
    )
    assert loaded and all(u.startswith(site.as_uri()) for u in loaded), loaded

    # the headline number's page: interval, inputs with sha256, the sentence that prints it
    browser.find_element(By.LINK_TEXT, HEADLINE).click()
    assert browser.current_url.endswith(site_links.entry_link(HEADLINE))
    assert browser.execute_script(f"return document.getElementById('{HEADLINE}') !== null")
    record = numbers_of(bundled_build)[HEADLINE]
    interval = browser.find_element(By.ID, "interval").text
    assert "95% CI" in interval
    assert str(record["display"]) in browser.find_element(By.ID, "value").text
    inputs = browser.find_element(By.ID, "inputs").text
    assert all(i["path"] in inputs and i["sha256"] in inputs for i in record["inputs"])
    sentences = browser.find_elements(By.CSS_SELECTOR, "#cited ul.sentences li")
    # in the dataset's own noun, as the PDF prints it ("simulated raters" in the bundled world)
    people = compose_config_plain()["data"]["nouns"]["people"]
    assert any(f"the {people} agree with each other" in s.text for s in sentences)
    assert browser.find_elements(By.CSS_SELECTOR, "#cited a.number.current")


@pytest.mark.parametrize("sample", [0, 1, 2])
def test_in_a_browser_links_of_the_pdf_open_their_anchor(
    bundled_build: Path, browser, sample: int
) -> None:
    pdf = bundled_build / "paper" / "build" / DATASET / "paper.pdf"
    links = sorted({link for link in pdf_links(pdf) if link.startswith("site/")})
    link = links[sample * (len(links) - 1) // 2]  # the first, the middle and the last link
    path, _, anchor = link.partition("#")
    browser.get(f"{(pdf.parent / path).as_uri()}#{anchor}")
    assert browser.execute_script("return document.getElementById(arguments[0]) !== null", anchor)
