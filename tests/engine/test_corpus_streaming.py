"""Corpus ingestion: streaming with bounded memory; adversarial Unicode round trips through every
format; the real WMT17 files."""
import functools
import gzip
import operator
import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
from conftest import require
from corpus_helpers import (
    EXT,
    sacrebleu_file_lines,
    write_table_file,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtscore.engine import textio
from mtscore.engine.corpus import (
    Corpus,
    batch_lists,
    count_lines,
    iter_batches,
    iter_text_chunks,
    load_corpus,
    read_lines,
    read_table,
)


# ---------------------------------------------------------------- streaming, bounded memory
def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_streaming_text_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(textio, "BLOCK_BYTES", 1 << 17)
    rng = np.random.default_rng(0)
    words = ["Hausaufgaben", "Straßenbahn", "der", "ä", "漢字", "🙂", "x\ry", "  "]
    idx = rng.integers(0, len(words), size=(30000, 30)).tolist()
    lens = rng.integers(0, 31, size=30000).tolist()
    lines = [" ".join(words[j] for j in row[:k]) for row, k in zip(idx, lens)]
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt.gz"
    hyp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with gzip.open(ref, "wt", encoding="utf-8") as f:
        f.write("\n".join(reversed(lines)))
    assert hyp.stat().st_size > 2_000_000
    full_h, full_r = read_lines(hyp), read_lines(ref)
    assert full_h == sacrebleu_file_lines(hyp)
    assert full_r == sacrebleu_file_lines(ref)
    got_h, got_r, starts = [], [], []
    for ch in iter_text_chunks(hyp, [ref], batch_size=2000):
        assert 0 < len(ch.hyps) <= 2000
        assert len(ch.refs[0]) == len(ch.hyps)
        starts.append(ch.start)
        got_h += ch.hyps
        got_r += ch.refs[0]
    assert got_h == full_h
    assert got_r == full_r
    assert starts == list(range(0, 30000, 2000))

    def stream():
        for _ in iter_text_chunks(hyp, [ref], batch_size=2000):
            pass

    peak_stream = _peak(stream)
    peak_full = _peak(lambda: (read_lines(hyp), read_lines(ref)))
    assert peak_stream < peak_full / 4, (peak_stream, peak_full)


def test_streaming_tables_bounded(tmp_path):
    n = 100_000
    hyps = [f"hypothesis number {i} " + "x" * (i % 50) for i in range(n)]
    t = pa.table({"hyp": hyps, "ref": hyps[::-1]})
    pq.write_table(t, tmp_path / "big.parquet", row_group_size=5000)
    feather.write_feather(t, tmp_path / "big.feather", chunksize=5000)
    write_table_file(tmp_path / "big.tsv", t, "tsv")
    for name in ("big.parquet", "big.feather", "big.tsv"):
        base = pa.total_allocated_bytes()
        peak, rows, first = 0, 0, []
        for b in iter_batches(tmp_path / name, batch_size=4096):
            assert b.num_rows <= 4096
            peak = max(peak, pa.total_allocated_bytes() - base)
            if rows == 0:
                first = batch_lists(b)[0]
            rows += b.num_rows
        assert rows == n
        assert first == hyps[:len(first)]
        assert peak < t.nbytes / 4, (name, peak, t.nbytes)


# ---------------------------------------------------------------- adversarial Unicode
ADVERSARIAL = [*list("\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u3000\ufeff\x00 \t"), "́", "é", "👩\u200d💻", "\u202e", "�", "\U0010ffff", "ß", "İ", "ﬃ", "漢", "𠀀"]
TEXT = st.lists(st.one_of(st.sampled_from(ADVERSARIAL),
                          st.characters(exclude_categories=("Cs",))), max_size=20).map("".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT.map(lambda s: s.replace("\n", "")), min_size=1, max_size=12),
       st.sampled_from([1 << 22, 5]))
def test_text_files_match_sacrebleu(tmp_path_factory, lines, block):
    d = tmp_path_factory.mktemp("txt")
    data = "\n".join(lines).encode("utf-8")
    for name, write in (("h.txt", lambda p: p.write_bytes(data)),
                        ("h.txt.gz", lambda p: p.write_bytes(gzip.compress(data)))):
        p = d / name
        write(p)
        expect = sacrebleu_file_lines(p)
        assert read_lines(p) == expect
        old = textio.BLOCK_BYTES
        textio.BLOCK_BYTES = block  # tiny blocks split multi-byte characters
        try:
            got = [s for ch in iter_text_chunks(p, [p], batch_size=3, precount=block > 5)
                   for s in ch.hyps] if expect else []
        finally:
            textio.BLOCK_BYTES = old
        assert got == expect


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(TEXT, st.one_of(st.none(), TEXT)), min_size=1, max_size=8),
       st.sampled_from(["parquet", "feather", "arrows", "jsonl", "jsonl-ascii"]))
def test_table_formats_round_trip_unicode(tmp_path_factory, rows, fmt):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    t = pa.table({"hyp": pa.array(hyps, pa.string()), "ref": pa.array(refs, pa.string())})
    p = tmp_path_factory.mktemp("tbl") / f"u.{EXT[fmt]}"
    write_table_file(p, t, fmt)
    c = read_table(p)
    assert c.hyps() == hyps
    assert c.ref_streams() == [refs]
    assert [batch_lists(b) for b in iter_batches(p, batch_size=len(rows))] == [(hyps, [refs])]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=8))
def test_tsv_round_trip_unicode(tmp_path_factory, rows):
    rows = [(h.translate({9: 32, 10: 32}), r.translate({9: 32, 10: 32})) for h, r in rows]
    t = pa.table({"hyp": [h for h, _ in rows], "ref": [r for _, r in rows],
                  "id": [str(i) for i in range(len(rows))]})  # last column never ends in \r
    p = tmp_path_factory.mktemp("tsv") / "u.tsv"
    write_table_file(p, t, "tsv")
    c = read_table(p)
    assert c.hyps() == [h for h, _ in rows]
    assert c.ref_streams() == [[r for _, r in rows]]
    assert [batch_lists(b) for b in iter_batches(p)] == [(c.hyps(), c.ref_streams())]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(TEXT, st.one_of(st.none(), TEXT)), min_size=1, max_size=8))
def test_in_memory_kinds_agree_unicode(rows):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    for conv in (list, pd.Series, lambda x: pa.array(x, pa.string()),
                 lambda x: np.array(x, dtype=object)):
        c = load_corpus(conv(hyps), [conv(refs)])
        assert c.hyps() == hyps
        assert c.ref_streams() == [refs]
        assert Corpus.from_table(c.table) == c


# ---------------------------------------------------------------- real data
def test_real_wmt17_files(shared_data):
    d = shared_data / "wmt17-en-de-systems"
    ref = require(d / "reference.txt")
    sys_file = require(d / "newstest2017.uedin-nmt.4722.en-de.txt")
    assert read_lines(ref) == sacrebleu_file_lines(ref)
    c = Corpus.from_files(sys_file, [ref])
    assert c.hyps() == sacrebleu_file_lines(sys_file)
    assert len(c) == count_lines(ref) == 3004
    chunks = list(iter_text_chunks(sys_file, [ref], batch_size=1000))
    assert [len(ch.hyps) for ch in chunks] == [1000, 1000, 1000, 4]
    assert functools.reduce(operator.iadd, (ch.refs[0] for ch in chunks), []) == c.ref_streams()[0]
