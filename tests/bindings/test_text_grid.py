"""The own fancy_grid table equals tabulate's output byte for byte wherever it answers, and answers
for the tables of sacrebleu's paired reports."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtscore.bindings.cli.text_grid import fancy_grid

tabulate = pytest.importorskip("tabulate").tabulate


def _tabulate(cols):
    return tabulate(cols, headers="keys", tablefmt="fancy_grid", colalign=("right",),
                    stralign="center", numalign="center", floatfmt=".1f")


RED, YELLOW, CYAN, RESET = "\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[0m"


def _paired_table(color: bool, ar: bool):
    def c(s, code):
        return f"{code}{s}{RESET}" if color else s

    names = [c("Baseline: sys.A.de", YELLOW), c("/data/sys.B.de", YELLOW), c("x", YELLOW)]
    bleu = ["26.4" if ar else "26.4 (26.3 ± 1.0)",
            ("31.3" if ar else "31.3 (31.2 ± 1.2)") + "\n(p = 0.0010)*",
            ("26.5" if ar else "26.5 (26.5 ± 1.0)") + "\n" + c("(p = 0.4200)", RED)]
    chrf = ["57.1 (57.1 ± 0.8)", "60.6 (60.7 ± 0.8)\n(p = 0.0010)*", "5.2 (5.2 ± 0.1)\n(p = 0.0010)*"]
    return {c("System", CYAN): names, c("BLEU (μ ± 95% CI)" if not ar else "BLEU", CYAN): bleu,
            c("chrF2 (μ ± 95% CI)", CYAN): chrf}


@pytest.mark.parametrize("color", [False, True])
@pytest.mark.parametrize("ar", [False, True])
def test_paired_report_tables_take_the_own_path(color, ar):
    cols = _paired_table(color, ar)
    got = fancy_grid(cols)
    assert got is not None
    assert got == _tabulate(cols)


def test_single_line_table():
    cols = {"System": ["a", "Baseline: bbbbbbbbbbbbbbbb"], "BLEU": ["1.0 x", "22.25 y"]}
    assert fancy_grid(cols) == _tabulate(cols)


@pytest.mark.parametrize("cells", [["26.4", "31.3"], ["True", "False"], ["1,000", "2,000"],
                                   ["中文", "abc"], ["a\r\nb", "c"], ["", "x"], ["a\n\nb", "c"]])
def test_unsure_tables_fall_back(cells):
    # numeric columns, wide characters, carriage returns, empty cells or lines: tabulate decides
    assert fancy_grid({"System": ["s1", "s2"], "BLEU": cells}) is None


# mostly what the own path takes (so that it answers often), some of what it must leave to tabulate
_SAFE = list("abZ09.-+e()*:/±μ") * 3 + ["\n", " ", ",", "\x1b[31m", "\x1b[0m", "True", "1e5", "nan"]
_chars = st.sampled_from(_SAFE * 3 + ["中", "\t", "\r", "é", "\x1b[", "١", "_", "\u200b"])
_cell = st.lists(_chars, min_size=1, max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_equal_to_tabulate_wherever_it_answers(n_cols, n_rows, data):
    headers = data.draw(st.lists(_cell, min_size=n_cols, max_size=n_cols, unique=True))
    cols = {h: data.draw(st.lists(_cell, min_size=n_rows, max_size=n_rows)) for h in headers}
    got = fancy_grid(cols)
    if got is not None:
        assert got == _tabulate(cols)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(list("abcXYZ019 .()*=±μ")), min_size=1, max_size=15)
                .map("".join).filter(lambda s: s.strip()), min_size=2, max_size=6),
       st.lists(st.lists(st.sampled_from(list("019.± ()p=*")), min_size=1, max_size=12)
                .map("".join).filter(lambda s: s.strip()), min_size=2, max_size=6),
       st.booleans())
def test_report_like_tables(names, scores, multiline):
    # tables shaped like the reports (text names, score cells with a p-value line): the own path
    # answers for most of them, and then equals tabulate
    n = min(len(names), len(scores))
    cells = [s + ("\n(p = 0.0010)*" if multiline and i else "") for i, s in enumerate(scores[:n])]
    cols = {"System": ["Baseline: " + names[0], *names[1:n]], "BLEU (μ ± 95% CI)": cells}
    cols["BLEU (μ ± 95% CI)"][0] += " (base)"
    got = fancy_grid(cols)
    assert got is not None
    assert got == _tabulate(cols)
