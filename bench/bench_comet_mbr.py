"""MBR with COMET: mtscore's ``decoder.mbr(metric=<CometScorer>)`` (n + 1 encodes, the head per pair)
against scoring the n^2 (hypothesis, pseudo-reference, source) triples as ordinary COMET inputs.
Prints only (no file, no asserts).

    python bench/bench_comet_mbr.py                       # 64 samples, golden tiny model, 1 thread
    python bench/bench_comet_mbr.py --samples 64 --threads 1 --model regression-softmax-norm \\
        --oracle /work/oracle-comet/bin/python             # unbabel-comet's predict beside (its venv)

Measured, the model loaded beforehand in each (load time excluded), CPU, fp32:

* ``mbr``: ``decoder.mbr(samples, metric=scorer, source=src)``, the full n x n matrix and the pick;
* ``score x n^2``: ``CometScorer.score`` called once per triple (4,096 calls for 64 samples): a
  stand-in for a per-pair COMET call;
* ``score batched``: one ``CometScorer.score`` call on all n^2 triples (mtscore's normal path: it
  already encodes each distinct text once, so this is close to ``mbr`` minus the factored head);
* ``unbabel-comet predict``: unbabel-comet 2.2.7's ``model.predict(triples, batch_size=16, gpus=0)`` on
  the same n^2 triples (how one scores the pairs with unbabel-comet: every triple encodes three
  sentences), in its own venv with ``--oracle`` and the same thread count; skipped without it.

The samples are 64 distinct texts from tests/golden/comet/inputs.jsonl (translations and references of
its first rows) with the source of row 0: the cost depends on the lengths, not on the meaning. The
golden models are tiny (4 layers, hidden 32), so the encoder is cheap next to a real XLM-R: with
wmt22-comet-da's shapes the n^2 triples cost 3 n^2 encoder passes against n + 1 here, and the ratio
grows accordingly.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # this tree's mtscore
    sys.path.insert(0, str(REPO))
GOLDEN = REPO / "tests" / "golden" / "comet"

ORACLE = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import torch
torch.set_num_threads(int(sys.argv[2]))
from comet import load_from_checkpoint
data = json.load(open(sys.argv[1]))
model = load_from_checkpoint(data["ckpt"])
triples = [{"src": data["src"], "mt": h, "ref": r} for h in data["samples"] for r in data["samples"]]
model.predict(triples[:64], batch_size=16, gpus=0, progress_bar=False)  # warm-up
t = time.perf_counter()
pred = model.predict(triples, batch_size=16, gpus=0, progress_bar=False)
dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "scores": [float(s) for s in pred.scores]}))
"""


def _samples(n: int) -> tuple[list[str], str]:
    rows = [json.loads(x) for x in (GOLDEN / "inputs.jsonl").read_text(encoding="utf-8").splitlines() if x]
    out: list[str] = []
    for r in rows:
        for t in (r["mt"], r["ref"]):
            if t not in out:
                out.append(t)
        if len(out) >= n:
            break
    return out[:n], rows[0]["src"]


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", default="regression-sparsemax", help="a folder under tests/golden/comet/models")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--oracle", default=None, help="python of unbabel-comet's venv (e.g. /work/oracle-comet/bin/python)")
    args = ap.parse_args(argv)

    import numpy as np

    from mtscore import decoder
    from mtscore.engine.comet.scorer import load_comet

    samples, src = _samples(args.samples)
    n = len(samples)
    folder = GOLDEN / "models" / args.model
    scorer = load_comet(folder, encoder=GOLDEN / "encoder", threads=args.threads)
    hyp = [h for h in samples for _ in samples]
    ref = [r for _ in samples for r in samples]
    res = decoder.mbr(samples, metric=scorer, source=src)  # warm-up
    t_mbr = _best(lambda: decoder.mbr(samples, metric=scorer, source=src), args.repeats)
    t_batched = _best(lambda: scorer.score(hyp, [src] * len(hyp), ref), args.repeats)
    t = time.perf_counter()
    one = np.array([scorer.score([h], [src], [r])[0] for h, r in zip(hyp, ref)])
    t_single = time.perf_counter() - t
    assert res.matrix is not None
    print(f"# COMET MBR, {n} samples ({n * n} pairs), model {args.model}, {args.threads} thread(s), "
          f"{platform.processor() or platform.machine()}, python {platform.python_version()}")
    print(f"max |mbr matrix - per-triple score| = {np.abs(res.matrix.ravel() - one).max():.2e}")
    rows = [("mtscore mbr", t_mbr), ("mtscore score x n^2 (one call per triple)", t_single),
            ("mtscore score batched (all n^2 triples, one call)", t_batched)]
    if args.oracle:
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"ckpt": str(folder / "checkpoints" / "model.ckpt"), "src": src, "samples": samples}, f)
        try:
            env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "PYTHONWARNINGS": "ignore"}
            p = subprocess.run([args.oracle, "-c", ORACLE, f.name, str(args.threads)], cwd=GOLDEN, env=env,
                               capture_output=True, text=True, check=False)
        finally:
            os.unlink(f.name)
        if p.returncode != 0:
            print(f"unbabel-comet: failed (rc {p.returncode}): {p.stderr.strip().splitlines()[-1:]}")
        else:
            out = json.loads(p.stdout.strip().splitlines()[-1])
            peer = np.array(out["scores"])
            print(f"max |mbr matrix - unbabel-comet predict| = {np.abs(res.matrix.ravel() - peer).max():.2e}")
            rows.append(("unbabel-comet 2.2.7 predict (n^2 triples, batch 16)", out["seconds"]))
    print(f"{'what':<55} {'seconds':>9} {'x mbr':>8}")
    for name, sec in rows:
        print(f"{name:<55} {sec:>9.4f} {sec / t_mbr:>8.1f}")
    print(f"(mtscore mbr and batched: best of {args.repeats}; the per-triple loop and unbabel-comet: one run; "
          "model loading excluded)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
