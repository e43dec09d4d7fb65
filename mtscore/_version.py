"""mtscore's version, written here only: pyproject.toml reads it ([tool.setuptools.dynamic], without
importing mtscore), so the package metadata and ``mtscore.__version__`` agree. Importable from any
layer: it imports nothing."""
__version__ = "0.1.0"
