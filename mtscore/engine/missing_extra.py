"""The exception for a missing optional dependency, in a module of its own so that the
tokenizer registry and the external tokenizers it loads (``spm``) can both raise it without
importing each other."""

__all__ = ["MissingExtraError"]


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the pip command."""
