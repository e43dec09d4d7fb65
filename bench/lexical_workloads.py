"""One measured workload of bench_lexical.py, run in a fresh interpreter:

    python bench/lexical_workloads.py '{"task": "corpus", "peer": "mtscore", "metric": "bleu", "data": "bench/out/corpus100k"}'

Prints one JSON line: cpu (process_time of the measured call), wall, rss_mb (ru_maxrss of this
process), values (scores to compare), arrays (paths of saved sentence-score arrays).
Inputs are read into Python strings before the clock starts (task ``big`` times reading too).
"""
from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")) / "wmt21-news-systems" / "txt"
OUT = REPO / "bench" / "out"


def _read(path) -> list:
    with open(path, encoding="utf-8", newline="\n") as f:
        text = f.read()
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def load_corpus(spec: str):
    """``PATH`` or ``PATH:N`` (first N lines) -> (hyps, refs)."""
    path, _, n = spec.partition(":")
    if not n:
        return _read(path + ".hyp"), _read(path + ".ref")
    from itertools import islice

    def head(p):
        with open(p, encoding="utf-8", newline="\n") as f:
            return [line[:-1] if line.endswith("\n") else line for line in islice(f, int(n))]
    return head(path + ".hyp"), head(path + ".ref")


def load_systems(testset, pairs=None):
    sys.path.insert(0, str(REPO / "bench"))
    from make_corpus import systems

    return [(f"{p}/{s}", h, r) for _, p, s, h, r in systems((testset,), DATA) if not pairs or p in pairs]


def _metric_ctor(lib: str, metric: str):
    if lib == "sacrebleu":
        from sacrebleu.metrics import BLEU, CHRF
    else:
        from mtscore import BLEU, CHRF
    return {"bleu": BLEU, "chrf": CHRF, "chrf++": lambda **kw: CHRF(word_order=2, **kw)}[metric]


def _import_mtscore() -> None:
    """mtscore's metric modules, imported before the clock starts as sacrebleu's are (its peers
    run ``import sacrebleu`` / ``from sacrebleu.metrics import ...`` first): ``import mtscore``
    alone loads them lazily, which would put ~40 ms of module loading inside the timed call."""
    import pyarrow  # noqa: F401

    import mtscore
    import mtscore.bindings.api.batch
    import mtscore.engine.corpus
    import mtscore.engine.metrics.bleu
    import mtscore.engine.metrics.chrf  # noqa: F401


def _bleu_values(s, prefix=""):
    return {prefix + "score": s.score, prefix + "counts": list(map(int, s.counts)),
            prefix + "totals": list(map(int, s.totals)), prefix + "sys_len": int(s.sys_len),
            prefix + "ref_len": int(s.ref_len)}


def _values(metric, s, prefix=""):
    return _bleu_values(s, prefix) if metric == "bleu" else {prefix + "score": s.score}


