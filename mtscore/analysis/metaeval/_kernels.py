"""Numba kernels of the meta-evaluation statistics (imported only through :mod:`._jit`).

Conventions shared by every kernel:

* A *grouped* vector is a flat float64 array ``x`` (T,) plus ``offs`` (G+1,) int64: group g is
  ``x[offs[g]:offs[g+1]]`` (a row of the systems x items matrix for ``average_by='sys'``, a
  column for ``'item'``, everything for ``'none'``). Missing entries are already removed.
* Pair outcome codes (human h, metric m, pair i < j inside a group): 0 concordant, 1 discordant,
  2 tied only in h, 3 tied only in m, 4 tied in both.
* Random streams: ``mode`` 0 replays NumPy's legacy global generator (MT19937 ``key`` (624,)
  int64 and ``pos``, advanced in place exactly as ``np.random.binomial(1, 0.5, size)`` /
  ``np.random.random()`` would advance it: one 53-bit double per draw, success iff u > 0.5);
  mode 1 is a xoshiro256** stream (``xs`` (4,) uint64, advanced in place), one bit per swap.
* Averages over groups use NumPy's pairwise summation so that means equal ``np.mean`` bit for bit.
"""
import numpy as np
from numba import njit

_MASK32 = 0xFFFFFFFF


# --------------------------------------------------------------------------- random streams
@njit(cache=True)
def _mt_twist(key):
    for i in range(227):
        y = (key[i] & 0x80000000) | (key[i + 1] & 0x7FFFFFFF)
        key[i] = key[i + 397] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
    for i in range(227, 623):
        y = (key[i] & 0x80000000) | (key[i + 1] & 0x7FFFFFFF)
        key[i] = key[i - 227] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
    y = (key[623] & 0x80000000) | (key[0] & 0x7FFFFFFF)
    key[623] = key[396] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)


@njit(cache=True)
def _mt_raw(key, st):
    """Next untempered 32-bit state word; ``st[0]`` is the position in ``key``."""
    if st[0] >= 624:
        _mt_twist(key)
        st[0] = 0
    y = key[st[0]]
    st[0] += 1
    return y


@njit(cache=True)
def _temper(y):
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & _MASK32


@njit(cache=True)
def _mt_double(key, st):
    a = _temper(_mt_raw(key, st)) >> 5
    b = _temper(_mt_raw(key, st)) >> 6
    return (a * 67108864.0 + b) / 9007199254740992.0


@njit(cache=True)
def _mt_coin(key, st):
    """``_mt_double(key, st) > 0.5`` without building the double: true iff a > 2**26, or
    a == 2**26 and b > 0 (a, b: the two 27- and 26-bit halves)."""
    a = _temper(_mt_raw(key, st)) >> 5
    y2 = _mt_raw(key, st)
    if a != 67108864:
        return a > 67108864
    return (_temper(y2) >> 6) > 0


@njit(cache=True)
def _mt_skip(key, st, doubles):
    """Advance the stream by ``doubles`` doubles (two words each) without tempering."""
    r = 2 * doubles
    while r > 0:
        if st[0] >= 624:
            _mt_twist(key)
            st[0] = 0
        step = min(r, 624 - st[0])
        st[0] += step
        r -= step


@njit(cache=True)
def mt_doubles(key, st, n):
    """``n`` doubles of the legacy stream (a test hook for the replay)."""
    out = np.empty(n)
    for i in range(n):
        out[i] = _mt_double(key, st)
    return out


@njit(cache=True)
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True)
def _xs_next(xs):
    result = _rotl(xs[1] * np.uint64(5), 7) * np.uint64(9)
    t = xs[1] << np.uint64(17)
    xs[2] ^= xs[0]
    xs[3] ^= xs[1]
    xs[1] ^= xs[2]
    xs[0] ^= xs[3]
    xs[2] ^= t
    xs[3] = _rotl(xs[3], 45)
    return result


@njit(cache=True)
def _bit(xs, buf):
    """One fair random bit from the xoshiro stream; ``buf`` = [bits, count] (uint64)."""
    if buf[1] == 0:
        buf[0] = _xs_next(xs)
        buf[1] = 64
    b = buf[0] & np.uint64(1)
    buf[0] >>= np.uint64(1)
    buf[1] -= np.uint64(1)
    return b == 1


