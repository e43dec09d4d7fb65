"""The annotators' and the admin's HTTP endpoints (a Starlette ASGI app; served by uvicorn).

* ``GET /a/{token}``: the annotator's current item (or the end-of-HIT code);
* ``POST /a/{token}/rate``: form fields ``score`` (integer 0..100), ``position``, ``csrf``,
  ``nonce``; checked in that order of kind: bad value or field -> 400, CSRF -> 403, replay with
  another value / out of order -> 409, too fast -> 429; stored in one transaction, then
  ``303`` to ``/a/{token}`` (the next item). A replay of the same form (same nonce and value)
  changes nothing and is answered as the first time.
* ``GET /admin``: progress and live quality control per annotator (:mod:`.status`), HTTP Basic
  (any user name, the admin password);
* ``POST /admin/close``: close the campaign (password, the admin CSRF token in field ``csrf`` and
  ``confirm=yes`` from the page's confirmation box);
  then every annotator POST is refused with 410 and every annotator page says the campaign is
  closed (an annotator who finished still sees their completion code).

An unknown token is always the same 404 page (links cannot be told apart or enumerated).
Screen time is measured by the server (from the item's display: the commit of the previous rating,
whose redirect shows it, or a HIT's first GET; to its stored rating), so
nothing but the score comes from the browser. The blocking database calls run in Starlette's
thread pool.
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import re
import secrets
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from . import pages
from .security import (
    RateLimiter,
    admin_csrf_token,
    check_admin_csrf,
    check_csrf,
    check_password,
    completion_code,
    csrf_token,
)
from .status import campaign_status, close_campaign
from .store import CampaignStore, Closed, Conflict, UnknownAnnotator, token_hash

__all__ = ["make_app"]

_INT = re.compile(r"[0-9]{1,3}")
_POS = re.compile(r"[0-9]{1,6}")
_NONCE = re.compile(r"[A-Za-z0-9_-]{8,64}")
_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,100}")


def _html(body: str, status: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers={**pages.HEADERS, **(headers or {})})


def _not_found() -> HTMLResponse:
    return _html(pages.error_page(404, "Not found."), 404)


def make_app(store: CampaignStore, secret: str, admin_password_hash: str, rate: float = 2.0, burst: int = 30,
             admin_rate: float = 1.0, admin_burst: int = 10, checkpoint_every: float | None = 1.0) -> Starlette:
    """The campaign app over ``store``. ``secret`` keys the CSRF tokens and completion codes;
    ``admin_password_hash`` is a :func:`.security.hash_password` string. ``rate``/``burst``: the
    token bucket of each annotator's POSTs (``admin_*``: of the admin page's password checks).
    ``checkpoint_every``: seconds between the background database checkpoints while the app runs
    (its lifespan; None: only SQLite's own, in whichever commit crosses
    :data:`.store.AUTOCHECKPOINT_PAGES`)."""
    limiter = RateLimiter(rate, burst)
    setting, trg = store.setting(), store.get_meta("trg") or ""  # fixed when the campaign was created
    admin_limiter = RateLimiter(admin_rate, admin_burst)

    known: set[str] = set()  # token hashes of annotators (links are never revoked): no read per POST

    def _annotator_hash(token: str) -> str | None:
        if not _TOKEN.fullmatch(token):
            return None
        th = token_hash(token)
        if th in known:
            return th
        try:
            store.annotator(token)
        except UnknownAnnotator:
            return None
        known.add(th)
        return th

    def show(request: Request) -> Response:
        token = request.path_params["token"]
        if not _TOKEN.fullmatch(token):
            return _not_found()
        try:  # one read: the annotator, the item and whether the campaign is closed
            item = store.next_item(token)
        except UnknownAnnotator:
            return _not_found()
        th = token_hash(token)
        if item.done:
            return _html(pages.done_page(completion_code(secret, th), item.total))
        if item.closed_ms is not None:
            return _html(pages.closed_page(), 410)
        nonce = secrets.token_urlsafe(16)
        return _html(pages.item_page(token, item, item.total, csrf_token(secret, th, item.position), nonce,
                                     setting, trg))

    async def rate_item(request: Request) -> Response:
        token = request.path_params["token"]
        th = await run_in_threadpool(_annotator_hash, token)
        if th is None:
            return _not_found()
        if not limiter.allow(th):
            return _html(pages.error_page(429, "Too many requests: wait a moment and reload.", token), 429,
                         {"Retry-After": "1"})
        async with request.form(max_files=0, max_fields=10, max_part_size=4096) as form:
            fields = {k: form.get(k) for k in ("score", "position", "csrf", "nonce")}
        score, pos, csrf, nonce = (v if isinstance(v, str) else None for v in fields.values())
        if pos is None or not _POS.fullmatch(pos):
            return _html(pages.error_page(400, "Bad form: no item position.", token), 400)
        if not check_csrf(secret, th, int(pos), csrf):
            return _html(pages.error_page(403, "This form is not valid for this item (CSRF check failed): "
                                               "reload the page.", token), 403)
        if score is None or not _INT.fullmatch(score) or int(score) > 100:
            return _html(pages.error_page(400, "The rating must be a whole number from 0 to 100.", token), 400)
        if nonce is None or not _NONCE.fullmatch(nonce):
            return _html(pages.error_page(400, "Bad form: no valid nonce.", token), 400)
        try:  # the closed check is inside the rating's transaction: nothing stored after a close
            await run_in_threadpool(store.record_rating, token, int(pos), int(score), nonce)
        except UnknownAnnotator:
            return _not_found()
        except Closed:
            return _html(pages.error_page(410, "This campaign is closed: no more ratings are accepted."), 410)
        except Conflict as e:
            return _html(pages.error_page(409, f"Not stored: {e} (another tab or a repeated form?).", token), 409)
        return RedirectResponse(f"/a/{token}", status_code=303, headers=pages.HEADERS)

    def _admin_refusal(request: Request) -> Response | None:
        """None when the request carries the admin password, else the 429/401 answer."""
        challenge = {"WWW-Authenticate": 'Basic realm="mtscore campaign", charset="UTF-8"'}
        if not admin_limiter.allow("admin"):
            return _html(pages.error_page(429, "Too many attempts: wait a moment."), 429, {"Retry-After": "1"})
        auth = request.headers.get("authorization", "")
        password = None
        if auth[:6].lower() == "basic ":
            try:
                password = base64.b64decode(auth[6:].strip(), validate=True).decode("utf-8").partition(":")[2]
            except (binascii.Error, UnicodeDecodeError):
                password = None
        if password is None or not check_password(password, admin_password_hash):
            return _html(pages.error_page(401, "Admin password required."), 401, challenge)
        return None

    def admin(request: Request) -> Response:
        refused = _admin_refusal(request)
        if refused is not None:
            return refused
        return _html(pages.admin_page(campaign_status(store), admin_csrf_token(secret)))

    async def close(request: Request) -> Response:
        refused = await run_in_threadpool(_admin_refusal, request)
        if refused is not None:
            return refused
        async with request.form(max_files=0, max_fields=5, max_part_size=4096) as form:
            csrf, confirm = form.get("csrf"), form.get("confirm")
        if not check_admin_csrf(secret, csrf if isinstance(csrf, str) else None):
            return _html(pages.error_page(403, "This form is not valid (CSRF check failed): reload the admin page."),
                         403)
        if confirm != "yes":
            return _html(pages.error_page(400, "Not closed: tick the box that confirms closing the campaign."), 400)
        await run_in_threadpool(close_campaign, store)
        return RedirectResponse("/admin", status_code=303, headers=pages.HEADERS)

    routes = [Route("/a/{token}", show, methods=["GET"]), Route("/a/{token}/rate", rate_item, methods=["POST"]),
              Route("/admin", admin, methods=["GET"]), Route("/admin/close", close, methods=["POST"])]
    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(_checkpoints(store, checkpoint_every)) if checkpoint_every else None
        try:
            yield
        finally:
            if task is not None:  # wait for a checkpoint in flight: nothing runs after the app stops
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    return Starlette(routes=routes, max_body_size=16 * 1024, lifespan=lifespan)


async def _checkpoints(store: CampaignStore, every: float) -> None:
    """Checkpoint the database every ``every`` seconds in the thread pool, so that no rating's
    commit pays for one; a failure is logged and tried again next time."""
    while True:
        await asyncio.sleep(every)
        try:
            await run_in_threadpool(store.checkpoint)
        except Exception as e:  # retried next time; the ratings are safe in the log meanwhile
            logging.getLogger("mtscore.campaign").warning("database checkpoint failed: %s", e)
