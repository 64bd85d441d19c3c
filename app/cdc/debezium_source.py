"""What a Debezium change event's `source` block and row images say: the connector, the table's
name, the change's log position, and the entity key of a row.

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
from collections.abc import Mapping, Sequence
from typing import Any

from app.cdc.documents import from_json
from app.cdc.events import MAX_ID_CHARS

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

Position = tuple[int, ...]


class FieldError(ValueError):
    """A field of a change event that cannot be read; `field` is its path in the payload."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def table_name(source: Mapping[str, Any]) -> str:
    """The changed table as its connector names it, from the event's `source` block.

    PostgreSQL and SQL Server: `<schema>.<table>` (`source.schema`, `source.table`; the database
    is the connector's own). MySQL and MariaDB: `<db>.<table>` (`source.db`, `source.table`;
    they have no schema level). MongoDB: `<db>.<collection>` (`source.db`,
    `source.collection`). Raises FieldError naming the missing field."""
    connector = connector_of(source)
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
    connector = connector_of(source)
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
            f"the key {shown(key)} makes an entity id of {len(key)} characters "
            f"(1 to {MAX_ID_CHARS})",
        )
    return key


def connector_of(source: Mapping[str, Any]) -> str:
    connector = source.get("connector")
    if connector in CONNECTORS:
        assert isinstance(connector, str)
        return connector
    raise FieldError(
        "source.connector",
        f"{shown(connector)} is not read: changes of {', '.join(CONNECTORS)} are ordered by "
        "their log positions; another connector's changes have none to compare, and a "
        "timestamp alone would merge two changes of a row made in the same millisecond",
    )


def snapshot_flag(value: Any) -> bool:
    """`source.snapshot`: a boolean (older versions) or true, first, first_in_data_collection,
    last_in_data_collection, last, incremental, false (newer ones)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value:
        return value.lower() != "false"
    raise FieldError("source.snapshot", f"a boolean or a snapshot marker, not {shown(value)}")


def count(value: Any, field: str) -> int:
    """A non-negative integer, or its decimal text (CloudEvents carry 64-bit numbers as text)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise FieldError(field, f"a non-negative integer, not {shown(value)}")


def ts_ms_of(payload: dict[str, Any], source: Mapping[str, Any]) -> int:
    """When the change was made in the database; where a connector leaves it 0 (some snapshot
    reads), when Debezium processed it (the payload's `ts_ms`)."""
    moment = count(source.get("ts_ms"), "source.ts_ms")
    if moment == 0 and payload.get("ts_ms") is not None:
        return count(payload["ts_ms"], "ts_ms")
    return moment


def _postgresql(source: Mapping[str, Any]) -> Position:
    committed, current = _sequence(source.get("sequence"))
    lsn = source.get("lsn")
    if lsn is not None:
        current = count(lsn, "source.lsn")
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
            items = from_json(value)
        except json.JSONDecodeError:
            items = None
    if not isinstance(items, list) or len(items) != 2:
        raise FieldError(
            "source.sequence", f"JSON text of [last committed LSN, LSN], not {shown(value)}"
        )
    committed, current = items
    return (
        None if committed is None else count(committed, "source.sequence"),
        None if current is None else count(current, "source.sequence"),
    )


_BINLOG_FILE = re.compile(r".*\.(\d+)")


def _binlog(source: Mapping[str, Any]) -> Position:
    file = source.get("file")
    match = _BINLOG_FILE.fullmatch(file) if isinstance(file, str) else None
    if match is None:
        raise FieldError(
            "source.file", f"a binlog file name ending in its number, not {shown(file)}"
        )
    return (
        int(match.group(1)),
        count(source.get("pos"), "source.pos"),
        count(source.get("row"), "source.row"),
    )


_SQLSERVER_LSN = re.compile(r"[0-9a-fA-F]{8}:[0-9a-fA-F]{8}:[0-9a-fA-F]{4}")


def _sqlserver(source: Mapping[str, Any]) -> Position:
    serial = source.get("event_serial_no")
    return (
        _sqlserver_lsn(source.get("commit_lsn"), "source.commit_lsn", required=True),
        _sqlserver_lsn(source.get("change_lsn"), "source.change_lsn", required=False),
        0 if serial is None else count(serial, "source.event_serial_no"),
    )


def _sqlserver_lsn(value: Any, field: str, *, required: bool) -> int:
    if (value is None or value == "NULL") and not required:
        return 0
    if isinstance(value, str) and _SQLSERVER_LSN.fullmatch(value):
        return int(value.replace(":", ""), 16)
    raise FieldError(field, f'an LSN like "00000025:00000d98:0002", not {shown(value)}')


def _mongodb(source: Mapping[str, Any]) -> Position:
    seconds = count(source.get("ts_ms"), "source.ts_ms") // 1000
    return (seconds, count(source.get("ord"), "source.ord"))


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


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
