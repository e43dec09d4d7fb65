"""mtscore.report(...): the self-contained HTML report (issue P19), read back with the
standard library's html.parser: sections, numbers, matrix shape, no URLs, escaping, errors."""
from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pyarrow as pa
import pytest

import mtscore
from mtscore.bindings.report import SECTIONS

REFS = ["the cat sat on the mat .", "a dog barked loudly at night .", "we went home early",
        "this is a <test> & more", "it rained all day long", "she reads a book every week ."]
SRC = ["die Katze sass auf der Matte .", "ein Hund bellte laut in der Nacht .", "wir gingen frueh heim",
       "das ist ein <Test> & mehr", "es regnete den ganzen Tag", "sie liest jede Woche ein Buch ."]
SYSTEMS = {
    "A": ["the cat sat on a mat .", "a dog barked at night .", "we went home",
          "this is a test", "it rained all day", "she reads a book each week ."],
    "<b>B</b>": ["cat on the mat", "the dog barks loudly at night .", "we went home early",
                 "this is <script>alert(1)</script> & more", "it was raining all day long", "she reads books ."],
    "C": ["the cat is on the mat .", "dog barked", "went home early .", "this a test & more",
          "rain all the day", "every week she reads a book ."],
}
METRICS = ("bleu", "chrf", "ter")
N_BS = 50


