"""How R and Perl print, read and round numbers, reproduced bit for bit, so that the DA scripts'
released files (written by R's ``write.table``/``print`` and read back by Perl) are recreated exactly.

* :func:`signif`, :func:`r_round`, :func:`r_format` - R's ``signif``, ``round`` and the shortest
  of fixed/scientific notation ``print`` chooses.
* :func:`r_read`, :func:`r_print_read` - a number as R reads it back after printing it.
* :func:`perl_atof` - Perl's string-to-number conversion (not correctly rounded).
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "perl_atof",
    "r_format",
    "r_print_read",
    "r_read",
    "r_round",
    "signif",
]


def signif(x, digits: int = 7) -> np.ndarray:
    """Round to ``digits`` significant digits, as R's ``print`` shows a number."""
    x = np.asarray(x, dtype=np.float64)
    return np.array([float(f"{v:.{digits}g}") if np.isfinite(v) else v for v in x.ravel()]).reshape(x.shape)


def r_read(text: str) -> float:
    """A decimal string read as R's ``R_strtod`` reads it (``read.table``): the digits gathered
    into an x87 long double, divided (or multiplied) by a long-double power of ten, then rounded
    to double. Not always the correctly rounded double (about 3 in 10,000 15-digit numbers
    differ in the last bit), which shows in the 15th digit of the DA scripts' means."""
    t = text.strip()
    if t.lstrip("+-").lower() in ("nan", "inf", "infinity"):
        return float(t)
    neg = t.startswith("-")
    mant, _, ex = t.lstrip("+-").lower().partition("e")
    ip, _, fp = mant.partition(".")
    ans = np.longdouble(0)
    ten = np.longdouble(10)
    for ch in ip + fp:
        ans = ten * ans + np.longdouble(ord(ch) - 48)
    expn = (int(ex) if ex else 0) - len(fp)
    n, fac, p10 = abs(expn), np.longdouble(1), ten
    while n:
        if n & 1:
            fac *= p10
        n >>= 1
        p10 *= p10
    if expn < 0:
        ans /= fac
    elif ans != 0:
        ans *= fac
    v = float(np.float64(ans))
    return -v if neg else v


def r_print_read(x, digits: int = 15) -> np.ndarray:
    """Values written with ``digits`` significant digits and read back by R: the same numbers
    as :func:`r_read` of each printed string, computed in bulk (the printed digits as an
    integer, an x87 long-double power of ten, one long-double division or product)."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.ravel()
    out = flat.copy()
    ok = np.flatnonzero(np.isfinite(flat) & (flat != 0))
    mant = np.empty(ok.size, dtype=np.int64)
    expn = np.empty(ok.size, dtype=np.int64)
    for j, v in enumerate(flat[ok].tolist()):
        m, e = f"{abs(v):.{digits - 1}e}".split("e")
        digs = m.replace(".", "").rstrip("0") or "0"
        mant[j] = int(digs)
        expn[j] = int(e) - (len(digs) - 1)
    res = np.empty(ok.size, dtype=np.longdouble)
    for k in np.unique(expn).tolist():
        sel = expn == k
        fac = _ld_pow10(abs(k))
        ld = mant[sel].astype(np.longdouble)
        res[sel] = ld / fac if k < 0 else ld * fac
    out[ok] = np.copysign(res.astype(np.float64), flat[ok])
    return out.reshape(x.shape)


def _ld_pow10(n: int) -> np.longdouble:
    """10**n by R_strtod's repeated squaring in long double."""
    fac, p10 = np.longdouble(1), np.longdouble(10)
    while n:
        if n & 1:
            fac *= p10
        n >>= 1
        p10 *= p10
    return fac


def r_format(x: float, digits: int) -> str:
    """R's print/cat of a double with ``digits`` significant digits (fixed or scientific,
    whichever is narrower; fixed on a tie)."""
    if not np.isfinite(x):
        return "NaN" if np.isnan(x) else ("Inf" if x > 0 else "-Inf")
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    e = int(exp)
    nsig = len(mant.lstrip("-").replace(".", ""))
    sci = f"{mant}e{'-' if e < 0 else '+'}{abs(e):02d}"
    fixed = f"{x:.{max(0, nsig - 1 - e)}f}"
    return fixed if len(fixed) <= len(sci) else sci


def _perl_mulexp10(value: float, exponent: int) -> float:
    """perl's ``S_mulexp10``: 10**|exponent| by repeated squaring in double, then one product
    or quotient."""
    if exponent == 0 or value == 0:
        return value
    n, result, power = abs(exponent), 1.0, 10.0
    while n:
        if n & 1:
            result *= power
        n >>= 1
        if n:
            power *= power
    return value / result if exponent < 0 else value * result


def perl_atof(text: str) -> float:
    """A decimal string numified as perl did before 5.30 (``Perl_my_atof3`` under
    ``USE_PERL_ATOF``; 5.30 hands the string to the C library's ``strtod``): the digits before
    and after the point are gathered into two integers, each scaled by a power of ten and the
    two rounded doubles added, so ``"27.40367"`` reads as ``27 + 40367/1e5``, one unit in the
    last place below the correctly rounded 27.40367. For strings of up to 17 significant
    digits (perl rounds further digits away; R prints at most 15)."""
    t = text.strip()
    if t.lstrip("+-").lower() in ("nan", "inf", "infinity"):
        return float(t)
    neg = t.startswith("-")
    mant, _, ex = t.lstrip("+-").lower().partition("e")
    ip, dot, fp = mant.partition(".")
    expn = int(ex) if ex else 0
    value = _perl_mulexp10(float(int(ip or "0")), expn)
    if dot:
        value = value + _perl_mulexp10(float(int(fp or "0")), expn - len(fp))
    return -value if neg else value


def r_round(x, digits: int) -> np.ndarray:
    """R's ``round(x, digits)``: the exact binary value rounded to ``digits`` decimals (Python's
    correctly rounded ``round``; numpy's multiply-and-rint differs on values like 38.45)."""
    x = np.asarray(x, dtype=np.float64)
    return np.array([round(float(v), digits) if np.isfinite(v) else v for v in x.ravel()]).reshape(x.shape)

