"""``check-hits`` on document HIT files (issue P21 leftovers): :func:`check_doc_hits` passes every
campaign ``build_doc_campaign`` makes and names the HIT and position of each rule broken by an edit
of the JSON Lines file; a batch input CSV is still checked by the 100-item rules."""
from __future__ import annotations

import json

import pytest

from mtscore.analysis.crowd.doc_checks import check_doc_hits
from mtscore.analysis.crowd.doc_hits import build_doc_campaign, doc_hits_jsonl, is_doc_hits_file, read_doc_hits
from mtscore.bindings.cli.analysis import main

SYSTEMS = ("A", "B", "C")


def _data(seg: int = 120):
    docs: list[str] = []
    d = 0
    while len(docs) < seg:  # documents of 3..7 lines
        docs += [f"doc{d}"] * min(3 + d % 5, seg - len(docs))
        d += 1
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 6)) for i in range(seg)]
    outs = {s: [f"{s} says {i} " + " ".join(f"w{j}" for j in range(3 + i % 7)) for i in range(seg)] for s in SYSTEMS}
    return outs, refs, docs


def _records(seed: int = 0) -> tuple[dict, list[dict]]:
    outs, refs, docs = _data()
    lines = doc_hits_jsonl(build_doc_campaign(outs, refs, docs, seed=seed), "en", "de").splitlines()
    return json.loads(lines[0]), [json.loads(x) for x in lines[1:]]


def _check(tmp_path, head: dict, recs: list[dict], renumber: bool = True, hit_size: int = 100) -> list[str]:
    """Write ``recs`` (positions renumbered 0.. per HIT unless told not to) and check the file."""
    if renumber:
        pos: dict[int, int] = {}
        for r in recs:
            r["position"] = pos.get(r["hit"], 0)
            pos[r["hit"]] = r["position"] + 1
    p = tmp_path / "hits.txt"  # told by content, not by the name
    p.write_text("\n".join(json.dumps(x) for x in [head, *recs]) + "\n", encoding="utf-8")
    return check_doc_hits(read_doc_hits(p, check_order=False), hit_size=hit_size)


def _units(recs: list[dict], hit: int) -> list[list[dict]]:
    out: list[list[dict]] = [[]]
    for r in recs:
        if r["hit"] == hit:
            out[-1].append(r)
            if r["is_document"]:
                out.append([])
    return out[:-1]


def _plain(recs: list[dict], hit: int, size: int = 4) -> list[dict]:
    """A SYSTEM unit of ``hit`` of ``size`` items or more that no QC unit of the HIT copies."""
    units = _units(recs, hit)
    copied = {(u[-1]["system"], u[-1]["document"]) for u in units if u[-1]["type"] != "SYSTEM"}
    return next(u for u in units[1:-1] if u[-1]["type"] == "SYSTEM" and len(u) >= size
                and (u[-1]["system"], u[-1]["document"]) not in copied)


def _qc(recs: list[dict], hit: int, typ: str) -> tuple[list[dict], list[dict]]:
    """(the ``typ`` unit of ``hit``, its SYSTEM original)."""
    units = _units(recs, hit)
    copy = next(u for u in units if u[-1]["type"] == typ)
    key = (copy[-1]["system"], copy[-1]["document"])
    return copy, next(u for u in units if u[-1]["type"] == "SYSTEM" and (u[-1]["system"], u[-1]["document"]) == key)


@pytest.mark.parametrize("seed", range(4))
def test_a_built_campaign_follows_every_rule(tmp_path, seed, capsys):
    head, recs = _records(seed)
    assert _check(tmp_path, head, recs) == []
    assert main(["human", "check-hits", str(tmp_path / "hits.txt")]) == 0
    n = recs[-1]["hit"] + 1
    assert capsys.readouterr().out == f"{tmp_path / 'hits.txt'}: {n} document HITs, all follow the rules\n"


