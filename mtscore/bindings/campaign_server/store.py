"""The campaign database: HITs, annotators and their ratings (SQLAlchemy Core 2.x).

The tables are in :mod:`.schema`; ``UNIQUE(annotator, hit, position)`` on the ratings means a
replayed form cannot count twice, and :meth:`CampaignStore.record_rating` checks and writes in
one transaction.

SQLite (a file) by default, opened with ``journal_mode=WAL`` and ``synchronous=FULL`` and every
transaction ``BEGIN IMMEDIATE``: a rating acknowledged to the browser is on disk and survives
SIGKILL. PostgreSQL by URL (``postgresql+psycopg://...``). Only parameterised statements.
"""
from __future__ import annotations

import csv
import hashlib
import io
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, create_engine, event, func, insert, inspect, select, update
from sqlalchemy import text as sql_text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from ...analysis.crowd.doc_hits import DOC_FORMAT, read_doc_hits
from ...analysis.crowd.hits import HIT_SIZE, HitItem, read_batch_input
from ...analysis.data.tables import read_text
from ...analysis.errors import AnalysisInputError
from .schema import annotators_t, items_t, meta_t, metadata, ratings_t

__all__ = ["AUTOCHECKPOINT_PAGES", "CLOSED_KEY", "SETTINGS", "SETTING_KEY", "Annotator", "CampaignStore", "Closed", "Conflict", "Item", "Progress",
           "UnknownAnnotator", "open_store", "token_hash"]

# the statements of every request, built once (building and keying a statement costs ~0.4 ms CPU)
_ANNOTATOR = select(annotators_t).where(annotators_t.c.token_hash == bindparam("th"))
_ITEM = select(items_t).where(items_t.c.hit == bindparam("hit"), items_t.c.position == bindparam("pos"))
_STAMP = (update(annotators_t).where(annotators_t.c.id == bindparam("aid"), annotators_t.c.shown_ms.is_(None))
          .values(shown_ms=bindparam("now")))
_OLD = select(ratings_t.c.value, ratings_t.c.nonce).where(
    ratings_t.c.annotator == bindparam("aid"), ratings_t.c.hit == bindparam("hit"),
    ratings_t.c.position == bindparam("pos"))
# the next item is shown by the redirect that answers this rating: its display time is this commit
# (so a GET writes nothing, except the first display of a HIT's first item)
_MOVE = (update(annotators_t).where(annotators_t.c.id == bindparam("aid"), annotators_t.c.next_position == bindparam("pos"))
         .values(next_position=bindparam("next"), shown_ms=bindparam("now")))
_CLOSED = select(meta_t.c.value).where(meta_t.c.key == bindparam("key"))
_INSERT = insert(ratings_t)


class UnknownAnnotator(LookupError):
    """No annotator has this link token (the app answers 404, the same for every unknown token)."""


class Conflict(ValueError):
    """The rating is out of order or a replay with another value/nonce (HTTP 409); nothing stored."""


class Closed(Conflict):
    """The campaign is closed (meta key :data:`CLOSED_KEY` set): no rating is stored."""


#: SQLite's automatic checkpoint, in WAL pages (~40 MB): only a backstop; the server checkpoints in
#: the background (:meth:`CampaignStore.checkpoint`) so that no rating's commit runs one (a
#: checkpoint fsyncs the database file: hundreds of ms in the request that happens to trigger it)
AUTOCHECKPOINT_PAGES = 10000
#: the meta key whose value (epoch ms) says the campaign was closed; checked inside every
#: rating's transaction, so no rating is stored after the close commits
CLOSED_KEY = "closed_ms"
#: the DA settings (the item screen of each: :func:`.pages.item_page`): ``ref`` reference-based
#: (monolingual) adequacy, ``src`` source-based (bilingual) adequacy, ``fluency`` the text alone
SETTINGS = ("ref", "src", "fluency")
#: the meta key of the campaign's setting, chosen when it is created; absent (a campaign made
#: before settings existed): ``ref``
SETTING_KEY = "setting"


