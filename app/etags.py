"""Entity tags of the API's objects, apart from the conditional GET that serves them
(`app.conditional`, on FastAPI): the services that make a tag need no web framework."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Tag:
    """An entity tag and the rows it was read from, as (kind, id): `batch`, `job`,
    `restatement`. `lasts`: for a body that also changes with the clock (a `loading` batch
    turns `stuck`), whether it has not yet; the tag is kept while it says so and none of those
    rows changes."""

    value: str
    rows: tuple[tuple[str, str], ...]
    lasts: Callable[[], bool] | None = None

    def current(self) -> bool:
        return self.lasts is None or self.lasts()


def etag(*parts: object) -> str:
    """A strong entity tag from the parts that change whenever the body does."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()
    return f'"{digest}"'
