"""What Debezium Server's HTTP sink posts, as a typed list of normalized changes.

The sink posts one change event value per request, or a JSON array of values in batch mode, as
`application/json` (`debezium.format.value=json`) or `application/cloudevents+json`
(`cloudevents`, structured mode). A value is `{"schema": ..., "payload": {...}}`, or the payload
alone when the converter's schemas are disabled; a CloudEvent carries it in `data`: either the
whole value, or (Debezium's own CloudEvents converter) only `before`/`after` with the operation
and the `source` block as `iodebezium*` extension attributes (64-bit numbers as strings).

Every element is checked before anything is returned; the errors name the element (1-based, as
`app.cdc.events` numbers an array's elements; a body that is one value is element 1, and 0 is
the body as a whole, e.g. when it is not JSON) and the field as a path inside the element
(`payload.source.lsn`, `data.after.id`, `iodebeziumlsn`). `null` values (Kafka tombstones, a
`null` element or a `null` payload or CloudEvent `data`) and `m` (logical decoding message)
events are skipped and counted, and so are values that change no row: schema changes,
transaction boundaries and heartbeats (`control`).

Unwrapping an element (a value or a CloudEvent): `app/cdc/debezium_envelopes.py`; positions and
entity keys: `app/cdc/debezium_source.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from app.cdc.debezium_envelopes import unwrap
from app.cdc.debezium_source import (
    DEFAULT_KEY,
    MONGODB,
    MONGODB_KEY,
    FieldError,
    Position,
    connector_of,
    entity_key,
    position,
    shown,
    snapshot_flag,
    table_name,
    ts_ms_of,
)
from app.cdc.documents import DELETE, PUT, from_json, to_json
from app.cdc.events import utf8
from app.errors import InvalidInput

TRUNCATE = "TRUNCATE"
ChangeOp = Literal["PUT", "DELETE", "TRUNCATE"]
OPS: dict[str, ChangeOp] = {"c": "PUT", "r": "PUT", "u": "PUT", "d": "DELETE", "t": "TRUNCATE"}
MESSAGE = "m"
assert {PUT, DELETE} < set(OPS.values())

JSON_TYPES = ("application/json",)
CLOUDEVENTS_TYPES = ("application/cloudevents+json", "application/cloudevents-batch+json")
MAX_ERRORS = 50

_T = TypeVar("_T")


@dataclass(frozen=True)
class Change:
    """One row change, normalized: `document` is the row after a PUT (None otherwise); `key` is
    "" for a TRUNCATE, which concerns the whole table."""

    index: int  # the element's number in the request, 1-based
    op: ChangeOp
    connector: str
    source_name: str  # the connector's logical server name (topic.prefix), source.name
    table: str
    key: str
    position: Position
    ts_ms: int  # when the change was made in the database (source.ts_ms)
    document: dict[str, Any] | None
    snapshot: bool
    # the document's compact JSON text, made once (when it was checked for lone surrogates)
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class DebeziumChanges:
    """A request's changes in request order, and what it held that changes no row."""

    changes: tuple[Change, ...]
    tombstones: int  # null values
    messages: int  # `m` events
    control: int  # schema changes, transaction boundaries, heartbeats


def dedupe_key(change: Change) -> tuple[str, str, str, Position]:
    """What identifies a change across redeliveries: the sink gives every attempt a new message
    id, but a redelivered change keeps its source, table, key and log position."""
    return (change.source_name, change.table, change.key, change.position)


def parse(
    body: bytes,
    *,
    content_type: str | None = None,
    keys: Mapping[str, Sequence[str]] | None = None,
) -> DebeziumChanges:
    """The changes a request of the sink holds; InvalidInput (with `errors`) when any element is
    bad, nothing returned then.

    `content_type`: the request's header (None: `application/json`). `keys`: the key columns of
    a table, by `table_name`."""
    cloudevents = _cloudevents(content_type)
    keys = _key_lists(keys or {})
    errors = _Errors()
    changes: list[Change] = []
    tombstones = messages = control = 0
    for index, value in _values(body, errors):
        try:
            found = unwrap(value, cloudevents)
        except FieldError as exc:
            errors.add(index, exc.field, exc.message)
            continue
        if found is None:
            tombstones += 1
            continue
        op = found.payload.get("op")
        if op == MESSAGE:
            messages += 1
            continue
        if op is None and _control(found.payload):
            control += 1
            continue
        problems: list[FieldError] = []
        change = _change(index, found.payload, keys, problems)
        for problem in problems:
            errors.add(index, found.where(problem.field), problem.message)
        if change is not None and not problems:
            changes.append(change)
    if errors.items:
        errors.items.sort(key=lambda e: e["element"])
        first = errors.items[0]
        where = "the body" if first["element"] == 0 else f"element {first['element']}"
        if first["field"]:
            where += f", field {first['field']}"
        raise InvalidInput(
            f"{len(errors.items)} bad change event value(s), nothing accepted; first at {where}: "
            f"{first['message']}",
            errors=errors.items,
        )
    return DebeziumChanges(tuple(changes), tombstones, messages, control)


class _Errors:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, element: int, field: str, message: str) -> None:
        if len(self.items) < MAX_ERRORS:
            where = "body" if element == 0 else f"element {element}"
            self.items.append(
                {
                    "location": f"{where}: {field}" if field else where,
                    "element": element,
                    "field": field,
                    "message": message,
                }
            )


def _cloudevents(content_type: str | None) -> bool:
    media = (content_type or JSON_TYPES[0]).split(";")[0].strip().lower()
    if media in JSON_TYPES:
        return False
    if media in CLOUDEVENTS_TYPES:
        return True
    raise InvalidInput(
        f"content type {media!r} is not read: the sink posts application/json "
        "(debezium.format.value=json) or application/cloudevents+json (cloudevents); "
        "Avro is not read",
        errors=[],
    )


