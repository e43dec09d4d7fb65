"""mtscore's version (kept equal to pyproject.toml's), importable from any layer: it imports nothing."""
__version__ = "0.1.0"
