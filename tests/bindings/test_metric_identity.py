"""Metric identity in the batch API: several configurations of one metric in one call of
``mtscore.score`` (and ``score_table`` / ``score_stream`` / ``score_files``) each get their own
key, and the key says what was computed (P13 "Trust II", part 3)."""
from __future__ import annotations

import numpy as np
import pytest

import mtscore
from mtscore.bindings.api.batch import score_files, score_stream, score_table

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu (test extra) not installed")

HYPS = ["The cat sat on the mat.", "Ein Hund lief über die Straße", "mixed CASE words here",
        "", "a b c d e f g"]
REFS = [["The cat is on the mat.", "Ein Hund rannte über die Strasse", "Mixed case words here",
         "nothing", "a b c d e f g"]]


def _sacre(cls, **opts):
    return getattr(sacrebleu, cls)(**opts)


def _check(r, key, cls, opts, hyps=HYPS, refs=REFS):
    """Corpus score, signature and sentence scores under ``key`` equal sacrebleu's."""
    want = _sacre(cls, **opts)
    assert r.corpus[key].score == want.corpus_score(hyps, refs).score, key
    assert r.signatures[key] == str(want.get_signature()), key
    sent = [_sacre(cls, **opts).sentence_score(h, [x[i] for x in refs]).score
            for i, h in enumerate(hyps)]
    assert r.sentence_scores[key].tolist() == sent, key
    assert r.segments.column(key).to_pylist() == sent, key


def test_two_bleu_configurations_keep_both():
    r = mtscore.score(HYPS, REFS, metrics=[mtscore.BLEU(), mtscore.BLEU(tokenize="char")])
    assert list(r.corpus) == ["bleu", "bleu|tok:char"]
    assert r.segments.column_names == ["seg", "bleu", "bleu|tok:char"]
    _check(r, "bleu", "BLEU", {})
    _check(r, "bleu|tok:char", "BLEU", {"tokenize": "char"})
    assert r.corpus["bleu"].score != r.corpus["bleu|tok:char"].score


def test_three_chrf_configurations_keep_all():
    r = mtscore.score(HYPS, REFS, metrics=[mtscore.CHRF(), mtscore.CHRF(lowercase=True),
                                           mtscore.CHRF(word_order=2)])
    assert list(r.corpus) == ["chrf", "chrf|case:lc", "chrf++"]
    _check(r, "chrf", "CHRF", {})
    _check(r, "chrf|case:lc", "CHRF", {"lowercase": True})
    _check(r, "chrf++", "CHRF", {"word_order": 2})
    assert set(r.stats["hyp"]) == set(r.corpus)
    assert r.stats["hyp"]["chrf++"].shape == (len(HYPS), 3 * 8)


def test_options_a_signature_does_not_print_are_spelled_out():
    # sacrebleu's BLEU signature has no max_ngram_order, chrF's no beta
    r = mtscore.score(HYPS, REFS, metrics=[mtscore.BLEU(), mtscore.BLEU(max_ngram_order=2),
                                           mtscore.CHRF(), mtscore.CHRF(beta=1)])
    assert list(r.corpus) == ["bleu", "bleu|max_ngram_order=2", "chrf", "chrf|beta=1"]
    _check(r, "bleu|max_ngram_order=2", "BLEU", {"max_ngram_order": 2})
    _check(r, "chrf|beta=1", "CHRF", {"beta": 1})
    # a third one differing from the first like the second does, and more
    r = mtscore.score(HYPS, REFS, metrics=[mtscore.BLEU(), mtscore.BLEU(tokenize="char"),
                                           mtscore.BLEU(tokenize="char", max_ngram_order=3)])
    assert len(set(r.corpus)) == 3
    key = list(r.corpus)[2]
    assert key.startswith("bleu|tok:char|")
    assert "max_ngram_order=3" in key
    _check(r, key, "BLEU", {"tokenize": "char", "max_ngram_order": 3})


def test_single_metric_keys_are_unchanged():
    r = mtscore.score(HYPS, REFS, metrics=["bleu", "chrf", "chrf++", "ter", "wer"])
    assert list(r.corpus) == ["bleu", "chrf", "chrf++", "ter", "wer"]
    r = mtscore.score(HYPS, REFS, metrics=[mtscore.BLEU(), mtscore.CHRF(word_order=2), mtscore.TER()])
    assert list(r.corpus) == ["bleu", "chrf++", "ter"]
    r = mtscore.score(HYPS, REFS, metrics=["chrf++"], chrf_kwargs={"lowercase": True})
    assert list(r.corpus) == ["chrf++"]
    _check(r, "chrf++", "CHRF", {"word_order": 2, "lowercase": True})


def test_name_and_object_of_one_configuration_mix():
    r = mtscore.score(HYPS, REFS, metrics=["bleu", mtscore.BLEU(lowercase=True)])
    assert list(r.corpus) == ["bleu", "bleu|case:lc"]
    _check(r, "bleu|case:lc", "BLEU", {"lowercase": True})


@pytest.mark.parametrize(("metrics", "kwargs", "match"), [
    (["chrf++"], {"chrf_kwargs": {"word_order": 0}}, r"'chrf\+\+'.*word_order=0"),
    (["chrf++"], {"chrf_kwargs": {"word_order": 1}}, r"'chrf\+\+'.*word_order=1"),
    (["chrf"], {"chrf_kwargs": {"word_order": 2}}, r"'chrf'.*word_order=2.*'chrf\+\+'"),
])
def test_a_name_contradicted_by_its_options_raises(metrics, kwargs, match):
    with pytest.raises(ValueError, match=match):
        mtscore.score(HYPS, REFS, metrics=metrics, **kwargs)


