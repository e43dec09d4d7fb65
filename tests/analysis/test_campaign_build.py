"""HIT builder (evaluation-methods A2) and bad-reference generators (A3)."""
from __future__ import annotations

import csv
import io
import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtscore.analysis.crowd import degrade as dg
from mtscore.analysis.crowd.hits import (
    HIT_SIZE,
    Campaign,
    HitItem,
    batch_input_csv,
    build_campaign,
    hit_problems,
    items_tsv,
    plan_hits,
    read_batch_input,
    write_batch_input,
)
from mtscore.analysis.errors import AnalysisInputError
from tests.conftest import require

SYSTEMS = ("online-A", "uedin_nmt", "sys.3", "Ünïcode")


def _texts(n_seg: int = 90):
    outs = {s: [f"{s} says line {i} " + " ".join(f"w{j}" for j in range(i % 27)) for i in range(n_seg)]
            for s in SYSTEMS}
    refs = [f"The reference of line {i} " + " ".join(f"r{j}" for j in range(2 + i % 13)) for i in range(n_seg)]
    return outs, refs


# ---- degraded items ------------------------------------------------------------------------------

def test_length_rules_match_the_tables():
    # WMT bad-refs.py (evaluation-methods A3, "later WMT version")
    want_rep = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3, 8: 4, 14: 4, 15: 5, 19: 5, 20: 5, 23: 5, 24: 6, 40: 10}
    assert {n: dg.replaced_words(n) for n in want_rep} == want_rep
    # NLE section 4 table
    want_del = {2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 8: 3, 9: 4, 15: 4, 16: 5, 20: 5, 21: 4, 25: 5, 50: 10}
    assert {n: dg.deleted_words(n) for n in want_del} == want_del
    with pytest.raises(ValueError, match="an output of 0 words cannot be degraded"):
        dg.replaced_words(0)
    with pytest.raises(ValueError, match="cannot lose a phrase and keep a word"):
        dg.deleted_words(1)


def test_ngram_pool_skips_edge_words_and_lowercases_the_first():
    pool = dg.ngram_pool(["The Big Cat sat on mats", "a b", "x Big Cat y"])
    assert pool[1] == ["big", "cat", "sat", "on"]
    assert pool[2] == ["big Cat", "cat sat", "sat on"]
    assert pool[4] == ["big Cat sat on"]
    assert pool[5] == []
    assert pool[6] == []


def test_replace_small_cases_exactly():
    pool = {1: ["zz"], 2: ["yy yy"]}
    rng = random.Random(0)
    assert dg.replace_phrase("one", pool, rng) == "Zz"
    assert dg.replace_phrase("a b", pool, rng) == "a zz"
    assert dg.replace_phrase("a b c", pool, rng) == "a zz c"
    assert dg.replace_phrase("a b c d", pool, rng) == "a yy yy d"
    assert dg.replace_phrase("a b c d e", {2: ["Q R"]}, rng) == "a Q R d e"  # n = 5: start must be 1


words = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6).filter(
    lambda w: w.split() == [w])


@settings(max_examples=150)
@given(st.lists(words, min_size=5, max_size=60), st.integers(0, 2**32))
def test_replace_phrase_keeps_the_length_rule(ws, seed):
    n = len(ws)
    r = dg.replaced_words(n)
    k = min(r, dg.MAX_NGRAM)
    pool = {k: [" ".join(f"<{i}>" for i in range(k))]}
    out = dg.replace_phrase(" ".join(ws), pool, random.Random(seed)).split()
    assert len(out) == n - r + k
    start = out.index("<0>")
    assert 1 <= start <= n - r - 2                          # the first word always stays
    assert out[:start] == ws[:start]
    assert out[start + k:] == ws[start + r:]


@settings(max_examples=150)
@given(st.lists(words, min_size=2, max_size=60), st.integers(0, 2**32))
def test_delete_phrase_removes_one_span(ws, seed):
    n = len(ws)
    out = dg.delete_phrase(" ".join(ws), random.Random(seed)).split()
    assert len(out) == n - dg.deleted_words(n)
    # the output is ws with one contiguous span removed
    assert any(ws[:i] + ws[i + dg.deleted_words(n):] == out for i in range(n))