# --------------------------------------------------------------------------- means
@njit(cache=True)
def _leaf_sum(a, lo, n):
    if n < 8:
        r = 0.0
        for i in range(n):
            r += a[lo + i]
        return r
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def _pairwise_sum(a, lo, n):
    """NumPy's pairwise summation (blocks of 128, 8 accumulators), without recursion (a
    recursive function does not survive Numba's on-disk cache)."""
    if n <= 128:
        return _leaf_sum(a, lo, n)
    los = np.empty(192, np.int64)
    ns = np.empty(192, np.int64)
    marks = np.empty(192, np.int8)
    vals = np.empty(96)
    sp = 1
    vp = 0
    los[0], ns[0], marks[0] = lo, n, 0
    while sp > 0:
        sp -= 1
        lo_, m, mark = los[sp], ns[sp], marks[sp]
        if m <= 128:
            vals[vp] = _leaf_sum(a, lo_, m)
            vp += 1
        elif mark == 0:
            n2 = m // 2
            n2 -= n2 % 8
            los[sp], ns[sp], marks[sp] = lo_, m, 1
            los[sp + 1], ns[sp + 1], marks[sp + 1] = lo_ + n2, m - n2, 0
            los[sp + 2], ns[sp + 2], marks[sp + 2] = lo_, n2, 0
            sp += 3
        else:
            vals[vp - 2] = vals[vp - 2] + vals[vp - 1]
            vp -= 1
    return vals[0]


@njit(cache=True)
def nanmean_np(vals, work, zero_nan):
    """``np.mean`` of the non-NaN values (NaN -> 0 when ``zero_nan``); 0 when none is left."""
    n = 0
    for v in vals:
        if v == v:
            work[n] = v
            n += 1
        elif zero_nan:
            work[n] = 0.0
            n += 1
    if n == 0:
        return 0.0
    return _pairwise_sum(work, 0, n) / n


@njit(cache=True)
def seqmean(vals, zero_nan):
    """Running-sum mean of the non-NaN values (NaN -> 0 when ``zero_nan``), 0 when none: the
    averaging of mt-metrics-eval's ``AverageCorrelation``."""
    tot = 0.0
    n = 0
    for v in vals:
        if v == v:
            tot += v
            n += 1
        elif zero_nan:
            n += 1
    return tot / n if n else 0.0


# --------------------------------------------------------------------------- pair outcomes
@njit(cache=True)
def _code(h1, h2, m1, m2, eps):
    dm = m1 - m2
    mt = dm == 0.0 or abs(dm) <= eps
    if h1 == h2:
        return 4 if mt else 2
    if mt:
        return 3
    if (h1 > h2 and dm > 0) or (h1 < h2 and dm < 0):
        return 0
    return 1


@njit(cache=True)
def pair_codes(gold, met, offs, eps):
    """Outcome code of every within-group pair i < j, group-major, row-major -> (P,) int8."""
    total = 0
    for g in range(offs.shape[0] - 1):
        n = offs[g + 1] - offs[g]
        total += n * (n - 1) // 2
    out = np.empty(total, np.int8)
    p = 0
    for g in range(offs.shape[0] - 1):
        b, e = offs[g], offs[g + 1]
        for i in range(b, e):
            for j in range(i + 1, e):
                out[p] = _code(gold[i], gold[j], met[i], met[j], eps)
                p += 1
    return out


@njit(cache=True)
def _variant_value(c, variant, ytie):
    """Kendall variant from counts c (5,): 0 'b', 1 '23', 2 'acc23'. NaN where undefined."""
    tot = c[0] + c[1] + c[2] + c[3] + c[4]
    if variant == 0:
        xtie = c[3] + c[4]
        if xtie == tot or ytie == tot:
            return np.nan
        return (c[0] - c[1]) / np.sqrt(float(tot - xtie)) / np.sqrt(float(tot - ytie))
    if tot == 0:
        return np.nan
    if variant == 1:
        return float(c[0] + c[4] - c[1] - c[2] - c[3]) / float(tot)
    return float(c[0] + c[4]) / float(tot)


