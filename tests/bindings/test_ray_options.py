"""Metric options on Ray: ``score_ray(metric_kwargs={name: options})`` for every registered
metric (not only BLEU/chrF/TER), the older ``<name>_kwargs`` spellings, their errors, and
``score-table --ray`` passing each selected metric's command-line options to the workers. The
fixtures (WMT21 tables, a local 2-CPU Ray) are ray_support.py's."""
import os
import re
import subprocess
import sys

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install \"mtscore[ray]\")")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install \"mtscore[ray]\")")

import mtscore  # noqa: E402
from mtscore.bindings.ray import score_ray  # noqa: E402
from mtscore.engine.metrics.registry import make_metric  # noqa: E402
from tests.bindings import ray_support  # noqa: E402
from tests.bindings.ray_support import REPO_ROOT  # noqa: E402
from tests.bindings.ray_support import check_equal as _check_equal  # noqa: E402

tables = ray_support.tables
local_ray = ray_support.local_ray

#: an option of each metric beyond BLEU/chrF/TER that changes its numbers on the WMT21 en-de
#: table (2 references)
OPTIONS = {"wer": {"lowercase": True}, "per": {"remove_punctuation": True}, "cer": {"multi_ref": "best"},
           "eed": {"language": "ja"}, "meteor": {"language": "de"}}


def test_metric_kwargs_reach_the_workers(local_ray, tables):
    """Each metric's options reach the workers (tasks and actors): the numbers and signatures
    of the local path with the same options, and not those of the default options."""
    names = tables["names"]
    metrics = list(OPTIONS)
    loc = mtscore.score_table(tables["multi"], metrics=[make_metric(n, **kw) for n, kw in OPTIONS.items()])
    # names in any case
    given = {n.upper() if n == "cer" else n: kw for n, kw in OPTIONS.items()}
    r = score_ray(tables["multi"], metrics=metrics, metric_kwargs=given, keep_stats=True, batch_size=128)
    _check_equal(r, loc, names, metrics=metrics)
    actors = score_ray(tables["multi"], metrics=metrics, metric_kwargs=OPTIONS, batch_size=200,
                       compute="actors", concurrency=2)
    _check_equal(actors, loc, names, metrics=metrics, stats=False)
    default = score_ray(tables["multi"], metrics=metrics, batch_size=128)
    for n in metrics:
        assert default.signatures[n] != r.signatures[n], n
        for s in names:
            assert default.corpus[s][n].score != r.corpus[s][n].score, (s, n)


def test_the_older_spellings_and_families(local_ray, tables):
    """``bleu_kwargs`` / ``chrf_kwargs`` / ``ter_kwargs`` are ``metric_kwargs`` entries; chrf++
    takes chrF's options unless it has its own."""
    old = {"bleu_kwargs": {"lowercase": True}, "chrf_kwargs": {"char_order": 4}, "ter_kwargs": {"normalized": True}}
    metrics = ["bleu", "chrf", "chrf++", "ter"]
    a = score_ray(tables["single"], metrics=metrics, **old)
    b = score_ray(tables["single"], metrics=metrics,
                  metric_kwargs={"bleu": {"lowercase": True}, "chrf": {"char_order": 4}, "ter": {"normalized": True}})
    loc = mtscore.score_table(tables["single"], metrics=metrics, **old)
    for r in (a, b):
        _check_equal(r, loc, [None], metrics=metrics, stats=False)
    assert "|nc:4|" in a.signatures["chrf++"]
    # a metric's own entry wins over its family's; mixing both spellings for different metrics
    c = score_ray(tables["single"], metrics=["chrf", "chrf++", "wer"], chrf_kwargs={"char_order": 4},
                  metric_kwargs={"chrf++": {"char_order": 5}, "wer": {"lowercase": True}})
    assert "|nc:4|nw:0|" in c.signatures["chrf"]
    assert "|nc:5|nw:2|" in c.signatures["chrf++"]
    assert "case:lc" in c.signatures["wer"]


