"""BERTScore: differential tests against the bert_score package (same local MiniLM weights,
num_layers=6) on newstest2021 de-en and en-de, and the greedy kernel's padding quirk (kernel vs
Python twin: tests/kernels/test_kernel_twins.py).

bert_score runs its model forward once per distinct padded batch: the forward is memoised in
this test session (a pure function of the batch), so the plain / idf / rescaled variants cost
one encoding pass."""
import os
from collections import defaultdict

import numpy as np
import pytest
from conftest import require

pytest.importorskip("onnxruntime", reason="BERTScore needs onnxruntime (pip install 'mtscore[bertscore]')")
pytest.importorskip("tokenizers", reason="BERTScore needs tokenizers")


TOL = 1e-5
N_DEEN = 520
N_ENDE = 520
EDGE = [  # (candidate, reference)
    ("", "The reference is here."),
    ("   \t ", "Whitespace-only candidate."),
    ("A long one. " + "word piece tokens keep coming " * 130, "A long reference. " + "tokens " * 600),
    ("Café naïve façade Ünïcödé résumé", "cafe naive facade unicode resume"),
    ("東京で会いましょう。北京欢迎你", "Let us meet in Tokyo."),
    ("Emoji 😀👍🏽 are fine 🎉", "emoji are fine"),
    ("zero\u200bwidth space", "zero width space"),
    ("x", "y"),
    ("A candidate with an empty reference.", ""),
    ("Ja.", "Yes."),
]


def _lines(path, n):
    with open(require(path), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f][:n]


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("bs-cache"))


@pytest.fixture(scope="session")
def pairs(shared_data):
    t = shared_data / "wmt21-news-systems" / "txt"
    de_en_h = _lines(t / "system-outputs" / "newstest2021.de-en.hyp.Facebook-AI.en", N_DEEN)
    de_en_a = _lines(t / "references" / "newstest2021.de-en.ref.A.en", N_DEEN)
    de_en_b = _lines(t / "references" / "newstest2021.de-en.ref.B.en", N_DEEN)
    en_de_h = _lines(t / "system-outputs" / "newstest2021.en-de.hyp.Facebook-AI.de", N_ENDE)
    en_de_a = _lines(t / "references" / "newstest2021.en-de.ref.A.de", N_ENDE)
    cands = de_en_h + en_de_h + [c for c, _ in EDGE]
    refs = de_en_a + en_de_a + [r for _, r in EDGE]
    return {"cands": cands, "refs": refs, "deen": (de_en_h, de_en_a, de_en_b)}


@pytest.fixture(scope="session")
def bert_score_mod(model_dir):
    """bert_score with (1) a memoised model forward and (2) transformers-5 empty-string handling
    restored (bert_score 0.3.13 calls the removed ``build_inputs_with_special_tokens([])``; under
    transformers 4 that returns [CLS][SEP], which is what we substitute)."""
    pytest.importorskip("torch", reason="the bert_score oracle needs torch")
    pytest.importorskip("transformers", reason="the bert_score oracle needs transformers")
    bs = pytest.importorskip("bert_score", reason="pip install bert-score for the differential tests")
    import bert_score.utils as bu
    import torch

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    orig_encode, orig_sent = bu.bert_encode, bu.sent_encode
    memo = {}

    def bert_encode(model, x, attention_mask, all_layers=False):
        # per-sentence memo: rows not seen before go through bert_score's own forward (as one
        # padded sub-batch); bert_score only reads each row's first len(sentence) positions.
        assert not all_layers
        lens = attention_mask.sum(1).tolist()
        keys = [x[i, :L].numpy().tobytes() for i, L in enumerate(lens)]
        todo = [i for i, k in enumerate(keys) if k not in memo]
        if todo:
            T = max(lens[i] for i in todo)
            out = orig_encode(model, x[todo, :T], attention_mask[todo, :T], all_layers)
            for r, i in enumerate(todo):
                memo[keys[i]] = out[r, :lens[i]].clone()
        res = torch.zeros(x.shape[0], x.shape[1], memo[keys[0]].shape[-1])
        for i, k in enumerate(keys):
            res[i, :lens[i]] = memo[k]
        return res

    def sent_encode(tokenizer, sent):
        if sent.strip() == "" and not hasattr(tokenizer, "build_inputs_with_special_tokens"):
            return [tokenizer.cls_token_id, tokenizer.sep_token_id]
        return orig_sent(tokenizer, sent)

    bu.bert_encode, bu.sent_encode = bert_encode, sent_encode
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    yield bs
    bu.bert_encode, bu.sent_encode = orig_encode, orig_sent


