"""``mtscore.decoder`` on the command line (``mtscore mbr``, ``mtscore nbest``: output, one-line
errors, parser checks), reference aggregation (chrF against a plain-Python twin and fastchrf,
expected BLEU), and the cross-face defaults (lower-is-better error rates, sentence BLEU with
effective order). Split from test_decoder.py; shared cases in decoder_cases.py."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mtscore import decoder
from tests.cli_run import run_cli as _cli

sacrebleu = pytest.importorskip("sacrebleu")

from tests.bindings.decoder_cases import assert_bits, need_wmt  # noqa: E402


# ---- CLI -------------------------------------------------------------------------------------
def test_cli_mbr_jsonl_and_text_groups(tmp_path, capsys):
    g = ["the cat sat on the mat", "a cat sat on a mat", "the dog sat", "the cat sat"]
    (tmp_path / "s.jsonl").write_text(json.dumps(g) + "\n" + json.dumps(
        {"samples": g[:2], "log_probs": [-3.0, -0.1]}) + "\n", encoding="utf-8")
    rc, out, _ = _cli(["mbr", str(tmp_path / "s.jsonl"), "-m", "chrf"], capsys)
    assert rc == 0
    assert out.splitlines() == [decoder.mbr(g).sample, decoder.mbr(g[:2], log_probs=[-3.0, -0.1]).sample]
    (tmp_path / "s.txt").write_text("\n".join(g[:2]) + "\n\n" + "\n".join(g[2:]) + "\n",
                                    encoding="utf-8")
    rc, out, _ = _cli(["mbr", str(tmp_path / "s.txt"), "-m", "bleu", "-O", "effective_order=true",
                       "-f", "jsonl", "-o", str(tmp_path / "o.jsonl")], capsys)
    rows = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()]
    want = decoder.mbr(g[2:], metric="bleu", effective_order=True)
    assert rc == 0
    assert rows[1]["index"] == want.index
    assert rows[1]["expected_utility"] == want.expected_utility.tolist()


def test_cli_nbest_oracle_and_rerank(tmp_path, capsys):
    (tmp_path / "nb").write_text("0 ||| the cat ||| F= 1 ||| -1\n0 ||| the cat sat ||| F= 2 ||| -2\n"
                                 "1 ||| x y ||| F= 0 ||| 0.5\n", encoding="utf-8")
    (tmp_path / "ref").write_text("the cat sat\nx y z\n", encoding="utf-8")
    rc, out, _ = _cli(["nbest", str(tmp_path / "nb"), "-r", str(tmp_path / "ref"), "-O",
                       "effective_order=true"], capsys)
    assert rc == 0
    assert out.splitlines() == ["the cat sat", "x y"]
    rc, out, _ = _cli(["nbest", str(tmp_path / "nb"), "-r", str(tmp_path / "ref"), "--mode", "rerank",
                       "-m", "chrf"], capsys)
    first = out.splitlines()[0].split(" ||| ")
    assert rc == 0
    assert first[1] == "the cat sat"
    assert first[2].startswith("F= 2 CHRF= ")
    assert float(first[2].split()[-1]) == sacrebleu.metrics.CHRF().sentence_score(
        "the cat sat", ["the cat sat"]).score


@pytest.mark.parametrize(("files", "argv", "msg"), [
    ({"nb": "0 ||| a ||| b\n"}, ["nbest", "{nb}", "-r", "{ref}"], "nb:1: expected 'id"),
    ({"nb": "0 ||| a ||| F ||| 1\n2 ||| b ||| F ||| 1\n"}, ["nbest", "{nb}", "-r", "{ref}"],
     "sentence id 1 has no hypotheses"),
    ({"nb": "0 ||| a ||| F ||| 1\n1 ||| a ||| F ||| 1\n2 ||| b ||| F ||| 1\n"},
     ["nbest", "{nb}", "-r", "{ref}"], "ref: 2 lines"),
    ({"s.jsonl": "[\"a\"]\n[]\n"}, ["mbr", "{s.jsonl}"], "s.jsonl:2: empty group"),
    ({"s.jsonl": "[\"a\"]\n{oops\n"}, ["mbr", "{s.jsonl}"], "s.jsonl:2: invalid JSON"),
    ({"s.jsonl": "{\"samples\": [\"a\", \"b\"], \"log_probs\": [1]}\n"}, ["mbr", "{s.jsonl}"],
     "s.jsonl:1: log_probs must be 2 numbers"),
    ({"s.txt": "a\t0\nb\tx\n"}, ["mbr", "{s.txt}", "--log-probs"], "s.txt:2: --log-probs"),
    ({"s.txt": "a\nb\n"}, ["mbr", "{s.txt}", "-O", "nosuch=1"],
     "-O: chrf: unknown option(s) nosuch; its options: char_order, word_order, beta"),
    ({"nb": "0 ||| a ||| F ||| 1\n"}, ["nbest", "{nb}", "-r", "{nb}.missing"],
     ".missing: file not found"),
    ({}, ["mbr", "{ref}.missing"], "ref.missing: file not found"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, files, argv, msg):
    (tmp_path / "ref").write_text("r0\nr1\n", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    names = {"ref": tmp_path / "ref", **{n: tmp_path / n for n in files}}
    argv = [str(names[a[1:a.index("}")]]) + a[a.index("}") + 1:] if a.startswith("{") else a
            for a in argv]
    rc, out, err = _cli(argv, capsys)
    assert rc == 1, err
    assert out == "", err
    assert len(err.strip().splitlines()) == 1, err
    assert msg in err, err


def test_cli_workers_checked_by_the_parser(tmp_path, capsys):
    (tmp_path / "s.jsonl").write_text("[\"a\"]\n", encoding="utf-8")
    with pytest.raises(SystemExit) as e:
        _cli(["mbr", str(tmp_path / "s.jsonl"), "--workers", "-1"], capsys)
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "argument --workers: must be 0 or more, got -1" in err


# ---- reference aggregation ---------------------------------------------------------------------
def _aggregate_chrf_twin(hyps, refs, p, char_order=6, word_order=0, beta=2.0):
    """Plain-Python reference aggregation (Vamvas & Sennrich 2024) with sacrebleu's own n-gram
    extraction and chrF formula: expected reference counts, clipped matches per order."""
    from collections import Counter

    sb = sacrebleu.metrics.CHRF(char_order=char_order, word_order=word_order, beta=beta)

    def counts(text):  # sacrebleu's own n-gram extraction of a reference
        return sb._extract_reference_info([text])["ref_ngrams"][0]

    ref_counts = [counts(r) for r in refs]
    n_orders = char_order + word_order
    expected = [Counter() for _ in range(n_orders)]
    exp_tot = [0.0] * n_orders
    for w, rc in zip(p, ref_counts):
        for o in range(n_orders):
            for g, c in rc[o].items():
                expected[o][g] += w * c
            exp_tot[o] += w * sum(rc[o].values())
    out = []
    for h in hyps:
        hc = counts(h)
        stats = []
        for o in range(n_orders):
            match = sum(min(c, expected[o][g]) for g, c in hc[o].items())
            stats += [sum(hc[o].values()), exp_tot[o], match]
        out.append(sb._compute_f_score(stats))
    return np.array(out)


@pytest.mark.parametrize("options", [{}, {"word_order": 2}, {"beta": 1, "char_order": 4}])
def test_aggregate_chrf_equals_twin_fastchrf_and_single_reference(options):
    groups = need_wmt()
    for g in groups:
        got = decoder.aggregate_chrf(g, metric="chrf", **options)
        want = _aggregate_chrf_twin(g, g, np.full(len(g), 1 / len(g)), **options)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        # one pseudo-reference: the sentence score, bit for bit
        sb = sacrebleu.metrics.CHRF(**options)
        assert_bits(decoder.aggregate_chrf(g, g[:1], **options),
                    [sb.sentence_score(h, [g[0]]).score for h in g])
        w = np.arange(1, len(g) + 1, dtype=np.float64)
        np.testing.assert_allclose(decoder.aggregate_chrf(g, weights=w, **options),
                                   _aggregate_chrf_twin(g, g, w / w.sum(), **options),
                                   rtol=1e-12, atol=1e-12)
        try:
            import fastchrf
        except ImportError:
            continue
        if not options:  # the same utility; sums of fractional counts in another order (ulps)
            np.testing.assert_allclose(got, fastchrf.aggregate_chrf([g], [g])[0], rtol=1e-13)


def test_expected_bleu_single_reference_is_sentence_bleu_and_mbr_aggregate():
    groups = need_wmt()
    sb = sacrebleu.metrics.BLEU(effective_order=True)
    for g in groups:
        assert_bits(decoder.expected_bleu(g, g[:1]), [sb.sentence_score(h, [g[0]]).score for h in g])
        # identical pseudo-references: the same as one of them
        assert_bits(decoder.expected_bleu(g, [g[1]] * 3), [sb.sentence_score(h, [g[1]]).score for h in g])
        eb = decoder.expected_bleu(g)
        res = decoder.mbr(g, metric="bleu", utility="aggregate", effective_order=True)
        assert res.matrix is None
        assert res.index == int(np.argmax(eb))
        assert_bits(res.expected_utility, eb)
        res = decoder.mbr(g, metric="chrf", utility="aggregate")
        assert_bits(res.expected_utility, decoder.aggregate_chrf(g))


def test_pairwise_empty_group_is_an_error():
    with pytest.raises(ValueError, match=r"groups\[1\] is empty"):
        decoder.pairwise(groups=[["a"], []])
    with pytest.raises(ValueError, match=r"groups\[0\] is empty"):
        decoder.pairwise(groups=[(["a"], [])])


def test_aggregate_errors():
    with pytest.raises(ValueError, match="utility must be"):
        decoder.mbr(["a", "b"], utility="mean")
    with pytest.raises(ValueError, match="needs chrF/chrF\\+\\+ or BLEU"):
        decoder.mbr(["a", "b"], metric="ter", utility="aggregate")
    with pytest.raises(ValueError, match="hyps is empty"):
        decoder.aggregate_chrf([])
    with pytest.raises(ValueError, match="metric must be chrF"):
        decoder.aggregate_chrf(["a"], metric="bleu")
    with pytest.raises(ValueError, match="weights\\[1\\]"):
        decoder.expected_bleu(["a b", "c"], weights=[1, -1])


def test_error_rates_are_lower_is_better_everywhere():
    """Every error-rate metric declares it (not only TER): MBR and n-best oracles pick its
    lowest value and rewards negate it."""
    import mtscore

    for m in (mtscore.TER(), mtscore.decoder.resolve_metric("wer", {}),
              mtscore.decoder.resolve_metric("eed", {})):
        assert decoder.lower_is_better(m)
    assert not decoder.lower_is_better(mtscore.CHRF())
    samples = ["a b c d", "a b c e", "x y z w"]
    res = decoder.mbr(samples, metric="wer")
    assert res.index == int(np.argmin(res.expected_utility))
    oracle = decoder.nbest_oracle([samples], ["a b c d"], metric="wer")
    assert oracle.index[0] == 0
    assert oracle.score[0] == 0.0
    reward = decoder.reward_fn("wer", scale=1.0)
    assert reward(completions=["a b c d", "x y"], reference=["a b c d"] * 2)[0] == -0.0


def test_sentence_bleu_defaults_to_effective_order_in_every_decoder_face(tmp_path):
    """P14: `mtscore nbest -m bleu` scored an exact match of two words 0.0 (sentence BLEU without
    effective order); by name, BLEU now uses it in the decoder functions, n-best, MBR and
    rewards, as sacrebleu's sentence mode; `effective_order=False` still gives the old numbers,
    with one warning per process."""
    import subprocess
    import sys

    want = sacrebleu.metrics.BLEU(effective_order=True).sentence_score("hello world", ["hello world"]).score
    assert decoder.sentence_scores(["hello world"], ["hello world"], metric="bleu").tolist() == [want]
    assert decoder.pairwise(["hello world", "hello world"], metric="bleu")[0, 1] == want
    assert decoder.nbest_oracle([["hello world", "hi"]], ["hello world"], metric="bleu").score[0] == want
    assert decoder.reward_fn("bleu", scale=1.0)(completions=["hello world"], reference=["hello world"]) == [want]
    nb = tmp_path / "nb.txt"
    nb.write_text("0 ||| hello world ||| a=1 ||| 0.5\n0 ||| hi world ||| a=1 ||| 0.4\n")
    ref = tmp_path / "ref"
    ref.write_text("hello world\n")
    r = subprocess.run([sys.executable, "-m", "mtscore", "nbest", str(nb), "-r", str(ref), "-m", "bleu",
                        "-f", "jsonl"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert json.loads(r.stdout)["score"] == want
    assert r.stderr == ""
    groups = tmp_path / "g.txt"
    groups.write_text("hello world\nhello world\nhi there\n\nhello world\nhello world\n")
    r = subprocess.run([sys.executable, "-m", "mtscore", "mbr", str(groups), "-m", "bleu", "-O",
                        "effective_order=false"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert r.stderr.count("warning: sentence-level BLEU without effective_order") == 1
