"""Headless Chromium for the browser tests (the web board, the arena's HTML report).

Debian's `chromium` and `chromium-driver` (`.ci/run` installs them), driven by selenium
through the matching chromedriver.  Without the background-networking flags Chromium's own
connections are refused here and it stalls; each browser gets a fresh profile directory.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage")
WINDOW = (1400, 1000)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def missing_browser(driven: bool = True) -> str | None:
    """Why browser tests cannot run here, or None when they can (`driven`: through selenium)."""
    if chromium_path() is None:
        return "no headless Chromium installed (apt-get install chromium chromium-driver)"
    if not driven:
        return None
    if shutil.which("chromedriver") is None:
        return "no chromedriver installed (apt-get install chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


def chromium_command(profile: Path, *args: str) -> list[str]:
    """argv for a one-shot Chromium run (e.g. --dump-dom URL) with the shared flags."""
    chromium = chromium_path()
    assert chromium is not None
    return [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]


def downloads_dir(folder: Path) -> Path:
    """Where the browser started for a test's tmp folder saves downloads."""
    return folder / "downloads"


def start_driver(profile: Path, downloads: Path | None = None) -> Any:
    """A selenium WebDriver on headless Chromium with a fresh profile in `profile`, saving
    downloads in `downloads` (default: beside the profile, never the user's own folder)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium_path() or ""
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    options.add_experimental_option("prefs", {
        "download.default_directory": str(downloads or downloads_dir(profile.parent)),
        "download.prompt_for_download": False,
        "profile.default_content_setting_values.automatic_downloads": 1})
    # Given both paths, selenium never runs Selenium Manager (which would try the internet).
    driver = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver")))
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    return driver
