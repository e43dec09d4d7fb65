"""Document-level Direct Assessment HITs: segments in document order, then the whole document.

WMT shows DA items in document order ("document context") from 2019 (Mathur 2021, PhD thesis
§2.1.4), and Appraise's document-level DA, used by WMT from 2020 (Barrault et al. 2020, WMT20
findings), asks after a document's segments for one rating of the whole document. Here:

* a **unit** is one (system, document): a SYSTEM item for each of the document's segments in
  order, then one DOCUMENT item (``is_document``: the whole document, rated once);
* units are shuffled (numpy ``default_rng(seed)``) and packed whole into HITs of about
  ``hit_size`` items (a document is never split, so HIT lengths vary; every HIT holds three or
  more units, so a document too long for ``hit_size`` makes a longer HIT); the last HIT is filled
  up by wrapping round to the first units, as the segment-level builder does;
* quality control, per HIT, on whole units as Appraise's document-level DA does: a BAD_REF copy
  of one unit (its segments degraded by :mod:`.degrade`; the document item shows the degraded
  document) and a REPEAT copy (verbatim) of another. The BAD_REF copy is of the shortest unit
  whose every segment can be degraded (else of the shortest with one or more; a segment that
  cannot be degraded is then a verbatim copy, typed REPEAT, so that no unchanged pair enters the
  BAD_REF test), the REPEAT copy of the shortest other unit (least extra work); each copy is put
  at a random unit boundary after its original with at least one other unit between them (an
  original that is the HIT's last unit first trades places with another, not copied, unit). No REF units (the reference shown as
  the candidate): the rater test of ``da-batches`` uses BAD_REF pairs, the repeat check REPEAT.
  How many controls WMT's document HITs held is not taken from a source here; one of each per
  HIT (about 20% of a HIT's items with ~10-segment documents, as the 20 of 100 of the segment
  HITs, Graham et al. 2017, NLE §3.4) is this module's choice.

Item ids (``rid``) are a random permutation from 1000000, as in :mod:`.hits`. The HITs are
written as JSON Lines (:func:`doc_hits_jsonl`): a first line ``{"format": "mtscore-doc-hits",
"version": 1, "src", "trg", "item"}``, then one object per item with ``hit, position, rid, type,
system, segment, document, is_document, text, ref, src`` (a document item's texts are its
segments' texts joined by newlines; ``segment`` is its last segment; ``src`` null without
sources); :func:`read_doc_hits` reads them back (the campaign server loads this file).
"""
from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Union

import numpy as np

from ..errors import AnalysisInputError
from .degrade import METHODS, degradable, degrade_text, ngram_pool
from .hits import FIRST_RID, HitItem, check_name

__all__ = ["DOC_FORMAT", "DocCampaign", "DocItem", "build_doc_campaign", "doc_hits_jsonl", "document_ids",
           "is_doc_hits_file", "read_doc_hits"]

DOC_FORMAT = "mtscore-doc-hits"
PathLike = Union[str, Path]
_TYPES = ("SYSTEM", "BAD_REF", "REPEAT")


@dataclass(frozen=True)
class DocItem:
    """One item of a document HIT: ``position`` 0.. in ``hit``; ``segment`` the 1-based line of
    the reference (a document item: its document's last line); ``type`` SYSTEM, BAD_REF or REPEAT;
    ``text``/``ref``/``src``: what the rater reads, the reference, the source (None: no sources);
    a document item's texts are the whole document's, one segment per line."""

    hit: int
    position: int
    rid: int
    type: str
    system: str
    segment: int
    document: str
    is_document: bool
    text: str
    ref: str
    src: str | None = None

    def hit_item(self) -> HitItem:
        """The item as the segment-level builder's :class:`~.hits.HitItem`."""
        return HitItem(self.hit, self.position, self.system, self.segment, self.type, self.rid, self.text,
                       self.document, self.is_document)