def _key_lists(keys: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    lists = {}
    for table, columns in keys.items():
        if isinstance(columns, str) or not columns or not all(isinstance(c, str) for c in columns):
            raise ValueError(f"keys[{table!r}]: a non-empty list of column names")
        lists[table] = tuple(columns)
    return lists


def _not_json(name: str) -> Any:
    """NaN and Infinity: Python's parser takes them, JSON does not."""
    raise json.JSONDecodeError(f"{name} is not a JSON value", name, 0)


def _values(body: bytes, errors: _Errors) -> list[tuple[int, Any]]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        errors.add(0, "", f"not UTF-8 (byte {exc.start})")
        return []
    if not text.strip():
        errors.add(0, "", "the body is empty: post a change event value or an array of them")
        return []
    try:
        document = from_json(text, parse_constant=_not_json)
    except json.JSONDecodeError as exc:
        errors.add(0, "", f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}")
        return []
    if not isinstance(document, list):
        return [(1, document)]
    if not document:
        errors.add(0, "", "an empty array holds no change events")
    return list(enumerate(document, start=1))


def _control(payload: dict[str, Any]) -> bool:
    """A value that changes no row: a schema change (`ddl`, `tableChanges`), a transaction
    boundary (`status` BEGIN or END), a heartbeat (`ts_ms` alone)."""
    if "ddl" in payload or "tableChanges" in payload:
        return True
    if payload.get("status") in ("BEGIN", "END") and "id" in payload:
        return True
    return set(payload) == {"ts_ms"}


def _attempt(problems: list[FieldError], read: Callable[[], _T]) -> _T | None:
    try:
        return read()
    except FieldError as exc:
        problems.append(exc)
        return None


def _change(
    index: int,
    payload: dict[str, Any],
    keys: Mapping[str, tuple[str, ...]],
    problems: list[FieldError],
) -> Change | None:
    """The payload's change; None when any field is bad (each one in `problems`)."""
    raw_op = payload.get("op")
    code = raw_op if isinstance(raw_op, str) else ""
    op = OPS.get(code)
    if op is None:
        codes = ", ".join([*OPS, MESSAGE])
        problems.append(FieldError("op", f"one of {codes}, not {shown(raw_op)}"))
    source = payload.get("source")
    if not isinstance(source, dict):
        problems.append(FieldError("source", "the event's source block, a JSON object"))
        return None
    connector = _attempt(problems, lambda: connector_of(source))
    name = source.get("name")
    if not isinstance(name, str) or not name:
        problems.append(FieldError("source.name", "the connector's logical name (topic.prefix)"))
    flag = _attempt(problems, lambda: snapshot_flag(source.get("snapshot")))
    snapshot = code == "r" or bool(flag)
    moment = _attempt(problems, lambda: ts_ms_of(payload, source))
    if connector is None:
        return None
    table = _attempt(problems, lambda: table_name(source))
    place = _attempt(problems, lambda: position(source, snapshot=snapshot))
    key, document, text = "", None, None
    if op is not None and op != TRUNCATE and table is not None:
        columns = keys.get(table, MONGODB_KEY if connector == MONGODB else DEFAULT_KEY)
        found = _attempt(problems, lambda: _keyed(payload, code, connector, columns))
        if found is not None:
            key, document, text = found
    if problems:
        return None
    assert op is not None
    assert table is not None
    assert place is not None
    assert moment is not None
    assert isinstance(name, str)
    return Change(
        index=index,
        op=op,
        connector=connector,
        source_name=name,
        table=table,
        key=key,
        position=place,
        ts_ms=moment,
        document=document if op == PUT else None,
        snapshot=snapshot,
        text=text if op == PUT else None,
    )


def _keyed(
    payload: dict[str, Any], raw_op: str, connector: str, columns: Sequence[str]
) -> tuple[str, dict[str, Any], str | None]:
    """(entity id, the row image it was read from, the `after` image's JSON text): `after` for
    c/r/u, `before` for d (no text then)."""
    mongodb = connector == MONGODB
    side = "before" if raw_op == "d" else "after"
    image = payload.get(side)
    if image is None and mongodb and side == "before" and payload.get("filter") is not None:
        side, image = "filter", payload["filter"]  # a delete of the legacy oplog mode
    if image is None:
        raise FieldError(side, _no_image(side, raw_op, mongodb, columns))
    if mongodb and isinstance(image, str):
        try:
            image = from_json(image, parse_constant=_not_json)
        except json.JSONDecodeError as exc:
            raise FieldError(
                side, f"MongoDB Extended JSON text that is not JSON: {exc.msg}"
            ) from None
    if not isinstance(image, dict):
        raise FieldError(side, "the row image, a JSON object")
    try:
        key = entity_key(image, columns, extended_json=mongodb)
    except FieldError as exc:
        raise FieldError(f"{side}.{exc.field}" if exc.field else side, exc.message) from None
    if side != "after":
        return key, image, None
    text = to_json(image)
    if not utf8(text):
        raise FieldError(side, "holds a lone UTF-16 surrogate (\\ud800-\\udfff escape)")
    return key, image, text


def _no_image(side: str, raw_op: str, mongodb: bool, columns: Sequence[str]) -> str:
    if mongodb and raw_op == "u":
        return (
            "a MongoDB update without the full document: set the connector's capture.mode "
            "to change_streams_update_full (or change_streams_update_full_with_pre_image)"
        )
    if mongodb and raw_op == "d":
        return (
            "a MongoDB delete without the document before it: the sink posts no record key, "
            "so set capture.mode to a *_with_pre_image mode"
        )
    return f"the row image holding the key column(s) {', '.join(columns)}, a JSON object"
