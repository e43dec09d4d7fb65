"""COMET end to end: mtscore's :func:`load_comet` / :meth:`CometScorer.score` on the six golden models
of tests/golden/comet against unbabel-comet 2.2.7's fp32 ``predict`` scores (golden.json, written by
tests/oracles/comet_oracle.py): every segment within 1e-5, the system score (mean) within 1e-6; the
scores do not depend on ``batch_tokens``, bit for bit; the input checks; and the whole path without torch."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from mtscore.engine.comet.scorer import (
    CometInputError,
    CometReferencesIgnoredWarning,
    CometScorer,
    load_comet,
)
from mtscore.errors import UserError
from tests.comet_golden import ENCODER, GOLDEN, golden, golden_inputs

ROOT = Path(__file__).resolve().parents[2]

MODELS = ("regression-sparsemax", "regression-softmax-norm", "referenceless-cls", "unified-kiwi",
          # the pool values max (normalised mix) and default (last layer's first token; layer 2 ignored)
          "regression-max-norm", "referenceless-default-layer2")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("comet-cache")


_SCORERS: dict[str, CometScorer] = {}


def _scorer(name: str, cache: Path) -> CometScorer:
    if name not in _SCORERS:
        _SCORERS[name] = load_comet(GOLDEN / "models" / name, encoder=ENCODER, cache_dir=cache, threads=1)
    return _SCORERS[name]


def _score(s: CometScorer, fields: list[str], data: dict[str, list[str]]) -> np.ndarray:
    return s.score(data["mt"], sources=data["src"], references=data["ref"] if "ref" in fields else None)


@pytest.mark.parametrize("name", MODELS)
def test_golden_scores(name: str, cache: Path) -> None:
    gold = golden()
    entry = gold["models"][name]
    data = golden_inputs()
    assert len(data["mt"]) == gold["inputs"]["n"] == len(entry["scores"]) == 313
    s = _scorer(name, cache)
    assert s.class_identifier == entry["class_identifier"]
    assert s.checkpoint_sha256 == gold["files"][f"models/{name}/checkpoints/model.ckpt"]
    assert (s.name, s.precision, s.device) == (name, "fp32", "cpu")
    assert s.uses_references == (entry["class_identifier"] == "regression_metric")
    got = _score(s, entry["fields"], data)
    want = np.array(entry["scores"], dtype=np.float64)
    assert got.dtype == np.float64
    assert got.shape == want.shape
    # float32 values widened: each one is exactly representable in float32
    np.testing.assert_array_equal(got.astype(np.float32).astype(np.float64), got)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert abs(float(got.mean()) - entry["system_score"]) <= 1e-6
    # the scores spread (a model that gave one constant would hide a wrong input); the
    # truncated and cut segments of the oracle are among them
    assert float(np.ptp(want)) > 1e-3


@pytest.mark.parametrize("name", MODELS)
def test_batching_does_not_change_scores(name: str, cache: Path) -> None:
    entry = golden()["models"][name]
    data = golden_inputs()
    s = _scorer(name, cache)
    small = dataclasses.replace(s, batch_tokens=97)  # one long sentence per call, short ones a few at a time
    a = _score(s, entry["fields"], data)
    b = _score(small, entry["fields"], data)
    np.testing.assert_array_equal(b, a)  # bit for bit: an embedding does not depend on its batch
    # a subset, reordered and with repeats, gives the same per-segment scores (encoded in batches
    # of its own: no embedding memo, which would hand back the ones of the whole set); within float
    # noise, not bit for bit: the head's matrix products over 6 rows and over 313 differ in the last bits
    pick = np.array([5, 0, 5, 312, 17, 0])
    sub = {k: [v[i] for i in pick] for k, v in data.items()}
    alone = dataclasses.replace(s, embedding_cache=0)
    np.testing.assert_allclose(_score(alone, entry["fields"], sub), a[pick], rtol=0, atol=1e-6)


def test_embed_encodes_each_text_once_and_matches_scoring(cache: Path) -> None:
    golden()
    s = _scorer("regression-sparsemax", cache)
    data = golden_inputs()
    texts = [data["mt"][3], data["src"][3], data["mt"][3], data["ref"][3]]
    e = s.embed(texts)
    assert e.dtype == np.float32
    assert e.shape == (4, 32)
    np.testing.assert_array_equal(e[0], e[2])
    assert not np.allclose(e[0], e[1])
    from mtscore.engine.comet.head import comet_features, head_scores
    one = head_scores(s.spec, comet_features(s.spec, e[:1], e[1:2], e[3:4]))
    np.testing.assert_allclose(one, s.score(texts[:1], texts[1:2], texts[3:]), rtol=0, atol=1e-6)
    with pytest.raises(CometInputError, match=r"unified_metric embeds"):
        _scorer("unified-kiwi", cache).embed(["a"])


def test_graph_is_cached(cache: Path) -> None:
    golden()
    s = _scorer("referenceless-cls", cache)
    assert s.graph_path.is_file()
    assert cache in s.graph_path.parents
    before = s.graph_path.stat().st_mtime_ns
    again = load_comet(GOLDEN / "models" / "referenceless-cls", encoder=ENCODER, cache_dir=cache, threads=1)
    assert again.graph_path == s.graph_path
    assert again.graph_path.stat().st_mtime_ns == before
    # each model has its own graph
    assert _scorer("regression-sparsemax", cache).graph_path != s.graph_path


def test_input_errors(cache: Path) -> None:
    golden()
    reg = _scorer("regression-sparsemax", cache)
    with pytest.raises(CometInputError, match=r"^references: missing; regression-sparsemax \(regression_metric\)"):
        reg.score(["a"], sources=["b"])
    with pytest.raises(CometInputError, match=r"^sources: missing"):
        reg.score(["a"], references=["b"])
    with pytest.raises(CometInputError, match=r"^references: 1 segments, but hypotheses has 2$"):
        reg.score(["a", "b"], sources=["c", "d"], references=["e"])
    with pytest.raises(CometInputError, match=r"^sources: 3 segments, but hypotheses has 2$"):
        reg.score(["a", "b"], sources=["c", "d", "e"], references=["e", "f"])
    with pytest.raises(CometInputError, match=r"^hypotheses\[1\]: expected a str, got NoneType$"):
        reg.score(["a", None], sources=["c", "d"], references=["e", "f"])  # type: ignore[list-item]
    with pytest.raises(CometInputError, match=r"^hypotheses: expected a sequence of strings"):
        reg.score("abc", sources=["c"], references=["e"])
    with pytest.raises(CometInputError, match="batch_tokens"):
        load_comet(GOLDEN / "models" / "regression-sparsemax", encoder=ENCODER, cache_dir=cache, batch_tokens=0)
    assert issubclass(CometInputError, UserError)
    assert issubclass(CometInputError, ValueError)
    assert reg.score([], sources=[], references=[]).shape == (0,)


@pytest.mark.parametrize("name", ["referenceless-cls", "unified-kiwi"])
def test_references_ignored_by_models_without_them(name: str, cache: Path) -> None:
    golden()
    s = _scorer(name, cache)
    data = golden_inputs()
    mt, src, ref = data["mt"][:8], data["src"][:8], data["ref"][:8]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = s.score(mt, sources=src)
    with pytest.warns(CometReferencesIgnoredWarning, match=rf"^references: ignored; {name} "):
        with_ref = s.score(mt, sources=src, references=ref)
    np.testing.assert_array_equal(with_ref, plain)
    with pytest.raises(CometInputError, match=r"^sources: missing"):
        s.score(mt)


def test_scoring_needs_no_torch(tmp_path: Path) -> None:
    """One golden model of each class loaded and scored in a process where importing torch,
    transformers or comet fails (a meta-path blocker, installed before mtscore is imported)."""
    gold = golden()
    code = f"""