@settings(max_examples=150)
@given(st.lists(words, min_size=4, max_size=40), st.integers(0, 2**32))
def test_duplicate_words_copies_a_pair_away_from_itself(ws, seed):
    n = len(ws)
    out = dg.duplicate_words(" ".join(ws), random.Random(seed)).split()
    assert len(out) == n + 2
    # some adjacent pair (i, i+1) of ws was inserted before ws[g], 1 <= g <= n-1, g not in {i, i+1, i+2}
    assert any(out == ws[:g] + ws[i:i + 2] + ws[g:]
               for i in range(n - 1) for g in range(1, n) if g not in (i, i + 1, i + 2))


def test_duplicate_words_small_cases():
    for seed in range(30):
        out = dg.duplicate_words("a b c d", random.Random(seed))
        assert out in ("a b c a b d", "a c d b c d")
    with pytest.raises(ValueError, match="has no gap to copy a word pair into"):
        dg.duplicate_words("a b c", random.Random(0))


def test_degrade_is_deterministic_and_names_the_bad_text():
    texts = [f"a sentence number {i} with some words in it" for i in range(20)]
    a = dg.degrade(texts, "replace", seed=7)
    assert a == dg.degrade(texts, "replace", seed=7)
    assert a != dg.degrade(texts, "replace", seed=8)
    assert all(x != t for x, t in zip(a, texts))
    with pytest.raises(AnalysisInputError, match=r"text 1 \('x'\) is too short to degrade by delete"):
        dg.degrade(["a b", "x"], "delete")
    with pytest.raises(AnalysisInputError, match=r"text 0 \('a b c'\) is too short to degrade by duplicate"):
        dg.degrade(["a b c"], "duplicate")
    assert len(dg.degrade(texts, "duplicate", seed=1)[0].split()) == len(texts[0].split()) + 2
    with pytest.raises(AnalysisInputError, match="no 1-gram"):
        dg.degrade(["word"], "replace")
    with pytest.raises(AnalysisInputError, match="choose one of"):
        dg.degrade(["a b"], "swap")


# ---- HIT placement -------------------------------------------------------------------------------

def _check_hit(items, balance):
    assert len(items) == HIT_SIZE
    assert [it.position for it in items] == list(range(HIT_SIZE))
    types = Counter(it.type for it in items)
    assert types == {"SYSTEM": 70, "BAD_REF": 10, "REPEAT": 10, "REF": 10}
    mt = {(it.system, it.segment): it.position for it in items if it.type == "SYSTEM"}
    assert len(mt) == 70                                     # no output twice as SYSTEM in one HIT
    partners = [(it.system, it.segment) for it in items if it.type != "SYSTEM"]
    assert len(set(partners)) == 30                          # 30 different originals
    for it in items:
        if it.type == "SYSTEM":
            continue
        orig = mt[(it.system, it.segment)]                   # the original is in the same HIT...
        assert abs(orig - it.position) >= 41                 # ...41+ positions away
        b = it.position // 10                                # in the block 5 away (reference rule)
        assert orig // 10 == (b + 5 if b < 5 else b - 5)
    for b in range(10):                                      # every block: 7 outputs + one of each QC type
        assert Counter(it.type for it in items[10 * b:10 * b + 10]) == {"SYSTEM": 7, "BAD_REF": 1, "REPEAT": 1,
                                                                        "REF": 1}
    if balance:
        per_sys = Counter(it.system for it in items if it.type == "SYSTEM")
        assert max(per_sys.values()) - min(per_sys.values()) <= 2


@pytest.mark.parametrize("balance", [True, False])
def test_hits_follow_the_composition_and_spacing(balance):
    pool = [(s, g) for s in SYSTEMS for g in range(1, 176)]  # 700 outputs = 10 full HITs
    c = plan_hits(pool, seed=11, balance=balance)
    assert c.n_hits == 10
    for h in range(c.n_hits):
        _check_hit(c.hit(h), balance)
    assert hit_problems(c) == []
    seen = Counter((it.system, it.segment) for it in c.items if it.type == "SYSTEM")
    assert set(seen) == set(pool)
    assert set(seen.values()) == {1}
    rids = [it.rid for it in c.items]
    assert sorted(rids) == list(range(1000000, 1000000 + 1000))


