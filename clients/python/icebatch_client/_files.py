"""A batch's files as `upload_batch` takes them: paths, or (name, bytes | binary file) pairs,
streamed in chunks so a large file is never read into memory at once."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Union

FileSpec = Union[str, "os.PathLike[str]", tuple[str, bytes | IO[bytes]]]
CHUNK = 1 << 20
FORMATS = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".parquet": "parquet",
}


@dataclass
class Upload:
    """One file of a batch: its name in the batch, and where its bytes come from."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    stream: IO[bytes] | None = None

    @property
    def size(self) -> int | None:
        if self.path is not None:
            return self.path.stat().st_size
        if self.data is not None:
            return len(self.data)
        return None

    @property
    def rewindable(self) -> bool:
        """Whether it can be sent again from its start (a retry)."""
        return self.stream is None or self.stream.seekable()

    def chunks(self, progress: Callable[[str, int, int | None], None] | None) -> Iterator[bytes]:
        """The bytes, a chunk at a time, reporting (name, sent, total) after each."""
        total, sent = self.size, 0
        if progress is not None:
            progress(self.name, 0, total)
        for chunk in self._read():
            sent += len(chunk)
            if progress is not None:
                progress(self.name, sent, total)
            yield chunk

    def _read(self) -> Iterator[bytes]:
        if self.data is not None:
            for start in range(0, len(self.data), CHUNK):
                yield self.data[start : start + CHUNK]
            return
        if self.path is not None:
            with self.path.open("rb") as handle:
                yield from iter(lambda: handle.read(CHUNK), b"")
            return
        assert self.stream is not None
        if self.stream.seekable():
            self.stream.seek(0)
        yield from iter(lambda: self.stream.read(CHUNK), b"")  # type: ignore[union-attr]


def uploads(files: Iterable[FileSpec], format: str | None) -> tuple[list[Upload], str]:
    """The files as uploads, and the batch's format (given, or from the first extension)."""
    items: list[Upload] = []
    for spec in files:
        if isinstance(spec, tuple):
            name, content = spec
            if isinstance(content, bytes | bytearray):
                items.append(Upload(name, data=bytes(content)))
            else:
                items.append(Upload(name, stream=content))
        else:
            path = Path(spec)
            items.append(Upload(path.name, path=path))
    if not items:
        raise ValueError("a batch needs at least one file")
    if len({item.name for item in items}) != len(items):
        raise ValueError("two files of the batch have the same name")
    if format is None:
        suffix = Path(items[0].name).suffix.lower()
        if suffix not in FORMATS:
            raise ValueError(
                f"cannot tell the format of {items[0].name!r}: pass format='csv', 'json' or "
                "'parquet'"
            )
        format = FORMATS[suffix]
    return items, format
