"""Building a Direct Assessment campaign: 100-item HITs and the crowd platform's batch input
(Graham et al. 2017, NLE §3.4, with the degraded items of §4 from :mod:`mtscore.analysis.crowd.degrade`).

A HIT holds 100 items: 70 MT outputs (SYSTEM), and for 30 of them a quality-control partner:
10 references of the same source (REF), 10 degraded copies (BAD_REF) and 10 verbatim repeats
(REPEAT), each of a different MT output. The placement follows Graham's ``gen-100-item-sets.py``:

1. order the (system, segment) outputs at random (``balance=True``: interleaved so that every
   HIT holds about equally many outputs of each system, as Graham et al. 2017, NLE asks; ``False``:
   one plain shuffle, as the reference script);
2. cut them into blocks of 7; ten blocks make a HIT (the last HIT is filled up by wrapping
   round to the first outputs, as the reference script does);
3. block ``i`` gets 3 QC items copied from 3 different outputs of block ``i + 5`` when
   ``i mod 10 < 5``, else of block ``i - 5`` (so a QC item and its original are 41 or more
   positions apart in the HIT, the "forty intervening assessments" of the paper);
4. the 10 items of each block are shuffled.

Item ids (``rid``) are a random permutation of 1000000, 1000001, ... Everything is
deterministic for a ``seed`` (numpy ``default_rng``).

Per-worker order (``workers_per_hit=W``; Mathur 2021, §4.5 recommends that no two workers see
one sequence, so that sequence effects become independent noise): every HIT is emitted W times,
one copy per worker (HIT ``h * W + w`` is copy ``w`` of HIT ``h``, same items and ``rid``),
each in its own order (:func:`worker_order`, seeded by ``(seed, h, w)``) that keeps the rules
above: the five pairs of partner blocks (i, i + 5) are permuted, the two blocks of a pair may
trade places, and the 10 items of each block are shuffled. Publish each copy as its own HIT
with one assignment.

:func:`write_batch_input` writes the batch input CSV of Mechanical Turk in the reference
layout (``src,trg,item,hit`` then ``sys_i,sid_i,tst_i,rid_i`` for i = 0..99, values in single
quotes as the HIT template expects); :func:`read_batch_input` reads it back.
"""
from __future__ import annotations

import csv
import io
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Union

import numpy as np

from ..errors import AnalysisInputError
from .degrade import METHODS, degradable, degrade_text, ngram_pool

__all__ = [
    "BLOCK_MT",
    "HIT_SIZE",
    "ITEM_TYPES",
    "Campaign",
    "HitItem",
    "batch_input_csv",
    "build_campaign",
    "check_name",
    "hit_problems",
    "items_tsv",
    "plan_hits",
    "read_batch_input",
    "worker_copies",
    "worker_order",
    "write_batch_input",
]

HIT_SIZE = 100
BLOCK_MT = 7            # MT outputs per block; + BAD_REF, REPEAT, REF = 10 items
BLOCKS_PER_HIT = 10
SPACE = 5               # QC partners come from the block SPACE away
ITEM_TYPES = ("SYSTEM", "BAD_REF", "REPEAT", "REF")
FIRST_RID = 1000000
PathLike = Union[str, Path]


@dataclass(frozen=True)
class HitItem:
    """One item of a HIT: ``position`` 0..99 in ``hit``; ``segment`` is the 1-based line of the
    source; ``type`` one of :data:`ITEM_TYPES`; ``text`` what the rater reads (the output, the
    reference for REF, the degraded output for BAD_REF; "" when the campaign has no texts).
    ``document``/``is_document``: see :mod:`.doc_hits` (segment-level HITs leave them unset)."""

    hit: int
    position: int
    system: str
    segment: int
    type: str
    rid: int
    text: str = ""
    document: str = ""         # document id (document-level DA, :mod:`.doc_hits`; "" otherwise)
    is_document: bool = False  # the rating of the whole document (its unit's last item)