def _bs(bs, model_dir, cands, refs, **kw):
    P, R, F = bs.score(cands, refs, model_type=str(model_dir), num_layers=6, device="cpu", nthreads=0,
                       batch_size=64, **kw)
    return P.numpy().astype(np.float64), R.numpy().astype(np.float64), F.numpy().astype(np.float64)


_ENCODER = []


def _ours(cache_dir, **kw):
    """A scorer sharing one encoder whose sentence embeddings are remembered across calls."""
    from mtscore.engine.bertscore import BERTScore

    if not _ENCODER:
        _ENCODER.append(BERTScore(layer=6, cache_dir=cache_dir, progress=False, reuse_embeddings=True).encoder)
    return BERTScore(encoder=_ENCODER[0], progress=False, **kw)


def _check(ours, theirs, what):
    for name, a, b in zip("PRF", (ours.precision, ours.recall, ours.f1), theirs):
        diff = np.abs(a - b)
        assert np.nanmax(diff) < TOL, f"{what} {name}: max |diff| {np.nanmax(diff)} at {int(np.nanargmax(diff))}"
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))


@pytest.fixture(scope="session")
def plain(bert_score_mod, model_dir, pairs, cache_dir):
    theirs = _bs(bert_score_mod, model_dir, pairs["cands"], pairs["refs"])
    ours = _ours(cache_dir).score(pairs["cands"], [pairs["refs"]])
    return ours, theirs


def test_plain_matches_bert_score(plain, pairs):
    ours, theirs = plain
    assert len(ours.f1) == len(pairs["cands"]) >= 1000
    _check(ours, theirs, "plain")
    assert abs(ours.mean_f1 - float(np.mean(theirs[2]))) < 1e-6


def test_edge_cases(plain):
    ours, theirs = plain
    k = len(EDGE)
    f = ours.f1[-k:]
    # empty / whitespace candidates and the empty reference score 0, as in bert_score
    assert f[0] == 0
    assert f[1] == 0
    assert f[8] == 0
    assert ours.precision[-k] == 0
    assert ours.recall[-2] == 0
    assert np.all((f[[2, 3, 4, 5, 6, 7, 9]] > 0) & (f[[2, 3, 4, 5, 6, 7, 9]] <= 1 + 1e-6))
    _check(type(ours)(ours.precision[-k:], ours.recall[-k:], ours.f1[-k:]),
           tuple(t[-k:] for t in theirs), "edge")
    # the long edge pair is cut at 512 tokens on both sides, as bert_score cuts it, and counted
    assert (ours.truncated_candidates, ours.truncated_references, ours.max_length) == (1, 1, 512)


def test_idf_matches_bert_score(bert_score_mod, model_dir, pairs, cache_dir):
    theirs = _bs(bert_score_mod, model_dir, pairs["cands"], pairs["refs"], idf=True)
    ours = _ours(cache_dir, idf=True).score(pairs["cands"], [pairs["refs"]])
    _check(ours, theirs, "idf")


def test_rescaled_with_given_baseline(bert_score_mod, model_dir, pairs, cache_dir, tmp_path):
    base = tmp_path / "minilm.tsv"
    rows = ["LAYER,P,R,F"] + [f"{i},{0.61 + 0.01 * i:.8f},{0.6 + 0.013 * i:.8f},{0.605 + 0.011 * i:.8f}"
                              for i in range(7)]
    base.write_text("\n".join(rows) + "\n")
    theirs = _bs(bert_score_mod, model_dir, pairs["cands"], pairs["refs"], lang="en",
                 rescale_with_baseline=True, baseline_path=str(base))
    ours = _ours(cache_dir, rescale_baseline=str(base)).score(pairs["cands"], [pairs["refs"]])
    _check(ours, theirs, "rescaled")
    theirs = _bs(bert_score_mod, model_dir, pairs["cands"], pairs["refs"], lang="en", idf=True,
                 rescale_with_baseline=True, baseline_path=str(base))
    ours = _ours(cache_dir, rescale_baseline=str(base), idf=True).score(pairs["cands"], [pairs["refs"]])
    _check(ours, theirs, "idf+rescaled")


