"""CDC's SQL for its workers: the tenants' mirrors, the accepted chunks the dumper stages, the
identity clusters (`cdc_identities`) and the deleted entities (`cdc_deletions`) the processor
keeps. Each function runs in the caller's session; the caller's transaction commits it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    ColumnElement,
    Select,
    String,
    cast,
    delete,
    func,
    insert,
    select,
    text,
    true,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from app.models import CdcChunk, CdcDeletion, CdcIdentity, CdcSourceKey, CdcTenant

CHUNK = 5000  # SQLite: keys per IN list
PG_CHUNK = 100_000  # PostgreSQL: keys per array
PROBE_KEYS = 2_000  # PostgreSQL: up to this many keys, an index probe each


def _postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _rows_in(session: Session, query: Select[Any], column: Any, keys: Iterable[str]) -> list[Any]:
    """The rows of `query` whose `column` is one of `keys`. On PostgreSQL the keys are one
    array: up to `PROBE_KEYS` of them each probe the index (a lateral subquery, which the
    planner cannot turn into a join); more are joined as a table. Neither form depends on the
    planner's statistics, which a fast-growing table's rarely has: an IN list of thousands was
    checked row by row (0.7 s per 5,000 keys), and without statistics a join of a few hundred
    keys hashed every row of the org's part of the table (100 ms at 100,000 rows, per accepted
    Debezium request)."""
    wanted = sorted(set(keys))
    on_postgres = _postgres(session)
    size = PG_CHUNK if on_postgres else CHUNK
    found: list[Any] = []
    for start in range(0, len(wanted), size):
        part = wanted[start : start + size]
        if not on_postgres:
            found.extend(session.execute(query.where(column.in_(part))).all())
            continue
        given = func.unnest(cast(part, ARRAY(String))).table_valued("value").render_derived()
        if len(part) > PROBE_KEYS:
            found.extend(session.execute(query.join(given, column == given.c.value)).all())
            continue
        # OFFSET 0 keeps the subquery a subquery: each key is one index probe
        probe = query.where(column == given.c.value).offset(0).lateral()
        found.extend(session.execute(select(*probe.c).select_from(given).join(probe, true())))
    return found


# tenants


def tenants(session: Session) -> Sequence[CdcTenant]:
    """Every CDC tenant, by org."""
    return session.scalars(select(CdcTenant).order_by(CdcTenant.org)).all()


def locked_tenant(session: Session, org: str) -> CdcTenant | None:
    """The org's tenant row, locked until the transaction ends (its mirrors move under it)."""
    return session.scalar(select(CdcTenant).where(CdcTenant.org == org).with_for_update())


# accepted chunks (the dumper)


def _from_chunk_holding(org: str, seq: int) -> ColumnElement[bool]:
    """The org's chunks from the one that holds sequence number `seq` on (all of them when none
    does): chunks hold disjoint ranges of sequence numbers, so a chunk before that one ends
    before `seq`. A query of what lies past a watermark bounded by this reads the chunks past
    it, one backward probe of (org, first_seq) first, not the tenant's kept history (chunks
    stay for `cdc_chunk_retention_days` once staged and applied: thousands a tenant in a
    full-size `bench.cdc` run). The pruning pass (`app/pruning`) only removes chunks that end
    at or before the processed watermark; where it removed the one holding `seq`, the probe
    finds an earlier chunk, or none, and the bound only reads more."""
    holding = (
        select(func.coalesce(func.max(CdcChunk.first_seq), 0))
        .where(CdcChunk.org == org, CdcChunk.first_seq <= seq)
        .scalar_subquery()
    )
    return CdcChunk.first_seq >= holding


def _unstaged(org: str, staged_seq: int) -> tuple[ColumnElement[bool], ...]:
    """The org's chunks not staged yet; `staged_seq` is the tenant's mirror (or an older read of
    it), and every chunk up to it is staged (`mark_staged` moves both at once)."""
    return (
        CdcChunk.org == org,
        CdcChunk.staged_at.is_(None),
        _from_chunk_holding(org, staged_seq + 1),
    )


def oldest_unstaged_at(session: Session, org: str, staged_seq: int) -> datetime | None:
    """When the org's oldest chunk not staged yet was accepted."""
    return session.scalar(select(func.min(CdcChunk.accepted_at)).where(*_unstaged(org, staged_seq)))


def any_unstaged(session: Session, org: str, staged_seq: int) -> bool:
    """Whether a chunk of the org waits for the dumper."""
    return (
        session.scalar(select(CdcChunk.id).where(*_unstaged(org, staged_seq)).limit(1)) is not None
    )


