"""The document rules of CDC replication, shared by the API and the processor.

An entity's document is the fold of its events in (timestamp, sequence) order: PUT replaces the
document, PATCH applies an RFC 7396 JSON merge patch (`null` removes a key, arrays are replaced
whole; with no document it starts from `{}`), DELETE removes it. A merged profile deep-merges
its members' documents, the newer timestamp winning field by field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

PUT, PATCH, DELETE = "PUT", "PATCH", "DELETE"
# orjson reads an integer exactly from -2**63 to 2**64 - 1: one outside holds a run of 20 digits
# or is a minus and 19 of them. Runs are found as zeros once every digit is one, a tenth of a
# regular expression's time on a 70 kB text. (Debezium's `ts_ns`, 19 digits, stays in range.)
_ZEROED = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 20
_LONG_NEGATIVE = b"-" + b"0" * 19
OPS = (PUT, PATCH, DELETE)


def to_json(value: Any) -> str:
    """Compact JSON text of a parsed document: orjson (a tenth of the standard library's time),
    or the standard library where orjson refuses (an integer past 64 bits)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def from_json(text: str, parse_constant: Callable[[str], Any] | None = None) -> Any:
    """The value of JSON text as the standard library parses it (`parse_constant` as its own:
    called for NaN and Infinity), by orjson (5-10x faster) where orjson reads it the same.
    orjson reads an integer past 64 bits as a float, so a text that may hold one (a run of 20
    digits, or a minus and 19: maybe such an integer, maybe a string of digits) goes to the
    standard library, as does one orjson refuses (NaN, Infinity, bad JSON), which it then
    parses or refuses with its own error: the result and the errors are the standard
    library's."""
    zeroed = text.encode(errors="surrogatepass").translate(_ZEROED)
    if _LONG_RUN not in zeroed and _LONG_NEGATIVE not in zeroed:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text, parse_constant=parse_constant)


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


def apply(document: dict[str, Any] | None, op: str, payload: Any) -> dict[str, Any] | None:
    """One event applied to an entity's document (None: no row)."""
    if op == PUT:
        return payload if isinstance(payload, dict) else {}
    if op == PATCH:
        patched = merge_patch(document if document is not None else {}, payload)
        return patched if isinstance(patched, dict) else {}
    return None


def extract(document: dict[str, Any] | None, path: str) -> Any:
    """The value at a dotted path (`a.b.c`, or `$.a.b.c`), None when absent."""
    value: Any = document
    for part in path.removeprefix("$.").split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value
