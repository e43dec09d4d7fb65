"""mtscore meta / human CLI (bindings.cli.analysis.main) on the shared WMT data."""
import base64
import json
import re

import pytest
from conftest import require

from mtscore.bindings.cli.analysis import main


def test_help_explains(capsys):
    with pytest.raises(SystemExit) as e:
        main(["meta", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "Williams" in out
    assert "wmt20" in out
    assert "sys" in out
    with pytest.raises(SystemExit):
        main(["human", "rater-model", "--help"])
    assert "Gamma" in capsys.readouterr().out


def test_meta_wmt20_html_report(shared_data, tmp_path, capsys):
    root = require(shared_data / "wmt20-metrics")
    html_path = tmp_path / "ende.html"
    rc = main(["meta", "wmt20", "--data", str(root), "--lp", "en-de", "--bootstrap", "200",
               "--html", str(html_path), "--format", "json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["outliers"] == ["Online-G.1556", "WMTBiomedBaseline.388", "zlabs-nlp.179"] or \
        sorted(res["outliers"]) == sorted(["Online-G.1556", "WMTBiomedBaseline.388", "zlabs-nlp.179"])
    rows = {r["metric"]: r for r in res["rows"]}
    assert rows["BLEU"]["pearson_excl"] == pytest.approx(0.825, abs=5e-4)  # mt-metrics-eval data_test
    assert rows["COMET"]["pearson_excl"] == pytest.approx(0.863, abs=5e-4)
    assert res["darr"]["chrF"]["n_excl"] == 4637
    html = html_path.read_text()
    pngs = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html)
    assert len(pngs) >= 6
    assert all(base64.b64decode(p)[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert "Type I" in html
    assert "Kendall" in html


def test_meta_sys_csv_and_errors(shared_data, tmp_path, capsys):
    f = require(shared_data / "tangled" / "wmt19_sys_scores" / "DA-newstest2019-ende-sys-nohy-scores.csv")
    out = tmp_path / "r.csv"
    assert main(["meta", "sys", "--scores", str(f), "--outliers", "mad", "--metrics", "chrF,sacreBLEU-BLEU",
                 "--bootstrap", "100", "--format", "csv", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("metric,pearson_all")
    assert len(lines) == 3
    chrf = dict(zip(lines[0].split(","), next(line for line in lines if line.startswith("chrF")).split(",")))
    assert float(chrf["pearson_all"]) == pytest.approx(0.979, abs=5e-4)
    assert float(chrf["pearson_excl"]) == pytest.approx(0.881, abs=5e-4)
    capsys.readouterr()
    assert main(["meta", "sys", "--scores", str(f), "--metrics", "NOPE"]) == 1
    assert "unknown metric" in capsys.readouterr().err
    assert main(["meta", "sys", "--scores", str(tmp_path / "missing.csv")]) == 1
    assert "missing.csv" in capsys.readouterr().err


def test_human_ratings_and_rater_model(shared_data, capsys):
    f = require(shared_data / "wmt21-news-systems" / "humaneval" / "newstest2021-toen" / "ad-csen-good-stnd.csv")
    assert main(["human", "ratings", "--ratings", str(f), "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["systems"][:2] == ["Facebook-AI.7", "Online-A.5"]
    assert res["cluster"] == [1, 1, 2, 2, 2, 2, 2, 2, 2]
    assert res["workers_passing_qc"] <= res["workers"]
    assert main(["human", "rater-model", "--ratings", str(f)]) == 0
    r_all = float(re.search(r"z-mean\) = ([0-9.]+)", capsys.readouterr().out).group(1))
    assert r_all > 0.9
    # keeping 40 of 92 workers leaves some items unseen (prior mean 0): lower agreement
    assert main(["human", "rater-model", "--ratings", str(f), "--keep", "40"]) == 0
    r_keep = float(re.search(r"z-mean\) = ([0-9.]+)", capsys.readouterr().out).group(1))
    assert 0.5 < r_keep < r_all