def oldest_unprocessed_at(session: Session, org: str, processed_seq: int) -> datetime | None:
    """When the org's first chunk holding an event past `processed_seq` was accepted."""
    return session.scalar(
        select(CdcChunk.accepted_at)
        .where(
            CdcChunk.org == org,
            CdcChunk.last_seq > processed_seq,
            _from_chunk_holding(org, processed_seq + 1),
        )
        .order_by(CdcChunk.first_seq)
        .limit(1)
    )


def mark_staged(session: Session, org: str, through: int, now: datetime) -> None:
    """Chunks up to `through` are in the staging table: drop their bodies, move the tenant's
    staged mirror (and the newest event time it holds) forward, never back. The newest event
    time is the mirror's or that of a chunk staged now: each earlier call moved the mirror past
    the chunks it staged, in the same transaction (reading every staged chunk's instead cost a
    scan of the tenant's whole history per dumper run)."""
    staged_now = session.scalars(
        update(CdcChunk)
        .where(CdcChunk.org == org, CdcChunk.last_seq <= through, CdcChunk.staged_at.is_(None))
        .values(staged_at=now, body=None)
        .returning(CdcChunk.max_ts)
    ).all()
    tenant = locked_tenant(session, org)
    if tenant is None or tenant.staged_seq >= through:
        return
    known = [ts for ts in (tenant.staged_max_ts, *staged_now) if ts is not None]
    tenant.staged_seq = through
    tenant.staged_max_ts = max(known, default=None)


def unstaged_chunks(
    session: Session, org: str, after: int, limit: int = 1000
) -> Sequence[tuple[int, int, int, bytes | None]]:
    """(first_seq, last_seq, count, body) of the org's unstaged chunks past `after`, in order."""
    rows = session.execute(
        select(CdcChunk.first_seq, CdcChunk.last_seq, CdcChunk.count, CdcChunk.body)
        .where(CdcChunk.org == org, CdcChunk.first_seq > after, CdcChunk.staged_at.is_(None))
        .order_by(CdcChunk.first_seq)
        .limit(limit)
    ).all()
    return [(first, last, count, body) for first, last, count, body in rows]


# identity clusters


def _clusters(session: Session, org: str, column: Any, values: Iterable[str]) -> dict[str, str]:
    query = select(CdcIdentity.entity_id, CdcIdentity.cluster_id).where(CdcIdentity.org == org)
    return {str(e): str(c) for e, c in _rows_in(session, query, column, values)}


def clusters_of(session: Session, org: str, ids: Iterable[str]) -> dict[str, str]:
    """{identity: cluster} for those of `ids` that take part in a link."""
    return _clusters(session, org, CdcIdentity.entity_id, ids)


def members(session: Session, org: str, clusters: Iterable[str]) -> dict[str, str]:
    """{identity: cluster} of every member of `clusters`."""
    return _clusters(session, org, CdcIdentity.cluster_id, clusters)


def add_identities(session: Session, org: str, cluster_of: dict[str, str]) -> None:
    """New identities, each in its cluster (`{identity: cluster}`)."""
    if cluster_of:
        session.execute(
            insert(CdcIdentity),
            [{"org": org, "entity_id": x, "cluster_id": c} for x, c in cluster_of.items()],
        )


def relabel(session: Session, org: str, merged: dict[str, str]) -> None:
    """Every member of the clusters `merged` names moves to its new label: one statement on
    PostgreSQL (a statement per cluster costs a scan each while statistics are stale)."""
    if not merged:
        return
    if _postgres(session):
        session.execute(
            text(
                "UPDATE cdc_identities SET cluster_id = m.root "
                "FROM unnest(CAST(:olds AS varchar[]), CAST(:roots AS varchar[])) AS m(old, root) "
                "WHERE cdc_identities.org = :org AND cdc_identities.cluster_id = m.old"
            ),
            {"org": org, "olds": list(merged), "roots": list(merged.values())},
        )
        return
    for old, root in merged.items():
        session.execute(
            update(CdcIdentity)
            .where(CdcIdentity.org == org, CdcIdentity.cluster_id == old)
            .values(cluster_id=root)
        )


# deleted entities (see app.models.CdcDeletion for why a row is trusted only up to the raw
# table's watermark)


@dataclass(frozen=True)
class Deleted:
    """The event that deleted an entity, and the links the entity had."""

    timestamp_us: int
    sequence: int
    related_ids: list[str]


def known_deletions(session: Session, org: str, ids: Iterable[str]) -> dict[str, Deleted]:
    """{entity: its deletion} for those of `ids` that have one."""
    query = select(
        CdcDeletion.entity_id,
        CdcDeletion.timestamp_us,
        CdcDeletion.sequence,
        CdcDeletion.related_ids,
    ).where(CdcDeletion.org == org)
    return {
        str(entity): Deleted(int(ts), int(seq), list(related or []))
        for entity, ts, seq, related in _rows_in(session, query, CdcDeletion.entity_id, ids)
    }


