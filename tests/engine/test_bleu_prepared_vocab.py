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


def _check_new_words_leave_vocabulary_and_scores(m, sb, seed, n_novel, make_hyps):
    """Three rounds of hypotheses with words no reference has (``make_hyps(novel)``): each
    sentence score equals sacrebleu's (``sb``) and the prepared vocabulary keeps its size."""
    prepared = m.prepare([REFS])
    size = len(_vocab(prepared))
    rng = np.random.default_rng(seed)
    for round_ in range(3):
        hyps = make_hyps([f"zz{round_}x{int(k)}" for k in rng.integers(0, 10**6, size=n_novel)])
        _, scores = m.stats_and_scores(hyps, prepared)
        want = [sb.sentence_score(h, [r]).score for h, r in zip(hyps, REFS)]
        assert np.array_equal(np.asarray(scores), np.asarray(want)), hyps
        assert len(_vocab(prepared)) == size


@pytest.mark.parametrize("tokenize", ["13a", "intl", "zh", "char", "none"])
def test_new_hypothesis_tokens_leave_the_vocabulary_and_scores_alone(tokenize):
    # words no reference has, inside punctuation and word-cache words too
    _check_new_words_leave_vocabulary_and_scores(
        BLEU(effective_order=True, tokenize=tokenize),
        sacrebleu.metrics.BLEU(effective_order=True, tokenize=tokenize), 5, 6,
        lambda nv: [f"The {nv[0]} sat on ({nv[1]}) mat.",
                    f"Prices {nv[2]}-{nv[3]} 3.5 % in 2020, {nv[4]}.",
                    f"Die {nv[5]} (UK) gewann 25.000 Stimmen."])


@pytest.mark.parametrize("word_order", [1, 2])
def test_new_hypothesis_words_leave_the_chrf_vocabulary_and_scores_alone(word_order):
    # new words next to known ones, repeated (their n-grams must still match nothing)
    _check_new_words_leave_vocabulary_and_scores(
        CHRF(word_order=word_order), sacrebleu.metrics.CHRF(word_order=word_order), 6, 4,
        lambda nv: [f"The {nv[0]} {nv[0]} sat on the mat. {nv[1]}!",
                    f"Prices rose {nv[2]} 3.5 % {nv[2]}, said U.S. officials.",
                    f"Die Labour-Partei ({nv[3]}) gewann 25.000 Stimmen {nv[3]}."])
