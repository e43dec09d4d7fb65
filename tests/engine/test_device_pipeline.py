"""The device pipeline (P15): the matcher graph against a float64 reference, and DevicePipeline
(IO-bound encoder states + matcher graph) against the host path (Encoder.embed + greedy_prf) on
the CPU provider, over real newstest2021 pairs."""
import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import onnxruntime as ort

from mtscore.engine.encoder.matcher_graph import INPUTS, PAD_BIAS, host_rules, matcher_model
from mtscore.kernels._greedy import greedy_prf
from tests.conftest import data_dir


def _reference(E, lens, woff, w, hyp, ref, cp, cr):
    """numpy float64 greedy matching (bert_score semantics, greedy_prf's host rules)."""
    out = np.zeros((len(hyp), 3))
    En = E.astype(np.float64)
    En = En / np.sqrt((En * En).sum(1))[:, None]
    for p, (h, r) in enumerate(zip(hyp, ref)):
        H = En[woff[h]:woff[h] + lens[h]]
        R = En[woff[r]:woff[r] + lens[r]]
        sim = H @ R.T
        wp = np.maximum(sim.max(1), 0.0 if cp[p] else -np.inf)
        wr = np.maximum(sim.max(0), 0.0 if cr[p] else -np.inf)
        hw, rw = w[woff[h]:woff[h] + lens[h]], w[woff[r]:woff[r] + lens[r]]
        with np.errstate(invalid="ignore", divide="ignore"):
            P, R_ = (wp * hw).sum() / hw.sum(), (wr * rw).sum() / rw.sum()
            F = 2 * P * R_ / (P + R_)
        if lens[h] == 2 or lens[r] == 2:
            P = R_ = 0.0
        out[p] = P, R_, (0.0 if np.isnan(F) else F)
    return out


def _random_case(seed=0, n_sent=12, n_pairs=40, dim=16):
    rng = np.random.default_rng(seed)
    lens = rng.integers(3, 11, n_sent).astype(np.int64)
    lens[3] = 2                                   # an empty sentence ([CLS][SEP])
    woff = np.zeros(n_sent + 1, dtype=np.int64)
    np.cumsum(lens, out=woff[1:])
    E = rng.standard_normal((int(woff[-1]), dim)).astype(np.float32)
    w = rng.uniform(0.1, 3.0, int(woff[-1]))
    w[woff[5]:woff[6]] = 0.0                      # all-zero weights: P is 0/0 = NaN, F -> 0
    w[woff[7]] = 0.0                              # one zero weight (a special token)
    hyp = rng.integers(0, n_sent, n_pairs).astype(np.int64)
    ref = rng.integers(0, n_sent, n_pairs).astype(np.int64)
    hyp[:4] = [3, 5, 7, 0]
    ref[:4] = [1, 2, 5, 3]
    cp = rng.integers(0, 2, n_pairs).astype(np.uint8)
    cr = rng.integers(0, 2, n_pairs).astype(np.uint8)
    return E, lens, woff, w, hyp, ref, cp, cr


def test_matcher_graph_equals_float64_reference():
    E, lens, woff, w, hyp, ref, cp, cr = _random_case()
    sess = ort.InferenceSession(matcher_model(), providers=["CPUExecutionProvider"])

    def side(s):
        L = int(lens[s].max())
        ar = np.arange(L)
        real = ar[None, :] < lens[s][:, None]
        rows = np.where(real, woff[s][:, None] + ar, 0)
        return (rows, np.where(real, w[rows], 0).astype(np.float32),
                np.where(real, 0, PAD_BIAS).astype(np.float32))

    hidx, hw, hb = side(hyp)
    ridx, rw, rb = side(ref)
    floor = lambda c: np.where(c != 0, 0, PAD_BIAS).astype(np.float32)  # noqa: E731
    feeds = dict(zip(INPUTS, [E, hidx, ridx, hw, rw, hb, rb, floor(cp), floor(cr)]))
    P, R, F = sess.run(None, feeds)
    got = host_rules(np.stack([P, R, F], 1), lens[hyp], lens[ref])
    want = _reference(E, lens, woff, w, hyp, ref, cp, cr)
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)
    assert np.isnan(got[1, 0])
    assert got[1, 2] == 0.0
    assert (got[[0, 3], :2] == 0).all()                    # empty sentence rule


def test_matcher_model_is_cached_and_valid():
    import onnx

    m = matcher_model()
    assert m is matcher_model()
    onnx.checker.check_model(onnx.load_from_string(m), full_check=True)


# ---- DevicePipeline on the packaged MiniLM ------------------------------------------------------
@pytest.fixture(scope="module")
def encoder():
    from mtscore.engine.encoder import EncoderError, load_encoder

    try:
        enc = load_encoder(None, 6)
    except EncoderError as e:
        pytest.skip(f"default BERTScore model not usable: {e}")
    enc.batch_tokens = 512                           # many encoder batches
    return enc


