"""A real headless browser for tests: Debian's Chromium driven by Selenium through the system
chromedriver (``/usr/bin/chromium``, ``/usr/bin/chromedriver``; the Makefile's test install
puts them there). Nothing is downloaded: Selenium Manager is never asked for a driver or a
browser, and the browser is told not to reach the network on its own.

Use it as a context manager (a missing package is an error that names it, not a skip: the
tests' install provides both)::

    with headless_chromium() as driver:
        driver.get(path.as_uri())
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: flags of an offline, throw-away browser (a fresh profile per start)
FLAGS = (
    "--headless",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)


def missing_browser() -> str | None:
    """Why no browser can start here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.is_file():
            return f"{path} not found (Debian package {package}; `make test` installs it)"
    return None


@contextlib.contextmanager
def headless_chromium(page_load_timeout_s: float = 60) -> Iterator:
    """A Selenium WebDriver of headless Chromium with a fresh profile, quit and removed after.

    As root Chromium needs ``--no-sandbox`` (it refuses to start otherwise).
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    problem = missing_browser()
    if problem:
        raise RuntimeError(f"no headless browser: {problem}")
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    try:
        driver.set_page_load_timeout(page_load_timeout_s)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
