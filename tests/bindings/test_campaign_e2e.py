"""The 20-annotator end-to-end run of the DA campaign server (issue P21, acceptance item 2).

HITs from mtscore's HIT builder over five systems of well separated true quality; ``mtscore human
serve`` in a subprocess (real uvicorn, SQLite); 20 annotators (14 good, 3 random, 3 lazy: the
simulator's ``good``, ``random`` and ``constant`` workers) answer their round-robin HIT through
HTTP, item by item (GET the page, parse the form, POST the score); then ``mtscore human
campaign-export``, ``mtscore human da-batches`` and ``mtscore human campaign-status`` as a user
runs them: exactly the random and lazy annotators fail quality control (or are untestable, which
da-batches also excludes), and the system ranking is the simulated true order.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("sqlalchemy", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("uvicorn", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("httpx", reason="the test extra is not installed: pip install 'mtscore[test]'")

import httpx

from mtscore.analysis.crowd.hits import batch_input_csv, build_campaign
from mtscore.analysis.crowd.simulate import Rater, rater_pool, simulate
from mtscore.bindings.campaign_server.security import completion_code
from mtscore.bindings.campaign_server.store import open_store, token_hash
from mtscore.bindings.cli.analysis import main
from tests.bindings.campaign_load import FIELD, free_port, kill

# true mean quality of the systems (0-100): 15 points apart, so the order is unambiguous
QUALITY = {"sysA": 82.0, "sysB": 67.0, "sysC": 52.0, "sysD": 37.0, "sysE": 22.0}
N_SEG = 56          # 5 x 56 outputs -> 4 HITs of 100 items, each rated by 5 of the 20 annotators
GOOD, RANDOM, LAZY = 14, 3, 3
SEED = 11
ITEM = re.compile(r"Item (\d+) of 100")
CODE = re.compile(r'id="code">([^<]+)<')


def _campaign():
    outs = {s: [f"{s} output {i} " + " ".join(f"w{j}" for j in range(3 + i % 9)) for i in range(N_SEG)]
            for s in QUALITY}
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 7)) for i in range(N_SEG)]
    return build_campaign(outs, refs, seed=SEED)


def _serve(folder: Path, hits: Path, annotators: int) -> tuple[subprocess.Popen, int]:
    """``mtscore human serve folder --hits hits --annotators N`` (the first run: it creates the
    campaign and writes links.txt) on a free port, its rate limit far above the test's pace."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mtscore", "human", "serve", str(folder), "--hits", str(hits),
                             "--annotators", str(annotators), "--port", str(port), "--rate", "100000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"mtscore human serve exited {proc.returncode}: {proc.communicate()[1]}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/a/{'x' * 43}", timeout=1)
            return proc, port
        except httpx.TransportError:
            time.sleep(0.1)
    kill(proc)
    pytest.fail("mtscore human serve did not answer within 60 s")


def _answer_hit(base: str, token: str, scores: list[int]) -> str:
    """One annotator's whole HIT through HTTP: for each item GET the page, check it is the next
    item, POST the simulated score with the page's form fields; returns the completion code of
    the end-of-HIT page."""
    with httpx.Client(base_url=base, follow_redirects=False, timeout=60) as client:
        for k, score in enumerate(scores):
            page = client.get(f"/a/{token}")
            assert page.status_code == 200, page.text
            form = dict(FIELD.findall(page.text))
            assert form["position"] == str(k)
            item = ITEM.search(page.text)
            assert item is not None
            assert item.group(1) == str(k + 1)
            r = client.post(f"/a/{token}/rate", data={**form, "score": str(score)})
            assert r.status_code == 303, r.text
        end = client.get(f"/a/{token}").text
    assert "rated all 100 items" in end
    code = CODE.search(end)
    assert code is not None
    return code.group(1)


def _raters() -> list[Rater]:
    return rater_pool(good=GOOD, random=RANDOM, constant=LAZY, seed=SEED)