@njit(cache=True)
def group_variants(gold, met, offs, eps, variant):
    """Per-group Kendall variant of one metric -> (G,) float64."""
    G = offs.shape[0] - 1
    out = np.empty(G)
    c = np.zeros(5, np.int64)
    for g in range(G):
        c[:] = 0
        b, e = offs[g], offs[g + 1]
        for i in range(b, e):
            for j in range(i + 1, e):
                c[_code(gold[i], gold[j], met[i], met[j], eps)] += 1
        out[g] = _variant_value(c, variant, c[2] + c[4])
    return out


# --------------------------------------------------------------------------- tie calibration
@njit(cache=True)
def stable_argsort_nonneg(x):
    """Stable argsort of non-negative float64 values (LSD radix sort on their IEEE bits, which
    order like the values; passes whose byte is constant are skipped)."""
    n = x.shape[0]
    keys = x.view(np.uint64)
    idx = np.arange(n)
    tmp = np.empty(n, np.int64)
    cnt = np.zeros(257, np.int64)
    for shift in range(0, 64, 8):
        sh = np.uint64(shift)
        cnt[:] = 0
        for i in range(n):
            cnt[((keys[i] >> sh) & np.uint64(255)) + 1] += 1
        if cnt.max() == n:
            continue
        for b in range(256):
            cnt[b + 1] += cnt[b]
        for i in range(n):
            j = idx[i]
            d = (keys[j] >> sh) & np.uint64(255)
            tmp[cnt[d]] = j
            cnt[d] += 1
        idx, tmp = tmp, idx
    return idx


@njit(cache=True)
def _tau_fn(c, acc):
    tot = c[0] + c[1] + c[2] + c[3] + c[4]
    if acc:
        return float(c[0] + c[4]) / float(tot)
    return float(c[0] + c[4] - c[1] - c[2] - c[3]) / float(tot)


@njit(cache=True)
def tie_calibration(gold, met, offs, acc, sample_rate, key, st):
    """Optimal-epsilon search of Deutsch et al. 2023 (the sweep of mt-metrics-eval's
    tau_optimization, same order of float operations). Pairs are kept with probability
    ``sample_rate`` drawn from the legacy stream. Returns (thresholds, taus, best index)."""
    G = offs.shape[0] - 1
    cap = 0
    for g in range(G):
        n = offs[g + 1] - offs[g]
        cap += n * (n - 1) // 2
    diff = np.empty(cap)
    grp = np.empty(cap, np.int64)
    code = np.empty(cap, np.int8)
    np_ = 0
    for g in range(G):
        b, e = offs[g], offs[g + 1]
        for i in range(b, e):
            for j in range(i + 1, e):
                if sample_rate == 1.0 or _mt_double(key, st) <= sample_rate:
                    diff[np_] = abs(met[i] - met[j])
                    grp[np_] = g
                    code[np_] = _code(gold[i], gold[j], met[i], met[j], -1.0)
                    np_ += 1
    stats = np.zeros((G, 5), np.int64)
    for p in range(np_):
        stats[grp[p], code[p]] += 1
    nrows = 0
    total = 0.0
    for g in range(G):
        if stats[g].sum() > 0:
            nrows += 1
            total += _tau_fn(stats[g], acc)
    thr = np.empty(np_ + 1)
    taus = np.empty(np_ + 1)
    thr[0] = 0.0
    taus[0] = total / nrows if nrows else np.nan
    nt = 1
    order = stable_argsort_nonneg(diff[:np_])
    for q in range(np_):
        p = order[q]
        g = grp[p]
        total -= _tau_fn(stats[g], acc)
        stats[g, code[p]] -= 1
        stats[g, 4 if (code[p] == 2 or code[p] == 4) else 3] += 1
        total += _tau_fn(stats[g], acc)
        t = total / nrows
        if thr[nt - 1] == diff[p]:
            taus[nt - 1] = t
        else:
            thr[nt] = diff[p]
            taus[nt] = t
            nt += 1
    best = 0
    for i in range(1, nt):
        if taus[i] > taus[best]:
            best = i
    return thr[:nt], taus[:nt], best


