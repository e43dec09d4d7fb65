"""Plain-Python twin of ``mtscore/kernels/_text_vocab.pyx`` (tests only): ``Vocab``, exact
interning of token strings to dense ids in first-seen order (a dict and a list where the kernel
has its open-addressing table of code points)."""
from __future__ import annotations


class Vocab:
    """Exact interning of token strings to dense ids 0, 1, 2, ... in first-seen order."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._tokens: list[str] = []

    def __len__(self) -> int:
        return len(self._tokens)

    def token(self, i: int) -> str:
        if i < 0 or i >= len(self._tokens):
            raise IndexError(i)
        return self._tokens[i]

    def intern(self, tok: str) -> int:
        i = self._ids.get(tok)
        if i is None:
            i = self._ids[tok] = len(self._tokens)
            self._tokens.append(tok)
        return i

    def lookup(self, tok: str) -> int:
        return self._ids.get(tok, -1)
