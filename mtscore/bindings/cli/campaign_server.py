"""``mtscore human serve``, ``mtscore human campaign-status`` and ``mtscore human campaign-export``
(registered by :mod:`.human`; the
server itself is :mod:`mtscore.bindings.campaign_server`, imported when a command runs).

Examples::

    mtscore human build-hits --system A=a.txt --system B=b.txt --reference ref.txt --src en --trg de \\
        --texts -o hits.csv
    mtscore human serve campaign/ --hits hits.csv --annotators 20        # links printed, Ctrl-C stops
    mtscore human campaign-status campaign/                              # the admin page's summary
    mtscore human campaign-export campaign/ -o Batch_1_batch_results.csv
    mtscore human da-batches Batch_1_batch_results.csv ...

Document-level DA (each system's document in order, then the whole document)::

    mtscore human build-hits --system A=a.txt --system B=b.txt --reference ref.txt --docs docs.txt \
        --src en --trg de -o hits.jsonl
    mtscore human serve doc-campaign/ --hits hits.jsonl --annotators 20
    mtscore human campaign-export doc-campaign/ -o export.csv          # Appraise's document layout
    mtscore human da-batches export.csv --input-format appraise        # + whole-document scores

The campaign folder holds ``campaign.db`` (SQLite; ``--db URL`` for another database),
``links.txt`` (every annotator's link: the database keeps only hashes of the tokens) and
``admin-password.txt`` (both readable by the owner only).
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from pathlib import Path

from ...analysis.errors import AnalysisInputError
from .analysis_output import counted
from .analysis_output import emit as _emit
from .parser import int_at_least, nonnegative_int, positive_float, positive_int

__all__ = ["COMMANDS", "add_parsers", "run"]

COMMANDS = ("serve", "campaign-status", "campaign-export")
_port = int_at_least(1)


def add_parsers(hsub) -> None:
    """Add ``serve``, ``campaign-status`` and ``campaign-export`` to the ``mtscore human`` subparsers ``hsub``."""
    s = hsub.add_parser("serve", help="serve a DA campaign to annotators: one item per screen, 0-100 slider, "
                                      "ratings in a database",
                        description="Run a local web server that shows each annotator the 100 items of their HIT "
                                    "(from build-hits --texts) one by one with a 0-100 slider and stores every "
                                    "rating in its own transaction. The first run creates the campaign in "
                                    "CAMPAIGN_DIR and prints the annotators' links; later runs resume it. Needs "
                                    'the campaign extra (an error names its pip command).')
    s.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder (created on the first run)")
    s.add_argument("--hits", help="the batch input CSV of build-hits --texts, or the document HIT file of "
                                  "build-hits --docs (document-level DA) (needed on the first run)")
    s.add_argument("--db", help="database URL (default: SQLite file CAMPAIGN_DIR/campaign.db; "
                                "postgresql+psycopg://... for PostgreSQL)")
    s.add_argument("--setting", choices=("ref", "src", "fluency"), default=None,
                   help="what the item screen shows beside the text, chosen on the first run: ref (the "
                        "reference, monolingual adequacy; default), src (the source, bilingual adequacy; "
                        "needs build-hits --source) or fluency (the text alone)")
    s.add_argument("--annotators", type=nonnegative_int, default=3,
                   help="annotators the campaign has (more are added when it has fewer; default 3)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=_port, default=8000, help="port (default 8000)")
    s.add_argument("--rate", type=positive_float, default=2.0,
                   help="ratings per second each annotator may post, after a burst of 30 (default 2)")
    t = hsub.add_parser("campaign-status", help="a served campaign's progress and live quality control per "
                                                "annotator (the admin page's summary)",
                        description="Print what the admin page of `mtscore human serve` shows: per annotator the "
                                    "items rated, the one-sided paired t-test that degraded (BAD_REF) items score "
                                    "lower than their originals (pass at p <= 0.05, shown from 2 rated pairs), the "
                                    "mean absolute difference of repeat pairs and the median seconds per item; and "
                                    "whether the campaign is closed. Reads the database only.")
    t.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder")
    t.add_argument("--db", help="database URL (default: SQLite file CAMPAIGN_DIR/campaign.db)")
    t.add_argument("--format", choices=("text", "json"), default="text", help="text table (default) or JSON")
    t.add_argument("--output", "-o", help="write the summary to this file instead of stdout")
    e = hsub.add_parser("campaign-export", help="a served campaign's ratings as a Mechanical Turk batch result "
                                                "CSV (for da-batches)",
                        description="Write every annotator who rated every item of their HIT as one assignment "
                                    "of a Mechanical Turk batch result file, the layout da-batches reads (a "
                                    "document-level campaign: every rating of each annotator who finished their "
                                    "HIT in Appraise's document layout, for da-batches --input-format appraise); "
                                    "annotators still rating are left out and counted on stderr.")
    e.add_argument("campaign_dir", metavar="CAMPAIGN_DIR", help="the campaign folder")
    e.add_argument("--db", help="database URL (default: SQLite file CAMPAIGN_DIR/campaign.db)")
    e.add_argument("--batch-id", type=positive_int, help="BatchId written into the file (default 1; --format mturk "
                                                         "only: Appraise's layout has no such column)")
    e.add_argument("--format", choices=("auto", "mturk", "appraise"), default="auto",
                   help="mturk: a Mechanical Turk batch result file (100-item HITs); appraise: Appraise's "
                        "document-level score export, whole-document ratings included (da-batches "
                        "--input-format appraise); auto (default): appraise for a document-level campaign "
                        "(build-hits --docs), else mturk")
    e.add_argument("--output", "-o", help="the batch result CSV (default: stdout)")


def _private_write(path: Path, text: str, append: bool = False) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def _open(args: argparse.Namespace, create: bool):
    try:
        from ..campaign_server.store import open_store
    except ImportError:
        from ..campaign_server import missing_extra

        raise missing_extra() from None
    folder = Path(args.campaign_dir)
    if folder.exists() and not folder.is_dir():
        raise AnalysisInputError(f"CAMPAIGN_DIR {folder}: is a file, expected a folder")
    if not folder.is_dir():
        if not create:
            raise AnalysisInputError(f"CAMPAIGN_DIR {folder}: no such folder")
        folder.mkdir(mode=0o700, parents=True)
    if not args.db and not create and not (folder / "campaign.db").exists():
        raise AnalysisInputError(f"CAMPAIGN_DIR {folder}: no campaign.db (give --db URL, or serve the campaign first)")
    return folder, open_store(args.db or folder / "campaign.db")


def _serve(args: argparse.Namespace) -> int:
    if not args.db and not args.hits and not (Path(args.campaign_dir) / "campaign.db").exists():
        raise AnalysisInputError(f"CAMPAIGN_DIR {args.campaign_dir}: a new campaign needs --hits "
                                 "(the CSV of build-hits --texts)")
    folder, store = _open(args, create=True)
    try:
        import uvicorn

        from ..campaign_server.app import make_app
        from ..campaign_server.security import hash_password, new_secret
    except ImportError:
        from ..campaign_server import missing_extra

        raise missing_extra() from None
    base = f"http://{args.host}:{args.port}"
    if store.n_hits() == 0:
        if not args.hits:
            raise AnalysisInputError(f"CAMPAIGN_DIR {folder}: a new campaign needs --hits (the CSV of build-hits --texts)")
        n = store.load_campaign(args.hits, args.setting or "ref")
        store.set_meta("secret", new_secret())
        password = secrets.token_urlsafe(16)
        store.set_meta("admin_password_hash", hash_password(password))
        _private_write(folder / "admin-password.txt", password + "\n")
        sizes = sorted({store.hit_size(h) for h in range(n)})
        span = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
        print(f"mtscore: campaign created in {folder}: {counted(n, 'HIT')} of {span} items, setting {store.setting()}",
              file=sys.stderr)
    else:
        if args.setting and args.setting != store.setting():
            raise AnalysisInputError(f"--setting {args.setting}: the campaign in {folder} was created with "
                                     f"setting {store.setting()}; a campaign keeps its setting")
        if args.hits:
            print(f"mtscore: {folder} already holds a campaign; --hits {args.hits} is not read", file=sys.stderr)
    have = len(store.progress())
    new = store.add_annotators(args.annotators - have) if args.annotators > have else []
    if new:
        lines = "".join(f"{name}\t{base}/a/{token}\n" for name, token in new)
        _private_write(folder / "links.txt", lines, append=True)
        sys.stdout.write(lines)
    print(f"mtscore: {have + len(new)} annotators; links in {folder / 'links.txt'}; admin page {base}/admin "
          f"(password in {folder / 'admin-password.txt'})", file=sys.stderr)
    secret, pw_hash = store.get_meta("secret"), store.get_meta("admin_password_hash")
    if not secret or not pw_hash:
        raise AnalysisInputError(f"CAMPAIGN_DIR {folder}: the campaign database has no server secret / admin password")
    sys.stdout.flush()
    uvicorn.run(make_app(store, secret, pw_hash, rate=args.rate), host=args.host, port=args.port, log_level="warning")
    return 0


def _export(args: argparse.Namespace) -> int:
    _, store = _open(args, create=False)
    from ..campaign_server.export import export_appraise, export_csv

    fmt = args.format
    if fmt == "auto":
        fmt = "appraise" if any(it.is_document for it in store.all_items()) else "mturk"
    if fmt == "appraise":
        if args.batch_id is not None:
            raise AnalysisInputError(f"--batch-id: not used by the Appraise document layout (--format {args.format}"
                                     f"{': a document-level campaign' if args.format == 'auto' else ''}); leave it out")
        text, n, incomplete = export_appraise(store)
        what = "annotator(s) with a complete HIT"
    else:
        text, n, incomplete = export_csv(store, batch_id=args.batch_id or 1)
        what = "complete assignment(s)"
    _emit(text, args.output)
    print(f"mtscore: {n} {what} written; {incomplete} annotator(s) still rating left out", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    _, store = _open(args, create=False)
    from ..campaign_server.status import campaign_status, status_json, status_text

    st = campaign_status(store)
    _emit(json.dumps(status_json(st), indent=2) + "\n" if args.format == "json" else status_text(st), args.output)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``args.cmd`` (one of :data:`COMMANDS`); bad input raises :class:`AnalysisInputError`."""
    return {"serve": _serve, "campaign-status": _status}.get(args.cmd, _export)(args)
