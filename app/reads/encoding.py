"""Arrow record batches to JSON lines or an Arrow IPC stream."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

import pyarrow as pa


def json_value(value: Any) -> Any:
    """A JSON-ready form of an Arrow Python value (maps arrive as dicts: keys become strings)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {str(json_value(k)): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return str(value)


def jsonl(batches: Iterable[pa.RecordBatch]) -> Iterator[bytes]:
    for batch in batches:
        lines = [
            json.dumps({k: json_value(v) for k, v in row.items()}, separators=(",", ":"))
            for row in batch.to_pylist(maps_as_pydicts="lossy")
        ]
        if lines:
            yield ("\n".join(lines) + "\n").encode()


class _Chunks:
    """A write-only file that hands its bytes back piece by piece."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


def arrow_stream(schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> Iterator[bytes]:
    """An Arrow IPC stream (`application/vnd.apache.arrow.stream`), one chunk per batch."""
    chunks = _Chunks()
    with pa.ipc.new_stream(pa.PythonFile(chunks, mode="w"), schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
            yield chunks.take()
    yield chunks.take()
