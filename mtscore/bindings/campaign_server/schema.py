"""The tables of a campaign database (SQLAlchemy Core).

``meta`` (key -> value: src, trg, item of the HITs, the setting ref/src/fluency (absent: ref), the
server secret, the admin password hash),
``items`` (every HIT's 100 items in order, with the text to rate, the reference and the source
sentence, NULL when the HITs have none; the document id and 1 for the whole-document item of a
document-level campaign, NULL otherwise; a database made before these columns is given them on opening;
a HIT holds 100 items, or any number in a document-level campaign),
``annotators`` (a name ``A0001``..., the sha256 of their link token, never the token; their
HIT; the next position to rate; when the current item was first shown: the first item of a HIT
at its first GET, every later one at the commit of the rating before it, whose redirect shows it)
and ``ratings``
(annotator, HIT, position, item id, value 0-100, screen time ms, created = first shown and
submitted times in epoch ms, the form's nonce; ``UNIQUE(annotator, hit, position)``).
"""
from __future__ import annotations

from sqlalchemy import BigInteger, Column, ForeignKey, Integer, MetaData, String, Table, Text, UniqueConstraint

__all__ = ["annotators_t", "items_t", "meta_t", "metadata", "ratings_t"]

metadata = MetaData()
meta_t = Table("meta", metadata, Column("key", String(64), primary_key=True), Column("value", Text, nullable=False))
items_t = Table("items", metadata, Column("hit", Integer, primary_key=True), Column("position", Integer, primary_key=True),
                Column("rid", Integer, nullable=False, unique=True), Column("system", Text, nullable=False),
                Column("segment", Integer, nullable=False), Column("type", String(16), nullable=False),
                Column("text", Text, nullable=False), Column("ref", Text, nullable=False),
                Column("src", Text, nullable=True), Column("document", Text, nullable=True),
                Column("is_document", Integer, nullable=True))
annotators_t = Table("annotators", metadata, Column("id", Integer, primary_key=True, autoincrement=True),
                     Column("name", String(32), nullable=False, unique=True),
                     Column("token_hash", String(64), nullable=False, unique=True),
                     Column("hit", Integer, nullable=False), Column("next_position", Integer, nullable=False),
                     Column("shown_ms", BigInteger), Column("created_ms", BigInteger, nullable=False))
ratings_t = Table("ratings", metadata, Column("id", Integer, primary_key=True, autoincrement=True),
                  Column("annotator", Integer, ForeignKey("annotators.id"), nullable=False), Column("hit", Integer, nullable=False),
                  Column("position", Integer, nullable=False), Column("rid", Integer, nullable=False),
                  Column("value", Integer, nullable=False), Column("screen_ms", Integer, nullable=False),
                  Column("nonce", String(64), nullable=False), Column("created_ms", BigInteger, nullable=False),
                  Column("submitted_ms", BigInteger, nullable=False),
                  UniqueConstraint("annotator", "hit", "position", name="one_rating_per_position"))
