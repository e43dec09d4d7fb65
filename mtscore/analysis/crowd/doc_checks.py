"""The rules of document-level DA HITs, checked: what :func:`~.doc_hits.build_doc_campaign` guarantees.

:func:`check_doc_hits` lists every break, one message each, naming the HIT and the display
position (0-based, as in the file). The rules, each one a property of the builder:

* HITs 0, 1, ... in file order, positions 0, 1, ... in each HIT;
* a **unit** (system, document) is the document's segments, every one of them, in line order,
  closed by its document item (segment = the document's last line, text = the segments' texts
  one per line); a SYSTEM unit holds SYSTEM items, a REPEAT unit REPEAT items, a BAD_REF unit
  BAD_REF items and, for a segment that could not be degraded, REPEAT items (one BAD_REF or more);
* per HIT exactly one BAD_REF and one REPEAT unit, copies of two different SYSTEM units of the
  same HIT that come earlier with at least one other unit between; the REPEAT copy's texts are
  its original's, as are those of a BAD_REF unit's REPEAT items;
* no (system, document) twice as a SYSTEM unit of a HIT; in two HITs only when one of them is
  the last HIT (its units wrap round to the first ones); every system's every document in a HIT;
* sizes as packed: three SYSTEM units or more per HIT (two when the campaign has two), and a
  HIT of more than that many holds at most ``hit_size`` items counting its units plus copies of
  its two shortest units (a document too long for ``hit_size`` makes a longer HIT of three).
"""
from __future__ import annotations

from .doc_hits import DocCampaign, DocItem

__all__ = ["check_doc_hits"]

_Unit = list[DocItem]


def _where(h: int, p: int) -> str:
    return f"HIT {h} position {p}"


def _hits(items: list[DocItem], out: list[str]) -> list[tuple[int, list[DocItem]]]:
    """Items cut where the HIT number changes, in file order; a HIT number out of order is reported."""
    runs: list[tuple[int, list[DocItem]]] = []
    for it in items:
        if runs and runs[-1][0] == it.hit:
            runs[-1][1].append(it)
            continue
        want = runs[-1][0] + 1 if runs else 0
        if it.hit != want:
            out.append(f"{_where(it.hit, it.position)}: HIT {it.hit} {'after HIT ' + str(runs[-1][0]) if runs else 'first'}"
                       f"; expected HIT {want} (HITs 0, 1, ... in order)")
        runs.append((it.hit, [it]))
    return runs


def _units(h: int, items: list[DocItem], out: list[str]) -> list[tuple[int, _Unit]]:
    """(position of the first item, items) of each unit closed by its document item, in order."""
    units: list[tuple[int, _Unit]] = []
    cur: _Unit = []
    start = 0
    numbered = True
    for p, it in enumerate(items):
        if it.position != p and numbered:  # the first misnumbered item of the HIT
            numbered = False
            out.append(f"{_where(h, p)}: the item is numbered position {it.position}; expected {p} "
                       "(positions 0, 1, ... in each HIT)")
        if cur and (it.system, it.document) != (cur[0].system, cur[0].document):
            out.append(f"{_where(h, p)}: {it.system} document {it.document} starts before the document item of "
                       f"{cur[0].system} document {cur[0].document} (from position {start})")
            cur = []
        if not cur:
            start = p
        cur.append(it)
        if it.is_document:
            units.append((start, cur))
            cur = []
    if cur:
        out.append(f"{_where(h, len(items) - 1)}: the HIT ends inside {cur[0].system} document {cur[0].document} "
                   f"(from position {start}): no document item")
    return units


def _unit_problems(h: int, start: int, unit: _Unit, lines: dict[str, list[int]]) -> list[str]:
    segs, doc = unit[:-1], unit[-1]
    end = start + len(unit) - 1
    name = f"{doc.system} document {doc.document}"
    out = []
    got = [it.segment for it in segs]
    want = lines[doc.document]
    if not segs:
        out.append(f"{_where(h, end)}: the document item of {name} has no segment items before it")
    elif got != want:
        how = "not in document order" if sorted(got) == want else "not the document's segments"
        out.append(f"{_where(h, start)}: {name} has segments {got}, {how} {want} (a unit shows every segment "
                   "of its document in line order)")
    if want and doc.segment != want[-1]:
        out.append(f"{_where(h, end)}: the document item of {name} has segment {doc.segment}; expected the "
                   f"document's last line {want[-1]}")
    if segs and doc.text != "\n".join(it.text for it in segs):
        out.append(f"{_where(h, end)}: the document item of {name} is not its segments' texts, one per line")
    allowed = {"SYSTEM": ("SYSTEM",), "REPEAT": ("REPEAT",), "BAD_REF": ("BAD_REF", "REPEAT")}[doc.type]
    for k, it in enumerate(segs):
        if it.type not in allowed:
            out.append(f"{_where(h, start + k)}: a {it.type} item in the {doc.type} unit of {name} (its document "
                       f"item's type); expected {' or '.join(allowed)}")
            break
    if doc.type == "BAD_REF" and segs and not any(it.type == "BAD_REF" for it in segs):
        out.append(f"{_where(h, start)}: the BAD_REF unit of {name} has no BAD_REF segment")
    return out


