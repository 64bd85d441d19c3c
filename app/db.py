"""Engine and session scopes. A scope commits on success and rolls back on error."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import anyio
import anyio.to_thread
import psycopg
from sqlalchemy import Engine, MetaData, create_engine, event, text
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

from app.config import Settings, get_settings

log = logging.getLogger(__name__)

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


AfterCommit = Callable[[], object]


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str, *, statement_timeout: bool = True) -> Engine:
    """An engine for the metadata store; SQLite gets WAL and a busy timeout. Migrations pass
    `statement_timeout=False`: a schema change on a big table may take its time."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    settings = get_settings()
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_timeout=settings.db_pool_timeout_seconds,
        connect_args=pg_connect_args(settings, statement_timeout),
    )


def pg_connect_args(settings: Settings, statement_timeout: bool = True) -> dict[str, Any]:
    """libpq options that keep a PostgreSQL outage from hanging anyone: a connect timeout, a
    statement timeout, and keepalives that notice a server gone without a word."""
    statement_ms = int(settings.db_statement_timeout_seconds * 1000) if statement_timeout else 0
    return {
        "connect_timeout": settings.db_connect_timeout_seconds,
        "options": f"-c statement_timeout={statement_ms}",
        "keepalives": 1,
        "keepalives_idle": 10,
        "keepalives_interval": 5,
        "keepalives_count": 3,
    }


# what a metadata store that is down, restarting or out of connections raises; never a bad query
STORE_OUTAGE_ERRORS: tuple[type[Exception], ...] = (
    sa_exc.OperationalError,
    sa_exc.InterfaceError,
    sa_exc.DisconnectionError,
    sa_exc.TimeoutError,  # no pooled connection came free within db_pool_timeout_seconds
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


def is_store_outage(exc: BaseException) -> bool:
    """Whether `exc`, or an exception it was raised from, says the metadata store is away."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, STORE_OUTAGE_ERRORS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def store_answers() -> bool:
    """Whether the metadata store answers a query now (False when it is away)."""
    try:
        with get_engine().connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        if is_store_outage(exc):
            return False
        raise
    return True


def prefill(engine: Engine, count: int) -> None:
    """Open `count` of the engine's pooled connections at once and give them back, where the
    pool keeps them (up to its size): a process's first burst of requests then finds them
    open, instead of each waiting for PostgreSQL to start a backend. A store that is away
    only leaves the pool to fill on demand, as it would anyway."""
    opened = []
    try:
        for _ in range(count):
            opened.append(engine.connect())
    except Exception as exc:
        if not is_store_outage(exc):
            raise
        log.warning("metadata store away: its connections open on demand (%s)", exc)
    finally:
        for connection in opened:
            connection.close()


@lru_cache
def get_engine() -> Engine:
    return make_engine(get_settings().sqlalchemy_url)


@lru_cache
def get_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(), expire_on_commit=False)


def after_commit(session: Session, callback: AfterCommit) -> None:
    """Run `callback` once the session's transaction has committed (e.g. publish a job)."""
    session.info.setdefault("after_commit", []).append(callback)


@contextmanager
def session_scope() -> Iterator[Session]:
    """A unit of work: commit on success, roll back on error, then run after-commit hooks."""
    session = get_sessionmaker()()
    try:
        yield session
    except BaseException:
        _abandon(session)
        raise
    _finish(session)


@contextmanager
def read_scope() -> Iterator[Session]:
    """A session for reads alone, each statement its own transaction (autocommit): a poller's
    one query costs no BEGIN and no COMMIT round trip. Statements that must see one state of
    the store together belong in one statement, or in a `session_scope`."""
    connection = get_engine().connect().execution_options(isolation_level="AUTOCOMMIT")
    with connection, Session(bind=connection, expire_on_commit=False) as session:
        yield session


def _finish(session: Session) -> None:
    """Commit and close, then run the after-commit hooks (roll back if the commit fails)."""
    try:
        session.commit()
        callbacks: list[AfterCommit] = session.info.pop("after_commit", [])
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
    for callback in callbacks:
        callback()


_FINISHED = "icebatch_request_finished"


def finish_request(session: Session) -> None:
    """End a request's unit of work now, in the calling thread (commit, close, after-commit
    hooks): for an endpoint whose answer is already rendered (`app.idempotency`), so that its
    commit costs no thread-pool hop of its own once the endpoint returns. The session
    dependency's end then has nothing left to do."""
    _finish(session)
    session.info[_FINISHED] = True


def _abandon(session: Session) -> None:
    try:
        session.rollback()
    finally:
        session.close()


async def get_session() -> AsyncIterator[Session]:
    """FastAPI dependency: one session per request, committed when the endpoint returns.

    Async, so opening it costs no thread-pool hop (a session connects at its first query); its
    end (commit or rollback, close, after-commit hooks) is one hop, shielded from a cancelled
    request so that the connection always goes back to the pool.
    """
    session = get_sessionmaker()()
    try:
        yield session
    except BaseException:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_abandon, session)
        raise
    if session.info.get(_FINISHED):  # the endpoint's thread ended it (finish_request)
        return
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(_finish, session)
