"""The table formats with the tests' results (P13 item 4), fuzzed: on generated corpora (adversarial
Unicode, empty lines), ``-f parquet`` with ``--paired-bs`` / ``--paired-ar`` / ``--confidence``
carries exactly the ``-f json`` report in its metadata and every segment of every system under
its plain name, ``-f tsv`` refuses the combination before writing anything, and ``score-table``
on the same corpus as a table reports the same numbers."""
import contextlib
import io
import json
import os
import tempfile

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mtscore.bindings.cli.main import main  # noqa: E402

WORDS = ["a", "b", "the", "cat", "Straße", "ﬁ", "İ", "日本", "ä", "x-y", ".", ",", "!", "'s", "1,000"]
line = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


@st.composite
def corpora(draw):
    n = draw(st.integers(1, 6))
    n_sys = draw(st.integers(2, 3))
    refs = draw(st.lists(line, min_size=n, max_size=n))
    systems = [draw(st.lists(line, min_size=n, max_size=n)) for _ in range(n_sys)]
    return refs, systems


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse's usage errors
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def _write(folder, name, lines):
    p = os.path.join(folder, name)
    with open(p, "w", encoding="utf-8") as f:
        f.write("".join(x + "\n" for x in lines))
    return p


TESTS = [["--paired-bs", "-pbsn", "30"], ["--paired-ar", "-parn", "30"], ["--confidence", "-cin", "30"]]


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(corpus=corpora(), which=st.sampled_from(range(len(TESTS))),
       metrics=st.sampled_from([["bleu"], ["chrf"], ["bleu", "chrf", "ter"], ["chrf", "ter", "-cw", "2"]]))
def test_every_result_present_in_every_table_format(corpus, which, metrics):
    import pyarrow.parquet as pq

    refs, systems = corpus
    flags = TESTS[which]
    with tempfile.TemporaryDirectory() as d:
        ref = _write(d, "ref", refs)
        hyps = [_write(d, f"sys{i}", s) for i, s in enumerate(systems)]
        if flags[0] == "--confidence":
            hyps = hyps[:1]
        base = [ref, "-i", *hyps, "-m", *metrics, *flags, "-q"]
        rc, want, err = _run([*base, "-f", "json"])
        assert rc == 0, err
        out = os.path.join(d, "seg.parquet")
        rc, _, err = _run([*base, "-f", "parquet", "-o", out])
        assert rc == 0, err
        got = pq.read_schema(out).metadata[b"mtscore.report"].decode()
        assert json.loads(got) == json.loads(want)
        table = pq.read_table(out)
        n = len(refs)
        assert table.num_rows == n * len(hyps)
        if len(hyps) > 1:
            assert table.column("system").to_pylist() == [h for h in hyps for _ in range(n)]
        tsv = os.path.join(d, "seg.tsv")
        rc, _, err = _run([*base, "-f", "tsv", "-o", tsv])
        assert rc == 2
        assert f"{flags[0]} with --format tsv" in err
        assert not os.path.exists(tsv)
        # the same corpus as a long table: the same numbers per system
        if flags[0] != "--confidence":
            rows = [{"system": os.path.basename(h), "hyp": x, "ref": r}
                    for h, s in zip(hyps, systems) for x, r in zip(s, refs)]
            tab = os.path.join(d, "t.jsonl")
            with open(tab, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            rc, table_json, err = _run(["score-table", tab, "-m", *metrics, *flags, "-q", "-f", "json"])
            assert rc == 0, err
            a, b = json.loads(want), json.loads(table_json)
            assert [{k: v for k, v in x.items() if k != "system"} for x in a] == \
                   [{k: v for k, v in x.items() if k != "system"} for x in b]


def test_confidence_of_ter_on_empty_hypotheses_is_reported():
    """sacrebleu 2.6.0 stops with "TypeError: don't know how to coerce float and float32" here
    (its TER resamples mix float32 and float scores in statistics.mean); the mean it means to
    compute is that of the exact values, and mtscore reports it."""
    from fractions import Fraction

    import numpy as np

    from mtscore.engine.metrics.base import Score

    s = Score("TER", 100.0)
    s.estimate_ci([Score("TER", x) for x in (np.float32(0.0), 100.0, np.float32(50.0), 100.0)])
    assert s._mean == float(sum(Fraction(x) for x in (0.0, 100.0, 50.0, 100.0)) / 4)
    with tempfile.TemporaryDirectory() as d:
        ref = _write(d, "ref", ["", "", "a"])
        hyp = _write(d, "hyp", ["", "", ""])
        rc, out, err = _run([ref, "-i", hyp, "-m", "ter", "-ci", "-cin", "30", "-f", "json", "-q"])
        assert rc == 0, err
        assert json.loads(out)["confidence_mean"] > 0