def test_twenty_simulated_annotators_through_http_qc_and_ranking(tmp_path):
    camp = _campaign()
    assert camp.n_hits == 4
    hits = tmp_path / "hits.csv"
    hits.write_text(batch_input_csv(camp, "en", "de", texts=True), encoding="utf-8")
    raters = _raters()
    assert [r.kind for r in raters] == ["good"] * GOOD + ["random"] * RANDOM + ["constant"] * LAZY
    # every rater's answers to every HIT in HIT order (display "input": the order the server shows);
    # annotator k (A000k+1) is rater k and rates HIT k % 4, as the server hands HITs out round robin
    sim = simulate(camp, QUALITY, raters, assignments=len(raters), seed=SEED)
    answers = {(a.hit, a.worker): a.scores.tolist() for a in sim.assignments}
    truth = sorted(sim.system_truth, key=sim.system_truth.__getitem__, reverse=True)
    assert truth == list(QUALITY)

    folder = tmp_path / "campaign"
    proc, port = _serve(folder, hits, len(raters))
    try:
        links = (folder / "links.txt").read_text(encoding="utf-8").split("\n")[:len(raters)]
        names = [ln.split("\t")[0] for ln in links]
        tokens = [ln.split("\t")[1].rsplit("/", 1)[1] for ln in links]
        assert names == [f"A{k + 1:04d}" for k in range(len(raters))]
        # the annotators work at the same time, four at once, each with their own connection
        with ThreadPoolExecutor(4) as pool:
            done = list(pool.map(lambda k: _answer_hit(f"http://127.0.0.1:{port}", tokens[k],
                                                       answers[(k % camp.n_hits, raters[k].worker)]),
                                 range(len(raters))))
        secret = open_store(folder / "campaign.db").get_meta("secret")
        assert secret
        assert done == [completion_code(secret, token_hash(t)) for t in tokens]
    finally:
        kill(proc)
    good = set(names[:GOOD])
    bad = set(names[GOOD:])

    batch = tmp_path / "Batch_1_batch_results.csv"
    assert main(["human", "campaign-export", str(folder), "-o", str(batch)]) == 0
    out = tmp_path / "da.json"
    assert main(["human", "da-batches", str(batch), "--format", "json", "-o", str(out)]) == 0
    run = json.loads(out.read_text(encoding="utf-8"))["run_a"]
    assert (run["ratings"], run["assignments"], run["workers"]) == (2000, 20, 20)
    assert run["skipped"] == []
    qc = dict(zip(run["qc"]["worker"], run["qc"]["status"]))
    assert sorted(qc) == names
    assert {w for w, s in qc.items() if s == "good"} == good       # every good annotator passes ...
    assert all(qc[w] in ("bad", "untestable") for w in bad)         # ... every random and lazy one fails
    assert run["workers_passed"] == GOOD
    p = dict(zip(run["qc"]["worker"], run["qc"]["p"]))
    assert max(p[w] for w in good) < 0.01
    # the lazy annotators' constant answers raise the constant-run red flag; nobody else's do
    flags = dict(zip(run["red_flags"]["worker"], run["red_flags"]["flag_seq"]))
    assert {w for w, f in flags.items() if f} == set(names[GOOD + RANDOM:])
    systems = run["systems"]
    assert systems["system"] == truth                                  # z-score means in the true order,
    assert all(a > b for a, b in zip(systems["z"], systems["z"][1:]))  # strictly
    assert systems["n_segments"] == [N_SEG] * len(QUALITY)

    # campaign-status runs the same test (paired_t on the same BAD_REF pairs, p <= alpha after
    # rounding to 7 digits); with all 10 pairs of every annotator rated, its min_pairs (2) is moot
    status_file = tmp_path / "status.json"
    assert main(["human", "campaign-status", str(folder), "--format", "json", "-o", str(status_file)]) == 0
    status = json.loads(status_file.read_text(encoding="utf-8"))
    assert (status["annotators"], status["finished"], status["ratings"]) == (20, 20, 2000)
    assert status["alpha"] == 0.05
    live = {a["name"]: a for a in status["per_annotator"]}
    assert sorted(live) == names
    same = {"good": "pass", "bad": "fail", "untestable": "untestable"}
    for w, s, n, t, pv in zip(*(run["qc"][k] for k in ("worker", "status", "n_pairs", "t", "p"))):
        assert live[w]["qc"] == same[s], w
        assert live[w]["bad_ref_pairs"] == n == 10
        assert (live[w]["t"], live[w]["p"]) == pytest.approx((t, pv), rel=1e-9), w
    assert {w for w, a in live.items() if a["qc"] == "pass"} == good
    # screen time is the server's own measurement (display to stored rating): positive, and within
    # the annotator's own first-display-to-last-rating span, as the server stored it
    def span(a):
        return (datetime.fromisoformat(a["last"]) - datetime.fromisoformat(a["first"])).total_seconds()

    assert all(a["median_seconds"] is not None and 0 < a["median_seconds"] <= span(a) for a in live.values())