def token_hash(token: str) -> str:
    """sha256 hex of an annotator's link token: what the database keeps instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Annotator:
    id: int
    name: str
    token_hash: str
    hit: int
    next_position: int
    shown_ms: int | None = None  # when the current item was first shown (epoch ms), None before


@dataclass(frozen=True)
class Item:
    """The item at ``position`` (0..total-1) of ``hit``; ``done`` when the annotator has rated all
    ``total`` (then the other fields describe the last item). ``closed_ms`` is read in the same
    transaction. Document-level campaigns: ``document`` (None otherwise), ``is_document`` (the
    whole-document item: ``text``/``ref``/``src`` are the whole document, one segment a line) and
    ``context``: the (text, ref, src) of the document's segments shown before this one."""

    hit: int
    position: int
    rid: int
    type: str
    text: str
    ref: str
    done: bool = False
    src: str | None = None  # the source sentence (None: the HITs have no source texts)
    closed_ms: int | None = None  # when the campaign was closed (epoch ms), None while open
    total: int = HIT_SIZE  # items in the HIT
    document: str | None = None
    is_document: bool = False
    context: tuple[tuple[str, str, str | None], ...] = ()


@dataclass(frozen=True)
class Progress:
    name: str
    hit: int
    rated: int
    first_ms: int | None
    last_ms: int | None


