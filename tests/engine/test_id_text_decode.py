"""Text mode's compiled decoders (``mtscore.engine.piece_bytes`` + ``kernels._detok``) against
the vocabularies' own decoders, string for string, and text-mode metrics against sacrebleu.

Vocabularies are built here from newstest2021 text in five languages (de, zh, ja, ru, en) plus
emoji lines, in seconds: SentencePiece unigram and BPE models (with and without byte fallback,
with ``add_dummy_prefix`` / ``remove_extra_whitespaces`` off), a byte-level BPE trained with
``tokenizers`` (with added tokens, special and not), SentencePiece-style Metaspace BPEs
(``prepend_scheme`` always / first / never), a Llama-style ``Replace + ByteFallback + Fuse +
Strip`` tokenizer (built from the byte-fallback unigram model), a WordPiece
without clean-up; and the packaged MiniLM WordPiece ``tokenizer.json``. Each decodes real
encoded text, the same cut at random points (mid-character for byte pieces), with special ids
inserted, and random ids (uniform, and crowded with byte pieces and specials) exactly as
``Tokenizer.decode_batch(ids, skip_special_tokens=True)`` / ``SentencePieceProcessor.decode``.
A decoder the kernel does not follow (``BPEDecoder``) keeps the library's decoder.
"""
from __future__ import annotations

import numpy as np
import pytest

from mtscore.bindings.decoder.token_scores import text_corpus_score, text_sentence_scores
from mtscore.engine.id_text import load_vocabulary
from mtscore.engine.token_ids import as_token_ids

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu (test extra) not installed")
spm = pytest.importorskip("sentencepiece", reason="sentencepiece (extra spm) not installed")
tokenizers = pytest.importorskip("tokenizers", reason="tokenizers (extra decoder) not installed")

PAIRS = ["newstest2021.en-de", "newstest2021.en-zh", "newstest2021.en-ja", "newstest2021.en-ru",
         "newstest2021.de-en"]
N_TRAIN, N_EVAL = 250, 24  # segments per pair to train on / to check
EMOJI = ["Emoji 😀🎉 und 👩‍👩‍👧 Familie ❤️ 🇩🇪!", "日本語と中文😀混合テスト 🍣🍜", "  leading and   inner  spaces ",
         "▁ a literal U+2581 and <0x41> and <s> [CLS]", "Ελληνικά · עברית · العربية 🐍"]


@pytest.fixture(scope="module")
def wmt_text():
    """{"train": lines, "hyps": [...], "refs": [...]}: newstest2021 system output and reference
    segments of five target languages plus emoji lines."""
    from wmt21 import load_pair, pairs

    have = [p for p in PAIRS if p in pairs()]
    if len(have) < len(PAIRS):
        pytest.skip("newstest2021 en-de/zh/ja/ru, de-en not all in MTSCORE_DATA")
    train, hyps, refs = list(EMOJI), list(EMOJI), list(reversed(EMOJI))
    for p in PAIRS:
        r, systems, _ = load_pair(p)
        h = next(iter(systems.values()))
        train += r[0][:N_TRAIN] + h[:N_TRAIN]
        hyps += h[N_TRAIN:N_TRAIN + N_EVAL]
        refs += r[0][N_TRAIN:N_TRAIN + N_EVAL]
    return {"train": train, "hyps": hyps, "refs": refs}