import importlib.abc, json, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'transformers', 'comet'):
            raise ImportError('blocked: ' + name)
        return None
sys.meta_path.insert(0, Block())
for m in ('torch', 'transformers', 'comet'):
    try:
        __import__(m)
    except ImportError:
        pass
    else:
        raise SystemExit(m + ' imported')
from mtscore.engine.comet.scorer import load_comet
rows = [json.loads(x) for x in open({str(GOLDEN / 'inputs.jsonl')!r}, encoding='utf-8') if x.strip()][:40]
out = {{}}
for name in ('regression-softmax-norm', 'referenceless-cls', 'unified-kiwi'):
    s = load_comet({str(GOLDEN / 'models')!r} + '/' + name, encoder={str(ENCODER)!r}, cache_dir={str(tmp_path)!r},
                   threads=1)
    refs = [r['ref'] for r in rows] if s.uses_references else None
    out[name] = s.score([r['mt'] for r in rows], [r['src'] for r in rows], refs).tolist()
assert not any(m.split('.')[0] in ('torch', 'transformers', 'comet') for m in sys.modules)
print(json.dumps(out))
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(got) == ["referenceless-cls", "regression-softmax-norm", "unified-kiwi"]
    for name, scores in got.items():
        np.testing.assert_allclose(scores, gold["models"][name]["scores"][:40], rtol=0, atol=1e-5)


