"""Plain-Python twin of ``mtscore.kernels._ter`` (used by tests only): the kernel's functions
with the same names and signatures (``TercomVocab``, ``tercom_normalize_texts``,
``tercom_tokenize``, ``ter_stats_range``, ``ter_stats_shared``, ``ter_pair_ids``) at the end,
built on two parts, both following sacrebleu 2.6.0 (``tokenizers/tokenizer_ter.py`` and
``metrics/lib_ter.py``) step by step, written as explicit scans so that each step maps onto
one loop of the compiled kernel:

* :func:`tercom_normalize` - the Tercom normaliser (string in, normalised string out);
* :func:`translation_edit_rate` - shift search + banded edit distance on token sequences
  (any hashable tokens: str or int ids), without the row cache (results are identical: the
  cache only skips recomputing rows whose hypothesis prefix is unchanged);
* :func:`segment_stats` - ``[min edits over refs, mean ref length]`` for one segment.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
INF = 1 << 28

OP_NOP, OP_SUB, OP_INS, OP_DEL, OP_UNDEF = " ", "s", "i", "d", "x"


# ---------------------------------------------------------------------------------------------
# normaliser
# ---------------------------------------------------------------------------------------------
def _in_western_punct(c: str) -> bool:
    # the 13a class ``[{-~[-` -&(-+:-@/]``
    o = ord(c)
    return (0x7B <= o <= 0x7E or 0x5B <= o <= 0x60 or 0x20 <= o <= 0x26
            or 0x28 <= o <= 0x2B or 0x3A <= o <= 0x40 or o == 0x2F)


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def _in_cjk(c: str) -> bool:
    # union of the four character-splitting classes of ``_normalize_asian``
    o = ord(c)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x31C0 <= o <= 0x31EF
            or 0x2E80 <= o <= 0x2EFF or 0x3300 <= o <= 0x33FF or 0xF900 <= o <= 0xFAFF
            or 0xFE30 <= o <= 0xFE4F or 0x3200 <= o <= 0x3F22)


def _in_asian_punct(c: str) -> bool:
    o = ord(c)
    return (o in (0x3001, 0x3002, 0x30FB) or 0x3008 <= o <= 0x3011 or 0x3014 <= o <= 0x301F
            or 0xFF61 <= o <= 0xFF65)


def _in_fullwidth_punct(c: str) -> bool:
    return ord(c) in (0xFF0E, 0xFF0C, 0xFF1F, 0xFF1A, 0xFF1B, 0xFF01, 0xFF02, 0xFF08, 0xFF09)


def _replace_literal(s: str, old: str, new: str) -> str:
    # leftmost non-overlapping scan (what re.sub does for a literal pattern)
    out, i, k = [], 0, len(old)
    while i < len(s):
        if s.startswith(old, i):
            out.append(new)
            i += k
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _pair_scan(s: str, first, second, template: str) -> str:
    # re.sub(r"(A)(B)", template) for single-character classes A, B
    out, i, n = [], 0, len(s)
    while i < n:
        if i + 1 < n and first(s[i]) and second(s[i + 1]):
            a, b = s[i], s[i + 1]
            out.append(_fill(template, a, b))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _fill(template: str, a: str, b: str) -> str:
    return {"A B ": f"{a} {b} ", " A B": f" {a} {b}"}[template]


def normalize_general_and_western(s: str) -> str:
    s = _replace_literal(s, "\n-", "")
    s = _replace_literal(s, "\n", " ")
    s = _replace_literal(s, "&quot;", '"')
    s = _replace_literal(s, "&amp;", "&")
    s = _replace_literal(s, "&lt;", "<")
    s = _replace_literal(s, "&gt;", ">")
    s = f" {s} "
    s = "".join(f" {c} " if _in_western_punct(c) else c for c in s)
    s = _replace_literal(s, "'s ", " 's ")
    # r"'s$" cannot match: the string ends with the space added above and holds no "\n".
    s = _pair_scan(s, lambda c: not _is_digit(c), lambda c: c in ".,", "A B ")
    s = _pair_scan(s, lambda c: c in ".,", lambda c: not _is_digit(c), " A B")
    s = _pair_scan(s, _is_digit, lambda c: c == "-", "A B ")
    return s


def normalize_asian(s: str) -> str:
    # The kana rules of sacrebleu are anchored at both ends (``^`` inside the alternatives) and
    # this function only runs after the western step, which starts the string with a space, so
    # they never fire. The splitting classes only add spaces around single characters, so one
    # pass over their union gives the same tokens.
    return "".join(f" {c} " if (_in_cjk(c) or _in_asian_punct(c) or _in_fullwidth_punct(c))
                   else c for c in s)


def tercom_normalize(sent: str, normalized: bool = False, no_punct: bool = False,
                     asian_support: bool = False, case_sensitive: bool = False) -> str:
    """sacrebleu's ``TER._preprocess_segment``: ``TercomTokenizer(sent.rstrip())``."""
    sent = sent.rstrip()
    if not sent:
        return ""
    if not case_sensitive:
        sent = sent.lower()
    return _tercom_steps(sent, normalized, no_punct, asian_support)