@dataclass
class DocCampaign:
    """The HITs of a document-level campaign: ``items`` ordered by (hit, position)."""

    items: list[DocItem]
    seed: int | None
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def n_hits(self) -> int:
        return len({it.hit for it in self.items})

    def hit(self, h: int) -> list[DocItem]:
        """The items of HIT ``h`` in display order."""
        out = [it for it in self.items if it.hit == h]
        if not out:
            raise IndexError(f"HIT {h} out of range 0..{self.n_hits - 1}")
        return out

    def hit_sizes(self) -> list[int]:
        """Items per HIT, HIT 0 first."""
        return [sum(it.hit == h for it in self.items) for h in range(self.n_hits)]


def document_ids(lines: Sequence[str], where: str = "--docs") -> list[str]:
    """The document of each reference line (one id per line, surrounding blanks dropped).
    A document's lines must be contiguous: an id that comes back after another document, or an
    empty id, raises :class:`AnalysisInputError` naming the line."""
    out: list[str] = []
    closed: set[str] = set()
    for i, raw in enumerate(lines, start=1):
        d = raw.strip()
        if not d or any(c.isspace() for c in d):
            raise AnalysisInputError(f"{where}: line {i}: {raw!r} is not a document id (non-empty, no spaces)")
        if out and d != out[-1]:
            closed.add(out[-1])
        if d in closed:
            raise AnalysisInputError(f"{where}: line {i}: document {d!r} again after other documents; a "
                                     "document's segments must be contiguous lines")
        out.append(d)
    return out


def _pack(sizes: list[int], order: list[int], hit_size: int) -> list[list[int]]:
    """Units (indices into ``sizes``, in ``order``) cut into HITs: a HIT takes units while its
    items, with the two QC copies of its two shortest units, stay within ``hit_size``, and takes
    at least three units (two when the campaign has only two), so that a unit longer than the others
    of its HIT is never copied; the last HIT is filled up with the first units again."""
    if len(sizes) < 2:
        raise AnalysisInputError("a document HIT needs two or more (system, document) units: give more "
                                 "systems or documents")
    least = min(3, len(sizes))

    def total(hit: list[int]) -> int:
        two = sorted(sizes[u] for u in hit)[:2]
        return sum(sizes[u] for u in hit) + sum(two)

    hits: list[list[int]] = []
    cur: list[int] = []
    for u in order:
        if len(cur) >= least and total([*cur, u]) > hit_size:
            hits.append(cur)
            cur = []
        cur.append(u)
    for u in order:  # the last HIT: filled up by wrapping round to the first units
        if not cur or (len(cur) >= least and total(cur) >= hit_size):
            break
        if u in cur:
            continue
        if len(cur) >= least and total([*cur, u]) > hit_size:
            break
        cur.append(u)
    if cur:
        hits.append(cur)
    return hits


