"""Plain-Python twins of ``mtscore/kernels/_ngram.pyx`` (tests only): the same names,
signatures, array layouts and dtypes.

The prepared-reference layout is part of the kernels' interface, so the ``*_prepare_refs`` twins
produce the same entry lists: per segment (BLEU) or (segment, reference) pair (chrF), one entry
per distinct n-gram in first-seen order (position outer, order inner), whose key is

    order 1:  the symbol                                 (chrF++ word ids: | 1 << 62)
    order n:  ((entry of the (n-1)-gram prefix + 1) << 32) | (symbol as uint32)

built here from dicts of n-gram tuples. The statistics twins decode those keys back into tuples
and count with Counters (``sum(min(hyp_count, ref_count))``): no tables, no interning walk.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

WORD_FLAG = 1 << 62
_LOW = (1 << 32) - 1

_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]
Gram = tuple[int, ...]  # (kind, symbol, symbol, ...): kind 0 = characters / tokens, 1 = chrF++ words


def ngram_counts(seq: Sequence[Any], order: int) -> list[Counter]:
    return [Counter(tuple(seq[i:i + n]) for i in range(len(seq) - n + 1))
            for n in range(1, order + 1)]


def _npos(length: int, n: int) -> int:
    return length - n + 1 if length >= n else 0


def _add_entries(seq: Sequence[int], order: int, kind: int, entries: dict[Gram, int],
                 keys: list[int]) -> Counter:
    """Give every new n-gram of ``seq`` (orders 1..order) an entry (and its key); the counts."""
    counts: Counter = Counter()
    for p in range(len(seq)):
        for n in range(1, order + 1):
            if p + n > len(seq):
                break
            g = (kind, *tuple(seq[p:p + n]))
            if g not in entries:
                entries[g] = len(keys)
                sym = seq[p + n - 1]
                if n == 1:
                    keys.append(sym | (WORD_FLAG if kind else 0))
                else:
                    keys.append(((entries[g[:-1]] + 1) << 32) | (sym & _LOW))
            counts[entries[g]] += 1
    return counts


def _decode(keys: Sequence[int]) -> list[Gram]:
    """The n-gram tuple of each entry of one segment's (or pair's) entry list."""
    grams: list[Gram] = []
    for key in keys:
        hi = key >> 32
        sym = key & _LOW
        if hi == 0:
            grams.append((0, sym))
        elif key & ~_LOW == WORD_FLAG:
            grams.append((1, sym))
        else:
            grams.append(grams[hi - 1] + (sym,))
    return grams


def _stream(s: tuple[Any, Any]) -> tuple[list[int], list[int]]:
    return (np.asarray(s[0], dtype=np.int32).tolist(), np.asarray(s[1], dtype=np.int64).tolist())


# =====================================================================================
# BLEU
# =====================================================================================
def bleu_prepare_refs(streams: list, present: npt.NDArray[np.uint8],
                      max_order: int) -> tuple[_I64, _I64, _I32, _I32]:
    """``(seg_offsets int64 (N+1,), keys int64 (E,), maxcounts int32 (E,), ref_lens int32 (N, K))``;
    an n-gram's count is its maximum count over the segment's references."""
    present = np.asarray(present)
    K, N = len(streams), present.shape[1]
    if present.shape[0] != K:
        raise ValueError("present must be (K, N)")
    data = [_stream(s) for s in streams]
    for k, (_, off) in enumerate(data):
        if len(off) != N + 1:
            raise ValueError(f"reference stream {k} has {len(off) - 1} segments, expected {N}")
    seg_offsets, keys, counts = [0], [], []
    ref_lens = np.full((N, K), -1, dtype=np.int32)
    for i in range(N):
        entries: dict[Gram, int] = {}
        seg_keys: list[int] = []
        maxc: Counter = Counter()
        for k, (val, off) in enumerate(data):
            if not present[k, i]:
                continue
            seq = val[off[i]:off[i + 1]]
            ref_lens[i, k] = len(seq)
            for e, c in _add_entries(seq, max_order, 0, entries, seg_keys).items():
                maxc[e] = max(maxc[e], c)
        keys += seg_keys
        counts += [maxc[e] for e in range(len(seg_keys))]
        seg_offsets.append(len(keys))
    return (np.array(seg_offsets, dtype=np.int64), np.array(keys, dtype=np.int64),
            np.array(counts, dtype=np.int32), ref_lens)


def _rows(n_prepared: int, start: int, stop: int, seg_map: _I64 | None,
          n_hyp_offsets: int) -> list[int]:
    if seg_map is not None:
        rows = np.asarray(seg_map).tolist()
        if rows and (min(rows) < 0 or max(rows) >= n_prepared):
            raise ValueError("seg_map refers to a reference row that was not prepared")
    else:
        if stop < 0:
            stop = n_prepared
        rows = list(range(start, stop))
    if n_hyp_offsets != len(rows) + 1:
        raise ValueError(f"{n_hyp_offsets - 1} hypotheses for {len(rows)} reference segments")
    return rows


def bleu_stats(hyp_values: _I32, hyp_offsets: _I64, seg_offsets: _I64, keys: _I64,
               maxcounts: _I32, ref_lens: _I32, max_order: int, start: int = 0, stop: int = -1,
               seg_map: _I64 | None = None) -> _I64:
    """int64 ``(n, 2 + 2 * max_order)``: ``[hyp_len, closest_ref_len, correct_1..N, total_1..N]``."""
    rows = _rows(len(seg_offsets) - 1, start, stop, seg_map, len(hyp_offsets))
    hv = np.asarray(hyp_values).tolist()
    out = np.zeros((len(rows), 2 + 2 * max_order), dtype=np.int64)
    for i, s in enumerate(rows):
        lo, hi = int(seg_offsets[s]), int(seg_offsets[s + 1])
        ref = dict(zip(_decode(np.asarray(keys[lo:hi]).tolist()), np.asarray(maxcounts[lo:hi]).tolist()))
        hyp = hv[hyp_offsets[i]:hyp_offsets[i + 1]]
        lens = [int(x) for x in ref_lens[s] if x >= 0]
        closest_diff, closest_len = -1, -1
        for r in lens:  # ties -> the shorter reference (sacrebleu _get_closest_ref_len)
            diff = abs(len(hyp) - r)
            if closest_diff == -1 or diff < closest_diff:
                closest_diff, closest_len = diff, r
            elif diff == closest_diff and r < closest_len:
                closest_len = r
        correct = [sum(min(c, ref.get((0, *g), 0)) for g, c in cn.items())
                   for cn in ngram_counts(hyp, max_order)]
        total = [_npos(len(hyp), n) for n in range(1, max_order + 1)]
        out[i] = [len(hyp), closest_len, *correct, *total]
    return out


def _check_csr(offsets: list[int], n_values: int, what: str) -> None:
    if len(offsets) < 1:
        raise ValueError(f"{what}: offsets must hold N + 1 >= 1 entries")
    if offsets[0] < 0 or offsets[-1] > n_values:
        raise ValueError(f"{what}: offsets outside [0, {n_values}]")
    for i in range(len(offsets) - 1):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"{what}: offsets decrease at {i}")


def bleu_pair_stats(hyp_values: _I32, hyp_offsets: _I64, ref_values: _I32, ref_offsets: _I64,
                    ref_groups: _I64, max_order: int) -> _I64:
    """int64 ``(N, 2 + 2 * max_order)`` of hypothesis i against references
    ``ref_groups[i]:ref_groups[i + 1]`` (sacrebleu: clipped counts against the max count of each
    n-gram over the references, closest reference length with ties to the shorter)."""
    hv, ho = np.asarray(hyp_values).tolist(), np.asarray(hyp_offsets).tolist()
    rv, ro = np.asarray(ref_values).tolist(), np.asarray(ref_offsets).tolist()
    g = np.asarray(ref_groups).tolist()
    _check_csr(ho, len(hv), "hyp")
    _check_csr(ro, len(rv), "ref")
    n = len(ho) - 1
    if len(g) != n + 1:
        raise ValueError(f"ref_groups has {len(g)} entries, expected N + 1 = {n + 1}")
    _check_csr(g, len(ro) - 1, "ref_groups")
    if max_order < 1:
        raise ValueError("max_order must be >= 1")
    out = np.zeros((n, 2 + 2 * max_order), dtype=np.int64)
    for i in range(n):
        hyp = hv[ho[i]:ho[i + 1]]
        refs = [rv[ro[r]:ro[r + 1]] for r in range(g[i], g[i + 1])]
        maxc: Counter = Counter()
        closest_diff, closest_len = -1, -1
        for ref in refs:
            for cn in ngram_counts(ref, max_order):
                for gram, c in cn.items():
                    maxc[gram] = max(maxc[gram], c)
            diff = abs(len(hyp) - len(ref))
            if closest_diff == -1 or diff < closest_diff:
                closest_diff, closest_len = diff, len(ref)
            elif diff == closest_diff and len(ref) < closest_len:
                closest_len = len(ref)
        correct = [sum(min(c, maxc.get(gram, 0)) for gram, c in cn.items())
                   for cn in ngram_counts(hyp, max_order)]
        total = [_npos(len(hyp), k) for k in range(1, max_order + 1)]
        out[i] = [len(hyp), closest_len, *correct, *total]
    return out


def _py_sum(xs: Sequence[float], neumaier: bool) -> float:
    """CPython's sum() of floats: left to right (<= 3.11) or Neumaier-compensated (>= 3.12)."""
    f = 0.0
    if not neumaier:
        for x in xs:
            f += x
        return f
    c = 0.0
    for x in xs:
        t = f + x
        c += (f - t) + x if abs(f) >= abs(x) else (x - t) + f
        f = t
    if c != 0.0 and c - c == 0.0:
        f += c
    return f