# --------------------------------------------------------------------------- pairs permutation
@njit(cache=True)
def _pairs_draw_legacy(c1, c2, offs, poffs, key, st, counts1, counts2):
    pos = st[0]
    for g in range(offs.shape[0] - 1):
        n = offs[g + 1] - offs[g]
        counts1[g, :] = 0
        counts2[g, :] = 0
        p = poffs[g]
        for i in range(n):
            r = 2 * (i + 1)                   # row i of the n x n draw: only j > i is used
            while r > 0:
                if pos >= 624:
                    _mt_twist(key)
                    pos = 0
                step = min(r, 624 - pos)
                pos += step
                r -= step
            for _j in range(i + 1, n):
                if pos >= 624:
                    _mt_twist(key)
                    pos = 0
                y1 = key[pos]
                pos += 1
                if pos >= 624:
                    _mt_twist(key)
                    pos = 0
                y2 = key[pos]
                pos += 1
                a = _temper(y1) >> 5          # the double's test u > 0.5, as _mt_coin
                coin = a > 67108864 if a != 67108864 else (_temper(y2) >> 6) > 0
                if coin:
                    counts1[g, c1[p]] += 1
                    counts2[g, c2[p]] += 1
                else:
                    counts1[g, c2[p]] += 1
                    counts2[g, c1[p]] += 1
                p += 1
    st[0] = pos


@njit(cache=True)
def _pairs_draw_fast(c1, c2, poffs, dpairs, dpoffs, base, xs, buf, counts1, counts2):
    for g in range(poffs.shape[0] - 1):
        counts1[g, :] = base[g]
        counts2[g, :] = base[g]
        for q in range(dpoffs[g], dpoffs[g + 1]):
            p = dpairs[q]
            if _bit(xs, buf):
                counts1[g, c1[p]] += 1
                counts2[g, c2[p]] += 1
            else:
                counts1[g, c2[p]] += 1
                counts2[g, c1[p]] += 1


@njit(cache=True)
def pairs_permutation(c1, c2, offs, ytie, variant, k, block, early_min, early_max, zero_nan,
                      mode, key, st, xs, quirk):
    """PairwisePermutationSigDiff: swap the pairwise outcomes (codes c1, c2 of metrics 1 and 2)
    of each pair with probability 1/2; statistic = mean over groups of the Kendall variant.
    ``quirk``: check early stopping only after a draw with a large delta (as mt-metrics-eval).
    Returns (count of draws with delta* >= delta, draws used, delta, draws (k, 2) [c2, c1])."""
    G = offs.shape[0] - 1
    poffs = np.zeros(G + 1, np.int64)
    for g in range(G):
        n = offs[g + 1] - offs[g]
        poffs[g + 1] = poffs[g] + n * (n - 1) // 2
    counts1 = np.zeros((G, 5), np.int64)
    counts2 = np.zeros((G, 5), np.int64)
    vals = np.empty(G)
    work = np.empty(G)
    for g in range(G):
        counts1[g, :] = 0
        counts2[g, :] = 0
        for p in range(poffs[g], poffs[g + 1]):
            counts1[g, c1[p]] += 1
            counts2[g, c2[p]] += 1
    for g in range(G):
        vals[g] = _variant_value(counts1[g], variant, ytie[g])
    r1 = nanmean_np(vals, work, zero_nan)
    for g in range(G):
        vals[g] = _variant_value(counts2[g], variant, ytie[g])
    delta = nanmean_np(vals, work, zero_nan) - r1
    # fast mode: only pairs whose outcomes differ can change anything
    base = np.zeros((G, 5), np.int64)
    nd = 0
    for p in range(poffs[G]):
        if c1[p] != c2[p]:
            nd += 1
    dpairs = np.empty(nd, np.int64)
    dpoffs = np.zeros(G + 1, np.int64)
    q = 0
    for g in range(G):
        for p in range(poffs[g], poffs[g + 1]):
            if c1[p] != c2[p]:
                dpairs[q] = p
                q += 1
            else:
                base[g, c1[p]] += 1
        dpoffs[g + 1] = q
    buf = np.zeros(2, np.uint64)
    draws = np.empty((k, 2))
    large = 0
    i = 0
    for i in range(1, k + 1):
        if mode == 0:
            _pairs_draw_legacy(c1, c2, offs, poffs, key, st, counts1, counts2)
        else:
            _pairs_draw_fast(c1, c2, poffs, dpairs, dpoffs, base, xs, buf, counts1, counts2)
        for g in range(G):
            vals[g] = _variant_value(counts1[g], variant, ytie[g])
        a = nanmean_np(vals, work, zero_nan)
        for g in range(G):
            vals[g] = _variant_value(counts2[g], variant, ytie[g])
        b = nanmean_np(vals, work, zero_nan)
        draws[i - 1, 0] = b
        draws[i - 1, 1] = a
        hit = b - a >= delta
        if hit:
            large += 1
        if (hit or not quirk) and i % block == 0:
            pv = large / i
            if pv < early_min or pv > early_max:
                break
    return large, i, delta, draws[:i]


