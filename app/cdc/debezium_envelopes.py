"""A posted element of Debezium's HTTP sink as its change event payload: a value (`{"schema",
"payload"}`, or the payload alone when the converter's schemas are off), or a CloudEvent in
structured mode carrying it in `data` — either the whole value, or (Debezium's own CloudEvents
converter) only `before`/`after`, with the operation and the `source` block as `iodebezium*`
extension attributes. Errors name the field as posted (`payload.source.lsn`, `data.after.id`,
`iodebeziumlsn`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.cdc.debezium_source import FieldError


@dataclass(frozen=True)
class Found:
    """A change event payload and how to name its fields in the element as posted."""

    payload: dict[str, Any]
    where: Callable[[str], str]


def unwrap(value: Any, cloudevents: bool) -> Found | None:
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


def _from_value(value: dict[str, Any], prefix: str) -> Found | None:
    payload: Any = value
    if "payload" in value and set(value) <= {"schema", "payload"}:
        payload, prefix = value["payload"], f"{prefix}payload."
        if payload is None:
            return None
    if not isinstance(payload, dict):
        raise FieldError(prefix.rstrip("."), "the change event payload, a JSON object")
    return Found(payload, lambda field: prefix + field)


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


def _from_cloudevent(event: dict[str, Any]) -> Found | None:
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

    return Found(payload, where)