# ------------------------------------------------------------------------------------------------
def prepare(spec: dict):
    """Returns (callable to time, post-processing callable(result) -> dict)."""
    task, peer = spec["task"], spec["peer"]
    metric = spec.get("metric")

    if task == "corpus":
        h, r = load_corpus(spec["data"])
        if peer in ("sacrebleu", "mtscore"):
            ctor = _metric_ctor(peer, metric)
            if peer == "sacrebleu":
                import sacrebleu
            else:
                _import_mtscore()
            return (lambda: ctor().corpus_score(h, [r])), (lambda s: {"values": _values(metric, s)})
        if peer == "sacrebleu-mojo":
            import sacrebleu_mojo as sm
            if metric == "bleu":
                return (lambda: sm.corpus_bleu(h, [r])), (lambda s: {"values": _bleu_values(s), "note": s.backend})
            wo = 2 if metric == "chrf++" else 0
            return (lambda: sm.corpus_chrf(h, [r], word_order=wo)), (lambda s: {"values": {"score": s.score}})
        if peer == "bleuscore":
            import bleuscore
            def run():
                return bleuscore.compute(references=[[x] for x in r], predictions=h, max_order=4,
                                         smooth=False, ref_len_method="closest")
            return run, (lambda d: {"values": {"score": d["bleu"] * 100, "sys_len": int(d["translation_length"]),
                                               "ref_len": int(d["reference_length"])}})
        raise SystemExit(f"unknown peer {peer}")

    if task == "wmt21":
        systems = load_systems(spec["testset"], spec.get("pairs"))
        info = {"n_systems": len(systems), "n_segments": sum(len(x[1]) for x in systems)}
        if peer in ("sacrebleu", "mtscore"):
            ctor = _metric_ctor(peer, metric)
            if peer == "sacrebleu":
                import sacrebleu
            else:
                _import_mtscore()
            def run():
                return [(name, ctor().corpus_score(h, [r])) for name, h, r in systems]
        elif peer == "sacrebleu-mojo":
            import sacrebleu_mojo as sm
            if metric == "bleu":
                def run():
                    return [(name, sm.corpus_bleu(h, [r])) for name, h, r in systems]
            else:
                wo = 2 if metric == "chrf++" else 0
                def run():
                    return [(name, sm.corpus_chrf(h, [r], word_order=wo)) for name, h, r in systems]
        elif peer == "bleuscore":
            import bleuscore
            def run():
                return [(name, bleuscore.compute(references=[[x] for x in r], predictions=h, max_order=4,
                                                 smooth=False, ref_len_method="closest")) for name, h, r in systems]
            return run, (lambda res: {**info, "values": {f"{n}/score": d["bleu"] * 100 for n, d in res}})
        else:
            raise SystemExit(f"unknown peer {peer}")

        def post(res):
            vals = {}
            for name, s in res:
                vals.update(_values(metric, s, name + "/"))
            return {**info, "values": vals}
        return run, post

    if task == "sentence":
        h, r = load_corpus(spec["data"])
        if peer == "sacrebleu":
            from sacrebleu.metrics import BLEU, CHRF
            def run():
                m = BLEU(effective_order=True) if metric == "bleu" else CHRF()
                return [m.sentence_score(x, [y]).score for x, y in zip(h, r)]
            return run, lambda res: {"arrays": {metric: _save(spec, metric, res)}}
        if peer == "mtscore":
            import mtscore
            _import_mtscore()
            names = metric.split("+")
            def run():
                return mtscore.score(h, [r], metrics=names, bleu_kwargs={"effective_order": True},
                                     sentence_level=True, workers=1)
            return run, lambda res: {"arrays": {m: _save(spec, m, res.segments.column(m).to_numpy()) for m in names}}
        if peer == "fastchrf":
            import fastchrf
            def run():
                return fastchrf.pairwise_chrf([[x] for x in h], [[y] for y in r])
            return run, lambda res: {"arrays": {"chrf": _save(spec, "chrf", [m[0][0] for m in res])}}
        raise SystemExit(f"unknown peer {peer}")

    if task == "multisys":
        systems = load_systems("newstest2021", [spec["pair"]])[: spec.get("max_systems") or None]
        ref = systems[0][2]
        hyps = {name: h for name, h, _ in systems}
        info = {"n_systems": len(systems), "n_segments": len(ref)}
        names = metric.split("+")
        if peer == "sacrebleu":
            import sacrebleu  # noqa: F401
            ctor = _metric_ctor("sacrebleu", metric)
            def run():
                m = ctor(references=[ref])
                return {n: {metric: m.corpus_score(h, None)} for n, h in hyps.items()}
        elif peer == "mtscore-loop":
            _import_mtscore()
            ctor = _metric_ctor("mtscore", metric)
            def run():
                m = ctor(references=[ref])
                return {n: {metric: m.corpus_score(h, None)} for n, h in hyps.items()}
        elif peer == "mtscore":
            import mtscore
            _import_mtscore()
            def run():
                return mtscore.score(hyps, [ref], metrics=names, sentence_level=False, workers=1).corpus
        elif peer == "sacrebleu-mojo":
            import sacrebleu_mojo as sm
            def run():
                if metric == "bleu":
                    return {n: {metric: sm.corpus_bleu(h, [ref])} for n, h in hyps.items()}
                return {n: {metric: sm.corpus_chrf(h, [ref])} for n, h in hyps.items()}
        else:
            raise SystemExit(f"unknown peer {peer}")

        def post(res):
            vals = {}
            for n, d in res.items():
                for m, s in d.items():
                    vals.update(_values(m, s, f"{n}/{m}/"))
            return {**info, "values": vals}
        return run, post

    if task == "big":
        path = spec["data"]
        import mtscore
        from mtscore.engine.textio import iter_text_chunks, read_lines
        _import_mtscore()
        import pyarrow  # noqa: F401
        if peer == "mtscore":
            def run():
                h, r = read_lines(path + ".hyp"), read_lines(path + ".ref")
                res = mtscore.score(h, [r], metrics=["bleu", "chrf"], sentence_level=True, workers=1,
                                    **({"chunk_size": spec["chunk_size"]} if spec.get("chunk_size") else {}))
                return res, len(h)
            return run, lambda x: {"values": {"bleu": x[0].corpus["bleu"].score, "chrf": x[0].corpus["chrf"].score},
                                   "note": f"{x[1]} segs; BLEU {x[0].corpus['bleu'].score:.4f}, chrF {x[0].corpus['chrf'].score:.4f}"}
        if peer == "mtscore-files":
            def run():
                res = mtscore.score_files(path + ".hyp", [path + ".ref"], metrics=["bleu", "chrf"],
                                          sentence_level=True, workers=1)
                return res, res.segments.num_rows
            return run, lambda x: {"values": {"bleu": x[0].corpus["bleu"].score, "chrf": x[0].corpus["chrf"].score},
                                   "note": f"{x[1]} segs; BLEU {x[0].corpus['bleu'].score:.4f}, chrF {x[0].corpus['chrf'].score:.4f}"}
        if peer == "mtscore-stream":
            def run():
                bleu, chrf = mtscore.BLEU(), mtscore.CHRF()
                sb = sc = None
                n = 0
                for chunk in iter_text_chunks(path + ".hyp", [path + ".ref"], batch_size=65536):
                    b = bleu.corpus_stats(chunk.hyps, chunk.refs).sum(axis=0)
                    c = chrf.corpus_stats(chunk.hyps, chunk.refs).sum(axis=0)
                    sb = b if sb is None else sb + b
                    sc = c if sc is None else sc + c
                    n += len(chunk.hyps)
                return (bleu.compute_score_from_stats([x.item() for x in sb]),
                        chrf.compute_score_from_stats([x.item() for x in sc]), n)
            return run, lambda x: {"values": {"bleu": x[0].score, "chrf": x[1].score},
                                   "note": f"{x[2]} segs; BLEU {x[0].score:.4f}, chrF {x[1].score:.4f}"}
        raise SystemExit(f"unknown peer {peer}")

    if task == "workers":
        h, r = load_corpus(spec["data"])
        import mtscore
        _import_mtscore()
        w = spec["workers"]
        def run():
            return mtscore.score(h, [r], metrics=["bleu", "chrf"], sentence_level=True, workers=w)
        return run, lambda res: {"values": {"bleu": res.corpus["bleu"].score, "chrf": res.corpus["chrf"].score}}

    raise SystemExit(f"unknown task {task}")


def _save(spec, name, values) -> str:
    import numpy as np

    OUT.mkdir(parents=True, exist_ok=True)
    tag = "_".join(str(spec[k]).replace("/", "_").replace(":", "_") for k in ("task", "peer") if k in spec)
    path = OUT / f"lexical_sent_{tag}_{name}_{os.getpid()}.npy"
    np.save(path, np.asarray(values, dtype=np.float64))
    return str(path)


def run_worker(spec: dict) -> None:
    run, post = prepare(spec)
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0c, t0w = time.process_time(), time.perf_counter()
    res = run()
    cpu, wall = time.process_time() - t0c, time.perf_counter() - t0w
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {**spec, "cpu": cpu, "wall": wall, "rss_mb": rss, "rss_before_mb": rss_before}
    out.update(post(res))
    print(json.dumps(out))


if __name__ == "__main__":
    run_worker(json.loads(sys.argv[1]))
