"""What the tests that open pages in headless Chromium (through Playwright) share: finding the
browser, the folder where screenshots are kept, and opening a local page while recording console
errors and every request.

Chromium is the Debian ``chromium`` package (``.ci/run`` installs it) or ``$MTSCORE_CHROMIUM``;
without one a test skips, saying so, except under ``CI=true`` where it fails. Screenshots go to
``$MTSCORE_TEST_ARTEFACTS`` (default ``test-artefacts/`` at the repository root, ignored by git).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

__all__ = ["artefacts_dir", "chromium_executable", "open_local_page"]


def chromium_executable() -> str:
    """The Chromium to launch, or skip (fail under ``CI=true``) naming how to install one."""
    exe = os.environ.get("MTSCORE_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    if exe is None:
        msg = "no Chromium found (apt-get install chromium, or set MTSCORE_CHROMIUM)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + "; .ci/run installs it")
        pytest.skip(msg)
    return exe


def artefacts_dir() -> Path:
    """The folder where tests keep screenshots for people to look at (created)."""
    d = Path(os.environ.get("MTSCORE_TEST_ARTEFACTS", Path(__file__).resolve().parents[1] / "test-artefacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def open_local_page(browser, path: Path, *, scripts: bool = True, viewport=(1280, 900)):
    """``(context, page, log)``: ``path`` (a local file) opened in a new context of ``browser``
    with scripts on or off; ``log["errors"]`` collects console errors and uncaught exceptions,
    ``log["requests"]`` every requested URL. Only the page itself may load: every other request
    is recorded and aborted. Close the context when done."""
    ctx = browser.new_context(java_script_enabled=scripts,
                              viewport={"width": viewport[0], "height": viewport[1]})
    log: dict[str, list[str]] = {"errors": [], "requests": []}
    page = ctx.new_page()
    page.on("console", lambda m: m.type == "error" and log["errors"].append(m.text))
    page.on("pageerror", lambda e: log["errors"].append(str(e)))
    uri = path.as_uri()

    def route(r):
        log["requests"].append(r.request.url)
        if r.request.url == uri:
            r.continue_()
        else:
            r.abort()

    ctx.route("**/*", route)
    page.goto(uri, wait_until="load")
    return ctx, page, log
