"""Token interning for the text kernels: exact, dense int32 ids for code-point sequences."""
from typing_extensions import disjoint_base

@disjoint_base  # a cdef class: its C layout cannot be combined with another base
class Vocab:
    """Exact interning of tokens (code-point sequences) to dense int32 ids 0, 1, 2, ..."""

    def __len__(self) -> int: ...
    def token(self, i: int) -> str:
        """The token string of id ``i`` (IndexError outside [0, len))."""

    def intern(self, tok: str) -> int:
        """Id of one token string (inserting it if new)."""

    def lookup(self, tok: str) -> int:
        """Id of ``tok`` or -1 when it was never interned (no insertion)."""
