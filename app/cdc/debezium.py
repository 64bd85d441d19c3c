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

Positions (`Change.position`, a tuple of ints compared within one source) per connector:

- PostgreSQL: `(last committed LSN, LSN, phase)` from `source.sequence` (JSON text of
  `["<last committed lsn>", "<lsn>"]`) and `source.lsn` (which incremental snapshot reads omit;
  the sequence's second entry then stands in). Transactions stream in commit order, so the last
  committed LSN never goes down, and within one transaction the LSN rises; the LSN alone is not
  monotonic across interleaved transactions. A `null` or absent entry counts as 0 (LSN 0 is
  PostgreSQL's invalid position), so events of versions without `sequence` sort first.
- MySQL and MariaDB: `(binlog file number, pos, row, phase)`: `mysql-bin.000010` is file 10, so a
  rollover from `.000009` sorts after it whatever the names' lengths.
- SQL Server: `(commit_lsn, change_lsn, event_serial_no, phase)`, each LSN
  (`"00000025:00000d98:0002"`, 10 bytes) as one integer; a snapshot read has no `change_lsn`
  (0, as Debezium's own comparison puts a missing LSN first) and `event_serial_no` may be absent
  (0).
- MongoDB: `(source.ts_ms // 1000, ord, phase)`: `ord` is the increment of the oplog/cluster
  time within its second. `ts_ms` is that second times 1000, or (MongoDB 6.0 and later) the
  operation's wall time in milliseconds, whose second is the one `ord` counts within.
- Any other connector is refused: with no log position to compare, a timestamp alone would merge
  two changes of one row made in the same millisecond (`dedupe_key` would drop one of them).

`phase` is 0 for a snapshot read (`op = r`, or `source.snapshot` anything but false) and 1 for a
streamed change. It comes last, so it only breaks ties: a read carries the log position its
snapshot began at (or, for an incremental snapshot, the stream's position when the row was
read), a streamed change at a later position sorts after it whatever the phase, and at an equal
position the read goes first.

Entity keys: the key columns of the table (`keys`, by `table_name`; `("id",)` by default and
`("_id",)` for MongoDB) are read from `after` for c/r/u and from `before` for d. One column gives
its plain value (a string as it is, an integer in decimal, anything else as compact JSON with
sorted keys); several give the compact JSON array of their values (`["acme",42]`), which no
other key list can produce. Within one table a column has one type, so neither form is
ambiguous. MongoDB documents are Extended JSON (a string in most versions, an object in some):
`{"$numberLong": "1004"}` and `{"$numberInt": "7"}` in a key count as the number and
`{"$oid": "..."}` as its hex string, so the key does not depend on `json.serialization.mode`
(an ObjectId and a string `_id` of the same 24 hex digits in one collection would share a key).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from app.cdc.documents import DELETE, PUT, to_json
from app.cdc.events import MAX_ID_CHARS, utf8
from app.errors import InvalidInput

TRUNCATE = "TRUNCATE"
ChangeOp = Literal["PUT", "DELETE", "TRUNCATE"]
OPS: dict[str, ChangeOp] = {"c": "PUT", "r": "PUT", "u": "PUT", "d": "DELETE", "t": "TRUNCATE"}
MESSAGE = "m"
assert {PUT, DELETE} < set(OPS.values())

POSTGRESQL, MYSQL, MARIADB, SQLSERVER, MONGODB = (
    "postgresql",
    "mysql",
    "mariadb",
    "sqlserver",
    "mongodb",
)
CONNECTORS = (POSTGRESQL, MYSQL, MARIADB, SQLSERVER, MONGODB)
DEFAULT_KEY = ("id",)
MONGODB_KEY = ("_id",)
JSON_TYPES = ("application/json",)
CLOUDEVENTS_TYPES = ("application/cloudevents+json", "application/cloudevents-batch+json")
MAX_ERRORS = 50

Position = tuple[int, ...]
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


@dataclass(frozen=True)
class DebeziumChanges:
    """A request's changes in request order, and what it held that changes no row."""

    changes: tuple[Change, ...]
    tombstones: int  # null values
    messages: int  # `m` events
    control: int  # schema changes, transaction boundaries, heartbeats


class FieldError(ValueError):
    """A field of a change event that cannot be read; `field` is its path in the payload."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def dedupe_key(change: Change) -> tuple[str, str, str, Position]:
    """What identifies a change across redeliveries: the sink gives every attempt a new message
    id, but a redelivered change keeps its source, table, key and log position."""
    return (change.source_name, change.table, change.key, change.position)


def table_name(source: Mapping[str, Any]) -> str:
    """The changed table as its connector names it, from the event's `source` block.

    PostgreSQL and SQL Server: `<schema>.<table>` (`source.schema`, `source.table`; the database
    is the connector's own). MySQL and MariaDB: `<db>.<table>` (`source.db`, `source.table`;
    they have no schema level). MongoDB: `<db>.<collection>` (`source.db`,
    `source.collection`). Raises FieldError naming the missing field."""
    connector = _connector(source)
    if connector in (POSTGRESQL, SQLSERVER):
        parts = ("schema", "table")
    elif connector == MONGODB:
        parts = ("db", "collection")
    else:
        parts = ("db", "table")
    names = []
    for part in parts:
        value = source.get(part)
        if not isinstance(value, str) or not value:
            raise FieldError(f"source.{part}", f"the {part} name, a non-empty string")
        names.append(value)
    return ".".join(names)


def position(source: Mapping[str, Any], *, snapshot: bool) -> Position:
    """The change's place in its connector's log, comparable with the positions of the same
    source (the module's docstring says which fields, per connector). Raises FieldError."""
    connector = _connector(source)
    if connector == POSTGRESQL:
        place = _postgresql(source)
    elif connector == SQLSERVER:
        place = _sqlserver(source)
    elif connector == MONGODB:
        place = _mongodb(source)
    else:
        place = _binlog(source)
    return (*place, 0 if snapshot else 1)


def entity_key(
    image: Mapping[str, Any], columns: Sequence[str], *, extended_json: bool = False
) -> str:
    """The entity id of a row image: one column's plain value, or the JSON array of several.

    `extended_json`: the image is MongoDB Extended JSON (number and ObjectId wrappers count as
    their value). Raises FieldError naming the missing column."""
    values = []
    for column in columns:
        value = image.get(column)
        if value is None:
            raise FieldError(column, "a key column, missing or null")
        values.append(_plain(value) if extended_json else value)
    key = _key_text(values[0]) if len(values) == 1 else _canonical(values)
    if not 0 < len(key) <= MAX_ID_CHARS:
        raise FieldError(
            columns[0] if len(columns) == 1 else "",
            f"the key {_shown(key)} makes an entity id of {len(key)} characters "
            f"(1 to {MAX_ID_CHARS})",
        )
    return key


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
            found = _unwrap(value, cloudevents)
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


@dataclass(frozen=True)
class _Found:
    """A change event payload and how to name its fields in the element as posted."""

    payload: dict[str, Any]
    where: Callable[[str], str]


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
        document = json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as exc:
        errors.add(0, "", f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}")
        return []
    if not isinstance(document, list):
        return [(1, document)]
    if not document:
        errors.add(0, "", "an empty array holds no change events")
    return list(enumerate(document, start=1))


def _unwrap(value: Any, cloudevents: bool) -> _Found | None:
    """The element's payload (None: a tombstone); FieldError when it is no change event."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise FieldError("", "a change event value is a JSON object (or null)")
    if "specversion" in value:
        return _from_cloudevent(value)
    if cloudevents:
        raise FieldError("specversion", "a CloudEvent in structured mode has specversion and data")
    return _from_value(value, "")


def _from_value(value: dict[str, Any], prefix: str) -> _Found | None:
    payload: Any = value
    if "payload" in value and set(value) <= {"schema", "payload"}:
        payload, prefix = value["payload"], f"{prefix}payload."
        if payload is None:
            return None
    if not isinstance(payload, dict):
        raise FieldError(prefix.rstrip("."), "the change event payload, a JSON object")
    return _Found(payload, lambda field: prefix + field)


# the source fields read here, by their CloudEvents extension attribute (`iodebezium` + the
# field's name without the characters an attribute name cannot hold, case kept)
_CE_SOURCE = {
    "iodebezium" + re.sub(r"[^A-Za-z0-9]", "", name): name
    for name in (
        "version",
        "connector",
        "name",
        "ts_ms",
        "snapshot",
        "db",
        "schema",
        "table",
        "collection",
        "sequence",
        "lsn",
        "txId",
        "file",
        "pos",
        "row",
        "server_id",
        "gtid",
        "change_lsn",
        "commit_lsn",
        "event_serial_no",
        "ord",
        "rs",
        "wallTime",
    )
}
_CE_ATTRIBUTE = {name: attribute for attribute, name in _CE_SOURCE.items()}


def _from_cloudevent(event: dict[str, Any]) -> _Found | None:
    if "data" not in event:
        raise FieldError("data", "the change event, a JSON object (null for a tombstone)")
    data = event["data"]
    if data is None:
        return None
    if isinstance(data, str):
        raise FieldError(
            "data",
            "a JSON object: Avro or base64 data is not read (the CloudEvents converter's "
            "data.serializer.type=json)",
        )
    if not isinstance(data, dict):
        raise FieldError("data", "the change event, a JSON object")
    inner = _from_value(data, "data.")
    if inner is None:
        return None
    if "op" in inner.payload or "source" in inner.payload:
        return inner  # the whole change event value is the data
    # Debezium's own CloudEvents: `data` holds the row images, the rest are extension attributes
    if "iodebeziumop" not in event:
        raise FieldError(
            "iodebeziumop",
            "the operation: a CloudEvent of Debezium carries it (and source) as extension "
            "attributes (extension.attributes.enable=true), or data is the change event value",
        )
    payload = dict(inner.payload)
    payload["op"] = event["iodebeziumop"]
    payload["source"] = {name: event[a] for a, name in _CE_SOURCE.items() if a in event}

    def where(field: str) -> str:
        if field == "op":
            return "iodebeziumop"
        if field.startswith("source."):
            name = field.removeprefix("source.")
            return _CE_ATTRIBUTE.get(name, "iodebezium" + re.sub(r"[^A-Za-z0-9]", "", name))
        return inner.where(field)

    return _Found(payload, where)


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
        shown = ", ".join([*OPS, MESSAGE])
        problems.append(FieldError("op", f"one of {shown}, not {_shown(raw_op)}"))
    source = payload.get("source")
    if not isinstance(source, dict):
        problems.append(FieldError("source", "the event's source block, a JSON object"))
        return None
    connector = _attempt(problems, lambda: _connector(source))
    name = source.get("name")
    if not isinstance(name, str) or not name:
        problems.append(FieldError("source.name", "the connector's logical name (topic.prefix)"))
    flag = _attempt(problems, lambda: _snapshot(source.get("snapshot")))
    snapshot = code == "r" or bool(flag)
    moment = _attempt(problems, lambda: _ts_ms(payload, source))
    if connector is None:
        return None
    table = _attempt(problems, lambda: table_name(source))
    place = _attempt(problems, lambda: position(source, snapshot=snapshot))
    key, document = "", None
    if op is not None and op != TRUNCATE and table is not None:
        columns = keys.get(table, MONGODB_KEY if connector == MONGODB else DEFAULT_KEY)
        found = _attempt(problems, lambda: _keyed(payload, code, connector, columns))
        if found is not None:
            key, document = found
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
    )


def _keyed(
    payload: dict[str, Any], raw_op: str, connector: str, columns: Sequence[str]
) -> tuple[str, dict[str, Any]]:
    """(entity id, the row image it was read from): `after` for c/r/u, `before` for d."""
    mongodb = connector == MONGODB
    side = "before" if raw_op == "d" else "after"
    image = payload.get(side)
    if image is None and mongodb and side == "before" and payload.get("filter") is not None:
        side, image = "filter", payload["filter"]  # a delete of the legacy oplog mode
    if image is None:
        raise FieldError(side, _no_image(side, raw_op, mongodb, columns))
    if mongodb and isinstance(image, str):
        try:
            image = json.loads(image, parse_constant=_not_json)
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
    if side == "after" and not utf8(to_json(image)):
        raise FieldError(side, "holds a lone UTF-16 surrogate (\\ud800-\\udfff escape)")
    return key, image


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


def _connector(source: Mapping[str, Any]) -> str:
    connector = source.get("connector")
    if connector in CONNECTORS:
        assert isinstance(connector, str)
        return connector
    raise FieldError(
        "source.connector",
        f"{_shown(connector)} is not read: changes of {', '.join(CONNECTORS)} are ordered by "
        "their log positions; another connector's changes have none to compare, and a "
        "timestamp alone would merge two changes of a row made in the same millisecond",
    )


def _snapshot(value: Any) -> bool:
    """`source.snapshot`: a boolean (older versions) or true, first, first_in_data_collection,
    last_in_data_collection, last, incremental, false (newer ones)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value:
        return value.lower() != "false"
    raise FieldError("source.snapshot", f"a boolean or a snapshot marker, not {_shown(value)}")


def _count(value: Any, field: str) -> int:
    """A non-negative integer, or its decimal text (CloudEvents carry 64-bit numbers as text)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise FieldError(field, f"a non-negative integer, not {_shown(value)}")


def _ts_ms(payload: dict[str, Any], source: Mapping[str, Any]) -> int:
    """When the change was made in the database; where a connector leaves it 0 (some snapshot
    reads), when Debezium processed it (the payload's `ts_ms`)."""
    moment = _count(source.get("ts_ms"), "source.ts_ms")
    if moment == 0 and payload.get("ts_ms") is not None:
        return _count(payload["ts_ms"], "ts_ms")
    return moment


def _postgresql(source: Mapping[str, Any]) -> Position:
    committed, current = _sequence(source.get("sequence"))
    lsn = source.get("lsn")
    if lsn is not None:
        current = _count(lsn, "source.lsn")
    if current is None:
        raise FieldError(
            "source.lsn", "the change's WAL position (source.lsn or source.sequence's second entry)"
        )
    return (committed or 0, current)


def _sequence(value: Any) -> tuple[int | None, int | None]:
    """`source.sequence`: JSON text of [last committed LSN, LSN], either may be null."""
    if value is None:
        return None, None
    items = value
    if isinstance(value, str):
        try:
            items = json.loads(value)
        except json.JSONDecodeError:
            items = None
    if not isinstance(items, list) or len(items) != 2:
        raise FieldError(
            "source.sequence", f"JSON text of [last committed LSN, LSN], not {_shown(value)}"
        )
    committed, current = items
    return (
        None if committed is None else _count(committed, "source.sequence"),
        None if current is None else _count(current, "source.sequence"),
    )


_BINLOG_FILE = re.compile(r".*\.(\d+)")


def _binlog(source: Mapping[str, Any]) -> Position:
    file = source.get("file")
    match = _BINLOG_FILE.fullmatch(file) if isinstance(file, str) else None
    if match is None:
        raise FieldError(
            "source.file", f"a binlog file name ending in its number, not {_shown(file)}"
        )
    return (
        int(match.group(1)),
        _count(source.get("pos"), "source.pos"),
        _count(source.get("row"), "source.row"),
    )


_SQLSERVER_LSN = re.compile(r"[0-9a-fA-F]{8}:[0-9a-fA-F]{8}:[0-9a-fA-F]{4}")


def _sqlserver(source: Mapping[str, Any]) -> Position:
    serial = source.get("event_serial_no")
    return (
        _sqlserver_lsn(source.get("commit_lsn"), "source.commit_lsn", required=True),
        _sqlserver_lsn(source.get("change_lsn"), "source.change_lsn", required=False),
        0 if serial is None else _count(serial, "source.event_serial_no"),
    )


def _sqlserver_lsn(value: Any, field: str, *, required: bool) -> int:
    if (value is None or value == "NULL") and not required:
        return 0
    if isinstance(value, str) and _SQLSERVER_LSN.fullmatch(value):
        return int(value.replace(":", ""), 16)
    raise FieldError(field, f'an LSN like "00000025:00000d98:0002", not {_shown(value)}')


def _mongodb(source: Mapping[str, Any]) -> Position:
    seconds = _count(source.get("ts_ms"), "source.ts_ms") // 1000
    return (seconds, _count(source.get("ord"), "source.ord"))


def _plain(value: Any) -> Any:
    """A MongoDB Extended JSON key value as the value it stands for, where that is a number or
    an ObjectId; other wrappers stay as they are."""
    if isinstance(value, dict) and len(value) == 1:
        (tag, inner), *_ = value.items()
        if tag == "$oid" and isinstance(inner, str):
            return inner
        if tag in ("$numberLong", "$numberInt") and isinstance(inner, str):
            try:
                return int(inner)
            except ValueError:
                return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _key_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _canonical(value)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