@pytest.mark.parametrize("metrics", [
    ["bleu", "bleu"],
    [mtscore.BLEU(), mtscore.BLEU()],
    ["chrf", mtscore.CHRF()],
    [mtscore.BLEU(), mtscore.BLEU(max_ngram_order=2), mtscore.BLEU(max_ngram_order=2)],
])
def test_the_same_configuration_twice_raises(metrics):
    with pytest.raises(ValueError, match=r"metrics\[\d\].*same configuration as metrics\[\d\]"):
        mtscore.score(HYPS, REFS, metrics=metrics)


def test_chrf_plus_object_is_named_as_sacrebleu_names_it():
    r = mtscore.score(HYPS, REFS, metrics=[mtscore.CHRF(word_order=1), mtscore.CHRF(word_order=2)])
    assert list(r.corpus) == ["chrf+", "chrf++"]
    _check(r, "chrf+", "CHRF", {"word_order": 1})


def test_several_systems_keep_every_configuration():
    systems = {"a": HYPS, "b": HYPS[::-1]}
    ms = [mtscore.BLEU(), mtscore.BLEU(tokenize="char"), mtscore.BLEU(lowercase=True)]
    r = mtscore.score(systems, REFS, metrics=ms)
    keys = ["bleu", "bleu|tok:char", "bleu|case:lc"]
    for s, hyps in systems.items():
        assert list(r.corpus[s]) == keys
        for key, opts in zip(keys, [{}, {"tokenize": "char"}, {"lowercase": True}]):
            assert r.corpus[s][key].score == _sacre("BLEU", **opts).corpus_score(hyps, REFS).score
    assert r.segments.column_names == ["system", "seg", *keys]


def test_score_table_and_stream_and_files_keep_every_configuration(tmp_path):
    pa = pytest.importorskip("pyarrow")
    ms = [mtscore.CHRF(), mtscore.CHRF(lowercase=True)]
    want = {"chrf": _sacre("CHRF").corpus_score(HYPS, REFS).score,
            "chrf|case:lc": _sacre("CHRF", lowercase=True).corpus_score(HYPS, REFS).score}
    t = pa.table({"hyp": HYPS, "ref": REFS[0]})
    r = score_table(t, metrics=ms)
    assert {k: v.score for k, v in r.corpus.items()} == want
    r = score_stream([(REFS, {"hyp": HYPS})], metrics=[mtscore.CHRF(), mtscore.CHRF(lowercase=True)])
    assert {k: v.score for k, v in r.corpus["hyp"].items()} == want
    (tmp_path / "h.txt").write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(REFS[0]) + "\n", encoding="utf-8")
    r = score_files(str(tmp_path / "h.txt"), [str(tmp_path / "r.txt")],
                    metrics=[mtscore.CHRF(), mtscore.CHRF(lowercase=True)])
    assert {k: v.score for k, v in r.corpus.items()} == want


def test_metric_keys_is_stable_and_distinct():
    from mtscore.bindings.api.batch import metric_keys

    named = [("bleu", mtscore.BLEU()), ("bleu", mtscore.BLEU(tokenize="char")),
             ("ter", mtscore.TER()), ("ter", mtscore.TER(normalized=True))]
    assert metric_keys(named) == metric_keys(named) == ["bleu", "bleu|tok:char", "ter",
                                                        "ter|norm:yes"]


def test_a_non_metric_in_metrics_raises():
    with pytest.raises(TypeError, match=r"metrics\[1\]"):
        mtscore.score(HYPS, REFS, metrics=["bleu", 3])


def test_a_single_name_is_one_metric():
    r = mtscore.score(HYPS, REFS, metrics="chrf")
    assert list(r.corpus) == ["chrf"]
    assert np.isfinite(r.corpus["chrf"].score)


def test_keys_stay_distinct_when_signature_differences_repeat():
    # the third differs from the first only in tok (like the second) and from the second in
    # max_ngram_order, which it shares with the first
    ms = [mtscore.BLEU(max_ngram_order=2), mtscore.BLEU(tokenize="char"),
          mtscore.BLEU(tokenize="char", max_ngram_order=2)]
    r = mtscore.score(HYPS, REFS, metrics=ms)
    keys = list(r.corpus)
    assert keys == ["bleu", "bleu|tok:char", "bleu|tok:char|max_ngram_order=2"]
    _check(r, keys[2], "BLEU", {"tokenize": "char", "max_ngram_order": 2})
    _check(r, keys[1], "BLEU", {"tokenize": "char"})


def test_a_name_whose_options_contradict_it_is_refused_everywhere():
    """The registry itself refuses "chrf++" with another word order (it reported chrF2 under
    the key chrf++ through every face that builds metrics by name: score, Ray, the decoder)."""
    from mtscore import decoder
    from mtscore.bindings.ray.score import _metric_specs
    from mtscore.engine.metrics.registry import make_metric

    with pytest.raises(ValueError, match="'chrf\\+\\+' means word_order=2, but word_order=0 was given"):
        make_metric("chrf++", word_order=0)
    with pytest.raises(ValueError, match="means word_order=2"):
        decoder.sentence_scores(["a b"], ["a b"], metric="chrf++", word_order=1)
    assert make_metric("chrf++", word_order=2).word_order == 2
    assert make_metric("chrf", word_order=2).word_order == 2      # sacrebleu's -m chrf -cw 2
    with pytest.raises(ValueError, match="given twice"):
        _metric_specs(["bleu", "BLEU"], {})
