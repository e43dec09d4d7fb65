"""The campaign store and server on a real PostgreSQL (issue P21: "PostgreSQL by URL"): a
throwaway cluster (initdb + postgres, Unix socket only, no TCP listener) in a temporary folder,
reached as ``postgresql+psycopg://``. Skipped, saying why, when PostgreSQL's programs or psycopg
are absent, or when the tests run as root and there is no unprivileged user to run postgres
(it refuses root)."""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("sqlalchemy", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("uvicorn", reason="the campaign extra is not installed: pip install 'mtscore[campaign]'")
pytest.importorskip("httpx", reason="the load clients need httpx")
psycopg = pytest.importorskip("psycopg", reason="psycopg (the PostgreSQL driver) is not installed: pip install "
                                                "'psycopg[binary]'")

import httpx  # noqa: E402

from mtscore.analysis.crowd.batches import read_mturk_batches  # noqa: E402
from mtscore.bindings.campaign_server.export import export_csv  # noqa: E402
from mtscore.bindings.campaign_server.store import Conflict  # noqa: E402
from tests.bindings.campaign_load import (  # noqa: E402
    FIELD,
    check_db,
    free_port,
    kill,
    make_campaign,
    run_clients,
    start_server,
    value_of,
)


def _program(name: str) -> str | None:
    found = shutil.which(name) or shutil.which(name, path="/usr/local/bin")
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return versions[-1] if versions else None


@pytest.fixture
def pg_url(tmp_path):
    """A fresh PostgreSQL cluster for one test; yields its SQLAlchemy URL (database ``postgres``,
    superuser ``mtscore``, trust authentication over a Unix socket in the cluster's folder)."""
    initdb, postgres = _program("initdb"), _program("postgres")
    if not initdb or not postgres:
        pytest.skip("PostgreSQL's initdb/postgres programs are not installed (Debian: postgresql)")
    as_user: int | None = None
    if os.geteuid() == 0:       # postgres refuses to run as root: run the cluster as 'nobody'
        try:
            pw = pwd.getpwnam("nobody")
        except KeyError:
            pytest.skip("the tests run as root, postgres refuses root, and there is no 'nobody' user to run it as")
        as_user = pw.pw_uid
        # tmp_path's parents are root's (0700): a folder the unprivileged user can reach
        folder = Path(tempfile.mkdtemp(prefix="mtscore-pg-"))
        os.chown(folder, pw.pw_uid, pw.pw_gid)
    else:
        folder = tmp_path / "pg"
        folder.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C", "HOME": str(folder)}
    proc = log = None
    try:
        r = subprocess.run([initdb, "-D", str(folder / "data"), "-U", "mtscore", "--auth=trust", "--no-locale",
                            "-E", "UTF8", "--no-sync"], capture_output=True, text=True, user=as_user, env=env,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        port = free_port()
        log = open(tmp_path / "postgres.log", "wb")  # noqa: SIM115 (closed in the finally below)
        proc = subprocess.Popen([postgres, "-D", str(folder / "data"), "-k", str(folder), "-p", str(port),
                                 "-c", "listen_addresses=", "-c", "max_connections=100",
                                 "-c", "fsync=off"],  # a throwaway cluster
                                stdout=subprocess.DEVNULL, stderr=log, user=as_user, env=env, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "postgres.log").read_text(errors="replace")
            try:
                psycopg.connect(host=str(folder), port=port, user="mtscore", dbname="postgres").close()
                break
            except psycopg.OperationalError:
                assert time.monotonic() < deadline, "postgres did not accept connections within 60 s"
                time.sleep(0.2)
        yield f"postgresql+psycopg://mtscore@/postgres?host={folder}&port={port}"
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGINT)  # fast shutdown: disconnects the pool's open sessions
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                kill(proc)
        if log is not None:
            log.close()
        if as_user is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(folder)


def test_store_on_postgresql(pg_url, tmp_path):
    store, links = make_campaign(tmp_path / "campaign", 3, db=pg_url)
    assert store.engine.dialect.name == "postgresql"
    assert store.n_hits() == 1
    (name, tok), (_, tok2) = links[0], links[1]
    for k in range(100):
        assert store.next_item(tok).position == k
        assert store.record_rating(tok, k, value_of(name, k), f"nonce-{k:04d}") == (value_of(name, k), True)
    assert store.next_item(tok).done
    # a replayed form: the stored rating, nothing new; another value: refused
    assert store.record_rating(tok, 99, value_of(name, 99), "nonce-0099") == (value_of(name, 99), False)
    with pytest.raises(Conflict):
        store.record_rating(tok, 99, 7, "nonce-0099")

    def post(k):  # 16 tabs posting the second annotator's first item at once: one stored
        try:
            return store.record_rating(tok2, 0, 10 + k, f"tab-{k:04d}")
        except Conflict:
            return None

    with ThreadPoolExecutor(8) as pool:
        got = [g for g in pool.map(post, range(16)) if g is not None]
    assert len(got) == 1
    assert store.annotator(tok2).next_position == 1
    rows = store.ratings()
    assert [(x["name"], x["position"], x["value"]) for x in rows] == (
        [(name, k, value_of(name, k)) for k in range(100)] + [("A0002", 0, got[0][0])])
    assert [(p.name, p.rated) for p in store.progress()] == [("A0001", 100), ("A0002", 1), ("A0003", 0)]
    text, n, incomplete = export_csv(store)
    assert (n, incomplete) == (1, 2)                     # A0002 (1 rating) and A0003 (none) left out
    path = tmp_path / "Batch_1_batch_results.csv"
    path.write_text(text, encoding="utf-8", newline="")
    batch = read_mturk_batches(path)
    assert batch.score.tolist() == [float(value_of(name, k)) for k in range(100)]
    assert [it.rid for it in store.hit_items(0)] == [x["rid"] for x in rows[:100]]


def test_http_on_postgresql(pg_url, tmp_path):
    """``mtscore human serve --db postgresql+psycopg://...``: one item rated over HTTP, then 10
    clients for 3 s: every acknowledged rating stored once."""
    folder = tmp_path / "campaign"
    store, links = make_campaign(folder, 20, db=pg_url)
    port = free_port()
    proc = start_server(folder, port, 20, db=pg_url)
    try:
        name, tok = links[0]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", follow_redirects=False, timeout=30) as c:
            page = c.get(f"/a/{tok}").text
            assert "Item 1 of 100" in page
            form = dict(FIELD.findall(page))
            r = c.post(f"/a/{tok}/rate", data={**form, "score": "64"})
            assert r.status_code == 303
            assert r.headers["location"] == f"/a/{tok}"
            assert "Item 2 of 100" in c.get(f"/a/{tok}").text
        assert [(x["name"], x["position"], x["value"]) for x in store.ratings()] == [(name, 0, 64)]
        res = run_clients(port, links[1:], 10, 3.0)
    finally:
        kill(proc)
    lost, dup, stored = check_db(store, res)
    assert res.errors == []
    assert (lost, dup) == (0, 0)
    assert stored == len(res.acked) + 1 > 1
