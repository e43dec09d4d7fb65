"""A local Direct Assessment campaign server (issue P21): the HITs of ``mtscore human build-hits``
shown to annotators one item per screen with the 0-100 slider, ratings in a database, exported
as a Mechanical Turk batch result file for ``mtscore human da-batches``.

Choices (the ``campaign`` extra; a missing one is a :class:`MissingExtraError` whose message names
the pip command, :func:`mtscore.engine.missing_extra.install_hint`):

* web framework: Starlette (encode/starlette), a small, well-kept ASGI toolkit; no template,
  JavaScript or font download; its sync endpoints run in its thread pool; served by uvicorn;
  forms parsed by python-multipart; tested with Starlette's TestClient (httpx);
* storage: SQLAlchemy Core 2.x (maintained; parameterised statements only), SQLite by default
  (WAL, synchronous=FULL: an acknowledged rating survives SIGKILL), PostgreSQL by URL (psycopg).

Modules, one job each: :mod:`.schema` (tables), :mod:`.store` (campaign, annotators, ratings in
transactions), :mod:`.security` (CSRF, admin password, rate limit), :mod:`.pages` (HTML),
:mod:`.app` (the HTTP endpoints), :mod:`.status` (the live summary and quality control of the admin
page and ``campaign-status``; closing a campaign), :mod:`.export` (the raw-batch CSV, or Appraise's document layout for a document-level campaign). Import the submodules
directly; nothing here imports Starlette or SQLAlchemy.
"""

from ...engine.missing_extra import MissingExtraError, install_hint

__all__ = ["missing_extra"]


def missing_extra() -> MissingExtraError:
    """The error for a missing ``campaign`` extra (raise it ``from None``)."""
    return MissingExtraError(f"the campaign server needs its extra: {install_hint('campaign')}")
