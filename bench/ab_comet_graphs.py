"""Two exports of one COMET model's embedding graph head to head: the same length batches of the
first ``--n`` newstest2021 en-de triples (every distinct source, translation and reference, as
``CometScorer`` batches them) through both ONNX sessions, alternating which runs first, so the
VM's drift between runs cancels out. Prints each graph's total seconds and the largest difference
of their embeddings. For a change to the graph (``GRAPH_VERSION``): export the old graph with the
old code into one cache folder and the new one into another, then::

    python bench/ab_comet_graphs.py --a OLD/model.onnx --b NEW/model.onnx --n 200 \\
        --model /work/bench-comet/model --encoder /work/bench-comet/encoder
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, type=Path, help="the first graph (model.onnx)")
    ap.add_argument("--b", required=True, type=Path, help="the second graph (model.onnx)")
    ap.add_argument("--model", default="/work/bench-comet/model", help="the COMET model folder (tokenizer)")
    ap.add_argument("--encoder", default="/work/bench-comet/encoder", help="its encoder folder")
    ap.add_argument("--n", type=int, default=200, help="triples (first N lines of newstest2021 en-de)")
    ap.add_argument("--batch-tokens", type=int, default=2048, help="padded tokens per call")
    args = ap.parse_args()

    import onnxruntime as ort
    from bench_comet import triples

    from mtscore.engine.comet.inputs import load_comet_tokenizer, padded_batches
    from mtscore.engine.comet.model import resolve_comet_model
    from mtscore.engine.encoder.session import session_options

    files = resolve_comet_model(args.model, encoder=args.encoder)
    tok = load_comet_tokenizer(files)
    rows = triples(args.n, "Online-W")
    ids = tok.encode(sorted({r[k] for r in rows for k in ("mt", "src", "ref")}))
    sessions = {}
    for name, path in (("a", args.a), ("b", args.b)):
        so, _ = session_options(ort, None)
        sessions[name] = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    total = {"a": 0.0, "b": 0.0}
    diff = 0.0
    batches = list(padded_batches(ids, tok.pad_id, batch_tokens=args.batch_tokens))
    for i, b in enumerate(batches):
        feed = {"input_ids": b.input_ids, "attention_mask": b.attention_mask}
        out = {}
        for name in (("a", "b") if i % 2 == 0 else ("b", "a")):
            t = time.perf_counter()
            out[name] = sessions[name].run(None, feed)[0]
            total[name] += time.perf_counter() - t
        diff = max(diff, float(np.abs(out["a"] - out["b"]).max()))
    print(f"{len(batches)} batches, {sum(len(x) for x in ids)} tokens: a {total['a']:.1f} s, b {total['b']:.1f} s "
          f"(b/a {total['b'] / total['a']:.3f}); max |embedding a - b| {diff:.2e}")


if __name__ == "__main__":
    main()