def record_deletions(session: Session, org: str, deleted: dict[str, Deleted]) -> None:
    """Upsert the deletions a run is about to commit."""
    rows = [
        {
            "org": org,
            "entity_id": entity,
            "timestamp_us": d.timestamp_us,
            "sequence": d.sequence,
            "related_ids": d.related_ids,
        }
        for entity, d in sorted(deleted.items())
    ]
    if not rows:
        return
    statement = (postgresql if _postgres(session) else sqlite).insert(CdcDeletion.__table__)
    upsert = statement.on_conflict_do_update(
        index_elements=["org", "entity_id"],
        set_={
            "timestamp_us": statement.excluded.timestamp_us,
            "sequence": statement.excluded.sequence,
            "related_ids": statement.excluded.related_ids,
        },
    )
    session.execute(upsert, rows)  # executemany: batched VALUES, compiled once


def forget_deletions(session: Session, org: str, ids: Iterable[str]) -> None:
    """Drop the deletions of entities a committed run re-created."""
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), CHUNK):
        session.execute(
            delete(CdcDeletion).where(
                CdcDeletion.org == org, CdcDeletion.entity_id.in_(wanted[start : start + CHUNK])
            )
        )


# Debezium source rows' newest accepted changes (app/cdc/debezium_accept.py)
SourceKeyRow = tuple[str, str, int, bool, list[str]]  # key, position, timestamp_us, deleted, recent


# a request's keys probed through the driver: through SQLAlchemy, binding the array and
# reading the rows took 2.2 ms of the API's CPU per 200 keys, here 0.6 ms (`recent` read as
# text and parsed by orjson, not by the driver's standard-library loader)
_SOURCE_KEYS_PG = """
    SELECT found.key, found.position, found.timestamp_us, found.deleted, found.recent::text
    FROM unnest(%s::varchar[]) AS given(key)
    JOIN LATERAL (
        SELECT key, position, timestamp_us, deleted, recent FROM cdc_source_keys
        WHERE org = %s AND source = %s AND table_name = %s AND key = given.key
        OFFSET 0
    ) AS found ON true
"""


def source_keys(
    session: Session, org: str, source: str, table: str, keys: Sequence[str] | None = None
) -> list[SourceKeyRow]:
    """The stored rows of one source table: those of `keys`, or all of them (None)."""
    if keys is not None and len(keys) <= PROBE_KEYS and _postgres(session):
        driver = session.connection().connection.driver_connection
        assert driver is not None
        with driver.cursor() as cursor:
            cursor.execute(_SOURCE_KEYS_PG, (sorted(set(keys)), org, source, table))
            return [
                (key, position, ts_us, deleted, orjson.loads(recent))
                for key, position, ts_us, deleted, recent in cursor.fetchall()
            ]
    query = select(
        CdcSourceKey.key,
        CdcSourceKey.position,
        CdcSourceKey.timestamp_us,
        CdcSourceKey.deleted,
        CdcSourceKey.recent,
    ).where(
        CdcSourceKey.org == org, CdcSourceKey.source == source, CdcSourceKey.table_name == table
    )
    rows = (
        session.execute(query) if keys is None else _rows_in(session, query, CdcSourceKey.key, keys)
    )
    return [tuple(r) for r in rows]


_SAVE_SOURCE_KEYS_PG = text(
    """
    INSERT INTO cdc_source_keys
        (org, source, table_name, key, position, timestamp_us, deleted, recent)
    SELECT * FROM json_to_recordset(CAST(:rows AS json)) AS given(
        org text, source text, table_name text, key text, position text, timestamp_us bigint,
        deleted boolean, recent json
    )
    ON CONFLICT (org, source, table_name, key) DO UPDATE SET
        position = excluded.position, timestamp_us = excluded.timestamp_us,
        deleted = excluded.deleted, recent = excluded.recent
    """
)


def save_source_keys(session: Session, rows: list[dict[str, Any]]) -> None:
    """Upsert source rows' newest accepted changes. PostgreSQL: one statement over the rows as
    one JSON parameter (an executemany sent a statement per row: 6 ms per 200; eight array
    parameters cost the API 12 % of a Debezium request's CPU in the driver's array encoding)."""
    if not rows:
        return
    if _postgres(session):
        session.execute(_SAVE_SOURCE_KEYS_PG, {"rows": orjson.dumps(rows).decode()})
        return
    statement = sqlite.insert(CdcSourceKey)
    upsert = statement.on_conflict_do_update(
        index_elements=["org", "source", "table_name", "key"],
        set_={
            column: statement.excluded[column]
            for column in ("position", "timestamp_us", "deleted", "recent")
        },
    )
    session.execute(upsert, rows)  # executemany: batched VALUES, compiled once
