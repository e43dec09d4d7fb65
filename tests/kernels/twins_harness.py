"""Shared harness of the kernel-twin tests (``test_kernel_twins*.py``): the compiled kernel
modules and their plain-Python twins in ``mtscore/kernels/reference``, the input strategies
(real WMT21 segments from ``$MTSCORE_DATA`` or adversarial Unicode), the equality check of a
kernel against its twin, and the registry each test file fills with one check per kernel function.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np
import pytest
from conftest import data_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtscore.engine.tokenizers import intl_table
from mtscore.kernels import (
    _detok,
    _edit_csr,
    _edit_distance,
    _edit_words,
    _greedy,
    _lists,
    _ngram,
    _pairwise,
    _resample,
    _sentence,
    _ter_fused,
    _ter_normalize,
    _ter_shift,
    _text,
    _text_vocab,
)
from mtscore.kernels.reference import (
    detok,
    edit_csr,
    edit_distance,
    edit_words,
    greedy,
    lists,
    ngram,
    pairwise,
    resample,
    sentence,
    ter_fused,
    ter_normalize,
    ter_shift,
    text,
    text_vocab,
)

MODULES = {"_text": (_text, text), "_text_vocab": (_text_vocab, text_vocab), "_lists": (_lists, lists),
           "_ngram": (_ngram, ngram),
           "_ter_normalize": (_ter_normalize, ter_normalize), "_ter_shift": (_ter_shift, ter_shift),
           "_ter_fused": (_ter_fused, ter_fused), "_resample": (_resample, resample), "_greedy": (_greedy, greedy),
           "_sentence": (_sentence, sentence), "_pairwise": (_pairwise, pairwise),
           "_detok": (_detok, detok), "_edit_csr": (_edit_csr, edit_csr),
           "_edit_distance": (_edit_distance, edit_distance), "_edit_words": (_edit_words, edit_words)}


def kernel_functions():
    """``module.name`` of every public function / class of the compiled kernel modules."""
    out = []
    for key, (mod, _) in MODULES.items():
        for name in dir(mod):
            obj = getattr(mod, name)
            if not name.startswith("_") and callable(obj) and getattr(obj, "__module__", "") == mod.__name__:
                out.append(f"{key}.{name}")
    return sorted(out)


def pair(func):
    key, name = func.split(".")
    mod, tw = MODULES[key]
    return getattr(mod, name), getattr(tw, name)


# ---- inputs --------------------------------------------------------------------------------
CHARS = (list("abcABsS 09.,-&;<>'\"()$€«»…—’“”?:!/[]{}~`@^_|+*#%=\\\n\t\r\x0b\x0c\x1c\x85\xa0"
               "\u1680\u2000\u2009\u200a\u2028\u202f\u205f\u3000\u3001\u3002")
          + list("中文日本語한국어美众院公布りのをテスト〈〉【】〔〕・ｰ｡｢．，？：；！＂（）㈱㍿豈︰⺀㇀ㇰ㈀㼢㼣")
          + ["😀", "𝔘", "\U00020000", "\U0002A6D6", "\u20001", "\u2E80", "\u303F", "\ufe30",
             "\uff01", "\u0301", "\ud800", "\x00", "Σ", "ΑΣ", "İ", "ẞ", "ǅ", "&quot;", "&amp;",
             "&lt;", "&gt;", "&amp;lt;", "'s ", "\n-", "-\n", "<skipped>", " .", "1,000", "3.14"])
ADVERSARIAL = st.one_of(
    st.lists(st.sampled_from(CHARS), max_size=25).map("".join),
    st.text(max_size=25),
).flatmap(lambda s: st.sampled_from([s, s + ".", s + " .", "1" + s + "9", s + " 10, " + s,
                                      s.replace("a", "<skipped>"), s.upper(), s.lower()]))

WMT_PAIRS = ["newstest2021.en-de", "newstest2021.en-zh", "newstest2021.en-ja",
             "newstest2021.en-ru", "newstest2021.cs-en", "florestest2021.bn-hi"]


@functools.lru_cache(maxsize=1)
def wmt_rows():
    """[(hypothesis, [references])] of a few WMT21 pairs (first system output), or None."""
    base = data_dir() / "wmt21-news-systems" / "txt"
    rows = []
    for p in WMT_PAIRS:
        refs = [f.read_text(encoding="utf-8").split("\n")[:-1]
                for f in sorted((base / "references").glob(f"{p}.ref.*"))]
        hyps = sorted((base / "system-outputs").glob(f"{p}.hyp.*"))
        if not refs or not hyps:
            continue
        h = hyps[0].read_text(encoding="utf-8").split("\n")[:-1]
        rows += [(h[i], [r[i] for r in refs]) for i in range(min(len(h), *map(len, refs)))]
    return rows or None


def corpus(data, source, n_max=6, k_max=3, max_words=None, none_refs=True):
    """``(hyps, refs)``: N hypotheses and K reference streams (None: a missing reference; every
    segment keeps at least one)."""
    n = data.draw(st.integers(1, n_max), label="n")
    k = data.draw(st.integers(1, k_max), label="k")
    if source == "wmt":
        rows = wmt_rows()
        if max_words:
            rows = [r for r in rows if len(r[0].split()) <= max_words
                    and all(len(x.split()) <= max_words for x in r[1])]
        picked = [data.draw(st.sampled_from(rows), label="row") for _ in range(n)]
        hyps = [h for h, _ in picked]
        refs = [[r[j % len(r)] for _, r in picked] for j in range(k)]
    else:
        seg = ADVERSARIAL if not max_words else st.lists(
            st.sampled_from([*CHARS, "w", "x", "y"]), max_size=max_words).map(" ".join)
        hyps = data.draw(st.lists(seg, min_size=n, max_size=n), label="hyps")
        refs = [data.draw(st.lists(seg, min_size=n, max_size=n), label="refs") for _ in range(k)]
    if none_refs and k > 1:
        for i in range(n):
            drop = data.draw(st.sets(st.integers(0, k - 1), max_size=k - 1), label="none")
            for j in drop:
                refs[j][i] = None
    return hyps, refs


def texts(data, source):
    hyps, refs = corpus(data, source, none_refs=False)
    return hyps + [x for r in refs for x in r]


def outcome(f, *args, **kw):
    try:
        return f(*args, **kw)
    except Exception as e:  # the twin must raise the same kind of error
        return ("raised", type(e))


def _raised(x):
    return isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and x[0] == "raised"


def assert_same(a, b, approx=False):
    if _raised(a) or _raised(b):
        assert a == b, (a, b)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b), (a, b)
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y, approx)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), (a, b)
        assert a.dtype == b.dtype, (a, b)
        assert a.shape == b.shape, (a, b)
        if approx:
            # float32 cosines (kernel: sgemm's summation order; twin: an exact sum rounded once),
            # and F = 2PR/(P+R) amplifies the difference where P + R is near 0: relative as well
            # as absolute tolerance, looser for F
            rtol, atol = (1e-5, 1e-6) if approx is True else approx
            if a.ndim == 2 and a.shape[1] == 3:
                np.testing.assert_allclose(a[:, :2], b[:, :2], rtol=rtol, atol=atol, equal_nan=True)
                np.testing.assert_allclose(a[:, 2], b[:, 2], rtol=100 * rtol, atol=atol, equal_nan=True)
            else:
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)
    else:
        assert a == b, (a, b)


def both(func, *args, approx=False, **kw):
    """Call kernel and twin on the same arguments; assert equal results; return the kernel's."""
    k, t = pair(func)
    a = outcome(k, *args, **kw)
    assert_same(a, outcome(t, *args, **kw), approx)
    return a