def test_last_hit_wraps_round_and_balance_is_tight():
    pool = [(s, g) for s in SYSTEMS[:3] for g in range(1, 51)]   # 150 outputs -> 3 HITs, 60 wrapped
    c = plan_hits(pool, seed=2)
    assert c.n_hits == 3
    for h in range(3):
        _check_hit(c.hit(h), balance=h < 2)  # the wrapped HIT mixes both ends of the order
    seen = Counter((it.system, it.segment) for it in c.items if it.type == "SYSTEM")
    assert set(seen) == set(pool)
    assert sum(seen.values()) == 210
    assert max(seen.values()) == 2
    for h in range(2):
        full = Counter(it.system for it in c.hit(h) if it.type == "SYSTEM")
        assert sorted(full.values()) == [23, 23, 24]


def test_seed_determinism_and_texts():
    outs, refs = _texts()
    a = build_campaign(outs, refs, seed=5)
    b = build_campaign(outs, refs, seed=5)
    assert a.items == b.items
    assert a.items != build_campaign(outs, refs, seed=6).items
    for it in a.items:
        orig = outs[it.system][it.segment - 1]
        if it.type in ("SYSTEM", "REPEAT"):
            assert it.text == orig
        elif it.type == "REF":
            assert it.text == refs[it.segment - 1]
        else:
            assert it.text != orig
            assert it.text.split()[0] == orig.split()[0]
            n, r = len(orig.split()), dg.replaced_words(len(orig.split()))
            assert len(it.text.split()) == (n if n < 5 else n - r + min(r, 6))
    f = build_campaign(outs, refs, seed=5, degrade="duplicate")  # every output has 4+ words
    assert all(len(it.text.split()) == len(outs[it.system][it.segment - 1].split()) + 2
               for it in f.items if it.type == "BAD_REF")
    d = build_campaign(outs, refs, seed=5, degrade="delete")
    assert [(it.system, it.segment, it.type) for it in d.items] == [(it.system, it.segment, it.type) for it in a.items]
    assert all(len(it.text.split()) < len(outs[it.system][it.segment - 1].split())
               for it in d.items if it.type == "BAD_REF")
    assert items_tsv(a).count("\n") == len(a.items) + 1


def test_batch_input_csv_is_what_mturk_reads(tmp_path):
    outs, refs = _texts()
    c = build_campaign(outs, refs, seed=1)
    path = tmp_path / "hits.csv"
    write_batch_input(c, path, "en", "de")
    raw = path.read_bytes()
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    head = rows[0]
    assert head[:8] == ["src", "trg", "item", "hit", "sys_0", "sid_0", "tst_0", "rid_0"]
    assert len(head) == 404
    assert len(set(head)) == len(head)
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", h) for h in head)
    assert len(rows) == 1 + c.n_hits
    assert {len(r) for r in rows} == {404}
    first = c.hit(0)[0]
    assert rows[1][:8] == ["'en'", "'de'", "'ad'", "0", f"'{first.system}'", f"'{first.segment}'",
                           f"'{first.type}'", f"'{first.rid}'"]
    back = read_batch_input(path)
    assert [(i.hit, i.position, i.system, i.segment, i.type, i.rid) for i in back.items] == \
        [(i.hit, i.position, i.system, i.segment, i.type, i.rid) for i in c.items]
    assert back.meta == {"src": "en", "trg": "de", "item": "ad"}
    with_texts = list(csv.reader(io.StringIO(batch_input_csv(c, "en", "de", texts=True), newline="")))
    assert with_texts[0][4:10] == ["sys_0", "sid_0", "tst_0", "rid_0", "text_0", "ref_0"]
    assert with_texts[1][8] == first.text
    assert with_texts[1][9] == refs[first.segment - 1]