def test_multi_reference_max_per_metric(bert_score_mod, model_dir, pairs, cache_dir):
    h, a, b = pairs["deen"]
    n = 300
    h, a, b = h[:n], a[:n], b[:n]
    # ragged groups: every 7th segment has only reference A (None in stream B)
    b = [None if i % 7 == 0 else r for i, r in enumerate(b)]
    groups = [[x] if y is None else [x, y] for x, y in zip(a, b)]
    theirs = _bs(bert_score_mod, model_dir, h, groups)
    ours = _ours(cache_dir).score(h, [a, b])
    _check(ours, theirs, "multi-ref")
    theirs = _bs(bert_score_mod, model_dir, h, groups, idf=True)
    ours = _ours(cache_dir, idf=True).score(h, [a, b])
    _check(ours, theirs, "multi-ref idf")


def test_supplied_idf_dict_and_corpus_score(bert_score_mod, model_dir, pairs, cache_dir):
    h, a, _ = pairs["deen"]
    h, a = h[:100], a[:100]
    scorer = _ours(cache_dir)
    table = scorer.idf_weights(a[:50])
    d = defaultdict(lambda: float(np.log(51.0)))
    d.update({i: float(w) for i, w in enumerate(table) if w != np.float32(np.log(51.0))})
    theirs = _bs(bert_score_mod, model_dir, h, a, idf=d)
    ours = _ours(cache_dir, idf=d).score(h, [a])
    _check(ours, theirs, "idf dict")
    # corpus score and additive per-segment stats (for bootstrap / paired tests)
    stats = scorer.corpus_stats(h, [a])
    assert stats.shape == (100, 4)
    sc = scorer.compute_score_from_stats(stats.sum(0))
    r = scorer.score(h, [a])
    assert abs(sc.score - 100 * r.mean_f1) < 1e-9
    assert abs(sc.precision - r.mean_precision) < 1e-12
    cs = scorer.corpus_score(h, [a])
    assert abs(cs.score - 100 * r.mean_f1) < 1e-9
    sig = str(scorer.get_signature())
    assert "layer:6" in sig
    assert "idf:no" in sig
    assert "@53aa5117" in sig


def test_streaming_equals_batch(cache_dir, pairs):
    h, a, b = pairs["deen"]
    h, a, b = h[:150], a[:150], b[:150]
    scorer = _ours(cache_dir, chunk_size=40)
    whole = _ours(cache_dir).score(h, [a, b])
    streamed = np.concatenate(list(scorer.iter_scores(iter(h), [iter(a), iter(b)])))
    np.testing.assert_allclose(streamed[:, 2], whole.f1, atol=1e-6)
    np.testing.assert_allclose(scorer.score(h, [a, b]).f1, whole.f1, atol=1e-6)


def test_baseline_roundtrip_and_compute(cache_dir, tmp_path, pairs):
    from mtscore.engine.bertscore import read_baseline, write_baseline
    from mtscore.engine.bertscore_baseline import compute_baseline

    h, a, _ = pairs["deen"]
    table = compute_baseline(h[:60] + a[:60], layers=[6], cache_dir=cache_dir, threads=1)
    assert table.shape == (7, 3)
    assert np.isnan(table[0]).all()
    assert 0 < table[6, 2] < 1
    f = tmp_path / "b.tsv"
    write_baseline(f, np.nan_to_num(table))
    np.testing.assert_allclose(read_baseline(f, 6), table[6], atol=1e-7)
    with pytest.raises(ValueError, match="no baseline row for layer 9"):
        read_baseline(f, 9)


# ---- the greedy kernel ----------------------------------------------------------------------
def test_greedy_kernel_negative_max_and_quirk():
    from mtscore.kernels._greedy import greedy_prf

    # 3-token sentences whose middle tokens are opposite: the true max is negative, the
    # padded-batch quirk clamps it at 0.
    e = np.array([[1, 0], [0, 1], [1, 0], [1, 0], [0, -1], [1, 0]], dtype=np.float32)
    off = np.array([0, 3, 6], dtype=np.int64)
    w = np.array([0, 1, 0, 0, 1, 0], dtype=np.float64)
    z = np.zeros(1, np.uint8)
    o = np.ones(1, np.uint8)
    h, r = np.array([0], np.int64), np.array([1], np.int64)
    assert greedy_prf(e, off, w, e, off, w, h, r, z, z)[0, 0] == 0.0  # matched to [CLS]-like rows
    e2 = e.copy()
    e2[[0, 2, 3, 5]] = [0, -1]
    e2[4] = [0, -1]
    got = greedy_prf(e2, off, w, e2, off, w, h, r, z, z)
    assert got[0, 0] == -1.0
    assert greedy_prf(e2, off, w, e2, off, w, h, r, o, o)[0, 0] == 0.0
