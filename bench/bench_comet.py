"""COMET on the CPU at real size: mtscore's ``load_comet`` + ``score`` against unbabel-comet 2.2.7's
``load_from_checkpoint`` + ``predict(gpus=0)`` (P18 acceptance "Speed": at least 2x).

The model is the random checkpoint with wmt22-comet-da's shapes of
``bench/make_comet_bench_model.py`` (XLM-R large encoder, the golden test tokenizer); the data are
the first ``--n`` newstest2021 en-de segments (one system's outputs, reference A, the sources) from
``$MTSCORE_DATA/wmt21-news-systems``. One run, each peer in a fresh process, one at a time (memory):

1. ``comet``: unbabel-comet in its venv (``--oracle-python``): ``load_from_checkpoint`` (timed), then
   ``predict(samples, batch_size=16, gpus=0)`` in fp32 (timed);
2. ``mtscore (cold)``: ``load_comet`` with an empty cache folder (timed: checkpoint read, ONNX export
   with external data, session) and ``score`` (timed);
3. ``mtscore (warm)``: a new process, the same cache: ``load_comet`` (timed) and ``score`` (timed).

Threads: all cores for both (``torch.set_num_threads``; onnxruntime intra-op threads). Prints a
Markdown table (wall seconds, sentences/s, the ratio of ``predict`` over ``score``) and the
largest per-segment difference of the two peers' scores. Run from the repository root with
mtscore's venv::

    python bench/bench_comet.py --model /work/bench-comet/model --encoder /work/bench-comet/encoder

(``--n 20`` for a quick check; ``--peers`` to run a subset; ``--cache DIR`` to keep the export;
``--json FILE`` writes every measurement.) The workers are this file run as
``--worker comet|mtscore``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MTSCORE_DATA", "/work/shared/data")) / "wmt21-news-systems" / "txt"
ORACLE_PYTHON = "/work/oracle-comet/bin/python"


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def triples(n: int, system: str) -> list[dict]:
    src = read_lines(DATA / "sources" / "newstest2021.en-de.src.en")
    ref = read_lines(DATA / "references" / "newstest2021.en-de.ref.A.de")
    mt = read_lines(DATA / "system-outputs" / f"newstest2021.en-de.hyp.{system}.de")
    if not (len(src) == len(ref) == len(mt) >= n):
        sys.exit(f"{DATA}: newstest2021 en-de ({system}) has fewer than {n} aligned lines")
    return [{"src": src[i], "mt": mt[i], "ref": ref[i]} for i in range(n)]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_comet(args: argparse.Namespace, rows: list[dict]) -> dict:
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    from comet import load_from_checkpoint

    t0 = time.perf_counter()
    model = load_from_checkpoint(str(Path(args.model) / "checkpoints" / "model.ckpt"))
    t1 = time.perf_counter()
    pred = model.predict(rows, batch_size=16, gpus=0, progress_bar=False)
    t2 = time.perf_counter()
    from importlib import metadata

    return {"load_s": t1 - t0, "score_s": t2 - t1, "threads": torch.get_num_threads(),
            "scores": [float(s) for s in pred.scores],
            "versions": {p: metadata.version(p) for p in ("unbabel-comet", "torch", "transformers")}}


def worker_mtscore(args: argparse.Namespace, rows: list[dict]) -> dict:
    from importlib import metadata

    sys.path.insert(0, str(REPO))  # this checkout's mtscore, not an installed one
    import mtscore
    from mtscore.engine.comet.scorer import load_comet

    if not Path(mtscore.__file__).resolve().is_relative_to(REPO):
        sys.exit(f"mtscore imported from {mtscore.__file__}, not {REPO}: run from the repository root")
    t0 = time.perf_counter()
    scorer = load_comet(args.model, encoder=args.encoder, cache_dir=args.cache, batch_tokens=args.batch_tokens)
    t1 = time.perf_counter()
    hyp, src, ref = ([r[k] for r in rows] for k in ("mt", "src", "ref"))
    scores = scorer.score(hyp, sources=src, references=ref)
    t2 = time.perf_counter()
    texts = sorted(set(hyp) | set(src) | set(ref))
    tokens = sum(len(x) for x in scorer.tokenizer.encode(texts))
    return {"load_s": t1 - t0, "score_s": t2 - t1, "threads": scorer.session.threads,
            "scores": [float(s) for s in scores], "unique_texts": len(texts), "tokens": tokens,
            "graph": str(scorer.graph_path), "batch_tokens": scorer.batch_tokens,
            "versions": {p: metadata.version(p) for p in ("onnxruntime", "numpy")}}


def run_worker(python: str, kind: str, args: argparse.Namespace, data: Path, out: Path, cache: Path | None) -> dict:
    cmd = [python, str(Path(__file__).resolve()), "--worker", kind, "--data", str(data), "--out", str(out),
           "--model", args.model, "--encoder", args.encoder, "--batch-tokens", str(args.batch_tokens)]
    if cache is not None:
        cmd += ["--cache", str(cache)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"worker {kind} failed (exit status {proc.returncode}): {' '.join(cmd)}")
    res = json.loads(out.read_text(encoding="utf-8"))
    res["process_s"] = wall
    print(f"# {kind}: load {res['load_s']:.1f} s, score {res['score_s']:.1f} s, process {wall:.1f} s, "
          f"peak RSS {res['peak_rss_mb']:.0f} MB", file=sys.stderr, flush=True)
    return res


def table(n: int, res: dict) -> str:
    base = res.get("comet")
    lines = ["| peer | load s | score s | load+score s | sentences/s (score) | speed-up vs predict (score) "
             "| speed-up (load+score) | peak RSS MB |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    names = {"comet": "unbabel-comet 2.2.7 predict(gpus=0, batch_size=16) fp32",
             "cold": "mtscore load_comet + score, empty cache (export)",
             "warm": "mtscore load_comet + score, warm cache (new process)"}
    for key, label in names.items():
        r = res.get(key)
        if r is None:
            continue
        tot = r["load_s"] + r["score_s"]
        su = f"{base['score_s'] / r['score_s']:.2f}x" if base else "-"
        sut = f"{(base['load_s'] + base['score_s']) / tot:.2f}x" if base else "-"
        lines.append(f"| {label} | {r['load_s']:.1f} | {r['score_s']:.1f} | {tot:.1f} | {n / r['score_s']:.1f} "
                     f"| {su} | {sut} | {r['peak_rss_mb']:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="/work/bench-comet/model", help="the COMET model folder")
    ap.add_argument("--encoder", default="/work/bench-comet/encoder", help="its encoder folder (config, tokenizer)")
    ap.add_argument("--n", type=int, default=1000, help="triples (first N lines of newstest2021 en-de)")
    ap.add_argument("--system", default="Online-W", help="whose outputs are the translations")
    ap.add_argument("--peers", default="comet,cold,warm", help="which runs, comma-separated")
    ap.add_argument("--oracle-python", default=ORACLE_PYTHON, help="the unbabel-comet venv's python")
    ap.add_argument("--cache", default=None, help="mtscore's cache folder (default: a new one, removed after)")
    ap.add_argument("--batch-tokens", type=int, default=2048, help="mtscore: padded tokens per ORT call")
    ap.add_argument("--json", type=Path, default=None, help="write all measurements here")
    ap.add_argument("--worker", choices=["comet", "mtscore"], help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        rows = [json.loads(x) for x in args.data.read_text(encoding="utf-8").splitlines()]
        res = (worker_comet if args.worker == "comet" else worker_mtscore)(args, rows)
        res["peak_rss_mb"] = peak_rss_mb()
        args.out.write_text(json.dumps(res), encoding="utf-8")
        return 0
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    rows = triples(args.n, args.system)
    work = Path(tempfile.mkdtemp(prefix="bench-comet-"))
    cache = Path(args.cache) if args.cache else work / "cache"
    data = work / "triples.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    res: dict = {}
    try:
        for p in peers:
            if p == "comet":
                res[p] = run_worker(args.oracle_python, "comet", args, data, work / "comet.json", None)
            elif p in ("cold", "warm"):
                res[p] = run_worker(sys.executable, "mtscore", args, data, work / f"{p}.json", cache)
            else:
                sys.exit(f"--peers: unknown peer {p!r} (comet, cold, warm)")
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the triples, results and (without --cache) the export
    print(f"COMET CPU bench: {args.n} newstest2021 en-de triples (mt = {args.system}, ref A), model "
          f"{args.model}, {os.cpu_count()} cores\n")
    print(table(args.n, res))
    mt = [res[k] for k in ("cold", "warm") if k in res]
    if "comet" in res and mt:
        diffs = [max(abs(a - b) for a, b in zip(res["comet"]["scores"], r["scores"], strict=True)) for r in mt]
        print(f"\nmax |mtscore - unbabel-comet| per segment: {max(diffs):.3g}")
    if mt:
        m = mt[0]
        print(f"mtscore: {m['unique_texts']} distinct texts, {m['tokens']} tokens, batch_tokens {m['batch_tokens']}, "
              f"{m['threads']} ORT threads; versions {m['versions']}")
    if "comet" in res:
        print(f"unbabel-comet: {res['comet']['threads']} torch threads; versions {res['comet']['versions']}")
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "system": args.system, "results": res}, indent=1),
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