def _tercom_steps(sent: str, normalized: bool, no_punct: bool, asian_support: bool) -> str:
    """The TercomTokenizer steps proper (input already rstripped and lowercased)."""
    if normalized and sent:
        sent = normalize_general_and_western(sent)
        if asian_support:
            sent = normalize_asian(sent)
    if no_punct:
        sent = "".join(c for c in sent if c not in '.,?:;!"()')
        if asian_support:
            sent = "".join(c for c in sent
                           if not (_in_asian_punct(c) or _in_fullwidth_punct(c)))
    return " ".join(sent.split())


# ---------------------------------------------------------------------------------------------
# edit distance and shift search
# ---------------------------------------------------------------------------------------------
def band(n_h: int, n_r: int) -> list[tuple[int, int]]:
    """``[(lo, hi)]`` for rows 1..n_h (index 0 is row 0, the full row): the cells computed."""
    ratio = n_r / n_h if n_h else 1
    beam = math.ceil(ratio / 2 + BEAM_WIDTH) if ratio / 2 > BEAM_WIDTH else BEAM_WIDTH
    out = [(0, n_r + 1)]
    for i in range(1, n_h + 1):
        pd = math.floor(i * ratio)
        lo, hi = max(0, pd - beam), min(n_r + 1, pd + beam)
        if i == n_h:
            hi = n_r + 1
        out.append((lo, hi))
    return out


def edit_distance(h: Sequence, r: Sequence) -> tuple[int, str]:
    """Banded Levenshtein distance and its trace (ops from the hypothesis' point of view)."""
    n, m = len(h), len(r)
    cost = [[INF] * (m + 1) for _ in range(n + 1)]
    ops = [[OP_UNDEF] * (m + 1) for _ in range(n + 1)]
    for j in range(m + 1):
        cost[0][j], ops[0][j] = j, OP_INS
    bands = band(n, m)
    for i in range(1, n + 1):
        lo, hi = bands[i]
        prev, cur, op = cost[i - 1], cost[i], ops[i]
        for j in range(lo, hi):
            if j == 0:
                cur[0], op[0] = prev[0] + 1, OP_DEL
                continue
            eq = h[i - 1] == r[j - 1]
            c = prev[j - 1] + (0 if eq else 1)
            if c < cur[j]:
                cur[j], op[j] = c, (OP_NOP if eq else OP_SUB)
            c = prev[j] + 1
            if c < cur[j]:
                cur[j], op[j] = c, OP_DEL
            c = cur[j - 1] + 1
            if c < cur[j]:
                cur[j], op[j] = c, OP_INS
    trace = []
    i, j = n, m
    while i > 0 or j > 0:
        o = ops[i][j]
        trace.append(o)
        if o in (OP_NOP, OP_SUB):
            i -= 1
            j -= 1
        elif o == OP_INS:
            j -= 1
        elif o == OP_DEL:
            i -= 1
        else:  # pragma: no cover - unreachable cell on the path
            raise RuntimeError("undefined cell on the edit path")
    return cost[n][m], "".join(reversed(trace))


def alignment(trace: str):
    """Flip the trace (rewrite ref -> hyp) and return ``align, ref_err, hyp_err``."""
    pos_h = pos_r = -1
    align, ref_err, hyp_err = {}, [], []
    for o in trace:
        if o in (OP_NOP, OP_SUB):
            pos_h += 1
            pos_r += 1
            align[pos_r] = pos_h
            e = 1 if o == OP_SUB else 0
            hyp_err.append(e)
            ref_err.append(e)
        elif o == OP_DEL:  # flipped: an insertion in ref -> hyp, consumes a hypothesis word
            pos_h += 1
            hyp_err.append(1)
        else:  # OP_INS flipped: a deletion, consumes a reference word
            pos_r += 1
            align[pos_r] = pos_h
            ref_err.append(1)
    return align, ref_err, hyp_err


