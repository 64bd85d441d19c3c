"""The document rules of CDC replication, shared by the API and the processor.

An entity's document is the fold of its events in (timestamp, sequence) order: PUT replaces the
document, PATCH applies an RFC 7396 JSON merge patch (`null` removes a key, arrays are replaced
whole; with no document it starts from `{}`), DELETE removes it. A merged profile deep-merges
its members' documents, the newer timestamp winning field by field.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

PUT, PATCH, DELETE = "PUT", "PATCH", "DELETE"
OPS = (PUT, PATCH, DELETE)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: `patch` applied to `target` (neither is changed)."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def deep_merge(older: Any, newer: Any) -> Any:
    """`newer` over `older`: objects merge key by key, anything else is replaced by `newer`."""
    if isinstance(older, dict) and isinstance(newer, dict):
        result = dict(older)
        for key, value in newer.items():
            result[key] = deep_merge(result[key], value) if key in result else value
        return result
    return newer


@dataclass(frozen=True)
class Applied:
    """The fold of an entity's events: its document (None: no row) and the last event's
    (timestamp, sequence, record type)."""

    document: dict[str, Any] | None
    timestamp: datetime
    sequence: int
    record_type: str


def fold(
    base: Applied | None, events: Iterable[tuple[datetime, int, str, str, Any]]
) -> Applied | None:
    """`events` (timestamp, sequence, op, record_type, payload), all after `base` in
    (timestamp, sequence) order, applied to it; None when there is nothing at all."""
    state = base
    for timestamp, sequence, op, record_type, payload in sorted(events, key=lambda e: e[:2]):
        current = state.document if state is not None else None
        if op == PUT:
            document = payload if isinstance(payload, dict) else {}
        elif op == PATCH:
            patched = merge_patch(current if current is not None else {}, payload)
            document = patched if isinstance(patched, dict) else {}
        else:
            document = None
        state = Applied(document, timestamp, sequence, record_type)
    return state


def extract(document: dict[str, Any] | None, path: str) -> Any:
    """The value at a dotted path (`a.b.c`, or `$.a.b.c`), None when absent."""
    value: Any = document
    for part in path.removeprefix("$.").split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value