def _qc_problems(h: int, units: list[tuple[int, _Unit]]) -> list[str]:
    out = []
    first: dict[tuple[str, str], int] = {}  # (system, document) -> unit index of its SYSTEM unit
    for k, (p, u) in enumerate(units):
        key = (u[-1].system, u[-1].document)
        if u[-1].type != "SYSTEM":
            continue
        if key in first:
            out.append(f"{_where(h, p)}: {key[0]} document {key[1]} again as a SYSTEM unit (first at position "
                       f"{units[first[key]][0]}); only its REPEAT or BAD_REF copy may come back")
        else:
            first[key] = k
    originals = {}
    for typ in ("BAD_REF", "REPEAT"):
        copies = [k for k, (_, u) in enumerate(units) if u[-1].type == typ]
        if len(copies) != 1:
            at = ", ".join(str(units[k][0]) for k in copies) or "none"
            out.append(f"HIT {h}: {len(copies)} {typ} documents (positions {at}); expected exactly one")
        for k in copies:
            p, u = units[k]
            key = (u[-1].system, u[-1].document)
            name = f"{typ} copy of {key[0]} document {key[1]}"
            o = first.get(key)
            if o is None:
                out.append(f"{_where(h, p)}: the {name} has no SYSTEM original in the HIT")
                continue
            originals[typ] = key
            if o > k:
                out.append(f"{_where(h, p)}: the {name} comes before its original at position {units[o][0]}")
            elif o == k - 1:
                out.append(f"{_where(h, p)}: the {name} follows its original at position {units[o][0]} with no "
                           "other unit between them")
            orig = units[o][1]
            if len(orig) == len(u):
                for j, (a, b) in enumerate(zip(u, orig)):
                    if a.type == "REPEAT" and a.text != b.text:
                        out.append(f"{_where(h, p + j)}: the {name} differs from its original at position "
                                   f"{units[o][0] + j}; a REPEAT item is a verbatim copy")
                        break
    if len(originals) == 2 and originals["BAD_REF"] == originals["REPEAT"]:
        s, d = originals["BAD_REF"]
        out.append(f"HIT {h}: the BAD_REF and the REPEAT document both copy {s} document {d}; expected two "
                   "different units")
    return out


def check_doc_hits(campaign: DocCampaign, hit_size: int = 100) -> list[str]:
    """Every break of the document HIT rules (module docstring) in ``campaign`` (read with
    :func:`~.doc_hits.read_doc_hits` ``check_order=False`` to see them all), one message each,
    naming the HIT and position; empty when the HITs follow them. ``hit_size``: the size the
    HITs were built for (``build-hits --docs`` builds for 100)."""
    out: list[str] = []
    lines: dict[str, list[int]] = {}
    for it in campaign.items:
        if not it.is_document:
            lines.setdefault(it.document, [])
            if it.segment not in lines[it.document]:
                lines[it.document].append(it.segment)
    for d in lines:
        lines[d].sort()
    for it in campaign.items:
        lines.setdefault(it.document, [])
    hits = _hits(campaign.items, out)
    per_hit = []
    for h, items in hits:
        units = _units(h, items, out)
        for p, u in units:
            out += _unit_problems(h, p, u, lines)
        out += _qc_problems(h, units)
        per_hit.append((h, units))
    all_units = {(u[-1].system, u[-1].document) for _, units in per_hit for _, u in units if u[-1].type == "SYSTEM"}
    least = min(3, len(all_units))
    seen: dict[tuple[str, str], int] = {}
    last = per_hit[-1][0] if per_hit else -1
    for h, units in per_hit:
        system = [(p, u) for p, u in units if u[-1].type == "SYSTEM"]
        sizes = sorted(len(u) for _, u in system)
        planned = sum(sizes) + sum(sizes[:2])
        if len(system) < least:
            out.append(f"HIT {h}: {len(system)} SYSTEM units; build_doc_campaign puts {least} or more in a HIT")
        elif len(system) > least and planned > hit_size:
            out.append(f"HIT {h}: {len(system)} SYSTEM units of {sum(sizes)} items, with copies of the two shortest "
                       f"{planned} > {hit_size} items; only a HIT of {least} units may be longer")
        for p, u in system:
            key = (u[-1].system, u[-1].document)
            if key in seen and seen[key] != h and last not in (h, seen[key]):
                out.append(f"{_where(h, p)}: {key[0]} document {key[1]} is a SYSTEM unit of HIT {seen[key]} too; "
                           "only the last HIT repeats units (filled up from the first ones)")
            seen.setdefault(key, h)
    systems = sorted({s for s, _ in all_units})
    for s in systems:
        for d in sorted(lines):
            if (s, d) not in all_units:
                out.append(f"{s} document {d}: in no HIT as a SYSTEM unit (every system's every document is rated)")
    return out