def bleu_row(correct: Sequence[int], total: Sequence[int], sys_len: int, ref_len: int,
             max_order: int, smooth: int, smooth_value: float, effective_order: bool,
             neumaier: bool) -> tuple[float, float, list[float]]:
    """sacrebleu's ``BLEU.compute_bleu`` of one row, the twin of ``_ngram_common.bleu_row``:
    ``(score, bp, precisions)`` (smooth: 0 none, 1 floor, 2 add-k, 3 exp)."""
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    prec = [0.0] * max_order
    if not any(correct):
        return 0.0, bp, prec
    smooth_mteval = 1.0
    eff = max_order
    for n in range(1, max_order + 1):
        corr, tot = float(correct[n - 1]), float(total[n - 1])
        if smooth == 2 and n > 1:
            corr += smooth_value
            tot += smooth_value
        if tot == 0:
            break
        if effective_order:
            eff = n
        if corr == 0:
            if smooth == 3:
                smooth_mteval *= 2
                prec[n - 1] = 100.0 / (smooth_mteval * tot)
            elif smooth == 1:
                prec[n - 1] = 100.0 * smooth_value / tot
        else:
            prec[n - 1] = 100.0 * corr / tot
    if any(p == 0.0 for p in prec[:eff]):  # my_log(0) = -9999999999: exp(...) == 0.0
        return 0.0, bp, prec
    return bp * math.exp(_py_sum([math.log(p) for p in prec[:eff]], neumaier) / eff), bp, prec


