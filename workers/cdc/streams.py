"""The stream dumper: a tenant's Debezium Redis streams read with its consumer group, accepted
in bulk as `POST /v1/cdc/debezium` accepts a request, acknowledged only after that commit.

A round reads, from every stream, this consumer's own unacknowledged entries (a round that
failed), entries idle for `cdc_stream_claim_idle_seconds` with any other consumer (a worker
killed mid-round: `XAUTOCLAIM`), then new ones (`XREADGROUP >`), `cdc_stream_batch` of each at
most. They are accepted in one transaction; `XACK` follows its commit. A worker killed before
the commit leaves them pending, to be claimed; one killed between the commit and the `XACK`
leaves them pending too, and the next round finds them accepted: duplicates by (source, table,
key, position), applied once. The same consumer group maps to a Kafka consumer group: commit
the offsets after the accept's commit, and a rebalance's redelivery is a duplicate likewise.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import redis

from app.cdc import debezium_accept, service
from app.cdc import streams as cdc_streams
from app.cdc.streams import Entry
from app.config import get_settings
from app.db import session_scope
from app.errors import InvalidInput
from app.failpoints import failpoint
from app.lake.catalog import get_catalog
from app.models import CdcTenant

log = logging.getLogger(__name__)
ROUND_SECONDS = 20.0  # a pass reads rounds for this long, then leaves the rest to the next


def consumer_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class StreamRun:
    rounds: int = 0
    entries: int = 0
    accepted: int = 0
    duplicates: int = 0
    superseded: int = 0
    skipped: int = 0
    dead: int = 0
    streams: dict[str, int] = field(default_factory=dict)  # entries read per stream


def consume(org: str, streams: list[str], *, seconds: float = ROUND_SECONDS) -> StreamRun:
    """Rounds over the tenant's streams until they are drained or `seconds` have passed."""
    conn = cdc_streams.client()
    group = cdc_streams.group_name(org)
    for stream in streams:
        cdc_streams.ensure_group(conn, stream, group)
    run = StreamRun()
    deadline = time.monotonic() + seconds
    while True:
        entries = _read(conn, streams, group)
        if not entries:
            return run
        run.rounds += 1
        run.entries += len(entries)
        for item in entries:
            run.streams[item.stream] = run.streams.get(item.stream, 0) + 1
        _accept(org, conn, entries, run)
        failpoint("cdc-streams-before-ack")
        _ack(conn, group, entries)
        if time.monotonic() >= deadline:
            return run


def _read(conn: redis.Redis, streams: list[str], group: str) -> list[Entry]:
    settings = get_settings()
    count = settings.cdc_stream_batch
    idle_ms = int(settings.cdc_stream_claim_idle_seconds * 1000)
    me = consumer_name()
    out: list[Entry] = []
    for stream in streams:
        seen: set[bytes] = set()
        own = conn.xreadgroup(group, me, {stream: "0"}, count=count)  # ours, unacknowledged
        claimed = conn.xautoclaim(stream, group, me, idle_ms, "0-0", count=count)[1]
        fresh = conn.xreadgroup(group, me, {stream: ">"}, count=count)
        for entry_id, fields in [*_entries(own), *claimed, *_entries(fresh)]:
            if fields is None or entry_id in seen:  # None: deleted from the stream meanwhile
                continue
            seen.add(entry_id)
            out.append(cdc_streams.entry(stream, entry_id, fields))
    return out


def _entries(reply: Any) -> list[tuple[bytes, dict[bytes, bytes] | None]]:
    return [item for _stream, items in reply or [] for item in items]


def _accept(org: str, conn: redis.Redis, entries: list[Entry], run: StreamRun) -> None:
    """Accept the entries' values in one transaction; entries no parser accepts go to their
    stream's dead-letter stream first (then the rest is accepted)."""
    live = [e for e in entries if e.value is not None]
    run.skipped += len(entries) - len(live)
    catalog = get_catalog()
    while live:
        body = b"[" + b",".join(e.value or b"null" for e in live) + b"]"
        try:
            with session_scope() as session:
                outcome = debezium_accept.accept(catalog, session, org, body, "application/json")
                failpoint("cdc-streams-before-commit")
        except InvalidInput as exc:
            bad = _bad_elements(exc, live)
            for index, why in sorted(bad.items()):
                _bury(conn, live[index - 1], why)
            run.dead += len(bad)
            live = [e for i, e in enumerate(live, start=1) if i not in bad]
            continue
        run.accepted += outcome.accepted
        run.duplicates += outcome.duplicates
        run.superseded += outcome.superseded
        run.skipped += outcome.skipped
        return


def _bad_elements(exc: InvalidInput, live: list[Entry]) -> dict[int, str]:
    """{element: reason} of a refused body: the elements its errors name, else (the body as a
    whole was not JSON) the entries whose value is not JSON, else every entry."""
    bad: dict[int, str] = {}
    for error in exc.extra.get("errors") or []:
        element = int(error.get("element", 0))
        if 1 <= element <= len(live):
            bad.setdefault(element, f"{error.get('field') or ''}: {error.get('message')}")
    if bad:
        return bad
    for index, item in enumerate(live, start=1):
        try:
            json.loads(item.value or b"null")
        except ValueError as not_json:
            bad[index] = f"not JSON: {not_json}"
    return bad or {index: str(exc) for index in range(1, len(live) + 1)}


def _bury(conn: redis.Redis, entry: Entry, why: str) -> None:
    conn.xadd(
        cdc_streams.dead_stream(entry.stream),
        {
            "entry_id": entry.entry_id,
            "value": entry.value or b"",
            "reason": why[:2000],
            "at": json.dumps(time.time()),
        },
    )
    log.warning("stream %s: entry %s set aside: %s", entry.stream, entry.entry_id.decode(), why)


def _ack(conn: redis.Redis, group: str, entries: list[Entry]) -> None:
    by_stream: dict[str, list[bytes]] = {}
    for item in entries:
        by_stream.setdefault(item.stream, []).append(item.entry_id)
    for stream, ids in by_stream.items():
        conn.xack(stream, group, *ids)


def tenant_streams(org: str) -> list[str]:
    with session_scope() as session:
        tenant = session.get(CdcTenant, org)
        return list(service.config_of(tenant).streams) if tenant is not None else []
