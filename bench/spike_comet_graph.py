"""Speed spike (P18 risk 1): COMET's sentence embedding on the CPU, mtscore's ONNX graph
(mtscore.engine.comet.graph) vs transformers' XLMRobertaModel(output_hidden_states=True) + the layer
mix / layer norm / average pooling in torch as unbabel-comet computes them. A random XLM-R *base*-sized
encoder (12 layers, hidden 768, 12 heads, FF 3072; vocab cut to 8,000: the embedding lookup does not
change the time), softmax mix with layer norm (wmt20-comet-qe-da's kind), 64 sentences of ~30
tokens (lengths 24..36, padded to the longest), fp32 both, 2 threads both. Prints only.

    PYTHONPATH=. python bench/spike_comet_graph.py [--reps 5] [--threads 2] [--large]

(``PYTHONPATH=.`` so that the checkout's mtscore is imported, not an installed one.) First run on the
2-core CI box (load average ~5 from other jobs, so only a rough figure): base, 7 reps: onnx median
23.8 s / min 17.9 s, torch median 25.5 s / min 14.1 s: ratio 1.07 (median), 0.79 (min); outputs
agree to 9.5e-7. Rerun on an idle machine before deciding anything.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--large", action="store_true", help="XLM-R large dims (24 x 1024) instead of base")
    args = ap.parse_args()

    import onnxruntime as ort
    import torch
    import transformers

    from mtscore.engine.comet.graph import build_comet_embedding_graph
    from mtscore.engine.comet.spec import CometSpec, EncoderDims

    torch.set_num_threads(args.threads)
    L, H, heads, F = (24, 1024, 16, 4096) if args.large else (12, 768, 12, 3072)
    cfg = transformers.XLMRobertaConfig(vocab_size=8000, hidden_size=H, num_hidden_layers=L, num_attention_heads=heads,
                                        intermediate_size=F, max_position_embeddings=514, pad_token_id=1)
    torch.manual_seed(0)
    model = transformers.XLMRobertaModel(cfg, add_pooling_layer=False).eval()
    weights = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    rng = np.random.default_rng(0)
    scalars = rng.normal(0, 0.5, L + 1).astype(np.float32)
    spec = CometSpec(class_identifier="referenceless_regression_metric",
                     dims=EncoderDims(H, L, heads, F, 8000, 514, 1, 1), layer=None, mix="softmax", layer_norm=True,
                     scalar_parameters=scalars, gamma=1.3, pool="avg", features=(), estimator=(),
                     encoder_config=dict(cfg.to_dict(), model_type="xlm-roberta"), encoder_weights=weights)
    t0 = time.perf_counter()
    onnx_model = build_comet_embedding_graph(spec)
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(onnx_model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    print(f"build + session: {time.perf_counter() - t0:.1f} s")

    lengths = rng.integers(24, 37, 64)
    T = int(lengths.max())
    ids = np.full((64, T), 1, np.int64)
    for i, n in enumerate(lengths):
        ids[i, :n] = [0, *rng.integers(3, 8000, n - 2), 2]
    mask = (ids != 1).astype(np.int64)

    w = torch.softmax(torch.from_numpy(scalars), 0)
    tid, tmask = torch.from_numpy(ids), torch.from_numpy(mask)

    def torch_comet():
        with torch.no_grad():
            hs = model(tid, tmask, output_hidden_states=True).hidden_states
            mf = tmask.float()
            bm = mf.unsqueeze(-1)
            n = mf.sum(1) * H

            def norm(t):
                tm = t * bm
                mean = (tm.view(64, -1).sum(1) / n).view(64, 1, 1)
                var = (((tm - mean) * bm) ** 2).view(64, -1).sum(1) / n
                return (t - mean) / torch.sqrt(var + 1e-12).view(64, 1, 1)

            emb = torch.tensor([1.3]) * sum(wk * norm(h) for wk, h in zip(torch.split(w, 1), hs))
            word = emb.masked_fill(tid.eq(1).unsqueeze(-1), 0.0)
            return (word.sum(1) / mf.sum(1, keepdim=True)).numpy()

    def onnx_comet():
        return sess.run(["sentemb"], {"input_ids": ids, "attention_mask": mask})[0]

    a, b = onnx_comet(), torch_comet()  # warm-up
    print(f"max |onnx - torch| = {np.abs(a - b).max():.2e}")
    t_onnx, t_torch = [], []
    for _ in range(args.reps):  # interleaved, so load from other processes hits both alike
        t = time.perf_counter()
        onnx_comet()
        t_onnx.append(time.perf_counter() - t)
        t = time.perf_counter()
        torch_comet()
        t_torch.append(time.perf_counter() - t)
    mo, mt = statistics.median(t_onnx), statistics.median(t_torch)
    print(f"{'large' if args.large else 'base'} {L}x{H}, 64 x ~30 tokens (padded to {T}), {args.threads} threads, "
          f"{args.reps} reps, torch {torch.__version__}, onnxruntime {ort.__version__}")
    print(f"onnx  median {mo * 1e3:.0f} ms  min {min(t_onnx) * 1e3:.0f} ms")
    print(f"torch median {mt * 1e3:.0f} ms  min {min(t_torch) * 1e3:.0f} ms")
    print(f"torch / onnx = {mt / mo:.2f} (median), {min(t_torch) / min(t_onnx):.2f} (min)")


if __name__ == "__main__":
    main()
