"""Debezium's change events accepted exactly once, each row's changes in source position order.

Every change of a source row is a whole row image (or its deletion), so a row's state is its
newest change by log position. Under the tenant's lock (accepts of a tenant go one at a time),
each change is compared with the newest one accepted for its row (`cdc_source_keys`):
- at its position or one of the row's last `RECENT` accepted ones: a redelivery (the HTTP sink
  retries with a fresh message id, Kafka Connect redelivers after a rebalance): a duplicate,
  not applied again;
- below it otherwise: an older change that arrived late (or a redelivery of one older than
  that): superseded, since the newer state already stands; not applied;
- above it: accepted. Its event time (`source.ts_ms`) is raised to the row's previous one when
  the clock disagrees with the log (a snapshot read made after a change it is older than), so
  the processor, which orders an entity's events by (time, sequence number), applies the
  accepted changes of a row in position order.

An update whose image holds Debezium's placeholder for a column it could not read (PostgreSQL's
unchanged TOASTed values) becomes a PATCH of the other columns, so the row keeps its value.

A truncate at position P deletes every row of its table whose newest change is below P (each a
DELETE event, in order), and any change of that table below P that comes later is superseded.
The rows that are new are appended as one chunk, as `POST /v1/cdc/events` does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any

from pyiceberg.catalog import Catalog
from sqlalchemy.orm import Session

from app import clock
from app.cdc import debezium, repository, service
from app.cdc.documents import DELETE, PATCH, PUT, to_json
from app.cdc.events import Parsed
from app.cdc.schemas import DebeziumAccepted, Source

# a SQL Server LSN is 80 bits: 25 decimal digits; fixed width makes text order the tuple's
POSITION_DIGITS = 25
TRUNCATED = ""  # the key of a table's truncate row
RECENT = 8  # positions remembered per row (a sink's retried batch holds a row's few changes)
# what Debezium puts in a column it could not read (`unavailable.value.placeholder`'s default)
UNAVAILABLE = "__debezium_unavailable_value"

RowKey = tuple[str, str, str]  # (source, table, key)


def encode(position: debezium.Position) -> str:
    """A position as text that sorts as the tuple does (positions of one source have one
    length)."""
    return _template(len(position)) % position


@cache
def _template(parts: int) -> str:
    """The `%` template of a position of `parts` numbers (a third of a generator's time)."""
    return ".".join([f"%0{POSITION_DIGITS}d"] * parts)


@dataclass
class Held:
    """A row's newest accepted change, and digests of its last few accepted positions."""

    position: str
    timestamp_us: int
    deleted: bool
    recent: list[str] = field(default_factory=list)

    def moved(self, position: str, timestamp_us: int, deleted: bool) -> Held:
        recent = [*self.recent, digest(position)][-RECENT:]
        return Held(position, timestamp_us, deleted, recent)

    def seen(self, position: str) -> bool:
        """`position` was accepted: it is the newest one or a recent one (every one of them is
        below the newest, so a position above it needs no digest)."""
        if position >= self.position:
            return position == self.position
        return digest(position) in self.recent


def digest(position: str) -> str:
    """48 bits of the position: one row's few recent positions never collide in practice."""
    return hashlib.blake2b(position.encode(), digest_size=6).hexdigest()


@dataclass
class _Outcome:
    events: Parsed = field(default_factory=lambda: Parsed([], [], [], [], [], [], []))
    duplicates: int = 0
    superseded: int = 0
    truncates: int = 0
    truncated: int = 0
    changed: dict[RowKey, Held] = field(default_factory=dict)

    def emit(
        self, op: str, entity: str, record_type: str, ts_us: int, source: str, text: str | None
    ) -> None:
        events = self.events
        events.op.append(op)
        events.entity_id.append(entity)
        events.record_type.append(record_type)
        events.timestamp.append(datetime.fromtimestamp(ts_us / 1e6, UTC))
        events.related_ids.append(None)
        events.source.append(source)
        events.payload.append(text)


def accept(
    catalog: Catalog, session: Session, org: str, body: bytes, content_type: str | None
) -> DebeziumAccepted:
    """Keep the request's new changes (in `session`; durable when it commits). InvalidInput
    names every bad element; nothing is kept then."""
    tenant = service.tenant_of(catalog, session, org)
    config = service.config_of(tenant)
    sources = {s.table: s for s in config.sources}
    parsed = debezium.parse(
        body, content_type=content_type, keys={t: s.key for t, s in sources.items()}
    )
    row = service.locked(session, org)
    held = _held(session, org, parsed.changes)
    outcome = _Outcome()
    for change in parsed.changes:
        _apply(session, org, change, sources.get(change.table), held, outcome)
    first = last = None
    if outcome.events.op:
        first, last = service.append_chunk(session, row, config, outcome.events, clock.now())
    _save(session, org, outcome.changed)
    return DebeziumAccepted(
        accepted=len(outcome.events),
        duplicates=outcome.duplicates,
        superseded=outcome.superseded,
        truncates=outcome.truncates,
        deleted_by_truncate=outcome.truncated,
        skipped=parsed.tombstones + parsed.messages + parsed.control,
        first_sequence=first,
        last_sequence=last,
    )


def _apply(
    session: Session,
    org: str,
    change: debezium.Change,
    source: Source | None,
    held: dict[RowKey, Held],
    outcome: _Outcome,
) -> None:
    place = encode(change.position)
    ts_us = change.ts_ms * 1000
    truncate = held.get((change.source_name, change.table, TRUNCATED))
    if truncate is not None and place <= truncate.position:
        if change.op == debezium.TRUNCATE and truncate.seen(place):
            outcome.duplicates += 1
        else:
            outcome.superseded += 1
        return
    record_type = source.record_type if source and source.record_type else change.table
    prefix = source.entity_prefix if source else ""
    if change.op == debezium.TRUNCATE:
        _load_table(session, org, change.source_name, change.table, held)
        for (src, table, row_key), state in sorted(held.items()):
            if (src, table) != (change.source_name, change.table) or row_key == TRUNCATED:
                continue
            if state.deleted or state.position > place:
                continue
            moment = max(ts_us, state.timestamp_us)
            outcome.emit(DELETE, prefix + row_key, record_type, moment, change.source_name, None)
            outcome.truncated += 1
            _set(held, outcome, (src, table, row_key), state.moved(place, moment, True))
        outcome.truncates += 1
        marker = truncate or Held("", ts_us, True)
        _set(
            held,
            outcome,
            (change.source_name, change.table, TRUNCATED),
            marker.moved(place, ts_us, True),
        )
        return
    key = (change.source_name, change.table, change.key)
    current = held.get(key)
    if current is not None and current.seen(place):
        outcome.duplicates += 1
        return
    if current is not None and place < current.position:
        outcome.superseded += 1
        return
    moment = ts_us if current is None else max(ts_us, current.timestamp_us)
    if change.op == DELETE:
        outcome.emit(DELETE, prefix + change.key, record_type, moment, change.source_name, None)
    else:
        assert change.document is not None
        op, text = _image(change.document, change.text)
        outcome.emit(op, prefix + change.key, record_type, moment, change.source_name, text)
    _set(
        held,
        outcome,
        key,
        (current or Held("", 0, False)).moved(place, moment, change.op == DELETE),
    )


def _image(document: dict[str, Any], text: str | None) -> tuple[str, str]:
    """(PUT, the row's JSON) for a whole row image; (PATCH, the JSON of the columns it has) when
    the connector left some out: PostgreSQL's unchanged TOASTed columns (and Oracle's LOBs) come
    as a placeholder, so the row keeps what it had in them. `text`: the document's JSON, if
    made already (a text without the placeholder has no column holding it)."""
    if text is not None and UNAVAILABLE not in text:
        return PUT, text
    kept = {k: v for k, v in document.items() if v != UNAVAILABLE}
    return (PUT, to_json(document)) if len(kept) == len(document) else (PATCH, to_json(kept))


def _set(held: dict[RowKey, Held], outcome: _Outcome, key: RowKey, state: Held) -> None:
    held[key] = state
    outcome.changed[key] = state


def _held(session: Session, org: str, changes: Iterable[debezium.Change]) -> dict[RowKey, Held]:
    """The stored newest change of every row the request names, and its tables' truncates."""
    wanted: dict[tuple[str, str], set[str]] = {}
    for change in changes:
        keys = wanted.setdefault((change.source_name, change.table), {TRUNCATED})
        if change.op != debezium.TRUNCATE:
            keys.add(change.key)
    held: dict[RowKey, Held] = {}
    for (src, table), keys in wanted.items():
        for key, position, ts_us, deleted, recent in repository.source_keys(
            session, org, src, table, sorted(keys)
        ):
            held[(src, table, key)] = Held(position, ts_us, deleted, list(recent or []))
    return held


def _load_table(session: Session, org: str, src: str, table: str, held: dict[RowKey, Held]) -> None:
    """Every stored row of the table into `held`, where the request has not changed it yet."""
    for key, position, ts_us, deleted, recent in repository.source_keys(session, org, src, table):
        held.setdefault((src, table, key), Held(position, ts_us, deleted, list(recent or [])))


def _save(session: Session, org: str, changed: dict[RowKey, Held]) -> None:
    repository.save_source_keys(
        session,
        [
            {
                "org": org,
                "source": src,
                "table_name": table,
                "key": key,
                "position": state.position,
                "timestamp_us": state.timestamp_us,
                "deleted": state.deleted,
                "recent": state.recent,
            }
            for (src, table, key), state in sorted(changed.items())
        ],
    )
