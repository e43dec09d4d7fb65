"""Metric options by name in the batch API: ``mtscore.score`` / ``score_table`` /
``score_stream`` / ``score_files`` take ``metric_kwargs={name: options}`` for every registered
metric (as ``score_ray`` does, one shared merge in mtscore/bindings/metric_options.py), the
older ``bleu_kwargs`` / ``chrf_kwargs`` / ``ter_kwargs`` as aliases, and the same errors (P16)."""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest

import mtscore
from mtscore.bindings.api.batch import score_files, score_stream, score_table
from mtscore.bindings.metric_options import merge_metric_options, options_for
from mtscore.engine.metrics.registry import METRICS, make_metric

HYPS = ["The cat sat on the mat, didn't it?", "Ein Hund lief über die Straße.",
        "MIXED case words here!", "Er hat das Haus gekauft.", "a b c d e f g"]
REFS = [["the cat is on the mat, isn't it?", "Ein Hund rannte über die Strasse.",
         "Mixed case words here.", "Er kaufte das Haus.", "a b c d e f g"],
        ["A cat sat on a mat.", "ein Hund lief auf der Straße", "mixed CASE words, here",
         "Das Haus hat er gekauft", "a b c d e"]]

#: an option of each metric beyond BLEU/chrF/TER that changes its numbers on HYPS/REFS
OPTIONS = {"wer": {"lowercase": True}, "cer": {"multi_ref": "best"}, "eed": {"language": "ja"},
           "meteor": {"language": "de"}}


def _table() -> pa.Table:
    return pa.table({"hyp": HYPS, "ref_0": REFS[0], "ref_1": REFS[1]})


def _same(r, want, keys) -> None:
    for k in keys:
        assert r.corpus[k].score == want.corpus[k].score, k
        assert r.signatures[k] == want.signatures[k], k
        np.testing.assert_array_equal(r.sentence_scores[k], want.sentence_scores[k])


@pytest.mark.parametrize("name", list(OPTIONS))
def test_an_option_by_name_equals_the_configured_object(name):
    """score() and score_table() with ``metric_kwargs={name: option}``: the numbers of the
    metric object made with that option, not those of the default."""
    obj = mtscore.score(HYPS, REFS, metrics=[make_metric(name, **OPTIONS[name])])
    default = mtscore.score(HYPS, REFS, metrics=[name])
    for r in (mtscore.score(HYPS, REFS, metrics=[name], metric_kwargs={name: OPTIONS[name]}),
              mtscore.score(HYPS, REFS, metrics=[name], metric_kwargs={name.upper(): OPTIONS[name]}),
              score_table(_table(), metrics=[name], metric_kwargs={name: OPTIONS[name]})):
        _same(r, obj, [name])
        assert r.corpus[name].score != default.corpus[name].score, name
        assert not np.array_equal(r.sentence_scores[name], default.sentence_scores[name]), name


def test_all_at_once_and_on_the_streaming_faces(tmp_path):
    """Every option in one call; score_stream and score_files take the same argument."""
    names = list(OPTIONS)
    want = mtscore.score({"s": HYPS}, REFS, metrics=[make_metric(n, **kw) for n, kw in OPTIONS.items()])
    r = mtscore.score({"s": HYPS}, REFS, metrics=names, metric_kwargs=OPTIONS)
    for k in names:
        assert r.corpus["s"][k].score == want.corpus["s"][k].score, k
    stream = score_stream([(REFS, {"s": HYPS})], metrics=names, metric_kwargs=OPTIONS)
    paths = []
    for i, lines in enumerate([HYPS, *REFS]):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    files = score_files({"s": str(paths[0])}, [str(p) for p in paths[1:]], metrics=names, metric_kwargs=OPTIONS)
    for got in (stream, files):
        for k in names:
            assert got.corpus["s"][k].score == want.corpus["s"][k].score, k


