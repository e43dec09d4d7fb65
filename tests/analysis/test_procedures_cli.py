"""CLI of the thesis procedures: mtscore human worker-test / significance / rater-heatmap /
sequence and mtscore meta subsets, on WMT21 and Tangled WMT19 data; bad input is one line."""
import json

import numpy as np
import pytest
from conftest import require

from mtscore.bindings.cli.analysis import main


@pytest.fixture(scope="module")
def csen(shared_data):
    return require(shared_data / "wmt21-news-systems" / "humaneval" / "newstest2021-toen" / "ad-csen-good-stnd.csv")


def test_worker_test_and_significance(csen, capsys, tmp_path):
    assert main(["human", "worker-test", "--ratings", str(csen), "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert len(res["worker"]) == 92
    assert sum(res["exact"]) == 29
    assert sum(res["passed"]) == 53
    assert main(["human", "worker-test", "--ratings", str(csen), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("worker,n_bad,n_repeat,p,exact,passed\nM0013,")
    png, page = tmp_path / "a10.png", tmp_path / "a10.html"
    assert main(["human", "significance", "--ratings", str(csen), "--sizes", "50,2000", "--plot", str(png),
                 "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "p < 0.05: 61.1% of pairs" in out  # = the released adwilcox-csen.csv (22 of 36 pairs)
    assert png.read_bytes()[:4] == b"\x89PNG"
    html = page.read_text()
    assert "61.1% of pairs" in html
    assert html.count("data:image/png;base64,") == 1
    assert "A10" in html


def test_rater_heatmap_and_rater_model_links(csen, capsys, tmp_path):
    png = tmp_path / "b6.png"
    assert main(["human", "rater-heatmap", "--ratings", str(csen), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("HIT 140: 3 workers, 66 MT items, centre r = 0.204")
    assert png.exists()
    assert main(["human", "rater-model", "--ratings", str(csen)]) == 0
    assert "degraded links 1045" in capsys.readouterr().out
    assert main(["human", "rater-heatmap", "--ratings", str(csen), "--png", str(png), "--hit", "nope"]) == 1
    assert "--hit nope: no rating of that HIT" in capsys.readouterr().err


def test_meta_subsets(shared_data, capsys, tmp_path):
    f = require(shared_data / "tangled" / "wmt19_sys_scores" / "DA-newstest2019-ende-sys-nohy-scores.csv")
    png = tmp_path / "e8.png"
    assert main(["meta", "subsets", "--scores", str(f), "--metrics", "chrF", "--plot", str(png),
                 "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["subsets"] == 646646
    assert res["groups"] == ["none", "en_de_task", "online-X", "en_de_task+online-X"]
    assert png.exists()
    assert main(["meta", "subsets", "--scores", str(f), "--metrics", "chrF", "--mark", "online-X",
                 "--k", "5", "--draws", "500"]) == 0
    assert "500 subsets of 5 of 22 systems (random draws)" in capsys.readouterr().out
    assert main(["meta", "subsets", "--scores", str(f), "--mark", "nosuch"]) == 1
    assert "--mark: unknown system nosuch" in capsys.readouterr().err
    assert main(["meta", "subsets", "--scores", str(f), "--k", "40"]) == 1
    assert "between 1 and the number of systems (22)" in capsys.readouterr().err


def _write_table(path, binary=False, seed=0):
    rng = np.random.default_rng(seed)
    lines = ["worker\thit\tposition\tscore\tgold"]
    for h in range(8):
        gold = rng.integers(0, 2, 30) if binary else rng.standard_normal(30)
        for w in range(6):
            prev = 0.0
            for t in range(30):
                if binary:
                    y = int(rng.random() < (0.8 if gold[t] else 0.2))
                else:
                    y = 0.3 * prev + 0.7 * gold[t] + rng.normal(0, 0.5)
                prev = y
                lines.append(f"w{h}_{w}\th{h}\t{t}\t{y}\t{gold[t]}")
    path.write_text("\n".join(lines) + "\n")


def test_sequence_command(tmp_path, capsys):
    f = tmp_path / "seq.tsv"
    _write_table(f)
    png = tmp_path / "c4.png"
    assert main(["human", "sequence", "--table", str(f), "--n", "1,3", "--plot", str(png), "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    reg = res["regression"]["all"]
    lag, se = reg["coef"][reg["names"].index("lag")], reg["se"][reg["names"].index("lag")]
    assert abs(lag - 0.3) < 4 * se
    assert res["bins"]["high_minus_low"][0] > 0
    assert png.exists()
    assert set(res["regression"]) == {"all", "good"}  # every simulated worker correlates > 0.5 with gold
    fb = tmp_path / "bin.tsv"
    _write_table(fb, binary=True)
    page = tmp_path / "c5.html"
    assert main(["human", "sequence", "--table", str(fb), "--binary", "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "C5 logistic regression, all workers" in out
    assert "non_extreme workers" in out
    assert "good workers" in out
    assert "C5 logistic regression" in page.read_text()
    assert "<img" not in page.read_text()


@pytest.mark.parametrize(("content", "message"), [
    ("worker\thit\tscore\tgold\nw\th\t1\t2\n", "missing column(s) position"),
    ("worker\thit\tposition\tscore\tgold\nw\th\t1\tabc\t2\n", "'abc' is not a number"),
    ("worker\thit\tposition\tscore\tgold\nw\th\t1\t1\t2\nw\th\t1\t2\t2\n", "two ratings at position 1"),
    ("worker\thit\tposition\tscore\tgold\nw\th\t1\t1\t2\nw\th\t2\t2\t2\n", "only 1 items have a previous item"),
])
def test_sequence_bad_tables(tmp_path, capsys, content, message):
    f = tmp_path / "bad.tsv"
    f.write_text(content)
    assert main(["human", "sequence", "--table", str(f)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mtscore: error:")
    assert message in err
    assert "Traceback" not in err


def test_bad_ratings_and_options(tmp_path, capsys, csen):
    f = tmp_path / "r.csv"
    f.write_text("HITId WorkerId sys_id sid score\nh w s 1 50\n")
    assert main(["human", "worker-test", "--ratings", str(f)]) == 1
    assert "missing column(s) type" in capsys.readouterr().err
    assert main(["human", "significance", "--ratings", str(csen), "--plot", str(tmp_path / "x.png")]) == 1
    assert "give --sizes too" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["human", "significance", "--ratings", str(csen), "--thresholds", "0.05,2"])
    assert e.value.code == 2