@dataclass
class Campaign:
    """The HITs of a campaign: ``items`` ordered by (hit, position), 100 per HIT.
    ``references`` (segment - 1 -> text) is empty when the campaign was planned without texts."""

    items: list[HitItem]
    seed: int | None
    references: list[str] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)  # src, trg, item of a campaign read from a CSV

    @property
    def n_hits(self) -> int:
        return len(self.items) // HIT_SIZE

    def hit(self, h: int) -> list[HitItem]:
        """The 100 items of HIT ``h`` in display order."""
        if not 0 <= h < self.n_hits:
            raise IndexError(f"HIT {h} out of range 0..{self.n_hits - 1}")
        return self.items[h * HIT_SIZE:(h + 1) * HIT_SIZE]

    def systems(self) -> list[str]:
        return sorted({it.system for it in self.items})


def check_name(system: str) -> str:
    """A system name must survive the batch files: non-empty, no whitespace, no ``|``, ``'``,
    ``,`` or ``"`` (the answer string joins items with ``|``; the input CSV quotes values with ``'``)."""
    bad = [c for c in "|'\"," if c in system]
    if not system or any(c.isspace() for c in system) or bad:
        raise AnalysisInputError(f"system name {system!r}: must be non-empty without whitespace or any of | ' \" ,")
    return system


def _order(pool: Sequence[tuple[str, int]], rng: np.random.Generator, balance: bool) -> list[int]:
    """Indices of ``pool`` in campaign order (see the module docstring, step 1)."""
    n = len(pool)
    if not balance:
        return [int(i) for i in rng.permutation(n)]
    by_sys: dict[str, list[int]] = {}
    for i, (s, _) in enumerate(pool):
        by_sys.setdefault(s, []).append(i)
    key = np.empty(n)
    for idx in by_sys.values():
        perm = rng.permutation(len(idx))
        # item k of a system of m outputs sits at (k + u) / m: every window of the order holds
        # each system in proportion to its size, up to one item
        key[np.asarray(idx)[perm]] = (np.arange(len(idx)) + rng.random(len(idx))) / len(idx)
    order = list(np.argsort(key, kind="stable"))
    chunk = BLOCK_MT * BLOCKS_PER_HIT
    for a in range(0, n, chunk):  # which block of its HIT an output lands in is random
        part = order[a:a + chunk]
        order[a:a + chunk] = [part[j] for j in rng.permutation(len(part))]
    return [int(i) for i in order]


def _qc_picks(block: list[int], rng: np.random.Generator, can_degrade: Callable[[int], bool]) -> list[int]:
    """Three different outputs of ``block`` for BAD_REF, REPEAT, REF (BAD_REF one that can be degraded)."""
    perm = [block[j] for j in rng.permutation(len(block))]
    bad = next((i for i in perm if can_degrade(i)), None)
    if bad is None:
        raise AnalysisInputError("a block of 7 outputs has none that can be degraded (all empty or too "
                                 "short for the method): remove such outputs from the pool or use "
                                 "--degrade replace")
    rest = [i for i in perm if i != bad]
    return [bad, rest[0], rest[1]]