class CampaignStore:
    """One campaign's database (see the module docstring); thread-safe (one connection per call).

    Reads run in plain (deferred) transactions, which never wait for a writer under WAL; on
    SQLite the writes of this process take a lock first, so that concurrent requests queue in
    Python instead of in SQLite's busy handler (which sleeps up to 100 ms between tries)."""

    def __init__(self, engine: Engine, stamp_engine: Engine | None = None):
        self.engine = engine
        self._stamps = stamp_engine or engine
        self._items: list[HitItem] | None = None
        self._sizes: dict[int, int] = {}
        self._starts: dict[int, int] = {}
        self._rows: dict[tuple[int, int], tuple[str, str, str | None]] = {}
        self._reader = engine.execution_options(mtscore_read_only=True)
        self._write_lock: AbstractContextManager[Any] = (threading.Lock() if engine.dialect.name == "sqlite"
                                                        else nullcontext())

    def _read(self) -> AbstractContextManager[Connection]:
        return self._reader.begin()

    @contextmanager
    def _write(self, engine: Engine | None = None) -> Iterator[Connection]:
        with self._write_lock, (engine or self.engine).begin() as c:
            yield c

    # -- campaign -------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._read() as c:
            return c.execute(select(meta_t.c.value).where(meta_t.c.key == key)).scalar_one_or_none()

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as c:
            if c.execute(select(meta_t.c.key).where(meta_t.c.key == key)).first():
                c.execute(update(meta_t).where(meta_t.c.key == key).values(value=value))
            else:
                c.execute(insert(meta_t).values(key=key, value=value))

    def n_hits(self) -> int:
        with self._read() as c:
            return int(c.execute(select(func.count(func.distinct(items_t.c.hit)))).scalar_one())

    def hit_size(self, hit: int) -> int:
        """Items in ``hit`` (100, or the HIT's own length in a document-level campaign); cached."""
        if hit not in self._sizes:
            self._cached_items()
        return self._sizes.get(hit, HIT_SIZE)

    def setting(self) -> str:
        """The campaign's setting, one of :data:`SETTINGS` (``ref`` when none was stored)."""
        return self.get_meta(SETTING_KEY) or "ref"

    def load_campaign(self, hits_csv: str | Path, setting: str = "ref") -> int:
        """Store the HITs of a document HIT file (``build-hits --docs``: document-level DA, HITs of
        any length) or of a batch input CSV written by ``mtscore human build-hits --texts``
        (the ``text_i``/``ref_i`` columns, and ``srctext_i`` from ``--source``, are what annotators
        read) and the campaign's ``setting`` (one of :data:`SETTINGS`; ``src`` needs the source
        texts). Returns the number of HITs. Refused when the campaign already has items."""
        if setting not in SETTINGS:
            raise AnalysisInputError(f"setting {setting!r}: choose one of {', '.join(SETTINGS)}")
        head = read_text(Path(hits_csv))[:300].lstrip()
        if head.startswith("{") and DOC_FORMAT in head:  # a document HIT file (build-hits --docs)
            return self._load_documents(Path(hits_csv), setting)
        camp = read_batch_input(hits_csv)
        texts = _texts(Path(hits_csv))
        if setting == "src" and any(t[2] is None for hit in texts.values() for t in hit):
            raise AnalysisInputError(f"{hits_csv}: --setting src needs the source texts (srctext_i columns): "
                                     "build the HITs with `mtscore human build-hits --texts --source FILE`")
        if self.n_hits():
            raise AnalysisInputError(f"{hits_csv}: the campaign database already holds HITs")
        rows = []
        for h in range(camp.n_hits):
            for it in camp.hit(h):
                t, r, src = texts[camp.hit(h)[0].hit][it.position]
                rows.append(dict(hit=h, position=it.position, rid=it.rid, system=it.system, segment=it.segment,
                                 type=it.type, text=t, ref=r, src=src))
        with self._write() as c:
            c.execute(insert(items_t), rows)
            for k, v in {**camp.meta, SETTING_KEY: setting}.items():
                c.execute(insert(meta_t).values(key=k, value=v))
        return camp.n_hits

    def _load_documents(self, path: Path, setting: str) -> int:
        """Store the HITs of a document HIT file (``build-hits --docs``, :mod:`~mtscore.analysis.crowd.doc_hits`)."""
        camp = read_doc_hits(path)
        if setting == "src" and any(it.src is None for it in camp.items):
            raise AnalysisInputError(f"{path}: --setting src needs the source texts: build the HITs with "
                                     "`mtscore human build-hits --docs FILE --source FILE`")
        if self.n_hits():
            raise AnalysisInputError(f"{path}: the campaign database already holds HITs")
        rows = [dict(hit=it.hit, position=it.position, rid=it.rid, system=it.system, segment=it.segment, type=it.type,
                     text=it.text, ref=it.ref, src=it.src, document=it.document, is_document=int(it.is_document))
                for it in camp.items]
        with self._write() as c:
            c.execute(insert(items_t), rows)
            for k, v in {**camp.meta, SETTING_KEY: setting}.items():
                c.execute(insert(meta_t).values(key=k, value=v))
        return camp.n_hits

    def all_items(self) -> list[HitItem]:
        """Every HIT's items, by HIT and position, in one read; kept after the first call (items
        never change once loaded)."""
        return list(self._cached_items())

    def _cached_items(self) -> list[HitItem]:
        """The kept items (read on the first call, with the HIT lengths and document texts); not a copy."""
        if self._items is None:
            with self._read() as c:
                rows = c.execute(select(items_t).order_by(items_t.c.hit, items_t.c.position)).all()
            items = [HitItem(r.hit, r.position, r.system, r.segment, r.type, r.rid, r.text, r.document or "",
                             bool(r.is_document)) for r in rows]
            if not items:
                return items
            sizes: dict[int, int] = {}
            for k, it in enumerate(items):
                sizes[it.hit] = sizes.get(it.hit, 0) + 1
                self._starts.setdefault(it.hit, k)
            self._rows = {(r.hit, r.position): (r.text, r.ref, r.src) for r in rows if r.document is not None}
            self._sizes = sizes
            self._items = items
        return self._items

    def _context(self, hit: int, position: int) -> tuple[tuple[str, str, str | None], ...]:
        """(text, ref, src) of the segments of the current unit shown before ``position`` of ``hit``
        (a unit is contiguous and ends with its document item, so: back to the previous one)."""
        items = self._cached_items()
        start = self._starts[hit]
        out = []
        p = position - 1
        while p >= 0:
            it = items[start + p]
            if it.is_document:
                break
            out.append(self._rows[(hit, p)])
            p -= 1
        return tuple(reversed(out))

    def hit_items(self, hit: int) -> list[HitItem]:
        """The items of ``hit`` (0-based, in load order) as the HIT builder's :class:`HitItem`."""
        with self._read() as c:
            rows = c.execute(select(items_t).where(items_t.c.hit == hit).order_by(items_t.c.position)).all()
        return [HitItem(r.hit, r.position, r.system, r.segment, r.type, r.rid, r.text, r.document or "",
                        bool(r.is_document)) for r in rows]

    # -- annotators -----------------------------------------------------------------------------
    def add_annotators(self, n: int) -> list[tuple[str, str]]:
        """``n`` new annotators, HITs handed out round robin; returns (name, link token) pairs.
        The token (``secrets.token_urlsafe(32)``) is not stored, only its sha256."""
        hits = self.n_hits()
        if hits == 0:
            raise AnalysisInputError("the campaign has no HITs: load them first")
        out = []
        with self._write() as c:
            have = int(c.execute(select(func.count()).select_from(annotators_t)).scalar_one())
            for k in range(have, have + n):
                token = secrets.token_urlsafe(32)
                name = f"A{k + 1:04d}"
                c.execute(insert(annotators_t).values(name=name, token_hash=token_hash(token), hit=k % hits,
                                                      next_position=0, created_ms=_now_ms()))
                out.append((name, token))
        return out

    def annotator(self, token: str) -> Annotator:
        """The annotator of a link token; :class:`UnknownAnnotator` if none."""
        with self._read() as c:
            return self._annotator(c, token)

    @staticmethod
    def _annotator(c: Any, token: str) -> Annotator:
        r = c.execute(_ANNOTATOR, {"th": token_hash(token)}).first()
        if r is None:
            raise UnknownAnnotator("unknown annotator link")
        return Annotator(r.id, r.name, r.token_hash, r.hit, r.next_position, r.shown_ms)

    def next_item(self, token: str) -> Item:
        """The item the annotator rates now (the first time it is shown is recorded)."""
        with self._read() as c:
            a = self._annotator(c, token)
            size = self.hit_size(a.hit)
            pos = min(a.next_position, size - 1)
            r = c.execute(_ITEM, {"hit": a.hit, "pos": pos}).one()
            closed = c.execute(_CLOSED, {"key": CLOSED_KEY}).scalar_one_or_none()
        done = a.next_position >= size
        if not done and a.shown_ms is None:  # a write only on the first display of a HIT's first item
            with self._write(self._stamps) as c:
                c.execute(_STAMP, {"aid": a.id, "now": _now_ms()})
        doc = r.document
        context = self._context(r.hit, pos) if doc is not None and not r.is_document else ()
        return Item(r.hit, a.next_position if not done else pos, r.rid, r.type, r.text, r.ref, done, r.src,
                    None if closed is None else int(closed), size, doc, bool(r.is_document), context)

    def record_rating(self, token: str, position: int, value: int, nonce: str,
                      screen_ms: int | None = None) -> tuple[int, bool]:
        """Store one rating in ONE transaction; returns (the stored value, whether this call stored it).

        ``position`` must be the annotator's current one; a replay of a stored position with the
        same nonce and value returns the stored rating (nothing new stored); anything else at a
        stored or later position raises :class:`Conflict`, and any rating once the campaign is closed
        raises :class:`Closed` (checked in the same transaction). ``value``: int 0..100 (``ValueError``
        otherwise). ``screen_ms`` None: measured from when the item was first shown."""
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
            raise ValueError(f"rating {value!r}: expected an integer 0..100")
        if not nonce or len(nonce) > 64:
            raise ValueError("nonce: expected 1..64 characters")
        self._cached_items()  # the HIT lengths, read before the write lock (kept after the first call)
        try:
            with self._write() as c:
                a = self._annotator(c, token)
                if c.execute(_CLOSED, {"key": CLOSED_KEY}).first() is not None:
                    raise Closed("the campaign is closed")
                old = c.execute(_OLD, {"aid": a.id, "hit": a.hit, "pos": position}).first()
                if old is not None:
                    if old.nonce == nonce and old.value == value:
                        return int(old.value), False
                    raise Conflict(f"position {position} is already rated")
                if a.next_position >= self.hit_size(a.hit):
                    raise Conflict("the HIT is complete")
                if position != a.next_position:
                    raise Conflict(f"position {position} is not the current one ({a.next_position})")
                now = _now_ms()
                shown = now if a.shown_ms is None else int(a.shown_ms)
                rid = c.execute(_ITEM, {"hit": a.hit, "pos": position}).one().rid
                ms = max(0, now - shown) if screen_ms is None else int(screen_ms)
                moved = c.execute(_MOVE, {"aid": a.id, "pos": position, "next": position + 1, "now": now}).rowcount
                if moved != 1:
                    raise Conflict(f"position {position} was rated concurrently")
                c.execute(_INSERT, dict(annotator=a.id, hit=a.hit, position=position, rid=rid, value=value,
                                        screen_ms=ms, nonce=nonce, created_ms=shown, submitted_ms=now))
                return value, True
        except IntegrityError:
            raise Conflict(f"position {position} was rated concurrently") from None

    def checkpoint(self) -> tuple[int, int] | None:
        """Copy SQLite's write-ahead log into the database file (a PASSIVE checkpoint: it waits for
        no writer and no writer waits for it); returns (pages in the log, pages copied), None on
        other databases. The server runs it every second, off the request path."""
        if self.engine.dialect.name != "sqlite":
            return None
        raw = self.engine.raw_connection()
        try:
            cur = raw.cursor()
            row = cur.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            cur.close()
        finally:
            raw.close()
        return int(row[1]), int(row[2])

    # -- reading back ---------------------------------------------------------------------------
    def progress(self) -> list[Progress]:
        """Every annotator's progress, by name."""
        with self._read() as c:
            ann = c.execute(select(annotators_t).order_by(annotators_t.c.name)).all()
            agg = {r.annotator: r for r in c.execute(
                select(ratings_t.c.annotator, func.count().label("n"), func.min(ratings_t.c.created_ms).label("first"),
                       func.max(ratings_t.c.submitted_ms).label("last")).group_by(ratings_t.c.annotator)).all()}
        out = []
        for a in ann:
            g = agg.get(a.id)
            out.append(Progress(a.name, a.hit, int(g.n) if g else 0, g.first if g else None, g.last if g else None))
        return out

    def ratings_by_annotator(self) -> dict[str, list[dict[str, Any]]]:
        """:meth:`ratings` grouped by annotator name (each annotator's in position order)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for r in self.ratings():
            out.setdefault(r["name"], []).append(r)
        return out

    def ratings(self) -> list[dict[str, Any]]:
        """Every stored rating (annotator name, hit, position, rid, value, screen_ms, created_ms,
        submitted_ms), ordered by annotator and position."""
        with self._read() as c:
            rows = c.execute(select(annotators_t.c.name, ratings_t.c.hit, ratings_t.c.position, ratings_t.c.rid,
                                    ratings_t.c.value, ratings_t.c.screen_ms, ratings_t.c.created_ms,
                                    ratings_t.c.submitted_ms)
                             .join(annotators_t, annotators_t.c.id == ratings_t.c.annotator)
                             .order_by(annotators_t.c.name, ratings_t.c.position)).all()
        return [dict(r._mapping) for r in rows]


def _texts(path: Path) -> dict[int, list[tuple[str, str, str | None]]]:
    """HIT number -> (text_i, ref_i, srctext_i or None) of i = 0..99, from a batch input CSV written
    with ``--texts`` (and ``--source``)."""
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    head = next(reader, [])
    col = {c: j for j, c in enumerate(head)}
    if "text_0" not in col or "ref_0" not in col:
        raise AnalysisInputError(f"{path}: line 1: no text_0/ref_0 columns: build the HITs with "
                                 "`mtscore human build-hits --texts` so annotators have texts to read")
    src = "srctext_0" in col
    return {int(row[col["hit"]].strip("'")): [(row[col[f"text_{i}"]], row[col[f"ref_{i}"]],
                                               row[col[f"srctext_{i}"]] if src else None) for i in range(HIT_SIZE)]
            for row in reader if row}


def open_store(url: str | Path) -> CampaignStore:
    """Open (and create the tables of) a campaign database: a file path (SQLite) or a SQLAlchemy
    URL (``sqlite:///...``, ``postgresql+psycopg://...``)."""
    s = str(url)
    if "://" not in s:
        s = f"sqlite:///{Path(s).resolve()}"
    engine = create_engine(s)
    if engine.dialect.name != "sqlite":
        metadata.create_all(engine)
        _add_columns(engine)
        return CampaignStore(engine)
    _sqlite_session(engine, "FULL")
    metadata.create_all(engine)
    _add_columns(engine)
    # the first-display stamps: not fsynced on their own (WAL with synchronous=NORMAL survives a
    # killed process; the next rating's fsync makes them durable too); one fsync per rating, not two
    stamps = create_engine(s)
    _sqlite_session(stamps, "NORMAL")
    return CampaignStore(engine, stamps)


def _add_columns(engine: Engine) -> None:
    """Give the items table of a database made before the source texts its nullable ``src``, and
    one made before document-level campaigns its nullable ``document`` and ``is_document``."""
    have = {c["name"] for c in inspect(engine).get_columns("items")}
    for name, kind in (("src", "TEXT"), ("document", "TEXT"), ("is_document", "INTEGER")):
        if name not in have:
            with engine.begin() as c:
                c.execute(sql_text(f"ALTER TABLE items ADD COLUMN {name} {kind}"))


def _sqlite_session(engine: Engine, synchronous: str) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _rec: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy's "begin" event issues BEGIN itself
        cur = dbapi_conn.cursor()
        for pragma in ("journal_mode=WAL", f"synchronous={synchronous}", "foreign_keys=ON", "busy_timeout=10000",
                       f"wal_autocheckpoint={AUTOCHECKPOINT_PAGES}"):
            cur.execute(f"PRAGMA {pragma}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:  # writers take the write lock at once; readers never wait
        conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get("mtscore_read_only") else "BEGIN IMMEDIATE")
