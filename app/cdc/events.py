"""A request's change events: parsed, validated line by line, as one Arrow table.

The body is JSON lines (one event per line) or one JSON array of events. Every line is checked
before anything is accepted; the errors name the line (1-based; the array's element number for
an array) and the field. Timestamps are ISO 8601 (UTC when no offset is given) or epoch
milliseconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from app.cdc.documents import DELETE, OPS, from_json, to_json
from app.errors import InvalidInput
from app.lake.cdc import EVENT_ARROW, bucket_of

MAX_ID_CHARS = 255
MAX_ERRORS = 50


@dataclass
class Parsed:
    """The valid events of a request, in request order, sequence numbers not yet given."""

    op: list[str]
    entity_id: list[str]
    record_type: list[str]
    timestamp: list[datetime]
    related_ids: list[list[str] | None]
    source: list[str | None]
    payload: list[str | None]

    def __len__(self) -> int:
        return len(self.op)

    def table(self, tenant: str, first_seq: int, accepted_at: datetime) -> pa.Table:
        n = len(self)
        bucket = bucket_of(accepted_at)
        return pa.Table.from_arrays(
            [
                pa.array([tenant] * n, pa.string()),
                pa.array([bucket] * n, EVENT_ARROW.field("bucket").type),
                pa.array(range(first_seq, first_seq + n), pa.int64()),
                pa.array(self.op, pa.string()),
                pa.array(self.entity_id, pa.string()),
                pa.array(self.record_type, pa.string()),
                pa.array(self.timestamp, EVENT_ARROW.field("timestamp").type),
                pa.array(self.related_ids, EVENT_ARROW.field("related_ids").type),
                pa.array(self.source, pa.string()),
                pa.array(self.payload, pa.string()),
                pa.array([accepted_at] * n, EVENT_ARROW.field("accepted_at").type),
            ],
            schema=EVENT_ARROW,
        )


class _Errors:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, line: int, field: str, message: str) -> None:
        if len(self.items) < MAX_ERRORS:
            where = f"line {line}: {field}" if field else f"line {line}"
            self.items.append({"location": where, "line": line, "field": field, "message": message})


def _not_json(name: str) -> Any:
    """NaN and Infinity: Python's parser takes them, JSON (and every other engine) does not."""
    raise json.JSONDecodeError(f"{name} is not a JSON value", name, 0)


def _documents(body: bytes, errors: _Errors) -> list[tuple[int, Any]]:
    text = body.decode("utf-8", errors="replace")
    if text.lstrip().startswith("["):
        try:
            items = from_json(text, parse_constant=_not_json)
        except json.JSONDecodeError as exc:
            errors.add(exc.lineno, "", f"not valid JSON: {exc.msg}")
            return []
        return list(enumerate(items, start=1))
    out: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((number, from_json(line, parse_constant=_not_json)))
        except json.JSONDecodeError as exc:
            errors.add(number, "", f"not valid JSON: {exc.msg}")
    return out


def utf8(text: str) -> bool:
    """Whether `text` encodes as UTF-8 (no lone surrogates, which JSON's escapes allow)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _id(value: Any) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS:
        return value
    return None


def _time(value: Any) -> datetime | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def parse(body: bytes, *, oldest: datetime, retention_days: float) -> Parsed:
    """The request's events; InvalidInput (with `errors`) when any line is bad, nothing kept.

    `oldest`: events with an older timestamp fall outside the staging retention window."""
    errors = _Errors()
    parsed = Parsed([], [], [], [], [], [], [])
    documents = _documents(body, errors)
    if not documents and not errors.items:
        raise InvalidInput("the request holds no events", errors=[])
    for line, doc in documents:
        if not isinstance(doc, dict):
            errors.add(line, "", "an event is a JSON object")
            continue
        op = doc.get("op")
        if op not in OPS:
            errors.add(line, "op", f"must be one of {', '.join(OPS)}, not {op!r}")
        entity = _id(doc.get("entity_id"))
        if entity is None:
            errors.add(line, "entity_id", f"a non-empty string of at most {MAX_ID_CHARS} chars")
        record_type = _id(doc.get("record_type"))
        if record_type is None:
            errors.add(line, "record_type", "a non-empty string of at most 255 chars")
        moment = _time(doc.get("timestamp"))
        if moment is None:
            errors.add(line, "timestamp", "an ISO 8601 time or epoch milliseconds")
        elif moment < oldest:
            errors.add(
                line,
                "timestamp",
                f"{moment.isoformat()} is older than the staging retention window "
                f"({retention_days:g} days, so nothing before {oldest.isoformat()})",
            )
        related = doc.get("related_ids")
        if related is not None and not (
            isinstance(related, list) and all(_id(r) is not None for r in related)
        ):
            errors.add(line, "related_ids", "a list of identity strings")
            related = None
        source = doc.get("source")
        if source is not None and not isinstance(source, str):
            errors.add(line, "source", "a string")
        payload = doc.get("payload")
        if op in OPS and op != DELETE and not isinstance(payload, dict):  # else: op's error
            errors.add(line, "payload", f"a JSON object (the document or the patch) for {op}")
        unknown = set(doc) - {
            "op",
            "entity_id",
            "record_type",
            "timestamp",
            "related_ids",
            "source",
            "payload",
        }
        if unknown:
            errors.add(line, sorted(unknown)[0], "not a field of an event")
        text = to_json(payload) if op != DELETE and isinstance(payload, dict) else None
        if text is not None and not utf8(text):
            errors.add(line, "payload", "holds a lone UTF-16 surrogate (\\ud800-\\udfff escape)")
        if errors.items:
            continue  # keep checking lines, stop building
        assert entity is not None
        assert record_type is not None
        assert moment is not None
        assert isinstance(op, str)
        parsed.op.append(op)
        parsed.entity_id.append(entity)
        parsed.record_type.append(record_type)
        parsed.timestamp.append(moment)
        parsed.related_ids.append(sorted(set(related)) if related else None)
        parsed.source.append(source)
        parsed.payload.append(text)
    if errors.items:
        errors.items.sort(key=lambda e: e["line"])
        first = errors.items[0]
        where = f"line {first['line']}" + (f", field {first['field']}" if first["field"] else "")
        raise InvalidInput(
            f"{len(errors.items)} bad event(s), nothing accepted; first at {where}: "
            f"{first['message']}",
            errors=errors.items,
        )
    return parsed


def window_start(now: datetime, retention_days: float) -> datetime:
    return now - timedelta(days=retention_days)
