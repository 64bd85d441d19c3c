"""The two clocks Icebatch reads: this process's wall clock, and the metadata store's.

`now()` is the process's clock (plus `clock_offset_seconds`, how the tests give processes
skewed clocks). What one process writes and another judges — heartbeats, stale jobs, commit
leases, outbox grace — uses `db_now()` instead: the database's single clock, so skew between API
and worker machines cannot steal a live lease, re-queue a live job or hold a lease forever.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from app.config import get_settings


def now() -> datetime:
    """This process's wall-clock time, timezone-aware UTC."""
    return datetime.now(UTC) + timedelta(seconds=get_settings().clock_offset_seconds)


def db_now(session: Session) -> datetime:
    """The metadata store's current time (PostgreSQL's clock; SQLite's is the host's own, the
    one machine of embedded mode), timezone-aware UTC."""
    if session.get_bind().dialect.name == "sqlite":
        value = session.scalar(text("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')"))
        return datetime.fromisoformat(str(value)).replace(tzinfo=UTC)
    moment = session.scalar(select(func.clock_timestamp()))
    assert isinstance(moment, datetime)
    return moment.astimezone(UTC)