# --------------------------------------------------------------------------- scores permutation
@njit(cache=True)
def _pearson(x, y, b, e):
    n = e - b
    mx = 0.0
    my = 0.0
    for i in range(b, e):
        mx += x[i]
        my += y[i]
    mx /= n
    my /= n
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    cx = True
    cy = True
    for i in range(b, e):
        dx = x[i] - mx
        dy = y[i] - my
        sxy += dx * dy
        sxx += dx * dx
        syy += dy * dy
        if x[i] != x[b]:
            cx = False
        if y[i] != y[b]:
            cy = False
    if cx or cy:
        return np.nan
    r = sxy / np.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


@njit(cache=True)
def corr_groups(gold, met, offs, kind, variant, eps, out):
    """Per-group statistic: kind 0 Pearson, 1 Kendall variant (eps), 2 accuracy (pooled,
    out[g] = agreements, used by the caller as a micro average)."""
    c = np.zeros(5, np.int64)
    for g in range(offs.shape[0] - 1):
        b, e = offs[g], offs[g + 1]
        if e - b < 2:
            out[g] = np.nan
            continue
        if kind == 0:
            out[g] = _pearson(gold, met, b, e)
        else:
            c[:] = 0
            for i in range(b, e):
                for j in range(i + 1, e):
                    c[_code(gold[i], gold[j], met[i], met[j], eps)] += 1
            if kind == 1:
                out[g] = _variant_value(c, variant, c[2] + c[4])
            else:
                out[g] = c[0] + c[4]


@njit(cache=True)
def _stat(gold, met, offs, kind, variant, eps, vals, work, zero_nan, npairs):
    corr_groups(gold, met, offs, kind, variant, eps, vals)
    if kind == 2:
        return vals.sum() / npairs
    return nanmean_np(vals, work, zero_nan)


@njit(cache=True)
def scores_permutation(gold, s1, s2, offs, kind, variant, eps, k, block, early_min, early_max,
                       zero_nan, mode, key, st, xs):
    """PERM-BOTH (Deutsch et al. 2021): swap the two metrics' (z-scored) scores item-wise with
    probability 1/2. Returns (large count, draws used, delta, draws (k, 2) [c2, c1])."""
    G = offs.shape[0] - 1
    n = gold.shape[0]
    npairs = 0
    for g in range(G):
        m = offs[g + 1] - offs[g]
        npairs += m * (m - 1) // 2
    vals = np.empty(G)
    work = np.empty(G)
    delta = (_stat(gold, s2, offs, kind, variant, eps, vals, work, zero_nan, npairs)
             - _stat(gold, s1, offs, kind, variant, eps, vals, work, zero_nan, npairs))
    m1 = np.empty(n)
    m2 = np.empty(n)
    buf = np.zeros(2, np.uint64)
    draws = np.empty((k, 2))
    large = 0
    i = 0
    for i in range(1, k + 1):
        for t in range(n):
            if mode == 0:
                w = _mt_coin(key, st)
            else:
                w = _bit(xs, buf)
            if w:
                m1[t] = s1[t]
                m2[t] = s2[t]
            else:
                m1[t] = s2[t]
                m2[t] = s1[t]
        a = _stat(gold, m1, offs, kind, variant, eps, vals, work, zero_nan, npairs)
        b = _stat(gold, m2, offs, kind, variant, eps, vals, work, zero_nan, npairs)
        draws[i - 1, 0] = b
        draws[i - 1, 1] = a
        if b - a >= delta:
            large += 1
        if i % block == 0:
            pv = large / i
            if pv < early_min or pv > early_max:
                break
    return large, i, delta, draws[:i]