def bleu_sentence_scores(stats: _I64, max_order: int, smooth: int, smooth_value: float,
                         effective_order: bool, neumaier: bool) -> _F64:
    """sacrebleu's ``BLEU.compute_bleu`` of every row (:func:`bleu_row`)."""
    out = np.empty(len(stats), dtype=np.float64)
    for i, row in enumerate(np.asarray(stats).tolist()):
        out[i] = bleu_row(row[2:2 + max_order], row[2 + max_order:2 + 2 * max_order], row[0],
                          row[1], max_order, smooth, smooth_value, effective_order, neumaier)[0]
    return out


# =====================================================================================
# chrF / chrF++
# =====================================================================================
def chrf_prepare_refs(char_streams: list, word_streams: list, present: npt.NDArray[np.uint8],
                      char_order: int, word_order: int) -> tuple[_I64, _I64, _I32, _I32, _I32]:
    """``(pair_offsets int64 (N*K+1,), keys int64 (E,), counts int32 (E,), char_lens int32 (N, K),
    word_lens int32 (N, K))``: one entry list per (segment i, reference k), index ``i * K + k``."""
    present = np.asarray(present)
    K, N = len(char_streams), present.shape[1]
    words = word_order > 0
    if words and len(word_streams) != K:
        raise ValueError("word_streams must match char_streams")
    chars_d = [_stream(s) for s in char_streams]
    words_d = [_stream(s) for s in word_streams] if words else []
    for k, (_, off) in enumerate(chars_d):
        if len(off) != N + 1:
            raise ValueError(f"reference stream {k} has {len(off) - 1} segments, expected {N}")
    pair_offsets, keys, counts = [0], [], []
    char_lens = np.full((N, K), -1, dtype=np.int32)
    word_lens = np.full((N, K), -1, dtype=np.int32)
    for i in range(N):
        for k in range(K):
            if present[k, i]:
                entries: dict[Gram, int] = {}
                pk: list[int] = []
                cv, co = chars_d[k]
                cs = cv[co[i]:co[i + 1]]
                cnt = _add_entries(cs, char_order, 0, entries, pk)
                ws: list[int] = []
                if words:
                    wv, wo = words_d[k]
                    ws = wv[wo[i]:wo[i + 1]]
                    cnt += _add_entries(ws, word_order, 1, entries, pk)
                char_lens[i, k], word_lens[i, k] = len(cs), len(ws)
                keys += pk
                counts += [cnt[e] for e in range(len(pk))]
            pair_offsets.append(len(keys))
    return (np.array(pair_offsets, dtype=np.int64), np.array(keys, dtype=np.int64),
            np.array(counts, dtype=np.int32), char_lens, word_lens)


