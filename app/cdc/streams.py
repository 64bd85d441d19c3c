"""Debezium Server's Redis sink, read by a consumer group per tenant: its entries, its lag.

The sink writes each change event value to a Redis Stream per table (its topic name,
`<topic.prefix>.<schema>.<table>`): in its `compact` format (the default) an entry is one field,
the record's key, whose value is the record's value; in `extended` format the fields are `key`,
`value` and the record's headers. A null value (a Kafka tombstone) is written as the sink's
`null.value` (`default`, unless configured otherwise), which is skipped here as the HTTP path
skips a `null`.

The tenant's group is `icebatch.<org>`, so two tenants reading one stream each see every entry.
An entry that no Debezium parser accepts is moved (with the reason) to `<stream>:icebatch-dead`
and acknowledged: a stream must not stop behind one bad entry.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import redis

from app.cdc.schemas import StreamLag
from app.config import get_settings

NULL_VALUE = b"default"  # Debezium's `debezium.sink.redis.null.value` default
DEAD_SUFFIX = ":icebatch-dead"


class StreamsUnavailable(RuntimeError):
    """No Redis is configured for the streams (embedded mode without ICEBATCH_CDC_STREAMS_*)."""


def group_name(org: str) -> str:
    return f"icebatch.{org}"


def dead_stream(stream: str) -> str:
    return stream + DEAD_SUFFIX


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)


def client() -> redis.Redis:
    url = get_settings().cdc_streams_redis_url
    if not url:
        raise StreamsUnavailable(
            "no Redis for Debezium streams: set ICEBATCH_CDC_STREAMS_REDIS_URL (the broker's "
            "Redis is used when the broker is Redis)"
        )
    return _client(url)


@dataclass(frozen=True)
class Entry:
    stream: str
    entry_id: bytes
    value: bytes | None  # the change event value (JSON); None: a tombstone


def entry(stream: str, entry_id: bytes, fields: dict[bytes, bytes]) -> Entry:
    """An entry in either of the sink's formats."""
    if b"value" in fields and (b"key" in fields or len(fields) > 1):
        value: bytes | None = fields[b"value"]
    elif len(fields) == 1:
        (value,) = fields.values()
    else:
        value = fields.get(b"value")
    if value is None or value == NULL_VALUE or value.strip() in (b"", b"null"):
        value = None
    return Entry(stream, entry_id, value)


def ensure_group(conn: redis.Redis, stream: str, group: str) -> None:
    """The group, reading from the stream's start (created with the stream if need be)."""
    try:
        conn.xgroup_create(stream, group, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def _age_ms(entry_id: Any, now_ms: int) -> float:
    text = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
    return max(0.0, (now_ms - int(text.split("-")[0])) / 1000)


def lags(org: str, streams: list[str]) -> list[StreamLag]:
    """Each stream's figures for the tenant's group; a stream Redis cannot answer for says why."""
    if not streams:
        return []
    try:
        conn = client()
    except StreamsUnavailable as exc:
        return [_unreadable(s, str(exc)) for s in streams]
    group = group_name(org)
    out = []
    for stream in streams:
        try:
            out.append(_lag(conn, stream, group))
        except redis.RedisError as exc:
            out.append(_unreadable(stream, f"{type(exc).__name__}: {exc}"))
    return out


def _unreadable(stream: str, why: str) -> StreamLag:
    return StreamLag(
        stream=stream,
        length=0,
        pending=0,
        undelivered=None,
        oldest_pending_age_seconds=0.0,
        oldest_undelivered_age_seconds=0.0,
        dead_letters=0,
        error=why,
    )


def _lag(conn: redis.Redis, stream: str, group: str) -> StreamLag:
    now_ms = int(time.time() * 1000)
    length = int(conn.xlen(stream))
    dead = int(conn.xlen(dead_stream(stream)))
    groups = conn.xinfo_groups(stream) if length or conn.exists(stream) else []
    info = next((g for g in groups if _text(g.get("name")) == group), None)
    if info is None:  # not read yet: everything is undelivered
        first = conn.xrange(stream, count=1)
        oldest = _age_ms(first[0][0], now_ms) if first else 0.0
        return StreamLag(
            stream=stream,
            length=length,
            pending=0,
            undelivered=length,
            oldest_pending_age_seconds=0.0,
            oldest_undelivered_age_seconds=oldest,
            dead_letters=dead,
        )
    pending = int(info.get("pending") or 0)
    oldest_pending = 0.0
    if pending:
        summary = conn.xpending(stream, group)
        if summary.get("min"):
            oldest_pending = _age_ms(summary["min"], now_ms)
    lag = info.get("lag")
    last = _text(info.get("last-delivered-id")) or "0-0"
    nxt = conn.xrange(stream, min="(" + last, count=1)
    return StreamLag(
        stream=stream,
        length=length,
        pending=pending,
        undelivered=int(lag) if lag is not None else None,
        oldest_pending_age_seconds=oldest_pending,
        oldest_undelivered_age_seconds=_age_ms(nxt[0][0], now_ms) if nxt else 0.0,
        dead_letters=dead,
    )


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)