@functools.lru_cache(maxsize=1)
def load_intl():
    table = np.frombuffer(intl_table(), dtype=np.uint8)
    text.set_intl_table(table)
    return table


def encoded(strings, mode, vocab):
    """Kernel CSR encoding of ``strings`` (None -> empty) as ``(values, offsets)``."""
    return _text.encode([s or "" for s in strings], mode, vocab, True)


def case_registry(cases):
    """A decorator ``case(func, examples=40)`` that records a check of kernel function ``func``
    (``module.name``) in ``cases`` as ``(check, examples)``."""
    def case(func, examples=40):
        def deco(f):
            cases[func] = (f, examples)
            return f
        return deco
    return case


def params(f):
    return [(p.name, p.default) for p in inspect.signature(f).parameters.values()]


def assert_same_signature(kernel, twin):
    """Same parameter names and defaults; for a class, the same public methods (each with the
    same parameters) and ``__len__``."""
    if not isinstance(kernel, type):
        assert params(kernel) == params(twin), kernel
        return
    for name in [n for n in dir(kernel) if not n.startswith("_")] + ["__len__"]:
        assert hasattr(twin, name), (kernel, name)
        if not name.startswith("_"):
            assert params(getattr(kernel, name)) == params(getattr(twin, name)), (kernel, name)


def run_case(cases, func, source):
    """The one parametrised check of every kernel-twin file: kernel ``func`` (``module.name``)
    against its twin, same signature, then its recorded check on ``source`` ('wmt' or
    'unicode') for as many hypothesis examples as ``cases[func]`` says."""
    kernel, twin = pair(func)
    assert_same_signature(kernel, twin)
    if source == "wmt" and wmt_rows() is None:
        pytest.skip(f"WMT21 segments not found under {data_dir()} (set MTSCORE_DATA)")
    check, examples = cases[func]

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(data=st.data())
    def run(data):
        check(data, source)

    run()