def build_doc_campaign(outputs: Mapping[str, Sequence[str]], references: Sequence[str], documents: Sequence[str],
                       sources: Sequence[str] | None = None, seed: int | None = 0, degrade: str = "replace",
                       hit_size: int = 100) -> DocCampaign:
    """Document HITs (module docstring) over every document of every system.

    ``outputs``: system -> its N lines; ``references``, ``documents`` (:func:`document_ids`) and
    ``sources`` (optional): N lines each. ``degrade``: the BAD_REF method of :mod:`.degrade`
    (a segment it cannot degrade is kept as it is; a unit with none it can degrade is never a
    BAD_REF). Deterministic for ``seed``."""
    if degrade not in METHODS:
        raise AnalysisInputError(f"degrade {degrade!r}: choose one of {', '.join(METHODS)}")
    if not outputs:
        raise AnalysisInputError("no systems given")
    if hit_size < 3:
        raise AnalysisInputError(f"hit_size {hit_size}: a document HIT needs 3 or more items")
    n = len(references)
    for what, col in [*((f"system {s}", v) for s, v in outputs.items()), ("documents", documents),
                      ("sources", sources if sources is not None else references)]:
        if len(col) != n:
            raise AnalysisInputError(f"{what} has {len(col)} lines, the references {n}: they must match")
    docs = document_ids(documents)
    spans: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        spans.setdefault(d, []).append(i)
    units = [(check_name(str(s)), d) for s in outputs for d in spans]
    sizes = [len(spans[d]) + 1 for _, d in units]
    rng = np.random.default_rng(seed)
    order = [int(i) for i in rng.permutation(len(units))]
    hits = _pack(sizes, order, hit_size)
    text_rng = random.Random(seed)
    grams = ngram_pool(references) if degrade == "replace" else {}
    items: list[DocItem] = []
    for h, hit in enumerate(hits):
        seq = [(u, "SYSTEM") for u in hit]
        by_size = sorted(hit, key=lambda u: (sizes[u], hit.index(u)))

        def can(u: int) -> list[bool]:
            return [degradable(outputs[units[u][0]][i], degrade) for i in spans[units[u][1]]]

        bad = next((u for u in by_size if all(can(u))), None)
        if bad is None:
            bad = next((u for u in by_size if any(can(u))), None)
        if bad is None:
            raise AnalysisInputError(f"HIT {h}: no unit has a segment {degrade!r} can degrade: use --degrade replace")
        rep = next(u for u in by_size if u != bad)
        if len(seq) >= 3 and seq[-1][0] in (bad, rep):  # a copy needs a unit between it and its original
            k = int(rng.choice([k for k, (v, _) in enumerate(seq) if v not in (bad, rep)]))
            seq[k], seq[-1] = seq[-1], seq[k]
            hit = [v for v, _ in seq]
        for u, typ in sorted(((bad, "BAD_REF"), (rep, "REPEAT")), key=lambda x: hit.index(x[0])):
            first = next(k for k, (v, t) in enumerate(seq) if v == u and t == "SYSTEM") + 2
            at = int(rng.integers(first, len(seq) + 1)) if first <= len(seq) else len(seq)
            seq.insert(at, (u, typ))
        pos = 0
        for u, typ in seq:
            system, d = units[u]
            lines = spans[d]
            texts = [outputs[system][i] for i in lines]
            types = [typ] * len(lines)
            if typ == "BAD_REF":  # a segment that cannot be degraded is a verbatim copy: a REPEAT
                types = ["BAD_REF" if degradable(t, degrade) else "REPEAT" for t in texts]
                texts = [degrade_text(degrade, t, grams, text_rng) if degradable(t, degrade) else t for t in texts]
            refs = [references[i] for i in lines]
            srcs = [sources[i] for i in lines] if sources is not None else None
            for k, i in enumerate(lines):
                items.append(DocItem(h, pos, 0, types[k], system, i + 1, d, False, texts[k], refs[k],
                                     srcs[k] if srcs is not None else None))
                pos += 1
            items.append(DocItem(h, pos, 0, typ, system, lines[-1] + 1, d, True, "\n".join(texts), "\n".join(refs),
                                 "\n".join(srcs) if srcs is not None else None))
            pos += 1
    rids = FIRST_RID + rng.permutation(len(items))
    items = [replace(it, rid=int(r)) for it, r in zip(items, rids)]
    return DocCampaign(items, seed)


def doc_hits_jsonl(campaign: DocCampaign, src: str, trg: str, item: str = "ad") -> str:
    """The HITs as JSON Lines (module docstring)."""
    for what, v in (("src", src), ("trg", trg), ("item", item)):
        if not v or any(c in v for c in "|'\",") or any(c.isspace() for c in v):
            raise AnalysisInputError(f"{what} {v!r}: must be a non-empty code without whitespace or any of | ' \" ,")
    head = {"format": DOC_FORMAT, "version": 1, "src": src, "trg": trg, "item": item}
    lines = [json.dumps(head)]
    for it in campaign.items:
        lines.append(json.dumps({"hit": it.hit, "position": it.position, "rid": it.rid, "type": it.type,
                                 "system": it.system, "segment": it.segment, "document": it.document,
                                 "is_document": it.is_document, "text": it.text, "ref": it.ref, "src": it.src},
                                ensure_ascii=False))
    return "\n".join(lines) + "\n"


_FIELDS: dict[str, Any] = {"hit": int, "position": int, "rid": int, "type": str, "system": str, "segment": int,
                           "document": str, "is_document": bool, "text": str, "ref": str}


