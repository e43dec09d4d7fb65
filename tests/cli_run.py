"""Running the ``mtscore`` command in this process, for tests that check what it prints: the
one runner of test_add_metric, test_decoder, test_reader_errors and test_table_cli."""
from __future__ import annotations

import pytest


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``mtscore argv`` through its ``main``: ``(exit status, stdout, stderr)`` as captured by
    pytest's ``capsys`` (whatever was captured before the call is read with it)."""
    from mtscore.bindings.cli.main import main

    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err
