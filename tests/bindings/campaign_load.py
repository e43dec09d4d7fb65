"""The load-and-faults harness of the campaign server (issue P21), shared by
tests/bindings/test_campaign_load.py and bench/bench_campaign_load.py.

A real ``mtscore human serve`` (uvicorn) in a subprocess on a free 127.0.0.1 port over a SQLite
campaign; ``clients`` simulated annotators (one thread and one keep-alive HTTP/1.1 connection each:
the standard library's ``http.client``, a third of httpx's CPU per request, which matters when
the clients share the machine with the server), each
following its own links: GET the item, parse the form's hidden fields, POST a score, follow the
303 to the next item, and on the end-of-HIT page go on with its next link. Every acknowledged
rating (303 after the POST) and every response latency is recorded. A POST whose answer was lost
(the server died) is posted again, the same form, until it is answered: 303 (stored once, or the
replay of the stored one) or 409 (refused); it is never counted twice.
"""
from __future__ import annotations

import contextlib
import http.client
import math
import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from mtscore.analysis.crowd.hits import batch_input_csv, build_campaign
from mtscore.bindings.campaign_server.security import hash_password, new_secret
from mtscore.bindings.campaign_server.store import CampaignStore, open_store

__all__ = ["FIELD", "LoadResult", "check_db", "kill", "load_seconds", "make_campaign", "percentile",
           "run_clients", "start_server"]

FIELD = re.compile(r'name="(position|csrf|nonce)" value="([^"]*)"')
REPO_ROOT = Path(__file__).resolve().parents[2]


def load_seconds(ci_default: float = 60.0, local_default: float = 8.0) -> float:
    """How long the clients post: ``MTSCORE_LOAD_SECONDS`` if set, else 60 s under ``CI=true``
    (the acceptance's duration), else a short local run."""
    env = os.environ.get("MTSCORE_LOAD_SECONDS")
    if env:
        return float(env)
    return ci_default if os.environ.get("CI", "").lower() == "true" else local_default


def value_of(name: str, position: int) -> int:
    """The score annotator ``name`` gives item ``position``: 0..100, different between neighbours."""
    return (int(name[1:]) * 37 + position * 11) % 101