def perform_shift(w: list, start: int, length: int, target: int) -> list:
    if target < start:
        return w[:target] + w[start:start + length] + w[target:start] + w[start + length:]
    if target > start + length:
        return w[:start] + w[start + length:target] + w[start:start + length] + w[target:]
    return w[:start] + w[start + length:length + target] + w[start:start + length] + w[length + target:]


def shifted_pairs(h: Sequence, r: Sequence):
    n, m = len(h), len(r)
    for sh in range(n):
        for sr in range(m):
            if abs(sr - sh) > MAX_SHIFT_DIST:
                continue
            length = 0
            while h[sh + length] == r[sr + length] and length < MAX_SHIFT_SIZE:
                length += 1
                yield sh, sr, length
                if n == sh + length or m == sr + length:
                    break


def best_shift(h: list, r: Sequence, checked: int):
    """One round of the shift search: ``(gain, shifted hyp, checked)``."""
    pre, trace = edit_distance(h, r)
    align, ref_err, hyp_err = alignment(trace)
    best = None
    for sh, sr, length in shifted_pairs(h, r):
        if sum(hyp_err[sh:sh + length]) == 0:
            continue
        if sum(ref_err[sr:sr + length]) == 0:
            continue
        if sh <= align[sr] < sh + length:
            continue
        prev_idx = -1
        for offset in range(-1, length):
            if sr + offset == -1:
                idx = 0
            elif sr + offset in align:
                idx = align[sr + offset] + 1
            else:
                break
            if idx == prev_idx:
                continue
            prev_idx = idx
            shifted = perform_shift(h, sh, length, idx)
            key = (pre - edit_distance(shifted, r)[0], length, -sh, -idx)
            checked += 1
            if best is None or key > best[0]:  # ties: the first one found wins
                best = (key, shifted)
        if checked >= MAX_SHIFT_CANDIDATES:
            break
    if best is None:
        return 0, h, checked
    return best[0][0], best[1], checked


def translation_edit_rate(hyp: Sequence, ref: Sequence) -> tuple[int, int]:
    """``(edits, len(ref))`` for one hypothesis/reference token sequence pair."""
    if len(ref) == 0:
        return len(hyp), 0
    cur, shifts, checked = list(hyp), 0, 0
    while True:
        gain, new, checked = best_shift(cur, ref, checked)
        if checked >= MAX_SHIFT_CANDIDATES:  # the round that reached the cap is discarded
            break
        if gain <= 0:
            break
        shifts += 1
        cur = new
    return shifts + edit_distance(cur, ref)[0], len(ref)


def segment_stats(hyp: Sequence, refs: Sequence[Sequence]) -> list[float]:
    """``[best edits (min over refs, first wins), mean reference length over all refs]``."""
    best, total = int(1e16), 0
    for ref in refs:
        e, n = translation_edit_rate(hyp, ref)
        total += n
        if e < best:
            best = e
    return [best, total / len(refs)]


def tercom_normalize_reference(sent: str, normalized: bool = False, no_punct: bool = False,
                               asian_support: bool = False, case_sensitive: bool = False) -> str:
    """What sacrebleu's TER does to a REFERENCE: ``_cache_references`` preprocesses it and
    ``_extract_reference_info`` preprocesses the result again (not idempotent when normalized)."""
    once = tercom_normalize(sent, normalized, no_punct, asian_support, case_sensitive)
    return tercom_normalize(once, normalized, no_punct, asian_support, case_sensitive)


