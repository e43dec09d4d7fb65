"""A small XLM-R-style tokenizer for the tests of mtscore.engine.comet.inputs (XLM-R's own files cannot be
downloaded in the test environment): a SentencePiece unigram model (nmt_nfkc, as XLM-R's) trained on a
few hundred lines of the shared WMT21 sources in five scripts, saved as ``sentencepiece.bpe.model``, and a
``tokenizer.json`` laid out as older transformers 4.x releases converted XLM-R's (the kind of file published
with xlm-roberta-large; not checked against the real file here): fairseq's ids (``<s> <pad> </s> <unk>``
= 0..3, the SentencePiece pieces after its first three shifted by one, ``<mask>`` last), the precompiled
charsmap plus the collapse of repeated spaces to one, Metaspace, and ``RobertaProcessing``. (transformers
4.57 converts differently: see mtscore.engine.comet.spm_tokenizer; a tokenizer.json is read as it is.)
sentencepiece and tokenizers (the test extra) build it."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

#: the WMT21 sources whose first lines train the model (Latin, Cyrillic, Han, Kana/Kanji scripts)
TRAIN_FILES = ("newstest2021.en-de.src.en", "newstest2021.de-en.src.de", "newstest2021.ru-en.src.ru",
               "newstest2021.zh-en.src.zh", "newstest2021.ja-en.src.ja")
LINES_PER_FILE = 300
VOCAB_SIZE = 4000

#: texts that stress normalisation, whitespace and special-token handling
ADVERSARIAL = [
    "", " ", "   ", "\t", "\n", "  a  b  ", "\t x\ny \r\n z",
    "e\u0301 \u00c5 \u0041\u030a \u1e9b\u0323",           # combining marks, precomposed and not
    "👍🏽 family 👨‍👩‍👧 🇩🇪 ☕️",                          # emoji: modifiers, ZWJ sequences, flags
    "שלום עולם", "مرحبا بالعالم ١٢٣", "\u202eabc\u202c \u200fx",  # RTL text and bidi controls
    "a\u200bb", "\u200d", "\ufeffBOM", "a\u00adb",          # zero-width, BOM, soft hyphen
    "a\x00b", "\x07bell", "a\x1fb\x7f", "\x85next",         # control characters
    "<s>", "a </s> b", "x <pad> y", "<pad>", "<mask> z", "z<mask>", "<unk>",  # literal special tokens
    "ＡＢＣ１２３ ﬁ ① ㍿ ｶﾀｶﾅ", "Ǆ ß ς İ",                  # NFKC and case oddities
    "日本語のテキスト、句読点。", "中文文本，标点。", "Привет, мир!",
]


def long_lines(lines: list[str]) -> list[str]:
    """Lines of several hundred to a few thousand pieces (joined segments), past the 510 cut."""
    return [" ".join(lines[i:i + k]) for i, k in ((0, 40), (50, 60), (200, 120), (400, 50))]


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
