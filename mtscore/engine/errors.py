"""User-facing error plumbing shared by the command-line faces (``mtscore`` and ``mtscore
meta|human``): the errors contract asks for one clear line and a nonzero exit status."""
from __future__ import annotations

import argparse
from typing import NoReturn


class OneLineErrorParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line (``prog: error: message``, plus a
    pointer to ``--help``) instead of the whole usage block, exit status 2 like argparse."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