class Doc(HTMLParser):
    """Tags, attributes and the cells of every table of a page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.tables: list[dict] = []  # {"attrs", "rows": [[(tag, attrs, text)]]}
        self._stack: list[dict] = []
        self._cell: list | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table":
            self._stack.append({"attrs": a, "rows": [], "body": False})
        elif tag == "tbody" and self._stack:
            self._stack[-1]["body"] = True
        elif tag == "tr" and self._stack and self._stack[-1]["body"]:
            self._stack[-1]["rows"].append([])
        elif tag in ("td", "th") and self._stack and self._stack[-1]["body"]:
            self._cell = [tag, a, ""]
            self._stack[-1]["rows"][-1].append(self._cell)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._cell = None
        elif tag == "table" and self._stack:
            self.tables.append(self._stack.pop())

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[2] += data

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if "id" in a}

    def table(self, **attrs) -> list[dict]:
        return [t for t in self.tables if all(v in (t["attrs"].get(k) or "").split() for k, v in attrs.items())]


@pytest.fixture(scope="module")
def html3() -> str:
    return mtscore.report(REFS, SYSTEMS, src=SRC, metrics=METRICS, n_bootstrap=N_BS)


@pytest.fixture(scope="module")
def html1() -> str:
    return mtscore.report([REFS], {"A": SYSTEMS["A"]}, metrics=METRICS, n_bootstrap=N_BS)


@pytest.mark.parametrize("which", ["html1", "html3"])
def test_every_section_present(which, request):
    doc = Doc(request.getfixturevalue(which))
    sections = [a["id"] for t, a in doc.tags if t == "section"]
    assert sections == list(SECTIONS)
    assert doc.table(id="score-table")


def test_score_table_equals_score_table(html3):
    # the same corpus as a long table with a system column, scored by mtscore.score_table
    rows = {"system": [], "hyp": [], "ref": []}
    for name, hyps in SYSTEMS.items():
        rows["system"] += [name] * len(hyps)
        rows["hyp"] += hyps
        rows["ref"] += REFS
    expected = mtscore.score_table(pa.table(rows), metrics=list(METRICS), system="system").corpus
    (tab,) = Doc(html3).table(id="score-table")
    assert [r[0][2] for r in tab["rows"]] == list(SYSTEMS)
    for r in tab["rows"]:
        got = [float(c[1]["data-v"]) for c in r if "score" in (c[1].get("class") or "").split()]
        assert got == [expected[r[0][2]][m].score for m in METRICS]


def test_cis_and_matrix_equal_compare(html3):
    cmp = mtscore.compare(SYSTEMS, [REFS], metrics=list(METRICS), n=N_BS, seed=12345, all_pairs=True)
    doc = Doc(html3)
    (tab,) = doc.table(id="score-table")
    for s, r in enumerate(tab["rows"]):
        cis = [float(r[1 + 3 * m + 1][1]["data-v"]) for m in range(len(METRICS))]
        assert cis == [float(cmp.results[name][s].ci) for name in cmp.metrics]
    mats = doc.table(**{"class": "sigmatrix"})
    assert len(mats) == len(METRICS)
    for tab, name in zip(mats, cmp.metrics):
        for a, r in enumerate(tab["rows"]):
            for b, c in enumerate(r[1:]):
                if a != b:
                    assert float(c[1]["data-v"]) == cmp.p_values[name][a, b]


@pytest.mark.parametrize(("which", "n"), [("html1", 1), ("html3", 3)])
def test_matrix_has_n_by_n_cells(which, n, request):
    mats = Doc(request.getfixturevalue(which)).table(**{"class": "sigmatrix"})
    assert len(mats) == len(METRICS)
    for tab in mats:
        assert len(tab["rows"]) == n
        assert all(len([c for c in r if "pcell" in (c[1].get("class") or "").split()]) == n
                   for r in tab["rows"])


@pytest.mark.parametrize("which", ["html1", "html3"])
def test_self_contained(which, request):
    doc = Doc(request.getfixturevalue(which))
    for tag, a in doc.tags:
        for k in ("src", "href", "action", "xlink:href"):
            v = a.get(k)
            assert v is None or ("http" not in v and "//" not in v), (tag, k, v)
        assert tag not in ("link", "img", "iframe", "object", "embed")
    scripts = [a for t, a in doc.tags if t == "script"]
    assert len(scripts) == 1
    assert "src" not in scripts[0]


def test_text_is_escaped(html3):
    doc = Doc(html3)
    tags = {t for t, _ in doc.tags}
    assert "b" not in tags  # the system name <b>B</b>
    assert sum(t == "script" for t, _ in doc.tags) == 1  # an output containing <script>
    assert "&lt;b&gt;B&lt;/b&gt;" in html3


def test_visible_without_scripts(html3):
    doc = Doc(html3)
    pairs = [a for _, a in doc.tags if "pair" in (a.get("class") or "").split()]
    assert pairs
    assert all("hidden" not in a for a in pairs)
    hidden = [a.get("id") for _, a in doc.tags if "hidden" in a]
    assert hidden == ["pair-picker", "example-filter"]  # only the controls that need the script


def test_deterministic(html3):
    assert mtscore.report(REFS, SYSTEMS, src=SRC, metrics=METRICS, n_bootstrap=N_BS) == html3


def test_source_length_buckets_only_with_source(html1, html3):
    assert "By source length" in html3
    assert "By source length" not in html1
    assert "No source given" in html1


def test_examples_show_diffs(html3):
    doc = Doc(html3)
    tags = [t for t, _ in doc.tags]
    assert "ins" in tags
    assert "del" in tags
    assert [a["value"] for t, a in doc.tags if t == "option"] == ["0-1", "0-2", "1-2"]


@pytest.mark.parametrize(("systems", "src", "match"), [
    ({"A": SYSTEMS["A"], "B": SYSTEMS["C"][:-1]}, None, r"systems\['B'\] has 5 segments"),
    ({"A": SYSTEMS["A"], "E": []}, None, r"systems\['E'\] is empty"),
    ({}, None, "systems must be a non-empty dict"),
    ({"A": SYSTEMS["A"]}, SRC[:2], "src has 2 segments"),
])
def test_bad_input(systems, src, match):
    with pytest.raises(ValueError, match=match):
        mtscore.report(REFS, systems, src=src, n_bootstrap=N_BS)


def test_bad_refs_and_pairs():
    with pytest.raises(ValueError, match=r"refs\[1\] has 5 segments"):
        mtscore.report([REFS, REFS[:-1]], {"A": SYSTEMS["A"]}, n_bootstrap=N_BS)
    with pytest.raises(ValueError, match=r"pairs\[0\] names 'Z'"):
        mtscore.report(REFS, SYSTEMS, pairs=[("A", "Z")], n_bootstrap=N_BS)


def test_word_fmeasure_matches_analysis(html3):
    from mtscore.analysis.compare.tokens import tokenize
    from mtscore.analysis.compare.word_accuracy import word_accuracy

    wa = word_accuracy([tokenize(REFS)], [tokenize(h) for h in SYSTEMS.values()])
    (tab,) = Doc(html3).table(id="word-fmeasure")
    got = np.array([[float(c[1]["data-v"]) for c in r[1:]] for r in tab["rows"]])
    np.testing.assert_array_equal(got, wa.fmeasure)


# ---- mtscore report (the command line) -------------------------------------------------------
def _write(tmp_path, name: str, lines) -> str:
    p = tmp_path / name
    p.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return str(p)


def test_cli_writes_the_same_page(tmp_path, capsys):
    from mtscore.bindings.cli.main import main

    ref = _write(tmp_path, "ref.txt", REFS)
    src = _write(tmp_path, "src.txt", SRC)
    paths = [_write(tmp_path, f"s{i}.txt", h) for i, h in enumerate(SYSTEMS.values())]
    out = tmp_path / "report.html"
    assert main(["report", ref, "-i", *paths, "--names", *SYSTEMS, "--src", src, "--bootstrap",
                 str(N_BS), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == mtscore.report(REFS, SYSTEMS, src=SRC, metrics=METRICS,
                                                             n_bootstrap=N_BS)


def test_cli_bad_input_writes_nothing(tmp_path, capsys):
    from mtscore.bindings.cli.main import main

    ref = _write(tmp_path, "ref.txt", REFS)
    short = _write(tmp_path, "short.txt", SYSTEMS["A"][:-1])
    empty = _write(tmp_path, "empty.txt", [])
    out = tmp_path / "report.html"
    assert main(["report", ref, "-i", ref, short, "--bootstrap", str(N_BS), "-o", str(out)]) == 1
    assert "short.txt" in capsys.readouterr().err
    assert not out.exists()
    assert main(["report", ref, "-i", empty, "--bootstrap", str(N_BS), "-o", str(out)]) == 1
    assert "is empty" in capsys.readouterr().err
    assert not out.exists()
    bad_dir = tmp_path / "missing" / "report.html"
    assert main(["report", ref, "-i", ref, "--bootstrap", str(N_BS), "-o", str(bad_dir)]) == 1
    assert "report.html" in capsys.readouterr().err
    assert not bad_dir.exists()
    # no partial file, no temporary file left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt", "ref.txt", "short.txt"]


def test_several_references():
    refs2 = [r.replace("the", "a") for r in REFS]
    text = mtscore.report([REFS, refs2], SYSTEMS, metrics=("bleu",), n_bootstrap=N_BS)
    expected = mtscore.score(SYSTEMS, [REFS, refs2], metrics=["bleu"]).corpus
    (tab,) = Doc(text).table(id="score-table")
    assert [float(r[1][1]["data-v"]) for r in tab["rows"]] == [expected[s]["bleu"].score for s in SYSTEMS]
    assert "reference 2" in text
