"""A13: document-level TER with mtscore's TER (against sacrebleu) on the docqe-eacl2017 texts, and
the QE gold simulation recovering a known gold label."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.crowd.qe_gold import document_ter, qe_gold_sweep, simulate_ter_pe1
from mtscore.analysis.crowd.scores import read_segment_key
from tests.conftest import require


@pytest.fixture(scope="module")
def docs(shared_data: Path):
    d = require(shared_data / "docqe-eacl2017")
    key = read_segment_key(d / "seg-key-enes")
    mt = (d / "data" / "wmt16-qe-task3.en-es.mt").read_text(encoding="utf-8").splitlines()
    ref = (d / "data" / "wmt16-qe-task3-enes-ref.es").read_text(encoding="utf-8").splitlines()
    order = np.argsort(key.segment.astype(int))   # NEW.LN is the line of the data files
    assert len(mt) == len(ref) == len(order) == 1051
    return mt, ref, key.document[order]


def test_document_ter_equals_sacrebleu(docs):
    sacrebleu = pytest.importorskip("sacrebleu")
    mt, ref, doc = docs
    names, ter = document_ter(mt, ref, doc)
    assert len(names) == 62
    metric = sacrebleu.metrics.TER()
    for j in (0, 17, 61):
        rows = np.flatnonzero(doc == names[j])
        assert ter[j] == metric.corpus_score([mt[i] for i in rows], [[ref[i] for i in rows]]).score


def test_gold_simulation_recovers_gold(docs):
    mt, ref, doc = docs
    _, ter = document_ter(mt, ref, doc)
    rng = np.random.default_rng(7)
    da = -ter / 30 + rng.normal(0, 0.2, ter.size)         # a DA-like score, higher = better
    t1 = simulate_ter_pe1(ter, da, mean=25.0, sd=10.0)
    assert abs(t1.mean() - 25) < 1e-9
    assert abs(t1.std(ddof=1) - 10) < 1e-9
    # the TER ranking is kept, the shape is the DA's
    assert (np.argsort(t1) == np.argsort(ter, kind="stable")).all()
    true_t2 = np.abs(rng.normal(0.5, 0.3, ter.size))
    gold = t1 + 13 * true_t2
    sweep = qe_gold_sweep(t1, gold, da=da, predictions={"ter": ter})
    assert np.allclose(sweep["ter_pe2"], true_t2)
    assert np.allclose(sweep["gold"][12], gold)
    # as W2 grows the label is dominated by the (TER-unrelated) second term
    assert sweep["r_ter"][0] > sweep["r_ter"][12] > sweep["r_ter"][-1]


def test_cli_document_ter_against_release_da(shared_data, docs, tmp_path, capsys):
    """r(-TER, DA) from the raw batches (CLI) equals the same r from the document TER (checked
    against sacrebleu above; sacrebleu on all 62 documents costs ~10 s CPU) and the release's
    own run A document scores."""
    import json

    from mtscore.bindings.cli.analysis import main

    mt, ref, doc = docs
    d = shared_data / "docqe-eacl2017"
    rel = {ln.split()[1]: float(ln.split()[2]) for ln in (d / "runA" / "doc-key-enes.csv").read_text().splitlines()[1:]}
    names_arr, ter_arr = document_ter(mt, ref, doc)
    names, ter = names_arr.tolist(), ter_arr.tolist()
    expect = np.corrcoef(-np.array(ter), [rel[n] for n in names])[0, 1]
    gold = tmp_path / "gold.tsv"
    gold.write_text("".join(f"{n}\t{t / 100 + 0.01 * k:.4f}\n" for k, (n, t) in enumerate(zip(names, ter))))
    assert main(["human", "da-batches", str(d / "batched-hits" / "runA"), "--segment-key", str(d / "seg-key-enes"),
                 "--qe-texts", str(d / "data" / "wmt16-qe-task3.en-es.mt"), str(d / "data" / "wmt16-qe-task3-enes-ref.es"),
                 "--qe-gold", str(gold), "--format", "json"]) == 0
    qe = json.loads(capsys.readouterr().out)["qe"]
    assert abs(qe["r_negTER_run_a"] - expect) < 1e-12
    assert round(expect, 4) == 0.5199
    assert qe["document"] == names
    assert qe["ter"] == ter
    assert len(qe["sweep"]["w2"]) == 25
    # a bad gold line is one clear error
    gold.write_text("docA\n")
    assert main(["human", "da-batches", str(d / "batched-hits" / "runA"), "--segment-key", str(d / "seg-key-enes"),
                 "--qe-texts", str(d / "data" / "wmt16-qe-task3.en-es.mt"), str(d / "data" / "wmt16-qe-task3-enes-ref.es"),
                 "--qe-gold", str(gold)]) == 1
    assert "gold.tsv:1: expected 'document<TAB>label'" in capsys.readouterr().err