def test_option_errors():
    """Checked before Ray is reached (no cluster needed)."""
    from mtscore.engine.metrics.registry import METRICS

    with pytest.raises(ValueError, match=r"given twice: as metric_kwargs\['BLEU'\] and as bleu_kwargs"):
        score_ray("x.parquet", metrics=["bleu"], metric_kwargs={"BLEU": {}}, bleu_kwargs={"lowercase": True})
    with pytest.raises(ValueError, match=r"given twice: as metric_kwargs\['wer'\] and as metric_kwargs\['WER'\]"):
        score_ray("x.parquet", metrics=["wer"], metric_kwargs={"wer": {}, "WER": {}})
    registered = re.escape(", ".join(METRICS))
    with pytest.raises(ValueError, match=r"unknown metric 'blue'; registered metrics: " + registered):
        score_ray("x.parquet", metric_kwargs={"blue": {"lowercase": True}})
    with pytest.raises(TypeError, match=r"metric_kwargs\['wer'\] must be a dict"):
        score_ray("x.parquet", metrics=["wer"], metric_kwargs={"wer": ["lowercase"]})
    with pytest.raises(TypeError, match="metric_kwargs must be a dict"):
        score_ray("x.parquet", metric_kwargs=[("wer", {})])


def _score_table(argv, capsys):
    from mtscore.bindings.cli.table import table_main

    capsys.readouterr()
    assert table_main(argv) == 0
    return capsys.readouterr().out


def test_cli_passes_every_selected_metrics_options(local_ray, tables, capsys):
    """``score-table --ray`` (this process's Ray) with WER/CER/EED flags and METEOR's language
    from -l: the local command's output, which those options change."""
    base = [tables["multi"], "-m", "wer", "cer", "eed", "meteor", "-q", "-f", "text", "-w", "4"]
    flags = ["--wer-lowercase", "--wer-multi-ref", "best", "--eed-language", "ja", "-l", "en-de"]
    local = _score_table([*base, *flags], capsys)
    assert _score_table([*base, *flags, "--ray"], capsys) == local
    assert _score_table([*base, "--ray"], capsys) != local


@pytest.mark.slow
def test_cli_ray_local_with_a_wer_option(tables):
    """``mtscore score-table ... -m wer --wer-lowercase --ray local`` (a new local Ray in a
    subprocess) prints what the local command prints."""
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    base = [sys.executable, "-m", "mtscore", "score-table", tables["multi"], "-q", "-m", "wer", "per", "-w", "4"]
    cmd = [*base, "--wer-lowercase", "--wer-remove-punct"]
    local, on_ray, default = (subprocess.run(c, capture_output=True, text=True, timeout=300, env=env)
                              for c in (cmd, [*cmd, "--ray", "local"], base))
    for p in (local, on_ray, default):
        assert p.returncode == 0, p.stderr[-2000:]
    assert on_ray.stdout == local.stdout
    assert default.stdout != local.stdout  # the flags change the numbers


def test_bertscore_signature_precision_is_what_the_actors_ran():
    """BERTScore as COMET (tests/bindings/test_ray_comet.py): the driver's CPU copy signs with
    the precision the actors report (a fake GPU actor's tf32), not its own fp32."""
    pytest.importorskip("onnxruntime")
    import pickle

    import numpy as np

    from mtscore.bindings.ray.gather import gather
    from mtscore.bindings.ray.result import RayScoreResult
    from mtscore.bindings.ray.worker import build_metrics, run_facts

    def driver():
        return build_metrics([("bertscore", {"device": "cpu", "precision": "tf32"})], None)

    m = driver()["bertscore"]
    assert run_facts(m) == {"prec": "fp32"}  # tf32 runs as fp32 on the CPU
    st = np.asarray(m.corpus_stats(["a cat sat", "the dog"], [["a cat sat", "a dog"]]))
    for reported, want in (({"prec": "tf32"}, "|prec:tf32|"), (None, None)):
        metrics = driver()
        p = {"n": len(st), "groups": {("", ""): {"n": len(st), "ref_counts": (1, 1), "bertscore": ("stats", st)}}}
        if reported is not None:
            p["facts"] = {"bertscore": reported}
        facts: dict = {}
        groups, _ = gather((b for b in [[pickle.dumps(p)]]), metrics, True, None, False, False, facts)
        sig = RayScoreResult(groups, metrics, False, False, True, None, run_facts=facts).signatures["bertscore"]
        if want is None:
            assert "prec:" not in sig  # fp32: absent, as in-process
        else:
            assert want in sig