def test_the_older_spellings_are_aliases():
    """``bleu_kwargs`` / ``chrf_kwargs`` / ``ter_kwargs`` equal their ``metric_kwargs`` entries;
    chrf++ takes chrF's options unless it has its own; both spellings mix for different metrics."""
    metrics = ["bleu", "chrf", "chrf++", "ter"]
    old = {"bleu_kwargs": {"lowercase": True}, "chrf_kwargs": {"char_order": 4}, "ter_kwargs": {"normalized": True}}
    new = {"bleu": {"lowercase": True}, "chrf": {"char_order": 4}, "ter": {"normalized": True}}
    a = mtscore.score(HYPS, REFS, metrics=metrics, **old)
    b = mtscore.score(HYPS, REFS, metrics=metrics, metric_kwargs=new)
    c = score_table(_table(), metrics=metrics, **old)
    for r in (b, c):
        _same(r, a, metrics)
    assert "|nc:4|" in a.signatures["chrf++"]
    assert "case:lc" in a.signatures["bleu"]
    d = mtscore.score(HYPS, REFS, metrics=["chrf", "chrf++", "wer"], chrf_kwargs={"char_order": 4},
                      metric_kwargs={"chrf++": {"char_order": 5}, "wer": {"lowercase": True}})
    assert "|nc:4|nw:0|" in d.signatures["chrf"]
    assert "|nc:5|nw:2|" in d.signatures["chrf++"]
    assert "case:lc" in d.signatures["wer"]


def test_errors():
    registered = re.escape(", ".join(METRICS))
    with pytest.raises(ValueError, match=r"^score: options for metric 'bleu' given twice: as "
                                         r"metric_kwargs\['BLEU'\] and as bleu_kwargs; give them once$"):
        mtscore.score(HYPS, REFS, metrics=["bleu"], metric_kwargs={"BLEU": {}}, bleu_kwargs={"lowercase": True})
    with pytest.raises(ValueError, match=r"given twice: as metric_kwargs\['wer'\] and as metric_kwargs\['WER'\]"):
        score_table(_table(), metrics=["wer"], metric_kwargs={"wer": {}, "WER": {}})
    with pytest.raises(ValueError, match=r"^score: metric_kwargs names an unknown metric 'blue'; "
                                         r"registered metrics: " + registered + "$"):
        mtscore.score(HYPS, REFS, metric_kwargs={"blue": {"lowercase": True}})
    with pytest.raises(ValueError, match=r"^score_stream: metric_kwargs names an unknown metric 'blue'"):
        score_stream([(REFS, {"s": HYPS})], metric_kwargs={"blue": {}})
    with pytest.raises(TypeError, match=r"metric_kwargs\['wer'\] must be a dict"):
        score_table(_table(), metrics=["wer"], metric_kwargs={"wer": ["lowercase"]})
    with pytest.raises(TypeError, match=r"^score: metric_kwargs must be a dict"):
        mtscore.score(HYPS, REFS, metric_kwargs=[("wer", {})])
    # a name contradicted by its options: by its own entry (the registry's error) or its family's
    with pytest.raises(ValueError, match=r"metric 'chrf\+\+' means word_order=2, but word_order=0 was given"):
        mtscore.score(HYPS, REFS, metrics=["chrf++"], metric_kwargs={"chrf++": {"word_order": 0}})
    with pytest.raises(ValueError, match=r"'chrf' but chrf_kwargs set .*word_order=2.*'chrf\+\+'"):
        mtscore.score(HYPS, REFS, metrics=["chrf"], metric_kwargs={"chrf": {"word_order": 2}})


def test_the_shared_helpers():
    opts = merge_metric_options({"CHRF": {"char_order": 4}, "wer": {"lowercase": True}}, caller="x",
                                ter={"normalized": True}, bleu=None)
    assert opts == {"chrf": {"char_order": 4}, "wer": {"lowercase": True}, "ter": {"normalized": True}}
    assert options_for("chrf++", opts) == {"char_order": 4}
    assert options_for("bleu", opts) == {}
    got = options_for("wer", opts)
    got["lowercase"] = False  # a copy
    assert opts["wer"] == {"lowercase": True}
    with pytest.raises(ValueError, match=r"^x: options for metric 'ter' given twice"):
        merge_metric_options({"ter": {}}, caller="x", ter={})
