"""Scores do not depend on batch size, order or batch mates (to ``INVARIANCE_TOL``; bert_score's
do, through its padding quirk: bert_score issues #165, #197, torchmetrics #2728), and long segments:
truncation is counted and warned about, the opt-in sliding window scores them whole."""
import warnings

import numpy as np
import pytest
from conftest import require
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("onnxruntime", reason="BERTScore needs onnxruntime (pip install 'mtscore[bertscore]')")
pytest.importorskip("tokenizers", reason="BERTScore needs tokenizers")

from mtscore.engine.bertscore import INVARIANCE_TOL, BERTScore, BERTScoreTruncationWarning
from mtscore.engine.encoder.windows import embed_windowed, window_owners, window_starts

N = 32


def _lines(path, n=None):
    with open(require(path), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f][:n]


@pytest.fixture(scope="module")
def texts(shared_data):
    t = shared_data / "wmt21-news-systems" / "txt"
    return {"hyp": _lines(t / "system-outputs" / "newstest2021.de-en.hyp.Facebook-AI.en", 400),
            "a": _lines(t / "references" / "newstest2021.de-en.ref.A.en", 400),
            "b": _lines(t / "references" / "newstest2021.de-en.ref.B.en", 400)}


@pytest.fixture(scope="module")
def mixed(texts):
    """N pairs of very different lengths: single lines, six-line paragraphs, one-word and empty."""
    h, a = texts["hyp"][:N - 8], texts["a"][:N - 8]
    h = h + [" ".join(texts["hyp"][i:i + 6]) for i in range(40, 64, 6)] + ["Yes.", "", "x", "Ok then"]
    a = a + [" ".join(texts["a"][i:i + 6]) for i in range(40, 64, 6)] + ["Ja.", "Nothing.", "y", ""]
    return h, a


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("inv"))


@pytest.fixture(scope="module")
def scorer(cache_dir):
    from mtscore.engine.encoder import EncoderError

    try:
        return BERTScore(layer=6, progress=False, threads=1, cache_dir=cache_dir)
    except EncoderError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def windowed(scorer, cache_dir):
    """A window scorer with its own encoder that remembers embeddings (window pieces included),
    so the long texts are encoded once for all the window tests."""
    return BERTScore(layer=6, progress=False, threads=1, cache_dir=cache_dir,
                     long_inputs="window", window_overlap=128, reuse_embeddings=True)


@pytest.fixture(scope="module")
def reference(scorer, mixed):
    return np.stack(list(scorer.score(mixed[0], [mixed[1]])))  # [3, N]


def _max_diff(r, ref):
    return float(np.max(np.abs(np.stack(list(r)) - ref)))


@pytest.mark.parametrize("batch_size", [1, 2, 5, 16, 64, 256])
def test_batch_size_changes_no_score(scorer, mixed, reference, batch_size):
    s = BERTScore(encoder=scorer.encoder, progress=False, batch_size=batch_size)
    assert _max_diff(s.score(mixed[0], [mixed[1]]), reference) <= INVARIANCE_TOL
    scorer.encoder.max_rows = 128  # the shared encoder back to its default


@pytest.mark.parametrize("batch_tokens", [16, 300, 100_000])
def test_token_budget_changes_no_score(scorer, mixed, reference, batch_tokens):
    enc = scorer.encoder
    enc.batch_tokens = batch_tokens
    try:
        assert _max_diff(scorer.score(mixed[0], [mixed[1]]), reference) <= INVARIANCE_TOL
    finally:
        enc.batch_tokens = 2048


def test_order_and_batch_mates_change_no_score(scorer, mixed, reference):
    h, a = mixed
    perm = np.random.default_rng(7).permutation(len(h))
    r = np.stack(list(scorer.score([h[i] for i in perm], [[a[i] for i in perm]])))
    assert np.max(np.abs(r[:, np.argsort(perm)] - reference)) <= INVARIANCE_TOL
    for i in (0, 25, 28):  # alone, and as the only long segment among short ones
        alone = np.stack(list(scorer.score([h[i]], [[a[i]]])))[:, 0]
        assert np.max(np.abs(alone - reference[:, i])) <= INVARIANCE_TOL
    mates = [i for i in range(len(h)) if i % 3 == 0]
    sub = np.stack(list(scorer.score([h[i] for i in mates], [[a[i] for i in mates]])))
    assert np.max(np.abs(sub - reference[:, mates])) <= INVARIANCE_TOL


# ---- long inputs --------------------------------------------------------------------------------
def _words(lines, n):
    out = []
    for line in lines:
        out.extend(line.split())
        if len(out) >= n:
            break
    assert len(out) >= n, "not enough text for the long pair"
    return out[:n]


@pytest.fixture(scope="module")
def long_pair(texts):
    """2,000-word candidate and reference sharing their first 500 words, with different tails."""
    cand = _words(texts["a"], 2000)
    ref = cand[:500] + _words(texts["hyp"][200:], 1500)
    return " ".join(cand), " ".join(ref)


