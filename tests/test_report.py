"""The Snakemake HTML report of the bundled build, opened in a real headless browser.

``snakemake --report`` on the shared bundled build (read-only: the report is written to the
test's own folder, ``--nolock``), then Chromium (tests/browser.py) shows it as a reader would:
the categories, the two tables (scorecard, runtime per rule) as items that open inline with
their rows, and the captions, the paper's naming its dataset.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser import headless_chromium
from tests.conftest import run_snakemake

pytestmark = pytest.mark.slow


def _open_category(driver, name: str) -> list[str]:
    """Click the results category ``name``; the labels of its items."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, 30)
    wait.until(ec.element_to_be_clickable((By.LINK_TEXT, name))).click()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "table tr")) > 1)
    return [r.text for r in driver.find_elements(By.CSS_SELECTOR, "table tr")[1:]]


def _item_frame_text(driver, label: str) -> str:
    """Open the item ``label`` of the shown category; the text of the page it shows inline."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "table tr") if label in r.text)
    row.find_element(By.CSS_SELECTOR, "a").click()
    frame = WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.TAG_NAME, "iframe"))[0]
    driver.switch_to.frame(frame)
    try:
        return WebDriverWait(driver, 30).until(
            lambda d: d.find_element(By.TAG_NAME, "body").text or None
        )
    finally:
        driver.switch_to.default_content()


def test_report_of_the_bundled_build_in_a_browser(bundled_build: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    run_snakemake(bundled_build, "--report", str(report), "--nolock", timeout=600)
    raw = report.read_text(encoding="utf-8")
    # captions are rendered into the report: the paper's names the dataset, not the overrides
    assert re.search(r"claims of dataset(?:\s|\\n)+<tt[^>]*>bundled</tt>", raw)
    assert "Does it reproduce? Every figure the study published" in raw
    assert "Wall time, CPU time and peak memory of every rule" in raw

    with headless_chromium() as driver:
        driver.get(report.as_uri())
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, 60).until(
            lambda d: "Tables" in d.find_element(By.TAG_NAME, "body").text
        )
        body = driver.find_element(By.TAG_NAME, "body").text
        for category in ("Figures", "Numbers and claims", "Paper", "Tables"):
            assert category in body, category
        items = _open_category(driver, "Tables")
        assert any("scorecard" in i for i in items) and any("runtime per rule" in i for i in items)

        scorecard = _item_frame_text(driver, "scorecard")
        assert "The scorecard of dataset bundled" in scorecard
        assert "verdict" in scorecard and "reproduced" in scorecard

        _open_category(driver, "Tables")
        runtimes = _item_frame_text(driver, "runtime per rule")
        assert "Runtime per rule, dataset bundled" in runtimes
        for rule in ("canonical_tables", "paper_pdf", "model_call_table", "wall_s"):
            assert rule in runtimes, rule
