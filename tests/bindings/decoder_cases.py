"""Shared cases and helpers of the ``mtscore.decoder`` tests (test_decoder.py,
test_decoder_cli.py): the metric configurations with their sacrebleu twins, bit-exact
comparison, newstest2021 MBR-like groups, and the adversarial Unicode strategy."""
from __future__ import annotations

import functools
import logging

import numpy as np
import pytest
from hypothesis import strategies as st

sacrebleu = pytest.importorskip("sacrebleu")
logging.getLogger("sacrebleu").setLevel(logging.ERROR)
logging.getLogger("mtscore").setLevel(logging.ERROR)

#: (mtscore metric name, options, sacrebleu constructor)
CONFIGS = [
    ("chrf", {}, lambda: sacrebleu.metrics.CHRF()),
    ("chrf++", {}, lambda: sacrebleu.metrics.CHRF(word_order=2)),
    ("chrf", {"char_order": 4, "word_order": 1, "beta": 1, "lowercase": True, "whitespace": True},
     lambda: sacrebleu.metrics.CHRF(char_order=4, word_order=1, beta=1, lowercase=True, whitespace=True)),
    ("chrf", {"eps_smoothing": True, "beta": 3},
     lambda: sacrebleu.metrics.CHRF(eps_smoothing=True, beta=3)),
    ("chrf", {"char_order": 0, "word_order": 2},
     lambda: sacrebleu.metrics.CHRF(char_order=0, word_order=2)),
    # by name, sentence BLEU uses effective order unless told otherwise (P14)
    ("bleu", {}, lambda: sacrebleu.metrics.BLEU(effective_order=True)),
    ("bleu", {"effective_order": False}, lambda: sacrebleu.metrics.BLEU()),
    ("bleu", {"effective_order": True}, lambda: sacrebleu.metrics.BLEU(effective_order=True)),
    ("bleu", {"smooth_method": "floor", "smooth_value": 0.01, "tokenize": "intl", "effective_order": False},
     lambda: sacrebleu.metrics.BLEU(smooth_method="floor", smooth_value=0.01, tokenize="intl")),
    ("bleu", {"smooth_method": "add-k", "tokenize": "char", "lowercase": True},
     lambda: sacrebleu.metrics.BLEU(smooth_method="add-k", tokenize="char", lowercase=True,
                                    effective_order=True)),
    ("bleu", {"smooth_method": "none", "tokenize": "zh", "max_ngram_order": 2, "effective_order": True},
     lambda: sacrebleu.metrics.BLEU(smooth_method="none", tokenize="zh", max_ngram_order=2,
                                    effective_order=True)),
    ("bleu", {"tokenize": "none"}, lambda: sacrebleu.metrics.BLEU(tokenize="none", effective_order=True)),
    ("ter", {}, lambda: sacrebleu.metrics.TER()),
    ("ter", {"normalized": True, "case_sensitive": True},
     lambda: sacrebleu.metrics.TER(normalized=True, case_sensitive=True)),
    ("ter", {"no_punct": True, "asian_support": True, "normalized": True},
     lambda: sacrebleu.metrics.TER(no_punct=True, asian_support=True, normalized=True)),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in o.items()) or 'default'}" for n, o, _ in CONFIGS]


def sacre_matrix(sb, rows, cols):
    return np.array([[sb.sentence_score(h, [r]).score for r in cols] for h in rows],
                    dtype=np.float64).reshape(len(rows), len(cols))


def assert_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    bad = np.argwhere(a.view(np.int64) != b.view(np.int64))
    assert len(bad) == 0, (len(bad), [(tuple(i), a[tuple(i)], b[tuple(i)]) for i in bad[:3]])


# ---- data ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def wmt_groups(pair="newstest2021.en-de", n_groups=3, size=12):
    """MBR-like groups: per segment, the distinct system outputs (plus the reference)."""
    from wmt21 import load_pair, pairs

    if pair not in pairs():
        return None
    refs, systems, _ = load_pair(pair)
    outs = list(systems.values())
    groups = []
    for i in range(0, len(refs[0]), 97):
        g = list(dict.fromkeys([refs[0][i]] + [s[i] for s in outs]))[:size]
        groups.append(g)
        if len(groups) == n_groups:
            break
    return groups


def need_wmt():
    g = wmt_groups()
    if g is None:
        from conftest import data_dir

        pytest.skip(f"newstest2021 en-de not found under {data_dir()} (set MTSCORE_DATA)")
    return g


_CHARS = list("abcAB 09.,-&;<>'\"()$€«»…—’“”?:!/") + list("中文日本語한국어りのをテスト") + [
    "😀", "𝔘", "\u0301", "\x00", "Σ", "İ", "ẞ", "&quot;", "&amp;", "'s ", " .", "1,000", "\t", "\u3000"]
UNICODE = st.one_of(st.lists(st.sampled_from(_CHARS), max_size=25).map("".join),
                    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20))