def make_campaign(folder: Path, annotators: int, n_seg: int = 14,
                  db: str | None = None) -> tuple[CampaignStore, list[tuple[str, str]]]:
    """A campaign in ``folder`` (campaign.db, or the database URL ``db``; the server secret, an
    admin password) with ``annotators`` annotators over ``ceil(5 * n_seg * 1.25 / 100)`` HITs;
    returns the store and the (name, link token) pairs."""
    systems = "ABCDE"
    outs = {s: [f"{s} says {i} " + " ".join(f"w{j}" for j in range(3 + i % 9)) for i in range(n_seg)] for s in systems}
    refs = [f"reference {i} " + " ".join(f"r{j}" for j in range(3 + i % 7)) for i in range(n_seg)]
    camp = build_campaign(outs, refs, seed=5)
    folder.mkdir(parents=True, exist_ok=True)
    hits = folder / "hits.csv"
    hits.write_text(batch_input_csv(camp, "en", "de", texts=True), encoding="utf-8")
    store = open_store(db or folder / "campaign.db")
    store.load_campaign(hits)
    store.set_meta("secret", new_secret())
    store.set_meta("admin_password_hash", hash_password("load test"))
    return store, store.add_annotators(annotators)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(folder: Path, port: int, annotators: int, timeout: float = 60.0,
                 db: str | None = None) -> subprocess.Popen:
    """``mtscore human serve folder [--db db]`` on 127.0.0.1:``port`` (rate limit set far above the
    load), in its own process group; returns once it answers HTTP."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "mtscore", "human", "serve", str(folder), "--annotators",
                             str(annotators), "--port", str(port), "--rate", "1000000", *(["--db", db] if db else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited {proc.returncode}: {proc.communicate()[1]}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/a/{'x' * 43}", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.1)
    kill(proc)
    raise RuntimeError(f"the server did not answer within {timeout} s")


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL the server's process group and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


class Lost(Exception):
    """The request got no answer (refused, reset, closed, timed out)."""


class Connection:
    """One client's keep-alive HTTP/1.1 connection to ``base[0]`` (``http://host:port``, read on
    every request: a restart may change it). A connection the server closed while idle is
    replaced before the request is sent (as urllib3/httpx do), so :class:`Lost` means the request
    went out, or could not, and no answer came back."""

    def __init__(self, base: list[str], timeout: float = 30.0):
        self.base, self.timeout = base, timeout
        self._conn: http.client.HTTPConnection | None = None
        self._for = ""

    def _connection(self) -> http.client.HTTPConnection:
        c = self._conn
        if c is not None and (self._for != self.base[0] or (c.sock is not None and select.select([c.sock], [], [], 0)[0])):
            c.close()  # another server, or the server closed it (readable = EOF) while idle
            c = None
        if c is None:
            u = urllib.parse.urlsplit(self.base[0])
            c = self._conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=self.timeout)
            self._for = self.base[0]
        return c

    def request(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str]:
        """(status, body text) of one request; ``form``: a urlencoded POST body. :class:`Lost` if
        no answer came back."""
        c = self._connection()
        try:
            if form is None:
                c.request(method, path)
            else:
                c.request(method, path, body=urllib.parse.urlencode(form),
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
            r = c.getresponse()
            return r.status, r.read().decode("utf-8")
        except (OSError, http.client.HTTPException) as e:
            c.close()
            self._conn = None
            raise Lost(str(e)) from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


@dataclass
class LoadResult:
    """What the clients saw: ``acked`` (name, position, value) of every 303 after a POST,
    ``uncertain`` (name, position) of POSTs whose answer was lost and that were not acknowledged
    later, ``refused`` answers 409 to a re-POST, ``reposted`` re-POSTs answered (303 or 409), ``latency`` seconds of every answered request
    (GET and POST), ``post_latency`` of the POSTs, ``errors`` unexpected statuses, ``after_restart``
    acknowledgements per client after ``restarted`` was set."""

    acked: list[tuple[str, int, int]] = field(default_factory=list)
    uncertain: set[tuple[str, int]] = field(default_factory=set)
    refused: int = 0
    reposted: int = 0
    latency: list[float] = field(default_factory=list)
    post_latency: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    after_restart: dict[int, int] = field(default_factory=dict)
    exhausted: int = 0
    seconds: float = 0.0


def _client(k: int, base: list[str], links: list[tuple[str, str]], stop: threading.Event, restarted: threading.Event,
            out: LoadResult, lock: threading.Lock, think: float) -> None:
    acked, lat, post_lat, errors, uncertain = [], [], [], [], set()
    refused = after = reposted = 0
    retry = False
    pending: tuple[str, str, dict[str, str]] | None = None   # a POST whose answer was lost
    li = 0
    rng = random.Random(k)
    if think:  # independent annotators: start spread over one think time, not all at once
        stop.wait(rng.uniform(0.0, think))
    c = Connection(base)
    with contextlib.closing(c):
        while not stop.is_set():
            try:
                if pending is not None:
                    name, tok, data = pending
                else:
                    if li >= len(links):
                        with lock:
                            out.exhausted += 1
                        break
                    name, tok = links[li]
                    t0 = time.perf_counter()
                    status, text = c.request("GET", f"/a/{tok}")
                    lat.append(time.perf_counter() - t0)
                    if status != 200:
                        errors.append(f"GET {status}")
                        continue
                    form = dict(FIELD.findall(text))
                    if "position" not in form:      # the end-of-HIT page: the next link
                        li += 1
                        continue
                    data = {**form, "score": str(value_of(name, int(form["position"])))}
                    if think:  # each pause drawn around the mean: in-step clients would arrive in bursts
                        time.sleep(rng.uniform(0.5, 1.5) * think)
                    pending = (name, tok, data)
                t0 = time.perf_counter()
                status, _ = c.request("POST", f"/a/{tok}/rate", data)
                dt = time.perf_counter() - t0
                lat.append(dt)
                post_lat.append(dt)
                key = (name, int(data["position"]))
                pending = None
                reposted += retry
                retry = False
                if status == 303:
                    acked.append((*key, int(data["score"])))
                    uncertain.discard(key)
                    after += restarted.is_set()
                elif status == 409 and key in uncertain:
                    refused += 1
                else:
                    errors.append(f"POST {status}")
            except Lost:
                if pending is not None:
                    uncertain.add((pending[0], int(pending[2]["position"])))
                    retry = True
                time.sleep(0.05)
    with lock:
        out.acked += acked
        out.latency += lat
        out.post_latency += post_lat
        out.errors += errors
        out.uncertain |= uncertain
        out.refused += refused
        out.reposted += reposted
        out.after_restart[k] = after


def run_clients(port: int, links: list[tuple[str, str]], clients: int, seconds: float, think: float = 0.0,
                during=None) -> LoadResult:
    """``clients`` annotator threads, client k taking ``links[k::clients]`` in turn, posting for
    ``seconds``. ``during(base, restarted)`` (optional) runs in this thread meanwhile (e.g. kills
    and restarts the server; it may change ``base[0]``, set ``restarted``)."""
    out, lock = LoadResult(), threading.Lock()
    stop, restarted = threading.Event(), threading.Event()
    base = [f"http://127.0.0.1:{port}"]
    threads = [threading.Thread(target=_client, args=(k, base, links[k::clients], stop, restarted, out, lock, think))
               for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    try:
        if during is not None:
            during(base, restarted)
        time.sleep(max(0.0, seconds - (time.perf_counter() - t0)))
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)
    out.seconds = time.perf_counter() - t0
    return out


def check_db(store: CampaignStore, result: LoadResult) -> tuple[int, int, int]:
    """(lost, duplicated, stored): acknowledged ratings missing from the database (or stored with
    another value), (annotator, position) keys acknowledged or stored more than once, ratings stored."""
    rows = [(x["name"], x["position"], x["value"]) for x in store.ratings()]
    stored = set(rows)
    lost = sum(a not in stored for a in result.acked)
    keys = [(n, p) for n, p, _ in rows]
    dup = (len(keys) - len(set(keys))) + (len(result.acked) - len(set(result.acked)))
    return lost, dup, len(rows)


def percentile(xs: list[float], q: float) -> float:
    """The ``q`` (0..100) percentile of ``xs`` (nearest rank)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))]
