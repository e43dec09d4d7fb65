"""BERTScore on one device: mtscore (ONNX Runtime; fp32 / tf32 / fp16) vs bert_score (torch, fp32, batch 64).

Both peers score the same newstest2021 de-en pairs (19 systems x 1,000 segments against reference A)
on the same device in one run, each mode in a fresh subprocess (so no peer holds the other's GPU
memory, and a crash costs one row). Per mode: import, model load, first call (cold = import + load +
first call, a fresh process) and second call of the same scorer (warm). Parity: max |dP|, |dR|,
|dF| of each mtscore mode vs bert_score on the same device, and whether the 19 system means rank
the same. Models: all-MiniLM-L6-v2 (layer 6) and a 24-layer 1024-wide BERT with random weights
(``torch.manual_seed(0)``, saved by transformers, MiniLM's tokenizer; layer 17): no download. The
first ONNX export of each (model, precision) is timed on its own (a one-time cold-start cost).

    python bench/bench_bertscore_gpu.py --device cuda --models minilm,big --out bench/out/gpu
    python bench/bench_bertscore_gpu.py --device cpu --pairs 200 --models minilm --out bench/out/gpu-cpu

``--data DIR``: a folder with ``ref.en`` and ``hyp.SYSTEM`` files (the GPU pack's ``.gpu5/data``) or
the shared data root (default ``$MTSCORE_DATA`` or ``../shared/data``). ``--pairs N``: the first
ceil(N / 19) segments of every system. Every step records its error and the run goes on; the JSON
(``bench_bertscore_gpu.json``) is rewritten after each step, the table (``table.md``) at the end.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # this tree's mtscore, also in the worker subprocesses
    sys.path.insert(0, str(REPO))
BIG_CONFIG = dict(vocab_size=30522, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                  intermediate_size=4096, max_position_embeddings=512)
TINY_CONFIG = dict(BIG_CONFIG, hidden_size=64, num_attention_heads=4, intermediate_size=128)  # --tiny-big
LAYERS = {"minilm": 6, "big": 17}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


# ---------------------------------------------------------------- data


def load_pairs(data: str | None, pairs: int | None) -> tuple[list[str], list[str], list[str], int]:
    """(system names, candidates, references, segments per system); candidates grouped by system."""
    d = Path(data) if data else Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data"))
    if (d / "ref.en").is_file():
        ref_path, hyp_paths = d / "ref.en", sorted(glob.glob(str(d / "hyp.*")))
        names = [Path(p).name[len("hyp."):] for p in hyp_paths]
    else:
        txt = d / "wmt21-news-systems" / "txt"
        ref_path = txt / "references" / "newstest2021.de-en.ref.A.en"
        hyp_paths = sorted(glob.glob(str(txt / "system-outputs" / "newstest2021.de-en.hyp.*.en")))
        names = [Path(p).name[len("newstest2021.de-en.hyp."):-len(".en")] for p in hyp_paths]
    if not hyp_paths or not ref_path.is_file():
        raise SystemExit(f"--data {d}: expected ref.en + hyp.* or wmt21-news-systems/txt/ (newstest2021 de-en)")

    def read(p) -> list[str]:
        with open(p, encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f]

    ref = read(ref_path)
    per = len(ref) if not pairs else min(len(ref), math.ceil(pairs / len(names)))
    hyps = [read(p) for p in hyp_paths]
    return names, [h for hs in hyps for h in hs[:per]], ref[:per] * len(names), per


# ---------------------------------------------------------------- workers (run in subprocesses)


def _save_prf(path: str, p, r, f) -> None:
    import numpy as np

    np.save(path, np.stack([np.asarray(x, dtype=np.float64) for x in (p, r, f)]))


def worker_env(spec: dict) -> dict:
    """Versions and the providers onnxruntime offers (torch is not imported: its GPU view comes with bert_score)."""
    from importlib import metadata

    out: dict = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    for dist in ("onnxruntime-gpu", "onnxruntime", "torch", "transformers", "bert-score", "numpy"):
        try:
            out[dist] = metadata.version(dist)
        except Exception as e:  # recorded, the run goes on
            out[dist] = f"not installed: {e!r}"[:200]
    try:
        import onnxruntime as ort
        out["onnxruntime_imported"] = ort.__version__
        out["ort_available_providers"] = ort.get_available_providers()
        out["ort_file"] = ort.__file__
        import mtscore
        out["mtscore_file"] = mtscore.__file__
    except Exception as e:
        out["import_error"] = repr(e)[:300]
    return out


def worker_make_big(spec: dict) -> dict:
    """Save the random 24-layer 1024-wide BERT (seed 0) with MiniLM's tokenizer files to spec['dir']."""
    import shutil

    import torch
    from transformers import BertConfig, BertModel

    big = Path(spec["dir"])
    if (big / "model.safetensors").is_file() and (big / "tokenizer.json").is_file():
        return {"dir": str(big), "reused": True}
    t0 = time.perf_counter()
    torch.manual_seed(0)
    model = BertModel(BertConfig(**(TINY_CONFIG if spec.get("tiny") else BIG_CONFIG)))
    tmp = big.with_name(big.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    for f in TOKENIZER_FILES:
        if (Path(spec["minilm"]) / f).is_file():
            shutil.copy(Path(spec["minilm"]) / f, tmp)
    shutil.rmtree(big, ignore_errors=True)
    tmp.rename(big)
    return {"dir": str(big), "reused": False, "make_s": time.perf_counter() - t0}


def _mtscore_kwargs(spec: dict, precision: str) -> dict:
    kw = dict(model=spec["model"], layer=spec["layer"], device=spec["device"], precision=precision,
              cache_dir=spec["cache_dir"], progress=False)
    if spec.get("batch_tokens"):
        kw["batch_tokens"] = spec["batch_tokens"]
    if spec.get("threads"):
        kw["threads"] = spec["threads"]
    return kw


def _providers(scorer) -> list | str:
    try:
        return list(scorer.encoder.session.get_providers())
    except Exception as e:
        return f"unknown: {e!r}"[:300]


def worker_export(spec: dict) -> dict:
    """First-ever construction per precision (fresh cache): the ONNX export, timed (one process)."""
    t0 = time.perf_counter()
    from mtscore.bertscore import BERTScore
    out: dict = {"import_s": time.perf_counter() - t0}
    for prec in spec["precisions"]:
        t0 = time.perf_counter()
        try:
            scorer = BERTScore(**_mtscore_kwargs(spec, prec))
            out[prec] = {"export_and_load_s": time.perf_counter() - t0, "providers": _providers(scorer)}
            del scorer
        except Exception as e:
            out[prec] = {"error": repr(e)[:2000]}
        print(f"    export {Path(spec['model']).name} {prec}: {json.dumps(out[prec])}", flush=True)
    return out


def worker_mtscore(spec: dict) -> dict:
    """mtscore in a fresh process: import, load, first call (cold), second call (warm)."""
    _names, cands, refs, _per = load_pairs(spec["data"], spec["pairs"])
    t0 = time.perf_counter()
    import onnxruntime as ort

    from mtscore.bertscore import BERTScore
    t1 = time.perf_counter()
    scorer = BERTScore(**_mtscore_kwargs(spec, spec["precision"]))
    t2 = time.perf_counter()
    scorer.score(cands, [refs])
    t3 = time.perf_counter()
    r = scorer.score(cands, [refs])
    t4 = time.perf_counter()
    _save_prf(spec["npy"], r.precision, r.recall, r.f1)
    return {"import_s": t1 - t0, "load_s": t2 - t1, "first_s": t3 - t2, "warm_s": t4 - t3, "cold_s": t3 - t0,
            "providers": _providers(scorer), "ort": ort.__version__, "n": len(cands)}


def worker_bert_score(spec: dict) -> dict:
    """bert_score.BERTScorer (fp32, batch 64) in a fresh process: same timings as worker_mtscore."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    _names, cands, refs, _per = load_pairs(spec["data"], spec["pairs"])
    t0 = time.perf_counter()
    import bert_score
    import torch
    cuda = spec["device"].startswith("cuda")
    if spec.get("threads") and not cuda:
        torch.set_num_threads(spec["threads"])

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    t1 = time.perf_counter()
    scorer = bert_score.BERTScorer(model_type=spec["model"], num_layers=spec["layer"], device=spec["device"],
                                   batch_size=64, nthreads=spec.get("threads") or 4)
    sync()
    t2 = time.perf_counter()
    scorer.score(cands, refs, batch_size=64)
    sync()
    t3 = time.perf_counter()
    p, r, f = scorer.score(cands, refs, batch_size=64)
    sync()
    t4 = time.perf_counter()
    _save_prf(spec["npy"], p.double().cpu().numpy(), r.double().cpu().numpy(), f.double().cpu().numpy())
    dtype = str(next(scorer._model.parameters()).dtype)
    return {"matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),"import_s": t1 - t0, "load_s": t2 - t1, "first_s": t3 - t2, "warm_s": t4 - t3, "cold_s": t3 - t0,
            "torch": torch.__version__, "bert_score": bert_score.__version__, "param_dtype": dtype,
            "gpu_name": torch.cuda.get_device_name(0) if cuda else None, "n": len(cands)}


WORKERS = {"env": worker_env, "make_big": worker_make_big, "export": worker_export,
           "mtscore": worker_mtscore, "bert_score": worker_bert_score}


# ---------------------------------------------------------------- driver


class Run:
    """Steps in subprocesses with a time budget; the JSON is saved after every step."""

    def __init__(self, a):
        self.a = a
        self.out = Path(a.out)
        (self.out / "arrays").mkdir(parents=True, exist_ok=True)
        self.t_start = time.perf_counter()
        self.res: dict = {"args": vars(a), "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                          "steps": {}}

    def save(self) -> None:
        (self.out / "bench_bertscore_gpu.json").write_text(json.dumps(self.res, indent=1, default=str))

    def step(self, name: str, kind: str, spec: dict) -> dict | None:
        left = self.a.budget - (time.perf_counter() - self.t_start)
        if left < 5:
            self.res["steps"][name] = {"skipped": f"budget of {self.a.budget} s spent"}
            print(f"[{name}] skipped: budget spent", flush=True)
            self.save()
            return None
        spec_path = self.out / "arrays" / f"{name}.spec.json"
        spec_path.write_text(json.dumps(spec))
        t0 = time.perf_counter()
        print(f"[{name}] ...", flush=True)
        try:
            p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", kind, str(spec_path)],
                               capture_output=True, text=True, cwd=REPO, timeout=min(self.a.step_timeout, left))
            for line in p.stdout.splitlines()[:-1]:
                print(line, flush=True)
            if p.returncode != 0:
                raise RuntimeError(f"exit {p.returncode}: {p.stderr[-3000:]}")
            out = json.loads(p.stdout.strip().splitlines()[-1])
            warn = [w for w in p.stderr.splitlines() if w.strip()][-8:]
            if warn:
                out["stderr_tail"] = warn
        except Exception as e:  # a one-shot run records the failure and goes on
            out = None
            self.res["steps"][name] = {"error": str(e)[-3000:], "s": time.perf_counter() - t0}
            print(f"[{name}] FAILED after {time.perf_counter() - t0:.1f} s: {str(e)[-1500:]}", flush=True)
        if out is not None:
            out["step_s"] = time.perf_counter() - t0
            self.res["steps"][name] = out
            print(f"[{name}] ok in {out['step_s']:.1f} s: "
                  f"{json.dumps({k: v for k, v in out.items() if k != 'stderr_tail'}, default=str)[:600]}",
                  flush=True)
        self.save()
        return out


def nvidia_smi() -> str | None:
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        return p.stdout.strip() or p.stderr.strip()
    except Exception as e:
        return f"not available ({e!r})"


def compare(run: Run, model: str, names: list[str], per: int) -> list[dict]:
    """Rows of the table for one model: bert_score, then each mtscore mode with parity vs bert_score."""
    import numpy as np

    a, dev = run.a, run.a.device
    steps = run.res["steps"]
    bs = steps.get(f"{model}_bert_score") or {}
    ref = None
    bs_npy = run.out / "arrays" / f"{model}_bert_score.npy"
    if "warm_s" in bs and bs_npy.is_file():
        ref = np.load(bs_npy)
    rows = [{"model": model, "device": dev, "mode": "bert_score fp32 (batch 64)", "warm_s": bs.get("warm_s"),
             "cold_s": bs.get("cold_s"), "x": 1.0 if "warm_s" in bs else None, "dF": None,
             "error": bs.get("error") or bs.get("skipped")}]
    for prec in a.precisions:
        st = steps.get(f"{model}_mtscore_{prec}") or {}
        row = {"model": model, "device": dev, "mode": f"mtscore {prec}", "warm_s": st.get("warm_s"),
               "cold_s": st.get("cold_s"), "x": None, "dF": None, "error": st.get("error") or st.get("skipped")}
        npy = run.out / "arrays" / f"{model}_mtscore_{prec}.npy"
        if "warm_s" in st and "warm_s" in bs:
            row["x"] = bs["warm_s"] / st["warm_s"]
        if ref is not None and "warm_s" in st and npy.is_file():
            ours = np.load(npy)
            d = np.abs(ours - ref).max(axis=1)
            row["dP"], row["dR"], row["dF"] = (float(x) for x in d)
            ms, mb = (x[2].reshape(len(names), per).mean(axis=1) for x in (ours, ref))
            row["same_system_order"] = bool((np.argsort(-ms, kind="stable") == np.argsort(-mb, kind="stable")).all())
            row["max_system_mean_dF"] = float(np.abs(ms - mb).max())
        rows.append(row)
    return rows


def fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def table(run: Run, rows: list[dict]) -> str:
    env = run.res.get("env") or {}
    bs = next((st for st in run.res["steps"].values() if st.get("bert_score")), env)  # the imported versions
    gpu = bs.get("gpu_name")
    lines = ["| model | device | mode | warm s | cold s | x bert_score | max abs dF |",
             "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        mode = r["mode"] + (" (failed)" if r.get("error") else "")
        lines.append(f"| {r['model']} | {r['device']} | {mode} | {fmt(r['warm_s'], '.2f')} | "
                     f"{fmt(r['cold_s'], '.2f')} | {fmt(r['x'], '.2f')} | {fmt(r['dF'], '.1e')} |")
    notes = ["", f"{run.res.get('n_pairs')} pairs ({run.res.get('per_system')} segments x "
             f"{len(run.res.get('systems', []))} systems), device {run.a.device}"
             f" ({gpu or env.get('machine')}; nvidia-smi: {run.res.get('nvidia_smi') or '-'}), onnxruntime "
             f"{env.get('onnxruntime_imported')}, torch {bs.get('torch')}, bert_score {bs.get('bert_score')}.",
             "warm = second call of the same scorer; cold = a fresh process's import + model load + first call "
             "(ONNX export cached); x bert_score = bert_score's warm time / this warm time (> 1: faster); "
             "max abs dF vs bert_score on the same device."]
    for r in rows:
        st = run.res["steps"].get(f"{r['model']}_{r['mode'].replace(' ', '_')}") or {}
        if r["mode"].startswith("bert_score"):
            st = run.res["steps"].get(f"{r['model']}_bert_score") or {}
        if "load_s" in st:
            extra = (f"; max abs dP {r['dP']:.1e}, dR {r['dR']:.1e}; system order same as bert_score: "
                     f"{r['same_system_order']} (max system-mean dF {r['max_system_mean_dF']:.1e})"
                     if "dP" in r else "")
            prov = f"; providers {st['providers']}" if "providers" in st else ""
            notes.append(f"- {r['model']} {r['mode']}: import {st['import_s']:.2f} s, load {st['load_s']:.2f} s, "
                         f"first call {st['first_s']:.2f} s{extra}{prov}")
        elif r.get("error"):
            notes.append(f"- {r['model']} {r['mode']}: {str(r['error']).strip().splitlines()[-1][:300]}")
    for model in run.a.models:
        ex = run.res["steps"].get(f"{model}_export") or {}
        parts = [f"{p} {v['export_and_load_s']:.1f} s" for p, v in ex.items()
                 if isinstance(v, dict) and "export_and_load_s" in v]
        if parts:
            notes.append(f"- {model}: first construction with an empty cache (ONNX export + load, one-time): "
                         + ", ".join(parts))
        mk = run.res["steps"].get("make_big") or {}
        if model == "big" and "make_s" in mk:
            notes.append(f"- big: random model created and saved in {mk['make_s']:.1f} s")
    return "\n".join(lines + notes) + "\n"


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        spec = json.loads(Path(sys.argv[3]).read_text())
        print(json.dumps(WORKERS[sys.argv[2]](spec), default=str), flush=True)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--data", default=None)
    ap.add_argument("--minilm", default=None, help="MiniLM model dir (fp32 weights; default: the packaged model)")
    ap.add_argument("--models", default="minilm,big")
    ap.add_argument("--precisions", default="fp32,tf32,fp16", help="mtscore modes (bert_score runs fp32)")
    ap.add_argument("--pairs", type=int, default=None, help="cut down: ceil(N / 19) segments per system")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads for both peers (cpu device)")
    ap.add_argument("--batch-tokens", type=int, default=None, help="mtscore batch_tokens (default: its own)")
    ap.add_argument("--cache-dir", default="/tmp/mtscore_bench_cache", help="mtscore ONNX cache (emptied first)")
    ap.add_argument("--big-dir", default="/tmp/mtscore_bench_big", help="where the random 24-layer model goes")
    ap.add_argument("--tiny-big", action="store_true", help="test the big model's path with a 64-wide one")
    ap.add_argument("--budget", type=float, default=1e9, help="seconds: later steps are skipped past it")
    ap.add_argument("--step-timeout", type=float, default=300)
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "bertscore_gpu"))
    a = ap.parse_args()
    a.models = [m for m in a.models.split(",") if m]
    a.precisions = [p for p in a.precisions.split(",") if p]
    if a.device == "cpu" and a.threads is None:
        a.threads = 2
    for m in a.models:
        if m not in LAYERS:
            raise SystemExit(f"--models {m}: expected minilm and/or big")
    if a.minilm is None:
        from mtscore.engine.encoder import default_model_dir
        a.minilm = str(default_model_dir())
    import shutil

    shutil.rmtree(a.cache_dir, ignore_errors=True)  # so that the export step measures the export
    run = Run(a)
    names, cands, _refs, per = load_pairs(a.data, a.pairs)
    run.res.update(systems=names, per_system=per, n_pairs=len(cands), nvidia_smi=nvidia_smi())
    env = run.step("env", "env", {})
    run.res["env"] = env or {}
    base = dict(data=a.data, pairs=a.pairs, device=a.device, threads=a.threads, cache_dir=a.cache_dir,
                batch_tokens=a.batch_tokens)
    rows: list[dict] = []
    for model in a.models:
        path = a.minilm
        if model == "big":
            big_dir = a.big_dir + ("_tiny" if a.tiny_big else "")
            mk = run.step("make_big", "make_big", {"dir": big_dir, "minilm": a.minilm, "tiny": a.tiny_big})
            if mk is None:
                continue
            path = mk["dir"]
        spec = dict(base, model=path, layer=LAYERS[model])
        run.step(f"{model}_bert_score", "bert_score", dict(spec, npy=str(run.out / "arrays" / f"{model}_bert_score.npy")))
        run.step(f"{model}_export", "export", dict(spec, precisions=a.precisions))
        for prec in a.precisions:
            run.step(f"{model}_mtscore_{prec}", "mtscore",
                     dict(spec, precision=prec, npy=str(run.out / "arrays" / f"{model}_mtscore_{prec}.npy")))
        rows += compare(run, model, names, per)
        run.res["rows"] = rows
        run.save()
    text = table(run, rows)
    run.res["table"] = text
    run.res["total_s"] = time.perf_counter() - run.t_start
    run.save()
    (run.out / "table.md").write_text(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