def chrf_f(stats: Sequence[int], factor: float, eps_smoothing: bool) -> float:
    """sacrebleu ``CHRF._compute_f_score`` of one row ``[hyp, ref, match] * order``."""
    order = len(stats) // 3
    eps = 1e-16
    score = avg_prec = avg_rec = 0.0
    effective_order = 0
    for i in range(order):
        n_hyp, n_ref, n_match = stats[3 * i:3 * i + 3]
        prec = n_match / n_hyp if n_hyp > 0 else eps
        rec = n_match / n_ref if n_ref > 0 else eps
        denom = factor * prec + rec
        score += ((1 + factor) * prec * rec / denom) if denom > 0 else eps
        if n_hyp > 0 and n_ref > 0:
            avg_prec += prec
            avg_rec += rec
            effective_order += 1
    if eps_smoothing:
        return 100 * score / order
    if effective_order == 0:
        avg_prec = avg_rec = 0.0
    else:
        avg_prec /= effective_order
        avg_rec /= effective_order
    if avg_prec + avg_rec:
        score = (1 + factor) * avg_prec * avg_rec
        score /= ((factor * avg_prec) + avg_rec)
        return 100 * score
    return 0.0


def chrf_f_scores(stats: _I64, factor: float, eps_smoothing: bool) -> _F64:
    """sacrebleu's chrF score of every stats row (N, 3 * order) -> float64 (N,)."""
    return np.array([chrf_f(row, factor, eps_smoothing) for row in np.asarray(stats).tolist()],
                    dtype=np.float64).reshape(len(stats))


def chrf_stats(hyp_chars: _I32, hyp_char_offsets: _I64, hyp_words: _I32,
               hyp_word_offsets: _I64, pair_offsets: _I64, keys: _I64, counts: _I32,
               char_lens: _I32, word_lens: _I32, char_order: int, word_order: int, factor: float,
               eps_smoothing: bool, start: int = 0, stop: int = -1,
               seg_map: _I64 | None = None) -> tuple[_I64, _F64]:
    """``(stats int64 (n, 3 * (char_order + word_order)), scores float64 (n,))``; per segment the
    reference with the best sentence score (strict >, first wins)."""
    K = char_lens.shape[1]
    rows = _rows(char_lens.shape[0], start, stop, seg_map, len(hyp_char_offsets))
    words = word_order > 0
    if words and len(hyp_word_offsets) != len(rows) + 1:
        raise ValueError("hyp word offsets do not match")
    order = char_order + word_order
    hc, hw = np.asarray(hyp_chars).tolist(), np.asarray(hyp_words).tolist()
    stats = np.zeros((len(rows), 3 * order), dtype=np.int64)
    scores = np.zeros(len(rows), dtype=np.float64)
    for i, s in enumerate(rows):
        cs = hc[hyp_char_offsets[i]:hyp_char_offsets[i + 1]]
        ws = hw[hyp_word_offsets[i]:hyp_word_offsets[i + 1]] if words else []
        hyp_grams = [((0,), c) for c in ngram_counts(cs, char_order)]
        hyp_grams += [((1,), c) for c in ngram_counts(ws, word_order)] if words else []
        best_f = -1.0
        for k in range(K):
            if char_lens[s, k] < 0:
                continue
            lo, hi = int(pair_offsets[s * K + k]), int(pair_offsets[s * K + k + 1])
            ref = dict(zip(_decode(np.asarray(keys[lo:hi]).tolist()), np.asarray(counts[lo:hi]).tolist()))
            cur: list[int] = []
            for o, (kind, cn) in enumerate(hyp_grams):
                if o < char_order:
                    rc, hl = _npos(int(char_lens[s, k]), o + 1), _npos(len(cs), o + 1)
                else:
                    n = o - char_order + 1
                    rc, hl = _npos(int(word_lens[s, k]), n), _npos(len(ws), n)
                match = sum(min(c, ref.get(kind + g, 0)) for g, c in cn.items())
                cur += [hl if rc > 0 else 0, rc, match]
            f = chrf_f(cur, factor, eps_smoothing)
            if f > best_f:
                best_f = f
                stats[i] = cur
        scores[i] = best_f if best_f >= 0 else 0.0
    return stats, scores


def order_by_row(rows: _I64, n_rows: int) -> _I64:
    """Positions ordered by ``rows[i]``, ties in position order (a stable sort)."""
    r = np.asarray(rows).tolist()
    for i, x in enumerate(r):
        if x < 0 or x >= n_rows:
            raise ValueError(f"order_by_row: row {x} at position {i} is outside [0, {n_rows})")
    return np.array(sorted(range(len(r)), key=r.__getitem__), dtype=np.int64)