def test_match_on_synthetic_states_equals_greedy_prf(encoder):
    from mtscore.engine.encoder.device_pipeline import DevicePipeline, DeviceStates

    E, lens, woff, w, hyp, ref, cp, cr = _random_case(seed=1, n_sent=30, n_pairs=200, dim=16)
    # states laid out with a gap row between sentences, like the encoder's padded batch rows
    row0 = woff[:-1] + np.arange(len(lens))
    buf = np.zeros((int(row0[-1] + lens[-1] + 1), E.shape[1]), dtype=np.float32)
    for s in range(len(lens)):
        buf[row0[s]:row0[s] + lens[s]] = E[woff[s]:woff[s + 1]]
    states = DeviceStates(ort.OrtValue.ortvalue_from_numpy(buf), row0, lens, E.shape[1])
    pipe = DevicePipeline(encoder, pair_floats=600)
    assert len(pipe.pair_batches(lens[hyp], lens[ref], E.shape[1])) > 10
    got = pipe.match(states, w, hyp, ref, cp, cr)
    En = E / np.sqrt(np.einsum("ij,ij->i", E, E, dtype=np.float32))[:, None]
    want = greedy_prf(En, woff, w, En, woff, w, hyp, ref, cp, cr)
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)
    per_sentence = [w[woff[s]:woff[s + 1]] for s in range(len(lens))]
    np.testing.assert_array_equal(pipe.match(states, per_sentence, hyp, ref, cp, cr), got)


@pytest.fixture(scope="module")
def wmt_pairs():
    d = data_dir() / "wmt21-news-systems" / "txt"
    refp = d / "references" / "newstest2021.de-en.ref.A.en"
    systems = ["Facebook-AI", "Online-A", "Borderline"]
    hyps = [d / "system-outputs" / f"newstest2021.de-en.hyp.{s}.en" for s in systems]
    if not refp.is_file() or not all(h.is_file() for h in hyps):
        pytest.skip(f"newstest2021 de-en texts not found under {d} (set MTSCORE_DATA)")
    n = 100
    refs = refp.read_text(encoding="utf-8").splitlines()[:n]
    cands = [line for h in hyps for line in h.read_text(encoding="utf-8").splitlines()[:n]]
    cands[7] = ""                                    # an empty candidate: 2 tokens
    texts = list(dict.fromkeys([c.strip() for c in cands] + [r.strip() for r in refs]))
    pos = {t: i for i, t in enumerate(texts)}
    hyp = np.array([pos[c.strip()] for c in cands], dtype=np.int64)
    ref = np.array([pos[refs[i % n].strip()] for i in range(len(cands))], dtype=np.int64)
    return texts, hyp, ref


@pytest.fixture(scope="module")
def both_paths(encoder, wmt_pairs):
    from mtscore.engine.encoder.device_pipeline import DevicePipeline

    texts, _hyp, _ref = wmt_pairs
    ids = encoder.tokenizer.encode(texts)
    raw, off = encoder.embed(ids, normalize=False)
    pipe = DevicePipeline(encoder, pair_floats=1 << 16)   # many pair batches
    calls = []
    states = pipe.embed(ids, progress=lambda done, total: calls.append((done, total)))
    return ids, raw, off, pipe, states, calls


def _idf(ids, vocab):
    df = np.zeros(vocab)
    for x in ids:
        df[np.unique(x)] += 1
    return np.log((len(ids) + 1) / (df + 1))


@pytest.mark.parametrize("weighting", ["idf", "special"])
def test_pipeline_equals_host_path(encoder, wmt_pairs, both_paths, weighting):
    _texts, hyp, ref = wmt_pairs
    ids, raw, off, pipe, states, _ = both_paths
    flat = np.concatenate(ids)
    table = (encoder.tokenizer.special_weights() if weighting == "special"
             else _idf(ids, len(encoder.tokenizer.special_weights())))
    w = np.ascontiguousarray(table[flat], dtype=np.float64)
    n = len(hyp)
    cp = (np.arange(n) % 4 == 1).astype(np.uint8)
    cr = (np.arange(n) % 3 == 2).astype(np.uint8)
    emb = raw / np.sqrt(np.einsum("ij,ij->i", raw, raw, dtype=np.float32))[:, None]
    want = greedy_prf(emb, off, w, emb, off, w, hyp, ref, cp, cr)
    assert len(pipe.pair_batches(states.length[hyp], states.length[ref], states.hidden)) > 5
    got = pipe.match(states, w, hyp, ref, cp, cr)
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)
    assert (got[7, :2] == 0).all()


def test_buffer_rows_are_the_host_states(encoder, both_paths):
    ids, raw, off, _pipe, states, calls = both_paths
    assert len(encoder.batches(states.length)) > 5
    assert states.hidden == raw.shape[1]
    host = states.to_host()
    for s in range(len(ids)):
        a = states.row0[s]
        np.testing.assert_allclose(host[a:a + states.length[s]], raw[off[s]:off[s + 1]], atol=1e-6, rtol=0)
    assert calls[-1] == (len(ids), len(ids))
    assert len(calls) == len(encoder.batches(states.length))


def test_pipeline_edge_cases(encoder):
    from mtscore.engine.encoder.device_pipeline import DevicePipeline

    pipe = DevicePipeline(encoder)
    states = pipe.embed([])
    assert states.row0.shape == (0,)
    e = np.zeros(0, dtype=np.int64)
    assert pipe.match(states, np.zeros(0), e, e, e.astype(np.uint8), e.astype(np.uint8)).shape == (0, 3)
    with pytest.raises(ValueError, match="pair_floats"):
        DevicePipeline(encoder, pair_floats=0)
    ids = encoder.tokenizer.encode(["a b c", "d"])
    st = pipe.embed(ids)
    with pytest.raises(ValueError, match="weights"):
        pipe.match(st, np.ones(3), np.array([0]), np.array([1]), np.zeros(1, np.uint8), np.zeros(1, np.uint8))