def test_a_mixed_bad_ref_unit_is_read_and_passes(tmp_path):
    # one-word segments cannot be degraded by deletion: the BAD_REF units hold REPEAT segments (verbatim copies)
    docs = [f"d{i // 4}" for i in range(24)]
    refs = [f"ref {i} a b c d" for i in range(24)]
    outs = {s: ["x" if i % 4 == 0 else f"{s} out {i} w1 w2 w3 w4" for i in range(24)] for s in "AB"}
    camp = build_doc_campaign(outs, refs, docs, seed=1, degrade="delete", hit_size=40)
    bad = [it for it in camp.items if it.type == "BAD_REF" and it.is_document]
    assert all({x.type for x in camp.items if (x.hit, x.system, x.document) == (b.hit, b.system, b.document)
                and b.position - 4 <= x.position < b.position} == {"BAD_REF", "REPEAT"} for b in bad)
    assert len(bad) == camp.n_hits > 1
    p = tmp_path / "mixed.jsonl"
    p.write_text(doc_hits_jsonl(camp, "en", "de"), encoding="utf-8")
    assert read_doc_hits(p).items == camp.items  # the strict reader takes a mixed BAD_REF unit as one unit
    assert check_doc_hits(read_doc_hits(p, check_order=False), hit_size=40) == []


def test_a_segment_left_out_or_out_of_order(tmp_path):
    head, recs = _records()
    u = _plain(recs, 1)
    start, sys_, doc = u[0]["position"], u[-1]["system"], u[-1]["document"]
    segs = [r["segment"] for r in u[:-1]]
    recs.remove(u[1])
    assert _check(tmp_path, head, recs) == [
        f"HIT 1 position {start}: {sys_} document {doc} has segments {[segs[0], *segs[2:]]}, not the document's "
        f"segments {segs} (a unit shows every segment of its document in line order)",
        f"HIT 1 position {start + len(u) - 2}: the document item of {sys_} document {doc} is not its segments' "
        "texts, one per line"]
    head, recs = _records()
    u = _plain(recs, 1)
    i = recs.index(u[0])
    recs[i], recs[i + 1] = recs[i + 1], recs[i]
    assert _check(tmp_path, head, recs) == [
        f"HIT 1 position {start}: {sys_} document {doc} has segments {[segs[1], segs[0], *segs[2:]]}, not in "
        f"document order {segs} (a unit shows every segment of its document in line order)",
        f"HIT 1 position {start + len(u) - 1}: the document item of {sys_} document {doc} is not its segments' "
        "texts, one per line"]


def test_a_unit_not_closed_by_its_document_item(tmp_path):
    head, recs = _records()
    u = _plain(recs, 1)
    nxt = recs[recs.index(u[-1]) + 1]
    recs.remove(u[-1])
    out = _check(tmp_path, head, recs)
    assert (f"HIT 1 position {u[-1]['position']}: {nxt['system']} document {nxt['document']} starts before the "
            f"document item of {u[0]['system']} document {u[0]['document']} (from position {u[0]['position']})") in out
    head, recs = _records()
    last = max(r["hit"] for r in recs)
    tail = [r for r in recs if r["hit"] == last]
    recs.remove(tail[-1])
    out = _check(tmp_path, head, recs)
    assert out[0].startswith(f"HIT {last} position {len(tail) - 2}: the HIT ends inside {tail[-1]['system']} "
                             f"document {tail[-1]['document']}")


def test_qc_documents_counted_placed_and_copied(tmp_path):
    head, recs = _records()
    rep, orig = _qc(recs, 0, "REPEAT")
    for r in rep:
        r["type"] = "SYSTEM"
    assert _check(tmp_path, head, recs) == [
        f"HIT 0 position {rep[0]['position']}: {rep[0]['system']} document {rep[0]['document']} again as a SYSTEM "
        f"unit (first at position {orig[0]['position']}); only its REPEAT or BAD_REF copy may come back",
        "HIT 0: 0 REPEAT documents (positions none); expected exactly one"]

    head, recs = _records()  # the REPEAT moved to the front of its HIT: before its original
    rep, orig = _qc(recs, 0, "REPEAT")
    for r in rep:
        recs.remove(r)
    recs[0:0] = rep
    out = _check(tmp_path, head, recs)
    assert (f"HIT 0 position 0: the REPEAT copy of {rep[0]['system']} document {rep[0]['document']} comes before "
            f"its original at position {orig[0]['position']}") in out  # renumbered by _check

    head, recs = _records()  # the BAD_REF moved right after its original
    bad, orig = _qc(recs, 1, "BAD_REF")
    for r in bad:
        recs.remove(r)
    at = recs.index(orig[-1]) + 1
    recs[at:at] = bad
    out = _check(tmp_path, head, recs)
    assert (f"HIT 1 position {orig[-1]['position'] + 1}: the BAD_REF copy of {bad[0]['system']} document "
            f"{bad[0]['document']} follows its original at position {orig[0]['position']} with no other unit "
            "between them") in out

    head, recs = _records()  # a REPEAT that is no verbatim copy
    rep, orig = _qc(recs, 2, "REPEAT")
    rep[1]["text"] += " changed"
    out = _check(tmp_path, head, recs)
    assert f"HIT 2 position {rep[1]['position']}: the REPEAT copy of {rep[0]['system']} document " \
           f"{rep[0]['document']} differs from its original at position {orig[1]['position']}; a REPEAT item is a " \
           "verbatim copy" in out

    head, recs = _records()  # a second BAD_REF document
    u = _plain(recs, 1)
    bad, _ = _qc(recs, 1, "BAD_REF")
    for r in u:
        r["type"] = "BAD_REF"
    out = _check(tmp_path, head, recs)
    at = ", ".join(str(p) for p in sorted([u[0]["position"], bad[0]["position"]]))
    assert f"HIT 1: 2 BAD_REF documents (positions {at}); expected exactly one" in out


