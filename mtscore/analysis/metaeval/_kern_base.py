"""Numba building blocks of the meta-evaluation kernels: the random streams, NumPy-exact means
and a stable radix argsort (imported by the other ``_kern_*`` modules and :mod:`._kernels`, never
directly by user code).

* Random streams: the legacy one replays NumPy's MT19937 (``key`` (624,) int64 and ``st`` =
  [position], advanced in place exactly as ``np.random.binomial(1, 0.5, size)`` /
  ``np.random.random()`` advance it: one 53-bit double per draw, success iff u > 0.5); the fast
  one is xoshiro256** (``xs`` (4,) uint64, advanced in place), one bit per swap.
* Means use NumPy's pairwise summation so that they equal ``np.mean`` bit for bit.
"""
import numpy as np
from numba import njit

_MASK32 = 0xFFFFFFFF


# --------------------------------------------------------------------------- random streams
@njit(cache=True)
def mt_twist(key):
    for i in range(227):
        y = (key[i] & 0x80000000) | (key[i + 1] & 0x7FFFFFFF)
        key[i] = key[i + 397] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
    for i in range(227, 623):
        y = (key[i] & 0x80000000) | (key[i + 1] & 0x7FFFFFFF)
        key[i] = key[i - 227] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)
    y = (key[623] & 0x80000000) | (key[0] & 0x7FFFFFFF)
    key[623] = key[396] ^ (y >> 1) ^ ((y & 1) * 0x9908B0DF)


@njit(cache=True)
def mt_raw(key, st):
    """Next untempered 32-bit state word; ``st[0]`` is the position in ``key``."""
    if st[0] >= 624:
        mt_twist(key)
        st[0] = 0
    y = key[st[0]]
    st[0] += 1
    return y


@njit(cache=True)
def temper(y):
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & _MASK32


@njit(cache=True)
def mt_double(key, st):
    a = temper(mt_raw(key, st)) >> 5
    b = temper(mt_raw(key, st)) >> 6
    return (a * 67108864.0 + b) / 9007199254740992.0


@njit(cache=True)
def mt_coin(key, st):
    """``mt_double(key, st) > 0.5`` without building the double: true iff a > 2**26, or
    a == 2**26 and b > 0 (a, b: the two 27- and 26-bit halves)."""
    a = temper(mt_raw(key, st)) >> 5
    y2 = mt_raw(key, st)
    if a != 67108864:
        return a > 67108864
    return (temper(y2) >> 6) > 0


@njit(cache=True)
def mt_skip(key, st, doubles):
    """Advance the stream by ``doubles`` doubles (two words each) without tempering."""
    r = 2 * doubles
    while r > 0:
        if st[0] >= 624:
            mt_twist(key)
            st[0] = 0
        step = min(r, 624 - st[0])
        st[0] += step
        r -= step


@njit(cache=True)
def mt_doubles(key, st, n):
    """``n`` doubles of the legacy stream (a test hook for the replay)."""
    out = np.empty(n)
    for i in range(n):
        out[i] = mt_double(key, st)
    return out


@njit(cache=True)
def rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True)
def xs_next(xs):
    result = rotl(xs[1] * np.uint64(5), 7) * np.uint64(9)
    t = xs[1] << np.uint64(17)
    xs[2] ^= xs[0]
    xs[3] ^= xs[1]
    xs[1] ^= xs[2]
    xs[0] ^= xs[3]
    xs[2] ^= t
    xs[3] = rotl(xs[3], 45)
    return result


@njit(cache=True)
def random_bit(xs, buf):
    """One fair random bit from the xoshiro stream; ``buf`` = [bits, count] (uint64)."""
    if buf[1] == 0:
        buf[0] = xs_next(xs)
        buf[1] = 64
    b = buf[0] & np.uint64(1)
    buf[0] >>= np.uint64(1)
    buf[1] -= np.uint64(1)
    return b == 1


# --------------------------------------------------------------------------- means
@njit(cache=True)
def leaf_sum(a, lo, n):
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
def pairwise_sum(a, lo, n):
    """NumPy's pairwise summation (blocks of 128, 8 accumulators), without recursion (a
    recursive function does not survive Numba's on-disk cache)."""
    if n <= 128:
        return leaf_sum(a, lo, n)
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
            vals[vp] = leaf_sum(a, lo_, m)
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
    return pairwise_sum(work, 0, n) / n


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


# --------------------------------------------------------------------------- sorting, bits
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
def popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))