def test_truncation_warns_with_counts_and_window_scores_the_tails(scorer, windowed, long_pair):
    cand, ref = long_pair
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cut = scorer.score([cand, "A short one."], [[ref, "A short one!"]])
    msgs = [str(w.message) for w in caught if issubclass(w.category, BERTScoreTruncationWarning)]
    assert len(msgs) == 1
    assert "1 candidate(s) and 1 reference(s) longer than the model's 512 tokens" in msgs[0]
    assert (cut.truncated_candidates, cut.truncated_references) == (1, 1)
    assert cut.f1[0] > 0.999  # only the shared first 500 words are seen: the texts look identical
    win = windowed
    with warnings.catch_warnings():
        warnings.simplefilter("error", BERTScoreTruncationWarning)  # nothing is cut: no warning
        whole = win.score([cand, "A short one."], [[ref, "A short one!"]])
    assert whole.n_truncated == 0
    assert "long:window128" in whole.signature
    assert whole.f1[0] < cut.f1[0] - 0.05  # the different tails now count
    assert whole.f1[1] == cut.f1[1]  # a segment that fits is encoded as before, bit for bit
    same = win.score([cand], [[cand]])
    assert abs(same.f1[0] - 1.0) < 1e-6  # identical long texts still score 1


def test_window_with_idf_counts_every_token(windowed, long_pair):
    cand, ref = long_pair
    win = BERTScore(encoder=windowed.encoder, progress=False, long_inputs="window", window_overlap=128, idf=True)
    table = win.idf_weights([ref, "A short one!"])
    tail_ids = win.tokenizer.encode_full([ref])[0][600:]
    assert np.all(table[tail_ids] < np.log(3.0) + 1e-6)  # tail tokens seen in the references
    assert 0 < win.score([cand, "x"], [[ref, "A short one!"]]).f1[0] < 1


def test_window_overlap_is_checked(scorer):
    with pytest.raises(ValueError, match="window_overlap=600"):
        BERTScore(encoder=scorer.encoder, long_inputs="window", window_overlap=600)
    with pytest.raises(ValueError, match="long_inputs='cut'"):
        BERTScore(encoder=scorer.encoder, long_inputs="cut")


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 3000), width=st.integers(2, 600), data=st.data())
def test_window_starts_cover_and_owners_are_central(n, width, data):
    overlap = data.draw(st.integers(0, width - 1))
    starts = window_starts(n, width, overlap)
    assert starts[0] == 0
    assert starts == sorted(set(starts))
    if n <= width:
        assert starts == [0]
        return
    assert starts[-1] == n - width
    assert all(b - a <= width - overlap for a, b in zip(starts, starts[1:]))
    owner = window_owners(n, width, starts)
    s = np.asarray(starts)[owner]
    pos = np.arange(n)
    assert np.all((s <= pos) & (pos < s + width))  # each token lies inside its window
    margin = np.minimum(pos - s, s + width - 1 - pos)
    inner = (pos >= overlap // 2) & (pos < n - overlap // 2)
    assert np.all(margin[inner] >= (overlap - 1) // 2)  # at least ~half the overlap as context


class _FakeEncoder:
    """Embeds token i of a piece as [token id, position in the piece, piece number]."""

    def embed(self, pieces, normalize=False):
        rows = [np.stack([x.astype(np.float32), np.arange(len(x), dtype=np.float32),
                          np.full(len(x), k, np.float32)], 1) for k, x in enumerate(pieces)]
        off = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum([len(x) for x in pieces], out=off[1:])
        return np.concatenate(rows), off


def test_stitching_keeps_every_token_in_order():
    ids = [np.array([101, *range(1000, 1990), 102]), np.array([101, 7, 8, 102])]
    emb, off = embed_windowed(_FakeEncoder(), ids, head=1, tail=1, max_length=512, overlap=100, normalize=False)
    long = emb[off[0]:off[1]]
    assert off.tolist() == [0, 992, 996]
    np.testing.assert_array_equal(long[:, 0], ids[0])  # the stitched sequence is the whole segment
    starts = window_starts(990, 510, 100)
    assert long[0, 2] == 0
    assert long[-1, 2] == len(starts) - 1
    k = long[1:-1, 2].astype(int)
    np.testing.assert_array_equal(long[1:-1, 1], np.arange(990) - np.asarray(starts)[k] + 1)
    np.testing.assert_array_equal(emb[off[1]:off[2], 0], ids[1])


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", " ", "Ünïcödé naïve", "東京で会いましょう", "zero\u200bwidth", "emoji 😀👍🏽", "a\u0301", "\ufeffbom", "x " * 30])


@settings(max_examples=12, deadline=None)
@given(pairs=st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=8), seed=st.integers(0, 2**16),
       batch_size=st.integers(1, 9))
def test_invariance_property_on_adversarial_text(scorer, pairs, seed, batch_size):
    h, a = [p[0] for p in pairs], [p[1] for p in pairs]
    whole = np.stack(list(scorer.score(h, [a])))
    perm = np.random.default_rng(seed).permutation(len(h))
    s = BERTScore(encoder=scorer.encoder, progress=False, batch_size=batch_size)
    try:
        shuffled = np.stack(list(s.score([h[i] for i in perm], [[a[i] for i in perm]])))
        alone = np.stack(list(s.score(h[:1], [a[:1]])))[:, 0]
    finally:
        scorer.encoder.max_rows = 128
    np.testing.assert_array_equal(np.isnan(shuffled[:, np.argsort(perm)]), np.isnan(whole))
    assert np.nanmax(np.abs(shuffled[:, np.argsort(perm)] - whole)) <= INVARIANCE_TOL
    assert np.nanmax(np.abs(alone - whole[:, 0]), initial=0.0) <= INVARIANCE_TOL
