"""COMET's sentence-embedding memo (CometScorer ``embedding_cache``, scorer.py) on the golden models
of tests/golden/comet: a second system scored against the same sources and references encodes only
its own new translations (the sequences ``embed_ids`` receives are counted and compared); its scores
equal a fresh scorer's bit for bit, with every pooling (an embedding is the same bytes alone and in a
batch padded to a longer length: avg pooling with and without the layer norm, 1 and 2 threads);
the memo's bound is least-recently-used and 0 disables it; ``embed`` (MBR) and unified_metric do not
use it; the COMET metric reuses it across two ``corpus_stats`` calls (two systems)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from mtscore.engine.comet.graph import OUTPUT
from mtscore.engine.comet.metric import COMET
from mtscore.engine.comet.scorer import DEFAULT_EMBEDDING_CACHE, CometInputError, CometScorer, load_comet
from tests.comet_golden import ENCODER, GOLDEN, golden, golden_inputs

N = 60  # segments used (the golden file has 313)

#: the golden models with a memo: avg pooling (without and with the layer norm), max, cls, default
MODELS = ("regression-sparsemax", "regression-softmax-norm", "regression-max-norm", "referenceless-cls",
          "referenceless-default-layer2")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    golden()
    return tmp_path_factory.mktemp("comet-cache")


def _load(name: str, cache: Path, **kw) -> CometScorer:
    """A fresh scorer (a warm load: the export and the head come from the module's cache)."""
    return load_comet(GOLDEN / "models" / name, encoder=ENCODER, cache_dir=cache, **{"threads": 1, **kw})


@pytest.fixture
def encoded(monkeypatch) -> list[list[tuple[int, ...]]]:
    """The token-id sequences of each ``embed_ids`` call, in order."""
    calls: list[list[tuple[int, ...]]] = []
    real = CometScorer.embed_ids

    def spy(self, ids, progress=None):
        calls.append([tuple(int(x) for x in a) for a in ids])
        return real(self, ids, progress)

    monkeypatch.setattr(CometScorer, "embed_ids", spy)
    return calls


def _systems() -> tuple[dict[str, list[str]], list[str]]:
    """The inputs and a system A: each segment's translation is the next segment's reference
    (real sentences of other lengths, none equal to the golden translations of system B)."""
    d = golden_inputs(N)
    return d, [d["ref"][(i + 1) % N] for i in range(N)]


def _ids(s: CometScorer, texts) -> set[tuple[int, ...]]:
    return {tuple(int(x) for x in a) for a in s.tokenizer.encode(sorted(set(texts)))}


@pytest.mark.parametrize("name", ["regression-sparsemax", "referenceless-cls"])
def test_second_system_encodes_only_its_new_translations(name, cache, encoded):
    d, sys_a = _systems()
    s = _load(name, cache)
    refs = d["ref"] if s.uses_references else None
    s.score(sys_a, sources=d["src"], references=refs)
    first = [*sys_a, *d["src"], *(refs or [])]
    assert len(encoded) == 1
    assert set(encoded[0]) == _ids(s, first)
    assert len(encoded[0]) == len(set(first))
    s.score(d["mt"], sources=d["src"], references=refs)
    new = set(d["mt"]) - set(first)
    assert 0 < len(new) < len(set(d["mt"]) | set(d["src"]))
    # one encoder call for all the misses of the second call: system B's new translations only
    assert len(encoded) == 2
    assert len(encoded[1]) == len(new)
    assert set(encoded[1]) == _ids(s, new)
    # a third call with nothing new encodes nothing
    s.score(d["mt"][:7], sources=d["src"][:7], references=None if refs is None else refs[:7])
    assert len(encoded) == 2


@pytest.mark.parametrize("name", MODELS)
def test_scores_after_another_system_equal_a_fresh_scorers(name, cache):
    d, sys_a = _systems()
    s, fresh = _load(name, cache), _load(name, cache)
    refs = d["ref"] if s.uses_references else None
    a = s.score(sys_a, sources=d["src"], references=refs)
    b = s.score(d["mt"], sources=d["src"], references=refs)
    b_alone = fresh.score(d["mt"], sources=d["src"], references=refs)
    assert float(np.ptp(b)) > 1e-3
    assert not np.allclose(a, b)
    np.testing.assert_array_equal(b, b_alone)  # bit for bit: the memo changes no score
    # system A itself is unchanged by what came after it
    np.testing.assert_allclose(s.score(sys_a, sources=d["src"], references=refs), a, rtol=0, atol=0)



@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", ["regression-sparsemax", "regression-softmax-norm"])  # avg; avg + layer norm
def test_an_embedding_is_the_same_bytes_alone_and_in_a_padded_batch(name, threads, cache):
    d = golden_inputs(N)
    s = _load(name, cache, threads=threads)
    assert s.spec.pool == "avg"
    assert s.spec.layer_norm == (name == "regression-softmax-norm")
    ids = s.tokenizer.encode(d["src"][:15] + d["ref"][:15])
    alone = np.stack([s.embed_ids([a])[0] for a in ids])
    pad, T = s.tokenizer.pad_id, max(map(len, ids)) + 9  # past the longest sentence too
    # the session itself, each sentence with a full-length row of real ids padded to T
    filler = np.r_[ids[0][:1], np.full(T - 2, 5, np.int64), ids[0][-1:]]
    for i, a in enumerate(ids):
        x = np.full((2, T), pad, np.int64)
        m = np.zeros((2, T), np.int64)
        x[0, :len(a)], x[1] = a, filler
        m[0, :len(a)], m[1] = 1, 1
        (got,) = s.session.session.run([OUTPUT], {"input_ids": x, "attention_mask": m})
        assert len(a) < T
        np.testing.assert_array_equal(got[0].view(np.uint32), alone[i].view(np.uint32))
    # embed_ids: length-sorted batches, each padded to its longest sentence
    together = s.embed_ids(ids)
    assert len({len(a) for a in ids}) > 5
    np.testing.assert_array_equal(together.view(np.uint32), alone.view(np.uint32))

def test_score_references_fills_the_memo_and_embed_leaves_it(cache, encoded):
    d, sys_a = _systems()
    s = _load("regression-max-norm", cache)
    other = d["ref"][2:] + d["ref"][:2]
    two = s.score_references(sys_a, d["src"], [d["ref"], other])
    n = len(set(sys_a) | set(d["src"]) | set(d["ref"]) | set(other))
    assert len(encoded) == 1
    assert len(encoded[0]) == n == s.cached_embeddings
    # embed() (MBR) neither reads nor fills the memo: it encodes its texts, the memo is as it was
    s.embed([d["src"][0], d["ref"][5], d["src"][0], "not scored before"])
    assert len(encoded) == 2
    assert len(encoded[1]) == 3
    assert s.cached_embeddings == n
    # a score() against one of the streams encodes nothing and gives that stream's row
    np.testing.assert_array_equal(s.score(sys_a, sources=d["src"], references=other), two[1])
    assert len(encoded) == 2


def test_bound_keeps_the_least_recently_used_out(cache, encoded):
    s = _load("referenceless-cls", cache, embedding_cache=3)
    alone = _load("referenceless-cls", cache, embedding_cache=0)
    t = ["one", "two two", "three three three", "four", "five five"]

    def run(hyps: list[int], srcs: list[int]) -> int:
        """Sequences encoded by scoring t[hyps] against the sources t[srcs]."""
        before = len(encoded)
        h, x = [t[i] for i in hyps], [t[i] for i in srcs]
        got = s.score(h, sources=x)
        np.testing.assert_array_equal(got, alone.score(h, sources=x))  # cls pooling: bit for bit
        return sum(len(c) for c in encoded[before:]) - len(set(h) | set(x))  # less the fresh scorer's

    assert run([0, 1, 2], [3, 4, 4]) == 5
    assert s.cached_embeddings == 3
    assert run([3], [2]) == 0                        # t3 and t2 used: t4 the least recently used
    assert run([0], [2]) == 1
    assert s.cached_embeddings == 3
    assert run([2], [3]) == 0
    assert run([0], [4]) == 1


def test_zero_disables_the_memo(cache, encoded):
    d, _ = _systems()
    s = _load("regression-sparsemax", cache, embedding_cache=0)
    assert s.embedding_cache == 0
    one = s.score(d["mt"], sources=d["src"], references=d["ref"])
    two = s.score(d["mt"], sources=d["src"], references=d["ref"])
    n = len(set(d["mt"]) | set(d["src"]) | set(d["ref"]))
    assert [len(c) for c in encoded] == [n, n]
    assert s.cached_embeddings == 0
    np.testing.assert_array_equal(one, two)


def test_default_size_and_bad_values(cache):
    assert DEFAULT_EMBEDDING_CACHE == 65536
    assert _load("referenceless-cls", cache).embedding_cache == 65536
    for bad in (-1, True, 2.0, "3"):
        with pytest.raises(CometInputError, match=rf"^embedding_cache: {bad!r}; expected a number"):
            _load("referenceless-cls", cache, embedding_cache=bad)


def test_unified_metric_keeps_no_memo(cache, encoded):
    d, _ = _systems()
    s = _load("unified-kiwi", cache)
    one = s.score(d["mt"], sources=d["src"])
    two = s.score(d["mt"], sources=d["src"])
    pairs = len(set(zip(d["mt"], d["src"])))
    # the joint <s> mt </s></s> src </s> sequences, all encoded again by the second call
    assert [len(c) for c in encoded] == [pairs, pairs]
    assert s.cached_embeddings == 0
    np.testing.assert_array_equal(one, two)


def test_comet_metric_reuses_embeddings_across_systems(cache, encoded):
    d, sys_a = _systems()
    m = COMET(scorer=_load("regression-sparsemax", cache), sources=d["src"])
    m.corpus_stats(sys_a, [d["ref"]])
    b = m.corpus_stats(d["mt"], [d["ref"]])
    new = set(d["mt"]) - set(sys_a) - set(d["src"]) - set(d["ref"])
    assert [len(c) for c in encoded] == [len(set(sys_a) | set(d["src"]) | set(d["ref"])), len(new)]
    alone = COMET(scorer=_load("regression-sparsemax", cache), sources=d["src"]).corpus_stats(d["mt"], [d["ref"]])
    np.testing.assert_array_equal(b, alone)
    np.testing.assert_allclose(m.scores_from_stats(b), golden()["models"]["regression-sparsemax"]["scores"][:N],
                               rtol=0, atol=1e-5)
