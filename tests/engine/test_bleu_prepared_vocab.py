"""BLEU looks hypothesis tokens (chrF++ hypothesis words) up in the prepared references'
vocabulary instead of adding them (``_text.encode(lookup=True)``): scores stay sacrebleu's,
and the prepared references, which are cached and reused across calls (a decoder scoring
samples against fixed references), do not grow with every new hypothesis token."""
import numpy as np
import pytest

from mtscore import BLEU, CHRF
from mtscore.kernels import _text

sacrebleu = pytest.importorskip("sacrebleu")

REFS = ["The cat sat on the mat.", "Prices rose 3.5 % in 2020, said U.S. officials.",
        "Die Labour-Partei (UK) gewann 25.000 Stimmen."]


def _vocab(prepared) -> _text.Vocab:
    (_, _, (vocab, _)), = prepared.chunks
    return vocab


@pytest.mark.parametrize("tokenize", ["13a", "intl", "zh", "char", "none"])
def test_new_hypothesis_tokens_leave_the_vocabulary_and_scores_alone(tokenize):
    m = BLEU(effective_order=True, tokenize=tokenize)
    prepared = m.prepare([REFS])
    size = len(_vocab(prepared))
    sb = sacrebleu.metrics.BLEU(effective_order=True, tokenize=tokenize)
    rng = np.random.default_rng(5)
    for round_ in range(3):
        # words no reference has, inside punctuation and word-cache words too
        novel = [f"zz{round_}x{int(k)}" for k in rng.integers(0, 10**6, size=6)]
        hyps = [f"The {novel[0]} sat on ({novel[1]}) mat.",
                f"Prices {novel[2]}-{novel[3]} 3.5 % in 2020, {novel[4]}.",
                f"Die {novel[5]} (UK) gewann 25.000 Stimmen."]
        _, scores = m.stats_and_scores(hyps, prepared)
        want = [sb.sentence_score(h, [r]).score for h, r in zip(hyps, REFS)]
        assert np.array_equal(np.asarray(scores), np.asarray(want)), (tokenize, hyps)
        assert len(_vocab(prepared)) == size


@pytest.mark.parametrize("word_order", [1, 2])
def test_new_hypothesis_words_leave_the_chrf_vocabulary_and_scores_alone(word_order):
    m = CHRF(word_order=word_order)
    prepared = m.prepare([REFS])
    size = len(_vocab(prepared))
    sb = sacrebleu.metrics.CHRF(word_order=word_order)
    rng = np.random.default_rng(6)
    for round_ in range(3):
        novel = [f"zz{round_}x{int(k)}" for k in rng.integers(0, 10**6, size=4)]
        # new words next to known ones, repeated (their n-grams must still match nothing)
        hyps = [f"The {novel[0]} {novel[0]} sat on the mat. {novel[1]}!",
                f"Prices rose {novel[2]} 3.5 % {novel[2]}, said U.S. officials.",
                f"Die Labour-Partei ({novel[3]}) gewann 25.000 Stimmen {novel[3]}."]
        _, scores = m.stats_and_scores(hyps, prepared)
        want = [sb.sentence_score(h, [r]).score for h, r in zip(hyps, REFS)]
        assert np.array_equal(np.asarray(scores), np.asarray(want)), (word_order, hyps)
        assert len(_vocab(prepared)) == size
