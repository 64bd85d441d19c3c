"""Rows of a metadata table picked by many keys at once (a run's thousands of entities)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Select, String, cast, func
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

CHUNK = 5000  # SQLite: keys per IN list
PG_CHUNK = 100_000  # PostgreSQL: keys per array


def postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def rows_in(session: Session, query: Select[Any], column: Any, keys: Iterable[str]) -> list[Any]:
    """The rows of `query` whose `column` is one of `keys`. On PostgreSQL the keys are one array
    joined as a table: an IN list of thousands is checked row by row when the planner's
    statistics of a fast-growing table are stale (0.7 s per 5,000 keys was seen)."""
    wanted = sorted(set(keys))
    on_postgres = postgres(session)
    size = PG_CHUNK if on_postgres else CHUNK
    found: list[Any] = []
    for start in range(0, len(wanted), size):
        part = wanted[start : start + size]
        if on_postgres:
            given = func.unnest(cast(part, ARRAY(String))).table_valued("value").render_derived()
            found.extend(session.execute(query.join(given, column == given.c.value)).all())
        else:
            found.extend(session.execute(query.where(column.in_(part))).all())
    return found
