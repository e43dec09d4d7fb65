"""A small XLM-R-style tokenizer for the tests of mtscore.engine.comet.inputs (XLM-R's own files cannot be
downloaded in the test environment): a SentencePiece unigram model (nmt_nfkc, as XLM-R's) trained on a
few hundred lines of the shared WMT21 sources in five scripts, saved as ``sentencepiece.bpe.model``, and a
``tokenizer.json`` laid out as transformers 4.x converts XLM-R's (``XLMRobertaConverter``): fairseq's ids
(``<s> <pad> </s> <unk>`` = 0..3, the SentencePiece pieces after its first three shifted by one,
``<mask>`` last), the precompiled charsmap plus the collapse of repeated spaces, Metaspace, and
``RobertaProcessing``. sentencepiece and tokenizers (the test extra) build it."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

#: the WMT21 sources whose first lines train the model (Latin, Cyrillic, Han, Kana/Kanji scripts)
TRAIN_FILES = ("newstest2021.en-de.src.en", "newstest2021.de-en.src.de", "newstest2021.ru-en.src.ru",
               "newstest2021.zh-en.src.zh", "newstest2021.ja-en.src.ja")
LINES_PER_FILE = 300
VOCAB_SIZE = 4000


def train_lines(shared_data: Path) -> list[str]:
    src = shared_data / "wmt21-news-systems" / "txt" / "sources"
    lines = []
    for name in TRAIN_FILES:
        f = src / name
        if not f.is_file():
            pytest.skip(f"missing data file {f} (set MTSCORE_DATA)")
        lines += f.read_text(encoding="utf-8").splitlines()[:LINES_PER_FILE]
    return lines


def spm_model(lines: list[str]) -> bytes:
    """A serialised SentencePiece unigram model (nmt_nfkc normalisation, ids <unk> <s> </s> first)."""
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece (the test extra) trains the tokenizer")
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=VOCAB_SIZE,
                                   model_type="unigram", character_coverage=0.9995, num_threads=1,
                                   minloglevel=2)
    return buf.getvalue()


def xlmr_tokenizer_json(model: bytes) -> str:
    """The tokenizer.json transformers 4.x writes for an XLM-R SentencePiece model."""
    pytest.importorskip("google.protobuf", reason="protobuf reads the SentencePiece model")
    from sentencepiece import sentencepiece_model_pb2 as pb
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    proto = pb.ModelProto()
    proto.ParseFromString(model)
    vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    vocab += [(p.piece, p.score) for p in proto.pieces[3:]]
    vocab += [("<mask>", 0.0)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tok.add_special_tokens([AddedToken(t, special=True) for t in ("<s>", "<pad>", "</s>", "<unk>")]
                           + [AddedToken("<mask>", special=True, lstrip=True)])
    return tok.to_str()


def write_tokenizer_folder(folder: Path, lines: list[str]) -> Path:
    """``folder`` with sentencepiece.bpe.model and tokenizer.json of a model trained on ``lines``."""
    folder.mkdir(parents=True, exist_ok=True)
    model = spm_model(lines)
    (folder / "sentencepiece.bpe.model").write_bytes(model)
    (folder / "tokenizer.json").write_text(xlmr_tokenizer_json(model), encoding="utf-8")
    return folder