def plan_hits(pool: Sequence[tuple[str, int]], seed: int | None = 0, balance: bool = True,
              can_degrade: Callable[[int], bool] | None = None, workers_per_hit: int | None = None) -> Campaign:
    """Place the (system, segment) outputs of ``pool`` into 100-item HITs (module docstring).

    ``can_degrade(i)`` says whether output ``pool[i]`` may become a BAD_REF (default: all).
    The pool needs 70 or more distinct outputs, so that no HIT shows one output twice as SYSTEM.
    ``workers_per_hit``: see :func:`worker_copies` (None: one order per HIT).
    Returns a :class:`Campaign` without texts."""
    pool = [(check_name(str(s)), int(g)) for s, g in pool]
    seen: set = set()
    for p in pool:
        if p in seen:
            raise AnalysisInputError(f"output {p[0]} segment {p[1]} is in the pool twice")
        seen.add(p)
    chunk = BLOCK_MT * BLOCKS_PER_HIT
    if len(pool) < chunk:
        raise AnalysisInputError(f"a HIT needs {chunk} different MT outputs; the pool has {len(pool)}")
    ok = can_degrade or (lambda i: True)
    rng = np.random.default_rng(seed)
    order = _order(pool, rng, balance)
    n_hits = math.ceil(len(order) / chunk)
    slots = [order[k % len(order)] for k in range(n_hits * chunk)]
    blocks = [slots[b * BLOCK_MT:(b + 1) * BLOCK_MT] for b in range(n_hits * BLOCKS_PER_HIT)]
    entries: list[list[tuple[int, str]]] = []
    for b, block in enumerate(blocks):
        partner = b + SPACE if b % BLOCKS_PER_HIT < SPACE else b - SPACE
        qc = _qc_picks(blocks[partner], rng, ok)
        entries.append([(i, "SYSTEM") for i in block] + list(zip(qc, ("BAD_REF", "REPEAT", "REF"))))
    rids = FIRST_RID + rng.permutation(n_hits * HIT_SIZE)
    items: list[HitItem] = []
    for b, entry in enumerate(entries):
        for j, k in enumerate(rng.permutation(len(entry))):
            i, typ = entry[k]
            pos = (b % BLOCKS_PER_HIT) * 10 + j
            items.append(HitItem(b // BLOCKS_PER_HIT, pos, pool[i][0], pool[i][1], typ, int(rids[len(items)])))
    camp = Campaign(items, seed)
    return camp if workers_per_hit is None else worker_copies(camp, workers_per_hit)


def build_campaign(outputs: Mapping[str, Sequence[str]], references: Sequence[str], seed: int | None = 0,
                   degrade: str = "replace", balance: bool = True, workers_per_hit: int | None = None) -> Campaign:
    """HITs over every line of every system with the texts to show (``workers_per_hit``: one
    copy of each HIT per worker, each in its own order, :func:`worker_copies`).

    ``outputs``: system -> its N output lines; ``references``: the N reference lines.
    BAD_REF texts come from ``degrade`` ("replace": a span replaced by an n-gram of the
    references, WMT practice; "delete": a span deleted, Graham et al. 2017, NLE §4 adequacy; "duplicate": a word pair
    copied elsewhere, Graham et al. 2017, NLE §4 fluency). Deterministic for ``seed``."""
    if degrade not in METHODS:
        raise AnalysisInputError(f"degrade {degrade!r}: choose one of {', '.join(METHODS)}")
    if not outputs:
        raise AnalysisInputError("no systems given")
    n = len(references)
    for s, lines in outputs.items():
        if len(lines) != n:
            raise AnalysisInputError(f"system {s} has {len(lines)} lines, the references {n}: they must match")
    pool = [(s, g + 1) for s in outputs for g in range(n)]
    text = {(s, g + 1): t for s, lines in outputs.items() for g, t in enumerate(lines)}
    camp = plan_hits(pool, seed, balance, can_degrade=lambda i: degradable(text[pool[i]], degrade))
    rng = random.Random(seed)  # the degraded texts: drawn in item order, after the placement
    grams = ngram_pool(references) if degrade == "replace" else {}
    items: list[HitItem] = []
    for it in camp.items:
        t = text[(it.system, it.segment)]
        if it.type == "REF":
            t = references[it.segment - 1]
        elif it.type == "BAD_REF":
            t = degrade_text(degrade, t, grams, rng)
        items.append(HitItem(it.hit, it.position, it.system, it.segment, it.type, it.rid, t))
    camp = Campaign(items, seed, list(references))
    return camp if workers_per_hit is None else worker_copies(camp, workers_per_hit)


def worker_order(items: Sequence[HitItem], rng: np.random.Generator, hit: int | None = None) -> list[HitItem]:
    """The 100 ``items`` of one HIT (display order) in a new random order drawn from ``rng``
    that keeps the composition and spacing rules (:func:`hit_problems`): the pairs of partner
    blocks (i, i + 5) are permuted, the two blocks of each pair trade places with probability
    1/2, and each block is shuffled. Positions are renumbered 0..99; ``hit`` (default: the
    items' own) is the HIT number the copy gets."""
    if len(items) != HIT_SIZE:
        raise AnalysisInputError(f"a HIT has {HIT_SIZE} items, got {len(items)}")
    blocks = [list(items[10 * b:10 * b + 10]) for b in range(BLOCKS_PER_HIT)]
    pairs = rng.permutation(SPACE)
    swap = rng.random(SPACE) < 0.5
    new_blocks: list[list[HitItem]] = [[] for _ in range(BLOCKS_PER_HIT)]
    for q, p in enumerate(pairs):
        first, second = (p + SPACE, p) if swap[q] else (p, p + SPACE)
        new_blocks[q], new_blocks[q + SPACE] = blocks[first], blocks[second]
    h = items[0].hit if hit is None else hit
    out: list[HitItem] = []
    for block in new_blocks:
        for k in rng.permutation(len(block)):
            it = block[k]
            out.append(HitItem(h, len(out), it.system, it.segment, it.type, it.rid, it.text))
    return out


def worker_copies(campaign: Campaign, workers_per_hit: int) -> Campaign:
    """Per-worker random order (Mathur 2021, §4.5): ``workers_per_hit`` copies of every HIT of
    ``campaign``, copy ``w`` of HIT ``h`` becoming HIT ``h * workers_per_hit + w`` in its own
    :func:`worker_order`, drawn from ``default_rng([seed, h, w])`` (the campaign's seed; a
    campaign without one draws fresh entropy). Items keep their ``rid`` and text, so the
    results of all copies of a HIT pool by item."""
    if isinstance(workers_per_hit, bool) or not isinstance(workers_per_hit, (int, np.integer)) \
            or workers_per_hit < 1:
        raise AnalysisInputError(f"workers_per_hit must be an integer of 1 or more, got {workers_per_hit!r}")
    W = int(workers_per_hit)
    items: list[HitItem] = []
    base = int(np.random.SeedSequence().generate_state(1)[0]) if campaign.seed is None else int(campaign.seed)
    for h in range(campaign.n_hits):
        for w in range(W):
            rng = np.random.default_rng([base, h, w])
            items += worker_order(campaign.hit(h), rng, hit=h * W + w)
    return Campaign(items, campaign.seed, list(campaign.references), dict(campaign.meta))


def hit_problems(campaign: Campaign) -> list[str]:
    """Every way the HITs of ``campaign`` break the HIT rules of Graham et al. 2017, NLE §3.4, one message each (empty: none):
    per HIT 70 SYSTEM items (70 different outputs) and 10 each of BAD_REF, REPEAT, REF; every
    block of 10 positions holds 7 SYSTEM and one of each QC type; every QC item's original is a
    SYSTEM item of the same HIT in the block 5 away (so 41+ positions apart); the 30 QC items
    have 30 different originals. Use it to check HITs built elsewhere (:func:`read_batch_input`)."""
    out = []
    for h in range(campaign.n_hits):
        items = campaign.hit(h)
        name = f"HIT {items[0].hit}"
        types = {t: sum(it.type == t for it in items) for t in ITEM_TYPES}
        if types != {"SYSTEM": 70, "BAD_REF": 10, "REPEAT": 10, "REF": 10}:
            out.append(f"{name}: item types {types}, expected 70 SYSTEM and 10 of each QC type")
        mt: dict[tuple[str, int], int] = {}
        for p, it in enumerate(items):
            if it.type == "SYSTEM" and mt.setdefault((it.system, it.segment), p) != p:
                out.append(f"{name}: {it.system} segment {it.segment} is a SYSTEM item twice")
        for b in range(BLOCKS_PER_HIT):
            got = sorted(it.type for it in items[10 * b:10 * b + 10])
            if got != sorted(["SYSTEM"] * BLOCK_MT + ["BAD_REF", "REPEAT", "REF"]):
                out.append(f"{name}: positions {10 * b}-{10 * b + 9} hold {got}, expected 7 SYSTEM + 1 of each QC type")
        originals = []
        for p, it in enumerate(items):
            if it.type == "SYSTEM":
                continue
            o = mt.get((it.system, it.segment))
            b = p // 10
            want = b + SPACE if b < SPACE else b - SPACE
            if o is None:
                out.append(f"{name}: position {p} ({it.type}) has no SYSTEM original in the HIT")
            elif o // 10 != want:
                out.append(f"{name}: position {p} ({it.type}) is {abs(o - p)} positions from its original at "
                           f"{o}; expected the original in positions {10 * want}-{10 * want + 9}")
            originals.append((it.system, it.segment))
        if len(set(originals)) != len(originals):
            out.append(f"{name}: {len(originals) - len(set(originals))} QC items share an original")
    return out


def _header(texts: bool, sources: bool = False) -> list[str]:
    cols = ["src", "trg", "item", "hit"]
    for i in range(HIT_SIZE):
        cols += [f"sys_{i}", f"sid_{i}", f"tst_{i}", f"rid_{i}"] + ([f"text_{i}", f"ref_{i}"] if texts else [])
        cols += [f"srctext_{i}"] if sources else []
    return cols


def batch_input_csv(campaign: Campaign, src: str, trg: str, item: str = "ad", texts: bool = False,
                    quote: bool = True, sources: Sequence[str] | None = None) -> str:
    """The batch input CSV (one row per HIT) as text.

    ``quote``: values in single quotes (``'en'``), as the reference HIT template reads them
    (and as they come back in the ``Input.*`` columns of the results); ``texts`` adds
    ``text_i`` (what to rate) and ``ref_i`` (the reference shown above it) for templates that
    show text rather than images; ``sources`` (segment - 1 -> source sentence, with ``texts``)
    adds ``srctext_i``, the source sentence of item i, for source-based (bilingual) DA."""
    if texts and not campaign.references:
        raise AnalysisInputError("texts=True needs a campaign built with texts (build_campaign)")
    if sources is not None and (not texts or len(sources) != len(campaign.references)):
        raise AnalysisInputError(f"sources: {len(sources)} lines need texts=True and one line per reference "
                                 f"({len(campaign.references)})")
    for what, v in (("src", src), ("trg", trg), ("item", item)):
        if not v or any(c in v for c in "|'\",") or any(c.isspace() for c in v):
            raise AnalysisInputError(f"{what} {v!r}: must be a non-empty code without whitespace or any of | ' \" ,")
    q = (lambda v: f"'{v}'") if quote else str
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(_header(texts, sources is not None))
    for h in range(campaign.n_hits):
        row = [q(src), q(trg), q(item), str(h)]
        for it in campaign.hit(h):
            row += [q(it.system), q(it.segment), q(it.type), q(it.rid)]
            if texts:
                row += [it.text, campaign.references[it.segment - 1]]
            if sources is not None:
                row += [sources[it.segment - 1]]
        w.writerow(row)
    return buf.getvalue()


def write_batch_input(campaign: Campaign, path: PathLike, src: str, trg: str, item: str = "ad",
                      texts: bool = False, quote: bool = True) -> None:
    """Write :func:`batch_input_csv` to ``path`` (UTF-8, atomically)."""
    from ..output import write_atomic

    write_atomic(str(path), batch_input_csv(campaign, src, trg, item, texts, quote))


def items_tsv(campaign: Campaign) -> str:
    """One line per item: rid hit position system segment type text (tabs in texts become spaces)."""
    out = ["rid\thit\tposition\tsystem\tsegment\ttype\ttext"]
    for it in campaign.items:
        out.append(f"{it.rid}\t{it.hit}\t{it.position}\t{it.system}\t{it.segment}\t{it.type}\t"
                   f"{it.text.replace(chr(9), ' ')}")
    return "\n".join(out) + "\n"


def _unquote(v: str) -> str:
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] == "'" else v


def read_batch_input(path: PathLike) -> Campaign:
    """The :class:`Campaign` (without texts) of a batch input CSV written by :func:`write_batch_input`
    (or by the reference ``gen-mturk-csv.py``), or the HITs of a Mechanical Turk batch *result*
    file (its ``Input.*`` columns; the first assignment of each HIT, HITs in ``Input.hit`` order).
    :meth:`Campaign.hit` ``(h)`` is then the h-th HIT read. Bad content names the file, line and column."""
    from ..data.tables import read_text

    path = Path(path)
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    head = next(reader, None)
    if not head:
        raise AnalysisInputError(f"{path}: empty file, expected a batch input CSV header")
    results = "Input.hit" in head
    names = [h[len("Input."):] if results and h.startswith("Input.") else h for h in head]
    needed = ["hit"] + [f"{k}_{i}" for i in range(HIT_SIZE) for k in ("sys", "sid", "tst", "rid")]
    missing = [c for c in needed if c not in names]
    if missing:
        raise AnalysisInputError(f"{path}: line 1: missing column(s) {', '.join(missing[:4])}"
                                 f"{' ...' if len(missing) > 4 else ''}: not a 100-item DA batch input CSV")
    col = {c: j for j, c in enumerate(names)}
    last = max(col[c] for c in needed)
    hits: dict[int, list[HitItem]] = {}
    meta: dict[str, str] = {}
    lineno = reader.line_num + 1
    for row in reader:
        # result files: rows may stop before the trailing Approve/Reject columns (as MTurk writes them)
        short = len(row) < len(head) and not (results and len(row) > last)
        if (len(row) != len(head) and not results) or short:
            raise AnalysisInputError(f"{path}: line {lineno}: {len(row)} fields, the header has {len(head)}")
        hit = [_input_item(path, lineno, row, col, i) for i in range(HIT_SIZE)]
        if hit[0].hit in hits and not results:
            raise AnalysisInputError(f"{path}: line {lineno}: HIT {hit[0].hit} appears twice")
        hits.setdefault(hit[0].hit, hit)
        meta = meta or {k: _unquote(row[col[k]]) for k in ("src", "trg", "item") if k in col}
        lineno = reader.line_num + 1
    if not hits:
        raise AnalysisInputError(f"{path}: a header and no HIT rows")
    return Campaign([it for h in sorted(hits) for it in hits[h]], None, meta=meta)


def _input_item(path: Path, lineno: int, row: list[str], col: dict[str, int], i: int) -> HitItem:
    vals = {k: _unquote(row[col[f"{k}_{i}"]]) for k in ("sys", "sid", "tst", "rid")}
    vals["hit"] = _unquote(row[col["hit"]])
    if vals["tst"] not in ITEM_TYPES:
        raise AnalysisInputError(f"{path}: line {lineno}: tst_{i} is {vals['tst']!r}, expected one of "
                                 f"{', '.join(ITEM_TYPES)}")
    try:
        hit, seg, rid = int(vals["hit"]), int(vals["sid"]), int(vals["rid"])
    except ValueError:
        raise AnalysisInputError(f"{path}: line {lineno}: hit/sid_{i}/rid_{i} must be integers, got "
                                 f"{vals['hit']!r}/{vals['sid']!r}/{vals['rid']!r}") from None
    return HitItem(hit, i, vals["sys"], seg, vals["tst"], rid)
