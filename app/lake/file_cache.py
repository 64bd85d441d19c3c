"""A process-wide cache of what immutable lake files hold, by path.

Tombstone lists and segments, manifest lists and manifests never change once written (every
commit writes new files under new names), so what one of them decodes to can be kept for the
life of the process; decoding them is most of the fixed cost of a small read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class FileCache(Generic[T]):
    """A small LRU of decoded files, by path; safe across threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[str, T] = OrderedDict()
        self.lock = threading.Lock()

    def peek(self, path: str) -> T | None:
        """What is cached for `path`, if anything (no load)."""
        with self.lock:
            return self.items.get(path)

    def put(self, path: str, value: T) -> None:
        with self.lock:
            self.items[path] = value
            self.items.move_to_end(path)
            if len(self.items) > self.size:
                self.items.popitem(last=False)

    def get(self, path: str, load: Callable[[], T]) -> T:
        """What the file at `path` holds: cached, else `load()`ed now and cached."""
        with self.lock:
            if path in self.items:
                self.items.move_to_end(path)
                return self.items[path]
        value = load()  # outside the lock: two loads of one file are harmless
        with self.lock:
            self.items[path] = value
            if len(self.items) > self.size:
                self.items.popitem(last=False)
        return value