# ---------------------------------------------------------------------------------------------
# the kernel's interface
# ---------------------------------------------------------------------------------------------
class TercomVocab:
    """Exact interning of token strings to dense ids, in first-seen order."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._tokens: list[str] = []

    def __len__(self) -> int:
        return len(self._tokens)

    def token(self, i: int) -> str:
        if i < 0 or i >= len(self._tokens):
            raise IndexError(f"TercomVocab.token: id {i} out of range (size {len(self._tokens)})")
        return self._tokens[i]

    def intern(self, tok: str) -> int:
        i = self._ids.get(tok)
        if i is None:
            i = self._ids[tok] = len(self._tokens)
            self._tokens.append(tok)
        return i


def _check_text(s: object) -> str:
    if not isinstance(s, str):
        raise TypeError(f"Tercom normaliser: got {type(s).__name__}, expected str")
    return s


def _prepared(s: object, rstrip: bool, lowercase: bool) -> str:
    s = _check_text(s)
    if rstrip:
        s = s.rstrip()
    return s.lower() if lowercase else s


def tercom_normalize_texts(texts: list[str], normalized: bool = False, no_punct: bool = False,
                           asian_support: bool = False, rstrip: bool = False,
                           lowercase: bool = False) -> list[str]:
    """The Tercom steps on each string (``rstrip()``-ed / ``lower()``-ed first on request),
    tokens joined by a space."""
    return [_tercom_steps(_prepared(t, rstrip, lowercase), normalized, no_punct, asian_support)
            for t in texts]


def tercom_tokenize(texts: list[str], vocab: TercomVocab, normalized: bool = False,
                    no_punct: bool = False, asian_support: bool = False, rstrip: bool = False,
                    lowercase: bool = False) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """``(ids int32, offsets int64 (N + 1,))`` of the normalised tokens, interned in ``vocab``."""
    ids: list[int] = []
    offsets = [0]
    for t in tercom_normalize_texts(texts, normalized, no_punct, asian_support, rstrip, lowercase):
        ids += [vocab.intern(tok) for tok in t.split()]
        offsets.append(len(ids))
    return np.array(ids, dtype=np.int32), np.array(offsets, dtype=np.int64)


def _check_ter_args(hyp_offsets, seg_refs, out, name: str) -> None:
    n = len(hyp_offsets) - 1
    if len(seg_refs) != n + 1 or out.shape[0] != n or out.shape[1] != 2:
        raise ValueError(f"{name}: inconsistent shapes of hyp_offsets, seg_refs and out")
    for i in range(n):
        if seg_refs[i + 1] <= seg_refs[i]:
            raise ValueError(f"TER: segment {i} has no reference (all references are None)")


def _fill_row(i: int, hyp_ids, hyp_offsets, ref_ids, ref_offsets, seg_refs, out) -> None:
    hyp = [int(x) for x in hyp_ids[hyp_offsets[i]:hyp_offsets[i + 1]]]
    refs = [[int(x) for x in ref_ids[ref_offsets[k]:ref_offsets[k + 1]]]
            for k in range(seg_refs[i], seg_refs[i + 1])]
    out[i] = segment_stats(hyp, refs)


def ter_stats_range(hyp_ids: npt.NDArray[np.int32], hyp_offsets: npt.NDArray[np.int64],
                    ref_ids: npt.NDArray[np.int32], ref_offsets: npt.NDArray[np.int64],
                    seg_refs: npt.NDArray[np.int64], out: npt.NDArray[np.float64],
                    start: int, stop: int) -> None:
    """Fill ``out[start:stop]`` (float64 (N, 2)) with ``[edits, avg_ref_len]``."""
    n = len(hyp_offsets) - 1
    _check_ter_args(hyp_offsets, seg_refs, out, "ter_stats_range")
    if start < 0 or stop > n or start > stop:
        raise ValueError(f"ter_stats_range: bad range [{start}, {stop}) for {n} segments")
    for i in range(start, stop):
        _fill_row(i, hyp_ids, hyp_offsets, ref_ids, ref_offsets, seg_refs, out)


def ter_stats_shared(hyp_ids: npt.NDArray[np.int32], hyp_offsets: npt.NDArray[np.int64],
                     ref_ids: npt.NDArray[np.int32], ref_offsets: npt.NDArray[np.int64],
                     seg_refs: npt.NDArray[np.int64], out: npt.NDArray[np.float64],
                     order: npt.NDArray[np.int64], counter: npt.NDArray[np.int64],
                     grain: int = 4, check: bool = True) -> None:
    """Claim ``grain`` positions of ``order`` at a time from ``counter[0]`` and fill those rows."""
    n = len(hyp_offsets) - 1
    if len(counter) < 1 or grain < 1:
        raise ValueError("ter_stats_shared: counter must hold one int64 and grain be >= 1")
    if check:
        _check_ter_args(hyp_offsets, seg_refs, out, "ter_stats_shared")
        for j, i in enumerate(order):
            if i < 0 or i >= n:
                raise ValueError(f"ter_stats_shared: order[{j}] = {i} is not a segment")
    if len(order) == 0 or n == 0:
        return
    while True:
        j0 = int(counter[0])
        counter[0] += grain
        if j0 >= len(order):
            return
        for j in range(j0, min(j0 + grain, len(order))):
            _fill_row(int(order[j]), hyp_ids, hyp_offsets, ref_ids, ref_offsets, seg_refs, out)


def ter_pair_ids(hyp: npt.NDArray[np.int32], ref: npt.NDArray[np.int32]) -> tuple[int, int]:
    """``(edits, len(ref))`` of one token-id pair."""
    return translation_edit_rate([int(x) for x in hyp], [int(x) for x in ref])


def ter_sentence(hyp: str, refs: Sequence[str], normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False) -> tuple[int, float] | None:
    """``(edits, avg_ref_len)`` of one hypothesis against its references (all already rstripped
    and lowercased as the metric needs); references normalised twice under ``normalized``
    (sacrebleu's reference caching); None when a reference is not a str."""
    if not isinstance(hyp, str):
        raise TypeError(f"ter_sentence: hyp is {type(hyp).__name__}, expected str")
    if len(refs) == 0:
        raise ValueError("ter_sentence: no references")
    if type(hyp) is not str or any(type(r) is not str for r in refs):
        return None
    steps = (normalized, no_punct, asian_support)
    h = _tercom_steps(hyp, *steps).split()
    rs = [_tercom_steps(_tercom_steps(r, *steps), *steps) if normalized else _tercom_steps(r, *steps)
          for r in refs]
    best, avg = segment_stats(h, [r.split() for r in rs])
    return int(best), float(avg)


def ter_matrix(hyp_ids: npt.NDArray[np.int32], hyp_offsets: npt.NDArray[np.int64],
               ref_ids: npt.NDArray[np.int32], ref_offsets: npt.NDArray[np.int64],
               edits: npt.NDArray[np.int64], part: npt.NDArray[np.int64]) -> None:
    """Twin of ``_ter.ter_matrix``: ``edits[a, b]`` for the columns b in ``part``."""
    n, m = len(hyp_offsets) - 1, len(ref_offsets) - 1
    if n < 0 or m < 0 or edits.shape != (n, m):
        raise ValueError("ter_matrix: edits must be (number of hypotheses, number of references)")
    for i in range(n):
        if hyp_offsets[i + 1] < hyp_offsets[i]:
            raise ValueError(f"ter_matrix: hyp_offsets decrease at {i}")
    for i in range(m):
        if ref_offsets[i + 1] < ref_offsets[i]:
            raise ValueError(f"ter_matrix: ref_offsets decrease at {i}")
    if (n and (hyp_offsets[0] < 0 or hyp_offsets[n] > len(hyp_ids))) or \
            (m and (ref_offsets[0] < 0 or ref_offsets[m] > len(ref_ids))):
        raise ValueError("ter_matrix: offsets outside the id arrays")
    for i, b in enumerate(part):
        if b < 0 or b >= m:
            raise ValueError(f"ter_matrix: part[{i}] = {b} is not a reference")
    hyps = [[int(x) for x in hyp_ids[hyp_offsets[a]:hyp_offsets[a + 1]]] for a in range(n)]
    for b in np.asarray(part).tolist():
        ref = [int(x) for x in ref_ids[ref_offsets[b]:ref_offsets[b + 1]]]
        for a in range(n):
            edits[a, b] = translation_edit_rate(hyps[a], ref)[0]


def ter_corpus_plain(hyps: list[str], refs: list[str | None], no_punct: bool = False,
                     asian_support: bool = False,
                     lowercase: bool = True) -> tuple[int, float] | None:
    """Twin of ``_ter.ter_corpus_plain``: summed edits and reference lengths of ``hyps[i]``
    against ``refs[i]`` (``normalized=False``); None when an element is not a str."""
    if len(refs) != len(hyps):
        raise ValueError(f"ter_corpus_plain: {len(hyps)} hypotheses but {len(refs)} references")
    edits, ref_len = 0, 0.0
    for h, r in zip(hyps, refs):
        if type(h) is not str or type(r) is not str:
            return None
        hw, rw = ([_tercom_steps(s.rstrip().lower() if lowercase else s.rstrip(), False, no_punct,
                                 asian_support).split() for s in (h, r)])
        e, _ = translation_edit_rate(hw, rw)
        edits += e
        ref_len += float(len(rw))
    return edits, ref_len