def _header(line: str) -> dict | None:
    try:
        head = json.loads(line)
    except json.JSONDecodeError:
        return None
    return head if isinstance(head, dict) and head.get("format") == DOC_FORMAT else None


def is_doc_hits_file(path: PathLike) -> bool:
    """Whether ``path`` starts with the header line of :func:`doc_hits_jsonl` (told by content,
    whatever the file's name)."""
    with open(path, "rb") as f:
        first = f.readline(1 << 16)
    try:
        return _header(first.decode("utf-8-sig").strip()) is not None
    except UnicodeDecodeError:
        return False


def read_doc_hits(path: PathLike, check_order: bool = True) -> DocCampaign:
    """The :class:`DocCampaign` of a file written by :func:`doc_hits_jsonl`. Checked: the header,
    every field's type, unique ``rid``, and (``check_order``) positions 0, 1, ... in each HIT,
    HITs 0, 1, ... in order and that every unit ends with its document item; a break names the
    file and line. ``check_order=False`` reads the items as they are, in file order, for
    :func:`~.doc_checks.check_doc_hits` to list every break of the HIT rules."""
    from ..data.tables import read_text

    path = Path(path)
    lines = read_text(path).splitlines()
    if not lines:
        raise AnalysisInputError(f"{path}: empty file, expected a document HIT file (build-hits --docs)")
    head = _header(lines[0])
    if head is None:
        raise AnalysisInputError(f"{path}: line 1: not a document HIT file (expected a header with "
                                 f"\"format\": \"{DOC_FORMAT}\"; write it with build-hits --docs)")
    items: list[DocItem] = []
    rids: set[int] = set()
    open_unit: tuple | None = None
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        where = f"{path}: line {n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AnalysisInputError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise AnalysisInputError(f"{where}: expected a JSON object per item")
        for k, t in _FIELDS.items():
            v = rec.get(k)
            if not isinstance(v, t) or (t is int and isinstance(v, bool)):
                raise AnalysisInputError(f"{where}: field {k!r} is {v!r}, expected {t.__name__}")
        s = rec.get("src")
        if s is not None and not isinstance(s, str):
            raise AnalysisInputError(f"{where}: field 'src' is {s!r}, expected a string or null")
        if rec["type"] not in _TYPES:
            raise AnalysisInputError(f"{where}: type {rec['type']!r}, expected one of {', '.join(_TYPES)}")
        if rec["rid"] in rids:
            raise AnalysisInputError(f"{where}: rid {rec['rid']} again; item ids are unique")
        rids.add(rec["rid"])
        if check_order:
            prev = items[-1] if items else None
            want_hit = 0 if prev is None else prev.hit + (rec["hit"] != prev.hit)
            want_pos = 0 if prev is None or rec["hit"] != prev.hit else prev.position + 1
            if rec["hit"] != want_hit or rec["position"] != want_pos:
                raise AnalysisInputError(f"{where}: HIT {rec['hit']} position {rec['position']}, expected HIT "
                                         f"{want_hit} position {want_pos} (items in HIT and position order)")
            # a BAD_REF unit's segments that cannot be degraded are typed REPEAT: the type is no part of the unit
            unit = (rec["hit"], rec["system"], rec["document"])
            if open_unit is not None and unit != open_unit:
                raise AnalysisInputError(f"{where}: a new unit starts before the document item of {open_unit[1]} "
                                         f"document {open_unit[2]}")
            open_unit = None if rec["is_document"] else unit
        items.append(DocItem(rec["hit"], rec["position"], rec["rid"], rec["type"], rec["system"], rec["segment"],
                             rec["document"], rec["is_document"], rec["text"], rec["ref"], s))
    if open_unit is not None:
        raise AnalysisInputError(f"{path}: the file ends inside a unit ({open_unit[1]} document {open_unit[2]} "
                                 "has no document item)")
    if not items:
        raise AnalysisInputError(f"{path}: a header and no items")
    return DocCampaign(items, None, {k: str(head[k]) for k in ("src", "trg", "item") if k in head})
