"""Quick side-by-side check on newstest2021 en-de (ref A), one process per peer and task:

    python bench/lexical_quickcheck.py cold   # per-system corpus_score, references prepared in each call
    python bench/lexical_quickcheck.py warm   # 20 systems against one reference set (prepared once)
    python bench/lexical_quickcheck.py sent   # every sentence score: sacrebleu loop vs mtscore.score

Prints CPU seconds (time.process_time, imports excluded; mtscore: min of 3 fresh processes;
OPENBLAS/OMP threads 1 for both) and the ratio per metric.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def run(peer: str, task: str, metric: str) -> float:
    import sacrebleu
    from wmt21 import load_pair

    import mtscore
    import mtscore.engine.metrics.lexical as lexical

    refs, systems, _ = load_pair("newstest2021.en-de")
    refs = refs[:1]
    mod = sacrebleu if peer == "sacrebleu" else mtscore
    kw = {"bleu": {}, "chrf": {}, "chrf++": {"word_order": 2}}[metric]
    cls = mod.BLEU if metric == "bleu" else mod.CHRF
    cls()  # import everything before timing
    hyps = list(systems.values())
    t = time.process_time()
    if task == "cold":
        for h in hyps[:3]:
            lexical._PREPARED.clear()
            cls(**kw).corpus_score(h, refs)
    elif task == "warm":
        m = cls(**kw, references=refs)
        for h in hyps:
            m.corpus_score(h, None)
    else:
        h = hyps[0]
        if peer == "sacrebleu":
            m = cls(**kw, **({"effective_order": True} if metric == "bleu" else {}))
            [m.sentence_score(x, [r]) for x, r in zip(h, refs[0])]
        else:
            mtscore.score(h, refs, metrics=[metric], bleu_kwargs={"effective_order": True})
    return time.process_time() - t


if __name__ == "__main__":
    if len(sys.argv) == 4:
        print(run(*sys.argv[1:]))
        sys.exit(0)
    task = sys.argv[1] if len(sys.argv) > 1 else "cold"
    for metric in ("bleu", "chrf", "chrf++"):
        secs = {}
        for peer in ("sacrebleu", "mtscore"):
            # single thread: BLAS pools would otherwise spin (and count as CPU) after numpy loads
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
            runs = 1 if peer == "sacrebleu" else 3  # mtscore: min of 3 fresh processes
            secs[peer] = min(float(subprocess.run(
                [sys.executable, __file__, peer, task, metric], capture_output=True, text=True,
                check=True, env=env).stdout.strip().splitlines()[-1]) for _ in range(runs))
        print(f"{task:5s} {metric:7s} sacrebleu {secs['sacrebleu']:.3f}s  mtscore "
              f"{secs['mtscore']:.4f}s  ratio {secs['sacrebleu'] / secs['mtscore']:.1f}x", flush=True)
