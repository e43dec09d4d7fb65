"""Differential tests: BLEU / chrF / chrF++ on every newstest2021 / florestest2021 system output
in the shared data equal sacrebleu 2.6.0 exactly (per-segment statistics, corpus scores for every
smoothing and effective-order setting, and sentence scores)."""
import numpy as np
import pytest
import sacrebleu
from wmt21 import load_pair, pairs

import mtscore

PAIRS = pairs()
if not PAIRS:
    pytest.skip("wmt21-news-systems data not found (set MTSCORE_DATA)", allow_module_level=True)

SMOOTHINGS = [("none", None), ("floor", None), ("floor", 0.5), ("add-k", None), ("add-k", 2),
              ("exp", None)]


def bleu_tokenizers(trg):
    toks = ["13a", "none", "intl", "char"]
    if trg == "zh":
        toks.append("zh")
    if trg == "ja":
        toks.append("ja-mecab")
    return toks


def _sacre_stats(metric, systems):
    return {name: np.array(metric._extract_corpus_statistics(h, None), dtype=np.int64)
            for name, h in systems.items()}


def _check_bleu_scores(ours_stats, kw, check_sentences):
    """Corpus scores for every smoothing x effective order from the (already equal) stats, and
    sentence scores from the batch kernel vs sacrebleu's formula on each segment."""
    total = [int(x) for x in ours_stats.sum(0)]
    for sm, sv in SMOOTHINGS:
        for eff in (False, True):
            args = dict(kw, smooth_method=sm, smooth_value=sv, effective_order=eff)
            ref_m = sacrebleu.BLEU(**args)
            our_m = mtscore.BLEU(**args)
            a = ref_m._compute_score_from_stats(list(total))
            b = our_m.compute_score_from_stats(list(total))
            assert a.score == b.score, args
            assert a.counts == b.counts, args
            assert a.totals == b.totals, args
            assert a.precisions == b.precisions
            assert a.bp == b.bp
            if check_sentences:
                sent = our_m.sentence_scores_from_stats(ours_stats)
                expect = [ref_m._compute_score_from_stats([int(x) for x in row]).score
                          for row in ours_stats]
                np.testing.assert_array_equal(sent, np.array(expect))


@pytest.mark.parametrize("lc", [False, True], ids=["cased", "lc"])
@pytest.mark.parametrize("pair", PAIRS)
def test_bleu_all_systems(pair, lc):
    refs, systems, trg = load_pair(pair)
    for tok in bleu_tokenizers(trg):
        kw = dict(tokenize=tok, lowercase=lc)
        for ref_set in ([refs] if len(refs) == 1 else [refs, refs[:1]]):
            ref_m = sacrebleu.BLEU(**kw, references=ref_set)
            our_m = mtscore.BLEU(**kw, references=ref_set)
            expected = _sacre_stats(ref_m, systems)
            for name, hyps in systems.items():
                ours = our_m.corpus_stats(hyps)
                np.testing.assert_array_equal(ours, expected[name], err_msg=f"{pair} {name} {kw}")
                first = (tok == "13a" and not lc)
                _check_bleu_scores(ours, kw, check_sentences=first or name == next(iter(systems)))
                if first:
                    a = ref_m.corpus_score(hyps, None)
                    b = our_m.corpus_score(hyps, None)
                    assert a.score == b.score
                    assert str(ref_m.get_signature()) == str(our_m.get_signature())


CHRF_CONFIGS = [dict(), dict(eps_smoothing=True), dict(whitespace=True), dict(lowercase=True),
                dict(word_order=2), dict(word_order=2, eps_smoothing=True)]


@pytest.mark.parametrize("kw", CHRF_CONFIGS,
                         ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()) or "default")
@pytest.mark.parametrize("pair", PAIRS)
def test_chrf_all_systems(pair, kw):
    refs, systems, _trg = load_pair(pair)
    ref_sets = [refs] if len(refs) == 1 else [refs, refs[:1]]
    if kw and len(refs) > 1:
        ref_sets = [refs]  # options on multi-ref; both layouts for the default
    for ref_set in ref_sets:
        ref_m = sacrebleu.CHRF(**kw, references=ref_set)
        our_m = mtscore.CHRF(**kw, references=ref_set)
        for name, hyps in systems.items():
            expected = np.array(ref_m._extract_corpus_statistics(hyps, None), dtype=np.int64)
            ours = our_m.corpus_stats(hyps)
            np.testing.assert_array_equal(ours, expected, err_msg=f"{pair} {name} {kw}")
            a = ref_m._compute_score_from_stats([int(x) for x in expected.sum(0)])
            b = our_m.compute_score_from_stats([int(x) for x in ours.sum(0)])
            assert a.score == b.score, (pair, name, kw)
            sent = our_m.sentence_scores_from_stats(ours)
            exp_sent = np.array([ref_m._compute_f_score([int(x) for x in r]) for r in expected])
            np.testing.assert_array_equal(sent, exp_sent)
        assert str(ref_m.get_signature()) == str(our_m.get_signature())


def test_sentence_score_api_matches_sacrebleu():
    refs, systems, _ = load_pair("newstest2021.en-de")
    hyps = next(iter(systems.values()))
    for i in range(0, len(hyps), 97):
        seg_refs = [r[i] for r in refs]
        for cls, kw in ((mtscore.BLEU, dict(effective_order=True)), (mtscore.BLEU, {}),
                        (mtscore.CHRF, {}), (mtscore.CHRF, dict(word_order=2))):
            a = getattr(sacrebleu, cls.__name__)(**kw).sentence_score(hyps[i], seg_refs)
            b = cls(**kw).sentence_score(hyps[i], seg_refs)
            assert a.score == b.score


@pytest.mark.parametrize("pair", PAIRS)
def test_many_systems_in_one_call_equal_one_by_one(pair):
    """mtscore.score over every system of a pair (distinct outputs scored once, segment by
    segment) gives each system exactly the statistics and sentence scores of scoring it alone,
    which the tests above (and TER's golden values) prove equal to sacrebleu; single and
    multiple references, 1 and 2 workers, and small chunks (references prepared per chunk)."""
    refs, systems, _ = load_pair(pair)
    metrics = {"bleu": mtscore.BLEU, "chrf": mtscore.CHRF, "chrf++": lambda: mtscore.CHRF(word_order=2),
               "ter": mtscore.TER}
    for ref_set in ([refs] if len(refs) == 1 else [refs, refs[:1]]):
        alone = {}
        for m, make in metrics.items():
            alone[m] = {}
            for name, h in systems.items():
                obj = make()
                st = obj.corpus_stats(h, ref_set)
                alone[m][name] = (st, obj.scores_from_stats(st))
        for kw in (dict(workers=1), dict(workers=2, chunk_size=300)):
            r = mtscore.score(systems, ref_set, metrics=list(metrics), **kw)
            for m in metrics:
                col = r.segments.column(m).to_numpy()
                for j, name in enumerate(systems):
                    st, sc = alone[m][name]
                    np.testing.assert_array_equal(r.stats[name][m], st, err_msg=f"{pair} {name} {m} {kw}")
                    np.testing.assert_array_equal(col[j * len(sc):(j + 1) * len(sc)], sc)
