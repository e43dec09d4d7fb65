"""BERTScore's GPU paths beyond bench_bertscore_gpu.py (P15): matching on the device vs on the host
with the same CUDA encoder (plain, idf with two reference streams; fp32 and fp16), the sliding
window on CUDA (host matching), batch-size invariance on CUDA, and the CUDA-provider failure path
with no GPU visible (CUDA_VISIBLE_DEVICES="": cuda must raise, auto must warn and use the CPU).

    python bench/bertscore_gpu_checks.py DATA_DIR MODEL_DIR OUT_DIR

DATA_DIR holds ref.en and hyp.* (the GPU pack's .gpu5/data); env DEV (default cuda) and N (segments
per system, default 1000). Writes OUT_DIR/extra_check.json; recorded in bench/RESULTS.md.
"""
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np

D, MINI, OUT = sys.argv[1:4]
res = {}
DEV = os.environ.get('DEV', 'cuda')
N = int(os.environ.get('N', '1000'))


def save():
    with open(os.path.join(OUT, "extra_check.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [x.rstrip("\n") for x in f]


ref = lines(f"{D}/ref.en")
names = sorted(glob.glob(f"{D}/hyp.*"))
hyps = [lines(s) for s in names]
cands = [h for hs in hyps[:2] for h in hs[:N]]
refs = ref[:N] * 2
refs2 = [hyps[2][i % N] for i in range(len(cands))]  # a second reference stream
from mtscore.engine.bertscore import BERTScore  # noqa: E402  (after the data, as bench_bertscore_gpu)


def step(name, fn):
    t = time.perf_counter()
    try:
        res[name] = fn()
    except Exception:
        import traceback
        res[name] = {"error": traceback.format_exc()[-2000:]}
    print(name, round(time.perf_counter() - t, 1), "s", json.dumps(res[name], default=str)[:600], flush=True)
    save()


def mx(a, b):
    return float(max(np.max(np.abs(a.precision - b.precision)), np.max(np.abs(a.recall - b.recall)),
                     np.max(np.abs(a.f1 - b.f1))))


def dev_vs_host():
    out = {}
    for prec in ("fp32", "fp16"):
        d = BERTScore(model=MINI, layer=6, device=DEV, precision=prec, progress=False, cache_dir="/tmp/mtscache")
        h = BERTScore(model=MINI, layer=6, progress=False, matching="host", encoder=d.encoder)
        out[prec + "_pipeline"] = d._pipeline is not None
        out[prec + "_plain"] = mx(d.score(cands, [refs]), h.score(cands, [refs]))
        di = BERTScore(model=MINI, layer=6, idf=True, progress=False, encoder=d.encoder)
        hi = BERTScore(model=MINI, layer=6, idf=True, progress=False, matching="host", encoder=d.encoder)
        out[prec + "_idf_2refs"] = mx(di.score(cands, [refs, refs2]), hi.score(cands, [refs, refs2]))
    return out


def window():
    w = BERTScore(model=MINI, layer=6, device=DEV, long_inputs="window", progress=False, cache_dir="/tmp/mtscache")
    t = BERTScore(model=MINI, layer=6, device=DEV, progress=False, encoder=w.encoder)
    long = [" ".join([c] * 40) for c in cands[:20]]
    rw = w.score(long, [refs[:20]])
    rt = t.score(cands[:200], [refs[:200]])
    return {"window_pipeline": w._pipeline is not None, "window_mean_f1": float(rw.f1.mean()),
            "short_mean_f1": float(rt.f1.mean()), "providers": w.encoder.session.get_providers()}


def invariance():
    out = {}
    for prec in ("fp32", "fp16"):
        base = None
        for bt in (512, 2048, 16384, 65536):
            s = BERTScore(model=MINI, layer=6, device=DEV, precision=prec, batch_tokens=bt, progress=False,
                          cache_dir="/tmp/mtscache")
            r = s.score(cands, [refs])
            if base is None:
                base = r
            else:
                out[f"{prec}_{bt}_vs_512"] = mx(r, base)
    return out


def no_gpu():
    code = ("import warnings, json\nfrom mtscore.engine.bertscore import BERTScore\nout = {}\n"
            f"try:\n    BERTScore(model={MINI!r}, layer=6, device='cuda', progress=False, cache_dir='/tmp/mtscache')\n"
            "    out['cuda'] = 'no error'\nexcept Exception as e:\n    out['cuda'] = type(e).__name__ + ': ' + str(e)\n"
            "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
            f"    s = BERTScore(model={MINI!r}, layer=6, device='auto', progress=False, cache_dir='/tmp/mtscache')\n"
            "    out['auto_device'] = s.encoder.device\n    out['auto_warnings'] = [type(x.message).__name__ + ': ' + str(x.message) for x in w]\n"
            "print(json.dumps(out))\n")
    p = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
                       capture_output=True, text=True, timeout=120)
    return {"rc": p.returncode, "stdout": p.stdout[-3000:], "stderr": p.stderr[-3000:]}


step("dev_vs_host", dev_vs_host)
step("window", window)
step("invariance", invariance)
step("no_gpu", no_gpu)
print("DONE", flush=True)