def test_a_unit_in_two_hits_sizes_and_hit_order(tmp_path):
    head, recs = _records()
    assert max(r["hit"] for r in recs) >= 3
    u = _plain(recs, 0)
    copy = [{**r, "hit": 1, "rid": r["rid"] + 10 ** 7} for r in u]
    end = max(i for i, r in enumerate(recs) if r["hit"] == 1) + 1
    recs[end:end] = copy
    out = _check(tmp_path, head, recs)
    n1 = sum(r["hit"] == 1 for r in recs)
    assert (f"HIT 1 position {n1 - len(u)}: {u[0]['system']} document {u[0]['document']} is a SYSTEM unit of HIT 0 "
            "too; only the last HIT repeats units (filled up from the first ones)") in out

    head, recs = _records()
    units = [x for x in _units(recs, 0) if x[-1]["type"] == "SYSTEM"]
    sizes = sorted(len(x) for x in units)
    planned = sum(sizes) + sizes[0] + sizes[1]
    out = _check(tmp_path, head, recs, hit_size=planned - 1)
    assert out[0] == (f"HIT 0: {len(units)} SYSTEM units of {sum(sizes)} items, with copies of the two shortest "
                      f"{planned} > {planned - 1} items; only a HIT of 3 units may be longer")

    head, recs = _records()
    for r in recs:
        r["hit"] = {2: 5}.get(r["hit"], r["hit"])
    out = _check(tmp_path, head, recs)
    assert out[0] == "HIT 5 position 0: HIT 5 after HIT 1; expected HIT 2 (HITs 0, 1, ... in order)"
    head, recs = _records()
    recs[3]["position"] = 7
    assert _check(tmp_path, head, recs, renumber=False) == [
        "HIT 0 position 3: the item is numbered position 7; expected 3 (positions 0, 1, ... in each HIT)"]


def test_check_hits_cli_exit_status_and_csv_unchanged(tmp_path, capsys):
    head, recs = _records()
    rep, _ = _qc(recs, 0, "REPEAT")
    for r in rep:
        recs.remove(r)
    out = _check(tmp_path, head, recs)
    assert "HIT 0: 0 REPEAT documents (positions none); expected exactly one" in out
    f = tmp_path / "hits.txt"
    assert is_doc_hits_file(f)
    assert main(["human", "check-hits", str(f)]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"{f}: {recs[-1]['hit'] + 1} document HITs, {len(out)} problem(s)"] + [f"  {m}" for m in out]
    # a 100-item CSV is still read and checked by the segment rules
    outs, refs, _ = _data(80)
    for s, lines in outs.items():
        (tmp_path / s).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "ref").write_text("\n".join(refs) + "\n", encoding="utf-8")
    csv_ = tmp_path / "hits.csv"
    assert main(["human", "build-hits", *(a for s in outs for a in ("--system", f"{s}={tmp_path / s}")),
                 "--reference", str(tmp_path / "ref"), "--src", "en", "--trg", "de", "-o", str(csv_)]) == 0
    capsys.readouterr()
    assert not is_doc_hits_file(csv_)
    assert main(["human", "check-hits", str(csv_)]) == 0
    assert capsys.readouterr().out == f"{csv_}: 4 HITs, all follow the rules\n"
