"""Document-level DA HITs (issue P21, document-level DA): units of (system, document) in document
order closed by the document item, packed into HITs of about 100 items, one BAD_REF and one REPEAT
document per HIT after their originals, the JSON Lines file read back, and ``build-hits --docs``."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from mtscore.analysis.crowd.doc_hits import build_doc_campaign, doc_hits_jsonl, document_ids, read_doc_hits
from mtscore.analysis.errors import AnalysisInputError

SYSTEMS = ("A", "B", "C")


def _data(seg: int = 40):
    # documents of 3..7 segments, contiguous lines
    docs: list[str] = []
    d = 0
    while len(docs) < seg:
        docs += [f"doc{d}"] * min(3 + d % 5, seg - len(docs))
        d += 1
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 6)) for i in range(seg)]
    outs = {s: [f"{s} says {i} " + " ".join(f"w{j}" for j in range(3 + i % 7)) for i in range(seg)] for s in SYSTEMS}
    srcs = [f"source {i}" for i in range(seg)]
    return outs, refs, docs, srcs


def _units(items):
    """(type, system, document, [segments], document item) per unit, in display order."""
    out, cur = [], []
    for it in items:
        cur.append(it)
        if it.is_document:
            out.append(cur)
            cur = []
    assert cur == []
    return out


def test_document_ids_are_contiguous_and_named():
    assert document_ids([" a", "a ", "b", "c", "c"]) == ["a", "a", "b", "c", "c"]
    with pytest.raises(AnalysisInputError, match=r"--docs: line 4: document 'a' again after other documents"):
        document_ids(["a", "a", "b", "a"])
    with pytest.raises(AnalysisInputError, match=r"docs.txt: line 2: '' is not a document id"):
        document_ids(["a", ""], where="docs.txt")


def test_units_are_documents_in_order_closed_by_the_document_item():
    outs, refs, docs, srcs = _data()
    camp = build_doc_campaign(outs, refs, docs, srcs, seed=3)
    lines_of: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        lines_of.setdefault(d, []).append(i + 1)
    assert len({it.rid for it in camp.items}) == len(camp.items)
    seen = set()
    for h in range(camp.n_hits):
        items = camp.hit(h)
        assert [it.position for it in items] == list(range(len(items)))
        for unit in _units(items):
            head, doc_item = unit[:-1], unit[-1]
            typ, system, d = doc_item.type, doc_item.system, doc_item.document
            assert all((it.type, it.system, it.document, it.is_document) == (typ, system, d, False) for it in head)
            assert [it.segment for it in head] == lines_of[d]           # every segment, in document order
            assert doc_item.segment == lines_of[d][-1]
            assert doc_item.text == "\n".join(it.text for it in head)
            assert doc_item.ref == "\n".join(refs[g - 1] for g in lines_of[d])
            assert doc_item.src == "\n".join(srcs[g - 1] for g in lines_of[d])
            assert all(it.ref == refs[it.segment - 1] and it.src == srcs[it.segment - 1] for it in head)
            if typ != "BAD_REF":
                assert all(it.text == outs[system][it.segment - 1] for it in head)
            if typ == "SYSTEM":
                seen.add((system, d))
    assert seen == {(s, d) for s in SYSTEMS for d in set(docs)}     # every (system, document) is rated


@pytest.mark.parametrize("seed", [7, *range(20, 60)])
def test_each_hit_has_one_bad_ref_and_one_repeat_document_after_its_original(seed):
    outs, refs, docs, _ = _data(seg=100)
    camp = build_doc_campaign(outs, refs, docs, seed=seed)
    sizes = camp.hit_sizes()
    assert len(sizes) in (4, 5)                              # depends on how the units pack
    assert all(90 <= n <= 100 for n in sizes), sizes         # packed to about 100 items without splitting a document
    # every segment and document item at least once (20 documents), plus the controls
    assert sum(sizes) >= 3 * (100 + 20) + len(sizes) * 2 * 4
    for h in range(camp.n_hits):
        units = _units(camp.hit(h))
        kinds = Counter(u[-1].type for u in units)
        assert (kinds["BAD_REF"], kinds["REPEAT"]) == (1, 1), kinds
        keys = [(u[-1].type, u[-1].system, u[-1].document) for u in units]
        assert len(set(keys)) == len(keys)
        for k, u in enumerate(units):
            typ = u[-1].type
            if typ == "SYSTEM":
                continue
            orig = keys.index(("SYSTEM", u[-1].system, u[-1].document))
            assert orig < k - 1                                  # after its original, one unit or more between
            o = units[orig]
            if typ == "REPEAT":
                assert [it.text for it in u] == [it.text for it in o]
            else:   # every segment (all of them are degradable here) and so the document changed
                assert all(a.text != b.text for a, b in zip(u, o))
                assert u[-1].text == "\n".join(it.text for it in u[:-1])


def test_seed_makes_the_campaign_and_the_file_round_trips(tmp_path):
    outs, refs, docs, srcs = _data()
    a = build_doc_campaign(outs, refs, docs, srcs, seed=11)
    assert build_doc_campaign(outs, refs, docs, srcs, seed=11).items == a.items
    assert build_doc_campaign(outs, refs, docs, srcs, seed=12).items != a.items
    text = doc_hits_jsonl(a, "en", "de")
    head = json.loads(text.splitlines()[0])
    assert head == {"format": "mtscore-doc-hits", "version": 1, "src": "en", "trg": "de", "item": "ad"}
    p = tmp_path / "hits.jsonl"
    p.write_text(text, encoding="utf-8")
    back = read_doc_hits(p)
    assert back.items == a.items
    assert back.meta == {"src": "en", "trg": "de", "item": "ad"}
    no_src = build_doc_campaign(outs, refs, docs, seed=11)
    assert all(it.src is None for it in no_src.items)
    assert [it.text for it in no_src.items] == [it.text for it in a.items]


def test_bad_doc_hit_files_name_the_line(tmp_path):
    outs, refs, docs, _ = _data()
    lines = doc_hits_jsonl(build_doc_campaign(outs, refs, docs, seed=1), "en", "de").splitlines()

    def read(ls):
        p = tmp_path / "bad.jsonl"
        p.write_text("\n".join(ls) + "\n", encoding="utf-8")
        return read_doc_hits(p)

    with pytest.raises(AnalysisInputError, match=r"bad.jsonl: line 1: not a document HIT file"):
        read(['{"format": "other"}', *lines[1:]])
    with pytest.raises(AnalysisInputError, match=r"line 3: HIT 0 position 0, expected HIT 0 position 1"):
        read([lines[0], lines[1], lines[1].replace('"rid": ', '"rid": 1'), *lines[3:]])
    rec = json.loads(lines[2])
    rec["rid"] = json.loads(lines[1])["rid"]
    with pytest.raises(AnalysisInputError, match=r"line 3: rid \d+ again"):
        read([lines[0], lines[1], json.dumps(rec), *lines[3:]])
    first_doc = next(k for k, ln in enumerate(lines) if '"is_document": true' in ln)
    with pytest.raises(AnalysisInputError, match=rf"line {first_doc + 1}: a new unit starts before the document item"):
        read([*lines[:first_doc], json.dumps({**json.loads(lines[first_doc + 1]), "position": first_doc - 1})])
    rec = json.loads(lines[1])
    rec["is_document"] = "no"
    with pytest.raises(AnalysisInputError, match=r"line 2: field 'is_document' is 'no', expected bool"):
        read([lines[0], json.dumps(rec), *lines[2:]])
    with pytest.raises(AnalysisInputError, match=r"ends inside a unit"):
        read(lines[:first_doc])
    with pytest.raises(AnalysisInputError, match=r"system B has 39 lines, the references 40"):
        build_doc_campaign({**outs, "B": outs["B"][:-1]}, refs, docs)


def test_cli_build_hits_docs(tmp_path, capsys):
    from mtscore.bindings.cli.analysis import main

    outs, refs, docs, srcs = _data()
    args = []
    for s in SYSTEMS:
        (tmp_path / f"{s}.txt").write_text("\n".join(outs[s]) + "\n", encoding="utf-8")
        args += ["--system", f"{s}={tmp_path / f'{s}.txt'}"]
    for name, lines in (("ref.txt", refs), ("docs.txt", docs), ("src.txt", srcs)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "hits.jsonl"
    base = ["human", "build-hits", *args, "--reference", str(tmp_path / "ref.txt"), "--src", "en", "--trg", "de",
            "--seed", "4"]
    assert main([*base, "--docs", str(tmp_path / "docs.txt"), "--source", str(tmp_path / "src.txt"),
                 "-o", str(out)]) == 0
    camp = read_doc_hits(out)
    assert camp.items == build_doc_campaign(outs, refs, docs, srcs, seed=4).items
    sizes = camp.hit_sizes()
    assert f"mtscore: {camp.n_hits} document HITs of {min(sizes)}-{max(sizes)} items from 3 systems x 9 documents (40 segments)" \
        in capsys.readouterr().err
    (tmp_path / "docs.txt").write_text("\n".join(docs[:-1]) + "\n", encoding="utf-8")
    assert main([*base, "--docs", str(tmp_path / "docs.txt")]) == 1
    assert f"--docs {tmp_path / 'docs.txt'}: 39 lines, the reference 40" in capsys.readouterr().err
    assert main([*base, "--docs", str(tmp_path / "docs.txt"), "--workers-per-hit", "2"]) == 1
    assert "--workers-per-hit: not available with --docs" in capsys.readouterr().err


def test_long_documents_make_longer_hits_and_one_unit_is_refused():
    docs = ["long"] * 120 + ["s1"] * 3 + ["s2"] * 3
    refs = [f"reference {i} a b c" for i in range(len(docs))]
    outs = {"A": [f"out {i} x y z" for i in range(len(docs))]}
    camp = build_doc_campaign(outs, refs, docs, seed=0)
    sizes = camp.hit_sizes()
    long_hit = next(h for h in range(camp.n_hits) if any(it.document == "long" for it in camp.hit(h)))
    assert sizes[long_hit] > 121                     # the 121-item unit is never split
    assert sum(it.document == "long" and it.type == "SYSTEM" for it in camp.hit(long_hit)) == 121
    for h in range(camp.n_hits):                     # controls copy the short units, not the long one
        assert {it.document for it in camp.hit(h) if it.type != "SYSTEM"} <= {"s1", "s2"}
    with pytest.raises(AnalysisInputError, match=r"needs two or more \(system, document\) units"):
        build_doc_campaign({"A": outs["A"][:3]}, refs[:3], ["d"] * 3)
    with pytest.raises(AnalysisInputError, match=r"hit_size 2: a document HIT needs 3 or more items"):
        build_doc_campaign(outs, refs, docs, hit_size=2)


@pytest.mark.parametrize("seed", range(12))
def test_segments_that_cannot_be_degraded_are_repeats_not_unchanged_bad_refs(seed):
    """--degrade duplicate needs 4+ words. With one 3-word segment in every document no unit can be
    degraded whole: the BAD_REF copy then types each segment it could not change REPEAT (a verbatim
    copy), so every BAD_REF segment differs from its original; when a fully degradable unit exists,
    it is the one copied."""
    outs, refs, docs, _ = _data(seg=60)
    first = {d: docs.index(d) for d in docs}
    short = {s: [("x y z" if first[docs[i]] == i else t) for i, t in enumerate(v)] for s, v in outs.items()}
    for data, whole in ((short, False), (outs, True)):
        camp = build_doc_campaign(data, refs, docs, seed=seed, degrade="duplicate")
        for h in range(camp.n_hits):
            units = _units(camp.hit(h))
            (bad,) = [u for u in units if u[-1].type == "BAD_REF"]
            (orig,) = [u for u in units if u[-1].type == "SYSTEM" and (u[-1].system, u[-1].document)
                       == (bad[-1].system, bad[-1].document)]
            for b, o in zip(bad[:-1], orig[:-1]):
                assert b.segment == o.segment
                if b.type == "BAD_REF":
                    assert b.text != o.text
                else:
                    assert (b.type, b.text, len(o.text.split())) == ("REPEAT", o.text, 3)
            assert any(b.type == "BAD_REF" for b in bad[:-1])
            assert all(b.type == "BAD_REF" for b in bad[:-1]) == whole