def test_release_hits_obey_the_same_rules(shared_data):
    # the 16 + 16 HITs of the docqe-eacl2017 runs were built by the reference script: read from the
    # Input.* columns of the raw batch results, they satisfy every rule the builder guarantees
    folder = require(shared_data / "docqe-eacl2017" / "batched-hits")
    for run in ("runA", "runB"):
        hits = [read_batch_input(f) for f in sorted((folder / run).glob("Batch_*.csv"))]
        assert sum(c.n_hits for c in hits) >= 16
        for c in hits:
            assert hit_problems(c) == []
            assert c.meta == {"src": "en", "trg": "es", "item": "ad"}
    c = read_batch_input(folder / "runA" / "Batch_2603232_batch_results.csv")
    assert c.n_hits == 16
    assert c.items[0] == HitItem(0, 0, "all", 746, "SYSTEM", 1009117)
    # and the check finds broken HITs: swap a QC item into the next block, drop an original
    items = list(c.items)
    q = next(i for i, it in enumerate(items[:10]) if it.type != "SYSTEM")
    items[q], items[q + 10] = items[q + 10], items[q]
    bad = hit_problems(Campaign(items[:100], None))
    assert any("positions 0-9 hold" in m for m in bad)
    assert any(f"position {q + 10} " in m for m in bad)
    orig = next(i for i, it in enumerate(items) if it.type == "SYSTEM" and
                any(o.type == "REF" and (o.system, o.segment) == (it.system, it.segment) for o in items[:100]))
    items[orig] = HitItem(0, orig, "other", 1, "SYSTEM", 1)
    assert any("has no SYSTEM original" in m for m in hit_problems(Campaign(items[:100], None)))


# ---- bad input ------------------------------------------------------------------------------------

def test_bad_pools_and_texts():
    with pytest.raises(AnalysisInputError, match="a HIT needs 70 different MT outputs; the pool has 69"):
        plan_hits([("a", g) for g in range(69)])
    with pytest.raises(AnalysisInputError, match="output a segment 3 is in the pool twice"):
        plan_hits([("a", g) for g in range(80)] + [("a", 3)])
    with pytest.raises(AnalysisInputError, match="system name 'a b'"):
        plan_hits([("a b", g) for g in range(80)])
    outs, refs = _texts()
    with pytest.raises(AnalysisInputError, match="system online-A has 90 lines, the references 89"):
        build_campaign(outs, refs[:-1])
    with pytest.raises(AnalysisInputError, match="none that can be degraded"):
        build_campaign({"a": ["x"] * 80}, ["the ref line"] * 80, degrade="delete")
    with pytest.raises(AnalysisInputError, match="src \"it's\": must be a non-empty code"):
        batch_input_csv(plan_hits([("a", g) for g in range(80)]), "it's", "de")
    with pytest.raises(AnalysisInputError, match="texts=True needs"):
        batch_input_csv(plan_hits([("a", g) for g in range(80)]), "en", "de", texts=True)


def test_bad_batch_input_files(tmp_path):
    outs, refs = _texts()
    good = batch_input_csv(build_campaign(outs, refs, seed=1), "en", "de")
    cases = {
        "empty.csv": ("", "empty file"),
        "cols.csv": (good.replace("tst_7", "tstX"), "line 1: missing column.*tst_7"),
        "short.csv": (good.split("\r\n")[0] + "\r\n'en','de'\r\n", "line 2: 2 fields, the header has 404"),
        "type.csv": (good.replace("'REPEAT'", "'AGAIN'", 1), "line 2: tst_.* is 'AGAIN', expected one of"),
        "sid.csv": (good.replace("'SYSTEM','", "'SYSTEM','x", 1), "must be integers"),
        "nohits.csv": (good.split("\r\n")[0] + "\r\n", "a header and no HIT rows"),
    }
    for name, (text, msg) in cases.items():
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        with pytest.raises(AnalysisInputError, match=msg):
            read_batch_input(p)
    (tmp_path / "latin1.csv").write_bytes(good.encode("utf-8")[:100] + b"\xe9\r\n")
    with pytest.raises(AnalysisInputError, match="invalid UTF-8"):
        read_batch_input(tmp_path / "latin1.csv")