# --------------------------------------------------------------------------- soft pairwise accuracy
@njit(cache=True)
def pairwise_pvalues(partial, sys_scores):
    """p[i, j] (i < j) = share of permutations whose null delta >= the observed delta, in
    float32 like the reference; NaN elsewhere. partial (P, S) float32, sys_scores (S,) float32."""
    P, S = partial.shape
    p = np.full((S, S), np.nan)
    for i in range(S):
        for j in range(i + 1, S):
            t = sys_scores[i] - sys_scores[j]
            c = 0
            for r in range(P):
                if partial[r, i] - partial[r, j] >= t:
                    c += 1
            p[i, j] = c / P
    return p


# --------------------------------------------------------------------------- fast linear pairs test
@njit(cache=True)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True)
def _weight(code, variant):
    """A pair's contribution to the numerator of '23' (variant 1) or 'acc23' (variant 2)."""
    good = code == 0 or code == 4
    if variant == 2:
        return 1 if good else 0
    return 1 if good else -1


@njit(cache=True)
def pairs_permutation_linear(c1, c2, offs, variant, k, block, early_min, early_max, zero_nan, xs, quirk):
    """:func:`pairs_permutation` for the linear variants ('23', 'acc23') on the fast stream:
    only pairs whose contributions differ matter, 64 of them per random word (popcounts).
    Same counts as the generic kernel would give for the same bits."""
    G = offs.shape[0] - 1
    tot = np.zeros(G, np.int64)
    s1 = np.zeros(G, np.int64)
    s2 = np.zeros(G, np.int64)
    nwords = 0
    p = 0
    eff = np.zeros(G, np.int64)
    for g in range(G):
        n = offs[g + 1] - offs[g]
        tot[g] = n * (n - 1) // 2
        for _ in range(tot[g]):
            w1 = _weight(c1[p], variant)
            w2 = _weight(c2[p], variant)
            s1[g] += w1
            s2[g] += w2
            if w1 != w2:
                eff[g] += 1
            p += 1
        nwords += (eff[g] + 63) // 64
    pos = np.zeros(nwords, np.uint64)
    neg = np.zeros(nwords, np.uint64)
    wgrp = np.empty(nwords, np.int64)
    p = 0
    w = 0
    for g in range(G):
        bit = 0
        start = w
        for _ in range(tot[g]):
            d = _weight(c1[p], variant) - _weight(c2[p], variant)
            if d != 0:
                if bit == 64:
                    bit = 0
                    w += 1
                if d > 0:
                    pos[w] |= np.uint64(1) << np.uint64(bit)
                else:
                    neg[w] |= np.uint64(1) << np.uint64(bit)
                wgrp[w] = g
                bit += 1
            p += 1
        if bit > 0 or w > start:
            w += 1
    unit = 1 if variant == 2 else 2
    vals = np.empty(G)
    work = np.empty(G)
    for g in range(G):
        vals[g] = s1[g] / tot[g]
    r1 = nanmean_np(vals, work, zero_nan)
    for g in range(G):
        vals[g] = s2[g] / tot[g]
    delta = nanmean_np(vals, work, zero_nan) - r1
    shift = np.zeros(G, np.int64)
    draws = np.empty((k, 2))
    large = 0
    i = 0
    for i in range(1, k + 1):
        shift[:] = 0
        for q in range(nwords):
            r = _xs_next(xs)
            shift[wgrp[q]] += _popcount(r & pos[q]) - _popcount(r & neg[q])
        for g in range(G):
            vals[g] = (s2[g] + unit * shift[g]) / tot[g]
        a = nanmean_np(vals, work, zero_nan)
        for g in range(G):
            vals[g] = (s1[g] - unit * shift[g]) / tot[g]
        b = nanmean_np(vals, work, zero_nan)
        draws[i - 1, 0] = b
        draws[i - 1, 1] = a
        hit = b - a >= delta
        if hit:
            large += 1
        if (hit or not quirk) and i % block == 0:
            pv = large / i
            if pv < early_min or pv > early_max:
                break
    return large, i, delta, draws[:i]