@pytest.fixture(scope="module")
def corpus_file(wmt_text, tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "train.txt"
    path.write_text("\n".join(wmt_text["train"]), encoding="utf-8")
    return path


class Vocab:
    """A vocabulary with its library decoder, encoder, size and special / byte ids."""

    def __init__(self, obj, decode, encode, size, special, byte_ids=()):
        self.obj, self.decode, self.encode, self.size = obj, decode, encode, size
        self.special, self.byte_ids = list(special), list(byte_ids)


def _spm_vocab(corpus_file, tmp_path_factory, model_type, byte_fallback, extra):
    prefix = tmp_path_factory.mktemp("spm") / "m"
    spm.SentencePieceTrainer.train(
        input=str(corpus_file), model_prefix=str(prefix), vocab_size=4000, model_type=model_type,
        byte_fallback=byte_fallback, character_coverage=0.98 if byte_fallback else 0.9995,
        user_defined_symbols=["<sep>"], minloglevel=2, num_threads=1, **extra)
    sp = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
    n = sp.get_piece_size()
    return Vocab(sp, sp.decode, sp.encode, n,
                 [i for i in range(n) if sp.is_control(i) or sp.is_unknown(i)],
                 [i for i in range(n) if sp.is_byte(i)])


def _hf_vocab(tok):
    special = sorted(i for i, t in tok.get_added_tokens_decoder().items() if t.special)
    byte_ids = [i for t, i in tok.get_vocab().items() if len(t) == 6 and t.startswith("<0x")]
    return Vocab(tok, lambda ids: tok.decode_batch(ids, skip_special_tokens=True),
                 lambda lines: [e.ids for e in tok.encode_batch(lines)], tok.get_vocab_size(), special,
                 byte_ids)


def _byte_level_bpe(lines):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(lines, trainers.BpeTrainer(
        vocab_size=3000, special_tokens=["<s>", "</s>", "<pad>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_tokens(["🎉party", "<extra>", "Ġspaced"])  # not special: decoded (as UTF-8 or bytes)
    tok.add_special_tokens(["<mask>"])
    return tok


def _metaspace_bpe(lines, scheme):
    from tokenizers import SentencePieceBPETokenizer, decoders

    t = SentencePieceBPETokenizer()
    t.train_from_iterator(lines, vocab_size=3000, special_tokens=["<unk>", "<s>"], show_progress=False)
    tok = t._tokenizer
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme=scheme)
    return tok


def _wordpiece(lines, decoder):
    from tokenizers import BertWordPieceTokenizer

    t = BertWordPieceTokenizer(lowercase=False)
    t.train_from_iterator(lines, vocab_size=3000, show_progress=False)
    tok = t._tokenizer
    tok.decoder = decoder
    return tok


def _llama(sp):
    """A Llama-style tokenizer (what ``transformers``' converter writes for a byte-fallback
    SentencePiece model): Unigram with byte fallback, ``Replace + ByteFallback + Fuse + Strip``."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers

    n = sp.get_piece_size()
    tok = Tokenizer(models.Unigram([(sp.id_to_piece(i), sp.get_score(i)) for i in range(n)],
                                   unk_id=sp.unk_id(), byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"),
                                           normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(sp.id_to_piece(i), normalized=False, special=True)
                            for i in range(n) if sp.is_control(i) or sp.is_unknown(i)])
    return tok


def _minilm():
    from tokenizers import Tokenizer

    from mtscore.engine.encoder import default_model_dir
    try:
        path = default_model_dir() / "tokenizer.json"
    except Exception as e:  # the packaged model is not installed
        pytest.skip(str(e))
    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    return tok


VOCABS = ["spm-unigram", "spm-unigram-bytes", "spm-bpe", "spm-bpe-bytes", "spm-bpe-bytes-no-dummy",
          "spm-unigram-keep-spaces", "hf-bytelevel", "hf-metaspace-always", "hf-metaspace-first",
          "hf-metaspace-never", "hf-llama", "hf-wordpiece-no-cleanup", "minilm", "hf-bpe-decoder"]
COMPILED = set(VOCABS) - {"hf-bpe-decoder"}


@pytest.fixture(scope="module")
def vocabs(corpus_file, tmp_path_factory, wmt_text):
    built = {}
    lines = wmt_text["train"]

    def get(name):
        if name in built:
            return built[name]
        from tokenizers import decoders
        if name.startswith("spm-"):
            model_type = "bpe" if "-bpe" in name else "unigram"
            extra = {}
            if name.endswith("no-dummy"):
                extra["add_dummy_prefix"] = False
            if name.endswith("keep-spaces"):
                extra["remove_extra_whitespaces"] = False
            v = _spm_vocab(corpus_file, tmp_path_factory, model_type, "bytes" in name, extra)
        elif name == "hf-bytelevel":
            v = _hf_vocab(_byte_level_bpe(lines))
        elif name.startswith("hf-metaspace-"):
            v = _hf_vocab(_metaspace_bpe(lines, name.rsplit("-", 1)[1]))
        elif name == "hf-llama":
            v = _hf_vocab(_llama(get("spm-unigram-bytes").obj))
        elif name == "hf-wordpiece-no-cleanup":
            v = _hf_vocab(_wordpiece(lines, decoders.WordPiece(prefix="##", cleanup=False)))
        elif name == "hf-bpe-decoder":
            v = _hf_vocab(_wordpiece(lines, decoders.BPEDecoder(suffix="##")))
        else:
            v = _hf_vocab(_minilm())
        built[name] = v
        return v
    return get


def _id_batches(v, text, rng):
    """Real encoded text; the same cut at random points; with special ids inserted; random ids;
    random ids crowded with byte pieces and specials."""
    real = [list(map(int, x)) for x in v.encode(text)]
    cut = [r[:int(rng.integers(0, len(r) + 1))] for r in real]
    spiced = []
    for r in real:
        r = list(r)
        for _ in range(3):
            if v.special:
                r.insert(int(rng.integers(0, len(r) + 1)), int(rng.choice(v.special)))
        spiced.append(r)
    rand = [list(map(int, rng.integers(0, v.size, int(rng.integers(0, 40))))) for _ in range(500)]
    crowd_pool = np.array(v.byte_ids * 4 + v.special + list(range(min(v.size, 300))), dtype=np.int64)
    crowded = [list(map(int, rng.choice(crowd_pool, int(rng.integers(0, 40))))) for _ in range(500)]
    return {"real": real, "cut": cut, "special": spiced, "random": rand, "crowded": crowded}


@pytest.mark.parametrize("name", VOCABS)
def test_decode_equals_the_library_decoder(name, vocabs, wmt_text):
    v = vocabs(name)
    dec = load_vocabulary(v.obj)
    assert ("(compiled)" in dec.name) == (name in COMPILED), dec.name
    if name in ("hf-llama", "hf-bytelevel") or "bytes" in name:
        assert len(v.byte_ids) == 256 or name == "hf-bytelevel"
    rng = np.random.default_rng(len(name))
    for kind, ids in _id_batches(v, wmt_text["hyps"] + wmt_text["refs"], rng).items():
        got, want = dec.decode(as_token_ids(ids)), list(v.decode(ids))
        bad = [i for i in range(len(ids)) if got[i] != want[i]]
        assert not bad, (kind, ids[bad[0]], got[bad[0]], want[bad[0]])
    if name.startswith("spm-") and v.byte_ids:
        # SentencePiece and tokenizers' ByteFallback replace invalid runs differently
        b = {int(v.obj.id_to_piece(i)[3:5], 16): i for i in v.byte_ids}
        ids = [[b[0xE4], b[0xB8]], [b[0xE4], b[0xB8], b[0xAD]], [b[0xF0], b[0x41]], [b[0xED], b[0xA0], b[0x80]]]
        assert dec.decode(as_token_ids(ids)) == v.decode(ids)


TEXT_METRICS = [("chrf", {}, "CHRF", {}), ("chrf++", {}, "CHRF", {"word_order": 2}),
                ("bleu", {}, "BLEU", {}),
                ("bleu", {"tokenize": "intl", "effective_order": True}, "BLEU",
                 {"tokenize": "intl", "effective_order": True}),
                ("ter", {"normalized": True, "asian_support": True}, "TER",
                 {"normalized": True, "asian_support": True})]


@pytest.mark.parametrize("name", ["spm-unigram-bytes", "spm-bpe", "hf-bytelevel", "hf-llama", "minilm"])
def test_text_mode_metrics_equal_sacrebleu_on_the_decoded_text(name, vocabs, wmt_text):
    v = vocabs(name)
    hyp_ids = [list(map(int, x)) for x in v.encode(wmt_text["hyps"])]
    ref_ids = [list(map(int, x)) for x in v.encode(wmt_text["refs"])]
    rng = np.random.default_rng(7)
    hyp_ids = [h[:int(rng.integers(len(h) // 2, len(h) + 1))] for h in hyp_ids]  # cut: partial chars
    hyp_text, ref_text = list(v.decode(hyp_ids)), list(v.decode(ref_ids))
    for metric, opts, sb_name, sb_opts in TEXT_METRICS:
        n = 30 if metric == "ter" else len(hyp_ids)
        sb = getattr(sacrebleu, sb_name)(**sb_opts)
        # sentence BLEU by name uses effective order unless the options say otherwise (P14)
        sent = getattr(sacrebleu, sb_name)(**({"effective_order": True, **sb_opts} if metric == "bleu" else sb_opts))
        got = text_sentence_scores(hyp_ids[:n], ref_ids[:n], metric, vocab=v.obj, **opts)
        assert got.tolist() == [sent.sentence_score(h, [r]).score for h, r in zip(hyp_text[:n], ref_text[:n])]
        assert text_corpus_score(hyp_ids[:n], ref_ids[:n], metric, vocab=v.obj, **opts).score == \
            sb.corpus_score(hyp_text[:n], [ref_text[:n]]).score


def test_cached_table_follows_changes_to_the_tokenizer(vocabs, wmt_text):
    from tokenizers import Tokenizer, decoders

    tok = Tokenizer.from_str(vocabs("hf-bytelevel").obj.to_str())
    ids = [list(map(int, x)) for x in _hf_vocab(tok).encode(wmt_text["hyps"][:20])]
    lib = _hf_vocab(tok).decode
    assert load_vocabulary(tok).decode(as_token_ids(ids)) == lib(ids)
    word = lib([ids[3][:1]])[0]
    tok.add_special_tokens([tok.id_to_token(ids[3][0])])  # an existing token becomes special
    assert word
    assert lib([ids[3][:1]]) == [""]
    assert load_vocabulary(tok).decode(as_token_ids(ids)) == lib(ids)
    tok.decoder = decoders.Metaspace()
    dec = load_vocabulary(tok)
    assert dec.decode(as_token_ids(ids)) == lib(ids)
    tok.decoder = decoders.BPEDecoder()
    dec = load_vocabulary(tok)
    assert "(compiled)" not in dec.name
    assert dec.decode(as_token_ids(ids)) == lib(ids)


@pytest.mark.parametrize("name", ["spm-bpe", "hf-bytelevel", "hf-bpe-decoder"])
def test_ids_outside_the_vocabulary_are_a_value_error(name, vocabs):
    v = vocabs(name)
    size = v.size if name.startswith("spm") else max(
        [v.obj.get_vocab_size(with_added_tokens=False)] + [i + 1 for i in v.obj.get_added_tokens_decoder()])
    with pytest.raises(ValueError, match=rf"ids\[1\]\[2\] = {size} is not in the .*vocabulary \(size {size}\)"):
        load_vocabulary(v.obj).decode(as_token_ids([[1], [1, 2, size]]))