def test_fp16_encoder_close_to_golden(cache: Path) -> None:
    """precision="fp16": the encoder in float16 (mix, pooling, head in float32); approximate (2.3e-4
    at most here, on scores spread over 0.14), its own cached graph."""
    gold = golden()
    entry = gold["models"]["regression-sparsemax"]
    s = load_comet(GOLDEN / "models" / "regression-sparsemax", encoder=ENCODER, cache_dir=cache, threads=1,
                   precision="fp16")
    assert s.precision == "fp16"
    assert s.graph_path != _scorer("regression-sparsemax", cache).graph_path
    got = _score(s, entry["fields"], golden_inputs())
    d = np.abs(got - np.array(entry["scores"]))
    assert 0 < d.max() < 2e-3


def test_score_references_encodes_once_per_text(cache: Path) -> None:
    """Several reference streams: row k equals score() with stream k (up to the float noise of other
    batches); the embedding calls see each distinct text once (hypotheses, sources and all streams)."""
    golden()
    s = dataclasses.replace(_scorer("regression-softmax-norm", cache))  # an empty embedding memo
    data = golden_inputs()
    mt, src, ref = data["mt"][:12], data["src"][:12], data["ref"][:12]
    other = data["ref"][12:24]  # a second "reference" stream: other sentences, other scores
    seen: list[int] = []
    counting = _Counting(s, seen)
    both = counting.score_references(mt, src, [ref, other])
    assert both.shape == (2, 12)
    assert both.dtype == np.float64
    assert sum(seen) == len(set(mt) | set(src) | set(ref) | set(other))
    np.testing.assert_allclose(both[0], s.score(mt, sources=src, references=ref), rtol=0, atol=1e-6)
    np.testing.assert_allclose(both[1], s.score(mt, sources=src, references=other), rtol=0, atol=1e-6)
    assert not np.allclose(both[0], both[1])
    with pytest.raises(CometInputError, match=r"^references\[1\]: 3 segments, but hypotheses has 12$"):
        s.score_references(mt, src, [ref, other[:3]])
    with pytest.raises(CometInputError, match=r"^references: expected one or more reference streams"):
        s.score_references(mt, src, [])
    with pytest.raises(CometInputError, match=r"reads no references; use score\(\)$"):
        _scorer("unified-kiwi", cache).score_references(mt, src, [ref])


class _Counting:
    """A scorer whose embed_ids records how many sequences each call encodes."""

    def __init__(self, scorer: CometScorer, seen: list[int]):
        self._s, self._seen = scorer, seen

    def score_references(self, *args):
        real = CometScorer.embed_ids

        def embed_ids(this, ids, progress=None):
            self._seen.append(len(ids))
            return real(this, ids, progress)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(CometScorer, "embed_ids", embed_ids)
            return self._s.score_references(*args)
