"""The README's "Inside a decoder" examples run as written (a broken example is a defect).

Every ```python block of that section is executed in a fresh namespace; the Hugging Face block
defines ``mbr_translate`` and only downloads a model under ``__main__``, so here its function is
called with a stand-in model / tokenizer that returns fixed samples, and its choice is checked
against ``decoder.mbr`` on those samples."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _section_blocks(title: str):
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else None]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_readme_decoder_section_has_the_promised_examples():
    blocks = _section_blocks("Inside a decoder")
    joined = "\n".join(blocks)
    for needle in ("sentence_score", "decoder.pairwise", "decoder.mbr", "model.generate",
                   "nbest_oracle", "reward_fn"):
        assert needle in joined, needle


@pytest.mark.parametrize("index", range(len(_section_blocks("Inside a decoder"))))
def test_readme_decoder_example_runs(index, capsys):
    code = _section_blocks("Inside a decoder")[index]
    ns: dict = {"__name__": "readme_example"}
    exec(compile(code, f"README.md (Inside a decoder, block {index})", "exec"), ns)
    if "mbr_translate" in ns:
        _check_mbr_translate(ns["mbr_translate"])


def _check_mbr_translate(mbr_translate):
    from mtscore import decoder

    samples = [["Die Katze saß auf der Matte.", "Eine Katze saß auf der Matte.",
                "Die Katze sitzt auf der Matte.", "Der Hund lag auf der Matte."],
               ["Hallo Welt.", "Hallo, Welt.", "Hi Welt.", "Hallo Welt!"]]

    class Tokenizer:
        def __call__(self, sources, return_tensors=None, padding=None):
            assert return_tensors == "pt"
            assert padding
            return {"input_ids": sources}

        def batch_decode(self, out, skip_special_tokens=False):
            assert skip_special_tokens
            return out

    class Model:
        def generate(self, input_ids, num_return_sequences, **kwargs):
            assert kwargs["do_sample"]
            return [s for group in samples[:len(input_ids)] for s in group[:num_return_sequences]]

    got = mbr_translate(Model(), Tokenizer(), ["The cat sat on the mat.", "Hello world."],
                        n_samples=4)
    assert got == [decoder.mbr(g, metric="chrf").sample for g in samples]
