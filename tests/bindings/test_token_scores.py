"""Id mode and text mode against sacrebleu 2.6.0, bit for bit.

Id mode: sacrebleu on the ids written as space-separated numbers (BLEU ``tokenize="none"``);
real newstest2021 en-de text turned into ids by a word vocabulary built here (ids spread up to
2**31 - 1), and hypothesis-generated id lists. Text mode: ids from real tokenizers (the packaged
MiniLM WordPiece ``tokenizer.json``, a SentencePiece model trained here, a list of pieces),
decoded with the vocabulary's decoder, against sacrebleu on that decoded text.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtscore.bindings.decoder.token_scores import (
    decode_ids,
    id_corpus_score,
    id_sentence_scores,
    id_stats,
    text_corpus_score,
    text_sentence_scores,
)
from mtscore.engine.metrics.base import MissingReferenceError, MissingReferenceWarning
from mtscore.engine.metrics.bleu import BLEU
from mtscore.engine.token_ids import MAX_ID, TokenIds

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu (test extra) not installed")

N_SEG = 150  # newstest2021 segments per check (sacrebleu's Python is the slow side)


def joined(seqs):
    return [" ".join(map(str, s)) for s in seqs]


@pytest.fixture(scope="module")
def ende():
    """(hyps, [ref streams]) of newstest2021 en-de (first system), first N_SEG segments."""
    from wmt21 import load_pair, pairs

    if "newstest2021.en-de" not in pairs():
        pytest.skip("newstest2021.en-de not in MTSCORE_DATA")
    refs, systems, _ = load_pair("newstest2021.en-de")
    hyps = next(iter(systems.values()))
    return hyps[:N_SEG], [r[:N_SEG] for r in refs]


@pytest.fixture(scope="module")
def ende_ids(ende):
    """The same segments as word-id lists (vocabulary built here; ids spread to 2**31 - 1)."""
    hyps, refs = ende
    vocab: dict = {}
    rng = np.random.default_rng(7)

    def enc(s):
        out = []
        for w in s.split():
            if w not in vocab:
                vocab[w] = int(rng.integers(0, MAX_ID + 1)) if len(vocab) % 2 else len(vocab)
            out.append(vocab[w])
        return out

    return [enc(h) for h in hyps], [[enc(r) for r in st_] for st_ in refs]


#: sentence BLEU by name uses effective order unless the options say otherwise (P14: as
#: sacrebleu's sentence mode); the oracle is configured the same way
SENTENCE = {"effective_order": True}

BLEU_CONFIGS = [
    dict(),
    dict(effective_order=True),
    dict(smooth_method="floor", smooth_value=0.3),
    dict(smooth_method="add-k", smooth_value=2, effective_order=True),
    dict(smooth_method="none"),
    dict(max_ngram_order=2),
    dict(max_ngram_order=6, smooth_method="exp", effective_order=True),
]


@pytest.mark.parametrize("cfg", BLEU_CONFIGS, ids=str)
def test_bleu_ids_equal_sacrebleu_one_reference(ende_ids, cfg):
    hyps, refs = ende_ids
    ours = id_sentence_scores(hyps, refs[0], "bleu", **cfg)
    sb = sacrebleu.BLEU(tokenize="none", **{**SENTENCE, **cfg})
    want = [sb.sentence_score(h, [r]).score for h, r in zip(joined(hyps), joined(refs[0]))]
    assert ours.tolist() == want
    corpus = id_corpus_score(hyps, refs[0], "bleu", **cfg)
    assert corpus.score == sb.corpus_score(joined(hyps), [joined(refs[0])]).score


def ragged(refs, n):
    """Hypothesis i gets 1 + i % K references (R flat, CSR groups) and sacrebleu's per-segment
    lists / None-padded streams."""
    k = len(refs)
    flat, groups, per_seg = [], [0], []
    for i in range(n):
        mine = [refs[j][i] for j in range(1 + i % k)]
        flat += mine
        groups.append(len(flat))
        per_seg.append(mine)
    streams = [[seg[j] if j < len(seg) else None for seg in per_seg] for j in range(k)]
    return flat, np.array(groups, dtype=np.int64), per_seg, streams


@pytest.mark.parametrize("cfg", BLEU_CONFIGS[:4], ids=str)
def test_bleu_ids_ragged_references(ende_ids, cfg):
    hyps, refs = ende_ids
    flat, groups, per_seg, streams = ragged(refs, len(hyps))
    assert len(refs) >= 2
    ours = id_sentence_scores(hyps, flat, "bleu", ref_groups=groups, **cfg)
    sb = sacrebleu.BLEU(tokenize="none", **{**SENTENCE, **cfg})
    want = [sb.sentence_score(h, joined(rs)).score for h, rs in zip(joined(hyps), per_seg)]
    assert ours.tolist() == want
    sb_streams = [[None if x is None else " ".join(map(str, x)) for x in s] for s in streams]
    assert id_corpus_score(hyps, flat, "bleu", ref_groups=groups, **cfg).score == \
        sb.corpus_score(joined(hyps), sb_streams).score


@pytest.mark.parametrize("cfg", [dict(), dict(normalized=True), dict(case_sensitive=True),
                                 dict(no_punct=True, asian_support=True)], ids=str)
def test_ter_ids_equal_sacrebleu(ende_ids, cfg):
    hyps, refs = ende_ids
    hyps, refs = hyps[:60], [r[:60] for r in refs]
    flat, groups, per_seg, _ = ragged(refs, len(hyps))
    sb = sacrebleu.TER(**cfg)
    ours = id_sentence_scores(hyps, refs[0], "ter", **cfg)
    assert ours.tolist() == [sb.sentence_score(h, [r]).score for h, r in zip(joined(hyps), joined(refs[0]))]
    ours = id_sentence_scores(hyps, flat, "ter", ref_groups=groups, **cfg)
    assert ours.tolist() == [sb.sentence_score(h, joined(rs)).score for h, rs in zip(joined(hyps), per_seg)]
    assert id_corpus_score(hyps, refs[0], "ter", **cfg).score == \
        sb.corpus_score(joined(hyps), [joined(refs[0])]).score


IDS = st.lists(st.one_of(st.integers(0, 6), st.integers(MAX_ID - 2, MAX_ID)), max_size=14)


@settings(max_examples=60)
@given(data=st.data())
def test_generated_ids_equal_sacrebleu(data):
    n = data.draw(st.integers(1, 5), label="n")
    hyps = data.draw(st.lists(IDS, min_size=n, max_size=n), label="hyps")
    counts = data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n), label="k")
    per_seg = [data.draw(st.lists(IDS, min_size=c, max_size=c), label="refs") for c in counts]
    flat = [r for rs in per_seg for r in rs]
    groups = np.concatenate([[0], np.cumsum(counts)])
    cfg = data.draw(st.sampled_from(BLEU_CONFIGS), label="cfg")
    sb = sacrebleu.BLEU(tokenize="none", **{**SENTENCE, **cfg})
    want = [sb.sentence_score(h, joined(rs)).score for h, rs in zip(joined(hyps), per_seg)]
    assert id_sentence_scores(hyps, flat, "bleu", ref_groups=groups, **cfg).tolist() == want
    ter = sacrebleu.TER()
    want = [ter.sentence_score(h, joined(rs)).score for h, rs in zip(joined(hyps), per_seg)]
    assert id_sentence_scores(hyps, flat, "ter", ref_groups=groups).tolist() == want


class ArrayOnly:
    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None, copy=None):
        return self._a


class DlpackOnly:
    def __init__(self, a):
        self._a = np.ascontiguousarray(a)

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def _padded(seqs, pad=-1):
    a = np.full((len(seqs), max(map(len, seqs)) + 1), pad, dtype=np.int64)
    for i, s in enumerate(seqs):
        a[i, :len(s)] = s
    return a


@pytest.mark.parametrize("metric", ["bleu", "ter"])
def test_every_input_form_gives_the_same_scores(ende_ids, metric):
    pa = pytest.importorskip("pyarrow", reason="pyarrow not installed")
    hyps, refs = ende_ids
    hyps, ref = hyps[:40], refs[0][:40]
    want = id_sentence_scores(hyps, ref, metric)
    hl, rl = [len(s) for s in hyps], [len(s) for s in ref]
    hp, rp = _padded(hyps), _padded(ref)
    forms = {
        "tuples": dict(hyps=[tuple(s) for s in hyps], refs=[tuple(s) for s in ref]),
        "csr": dict(hyps=TokenIds.from_lengths([x for s in hyps for x in s], hl),
                    refs=TokenIds.from_lengths([x for s in ref for x in s], rl)),
        "padded+lengths": dict(hyps=hp, refs=rp, hyp_lengths=hl, ref_lengths=rl),
        "padded+pad_id": dict(hyps=hp, refs=rp, pad_id=-1),
        "pyarrow": dict(hyps=pa.array(hyps), refs=pa.chunked_array([pa.array(ref[:9]), pa.array(ref[9:])])),
        "__array__": dict(hyps=ArrayOnly(hp), refs=ArrayOnly(rp), pad_id=-1),
        "__dlpack__": dict(hyps=DlpackOnly(hp), refs=DlpackOnly(rp), hyp_lengths=hl, ref_lengths=rl),
    }
    for name, kw in forms.items():
        got = id_sentence_scores(metric=metric, **kw)
        assert got.tolist() == want.tolist(), name


def test_bleu_object_and_stats_layout(ende_ids):
    hyps, refs = ende_ids
    b = BLEU(tokenize="none", effective_order=True, max_ngram_order=3)
    st_ = id_stats(hyps, refs[0], b)
    assert st_.shape == (len(hyps), 8)
    assert st_.dtype == np.int64
    assert id_sentence_scores(hyps, refs[0], b).tolist() == b.scores_from_stats(st_).tolist()


def test_empty_batch_and_empty_sequences():
    assert id_sentence_scores([], [], "bleu").shape == (0,)
    with pytest.raises(ValueError, match="empty batch"):
        id_corpus_score([], [], "bleu")
    sb = sacrebleu.BLEU(tokenize="none", effective_order=True)
    got = id_sentence_scores([[], [1], []], [[1], [], []], "bleu", effective_order=True)
    assert got.tolist() == [sb.sentence_score(h, [r]).score for h, r in [("", "1"), ("1", ""), ("", "")]]


def test_id_mode_errors():
    with pytest.raises(ValueError, match=r"refs holds 1 sequences but hyps holds 2.*ref_groups="):
        id_sentence_scores([[1], [2]], [[1]])
    with pytest.raises(ValueError, match=r"ref_groups must hold N \+ 1 = 3 offsets"):
        id_sentence_scores([[1], [2]], [[1], [2]], ref_groups=[0, 2])
    with pytest.raises(ValueError, match="ref_groups must start at 0 and end at the number of references"):
        id_sentence_scores([[1], [2]], [[1], [2]], ref_groups=[0, 1, 3])
    with pytest.raises(ValueError, match=r"ref_groups decreases at hypothesis 1 \(2 > 1\)"):
        id_sentence_scores([[1], [2], [3]], [[1], [2]], ref_groups=[0, 2, 1, 2])
    with pytest.raises(ValueError, match="chrF and chrF\\+\\+ work on characters"):
        id_sentence_scores([[1]], [[1]], "chrf")
    with pytest.raises(ValueError, match="tokenize='char'"):
        id_sentence_scores([[1]], [[1]], BLEU(tokenize="char"))
    with pytest.raises(ValueError, match=r"refs\[0\]\[0\] = -2: token ids must be >= 0"):
        id_sentence_scores([[1]], [[-2]])


def test_missing_references_follow_the_policy():
    groups = np.array([0, 1, 1, 2])
    with pytest.raises(MissingReferenceError, match=r"hypothesis 1 .* has no reference"):
        id_sentence_scores([[1], [2], [3]], [[1], [3]], ref_groups=groups)
    for metric in ("bleu", "ter"):
        with pytest.warns(MissingReferenceWarning, match="1 of 3"):
            got = id_sentence_scores([[1], [2], [3]], [[1], [3]], metric, ref_groups=groups,
                                     missing_refs="skip")
        sb = sacrebleu.BLEU(tokenize="none", **SENTENCE) if metric == "bleu" else sacrebleu.TER()
        assert np.isnan(got[1])
        assert got[0] == sb.sentence_score("1", ["1"]).score
        assert got[2] == sb.sentence_score("3", ["3"]).score


# ---- text mode ----------------------------------------------------------------------------
TEXT_METRICS = [("chrf", {}, "CHRF", {}), ("chrf++", {}, "CHRF", {"word_order": 2}),
                ("bleu", {}, "BLEU", {}), ("bleu", {"tokenize": "intl", "effective_order": True}, "BLEU",
                                           {"tokenize": "intl", "effective_order": True}),
                ("ter", {"normalized": True}, "TER", {"normalized": True})]


def _check_text_mode(vocab, hyp_ids, ref_ids, hyp_text, ref_text, n_ter=40):
    for name, opts, sb_name, sb_opts in TEXT_METRICS:
        n = n_ter if name == "ter" else len(hyp_ids)
        sb = getattr(sacrebleu, sb_name)(**sb_opts)
        got = text_sentence_scores(hyp_ids[:n], ref_ids[:n], name, vocab=vocab, **opts)
        want = [sb.sentence_score(h, [r]).score for h, r in zip(hyp_text[:n], ref_text[:n])]
        assert got.tolist() == want, name
        assert text_corpus_score(hyp_ids[:n], ref_ids[:n], name, vocab=vocab, **opts).score == \
            sb.corpus_score(hyp_text[:n], [ref_text[:n]]).score
    # references given as text are used as they are
    got = text_sentence_scores(hyp_ids, ref_text, "chrf", vocab=vocab)
    assert got.tolist() == [sacrebleu.CHRF().sentence_score(h, [r]).score for h, r in zip(hyp_text, ref_text)]


def test_text_mode_tokenizers_json(ende):
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers (extra bertscore) not installed")
    from mtscore.engine.encoder import default_model_dir
    try:
        path = default_model_dir() / "tokenizer.json"
    except Exception as e:  # the packaged model is not installed
        pytest.skip(str(e))
    tok = tokenizers.Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    hyps, refs = ende
    hyp_ids = [e.ids for e in tok.encode_batch(hyps)]
    ref_ids = [e.ids for e in tok.encode_batch(refs[0])]
    hyp_text = tok.decode_batch(hyp_ids, skip_special_tokens=True)
    ref_text = tok.decode_batch(ref_ids, skip_special_tokens=True)
    assert decode_ids(hyp_ids, str(path)) == hyp_text  # the path form loads the same decoder
    _check_text_mode(tok, hyp_ids, ref_ids, hyp_text, ref_text)


def test_text_mode_sentencepiece(ende, tmp_path):
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece (extra spm) not installed")
    hyps, refs = ende
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(refs[0] + hyps), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=400,
                                   minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    hyp_ids, ref_ids = sp.encode(hyps), sp.encode(refs[0])
    hyp_text, ref_text = sp.decode(hyp_ids), sp.decode(ref_ids)
    assert decode_ids(hyp_ids, tmp_path / "m.model") == hyp_text
    _check_text_mode(sp, hyp_ids, ref_ids, hyp_text, ref_text)


def test_text_mode_pieces_rules(ende):
    hyps, refs = ende
    words = sorted({w for s in hyps + refs[0] for w in s.split()})
    index = {w: i + 1 for i, w in enumerate(words)}  # id 0: a special token, skipped
    pieces = ["<s>", *words]
    hyp_ids = [[0] + [index[w] for w in s.split()] for s in hyps]
    ref_ids = [[index[w] for w in s.split()] + [0] for s in refs[0]]
    hyp_text = [" ".join(s.split()) for s in hyps]
    ref_text = [" ".join(s.split()) for s in refs[0]]
    assert decode_ids(hyp_ids, pieces, rule="space", skip_ids=[0]) == hyp_text
    for name, opts, sb_name, sb_opts in TEXT_METRICS[:3]:
        got = text_sentence_scores(hyp_ids, ref_ids, name, vocab=pieces, rule="space", skip_ids=[0], **opts)
        sb = getattr(sacrebleu, sb_name)(**sb_opts)
        assert got.tolist() == [sb.sentence_score(h, [r]).score for h, r in zip(hyp_text, ref_text)]


def test_pieces_rules_and_errors():
    pieces = ["▁the", "▁ca", "t", "##s", "a", "<pad>"]
    assert decode_ids([[0, 1, 2]], pieces, rule="metaspace") == ["the cat"]
    assert decode_ids([[4, 3, 0]], pieces, rule="wordpiece") == ["as ▁the"]
    assert decode_ids([[4, 2, 5]], pieces, rule="concat", skip_ids=[5]) == ["at"]
    with pytest.raises(ValueError, match="needs rule= to say how pieces join"):
        decode_ids([[0]], pieces)
    with pytest.raises(ValueError, match=r"ids\[0\]\[1\] = 9 has no piece \(the vocabulary holds 6\)"):
        decode_ids([[0, 9]], pieces, rule="space")
    with pytest.raises(TypeError, match=r"vocab: expected a tokenizers.Tokenizer"):
        decode_ids([[0]], 42)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        decode_ids([[0]], "/nonexistent/tokenizer.json")


def test_text_mode_ragged_references(ende):
    hyps, refs = ende
    words = sorted({w for s in hyps + [x for r in refs for x in r] for w in s.split()})
    index = {w: i for i, w in enumerate(words)}
    flat, groups, per_seg, _ = ragged(refs, len(hyps))
    hyp_ids = [[index[w] for w in s.split()] for s in hyps]
    flat_ids = [[index[w] for w in s.split()] for s in flat]
    got = text_sentence_scores(hyp_ids, flat_ids, "chrf++", vocab=words, rule="space", ref_groups=groups)
    sb = sacrebleu.CHRF(word_order=2)
    want = [sb.sentence_score(" ".join(h.split()), [" ".join(r.split()) for r in rs]).score
            for h, rs in zip(hyps, per_seg)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert got.tolist() == want
