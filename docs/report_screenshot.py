"""Make docs/report.png, the README's picture of ``mtscore report``: the top of the page written by

    mtscore report mtscore/data/demo/ref.en -i mtscore/data/demo/sys1.en mtscore/data/demo/sys2.en \
        --names sys1 sys2 -o report.html

as headless Chromium shows it (needs the test extra's Playwright and a Chromium: the Debian
``chromium`` package or ``$MTSCORE_CHROMIUM``). Run from the repository root:
``python docs/report_screenshot.py report.html docs/report.png``.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def main(html: str, png: str, width: int = 1100, height: int = 1500) -> None:
    from playwright.sync_api import sync_playwright

    exe = os.environ.get("MTSCORE_CHROMIUM") or shutil.which("chromium") or shutil.which("google-chrome")
    if exe is None:
        sys.exit("report_screenshot: no Chromium found (apt-get install chromium, or set MTSCORE_CHROMIUM)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(Path(html).resolve().as_uri(), wait_until="load")
        page.screenshot(path=png)
        browser.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
