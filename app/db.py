"""Engine and session scopes. A scope commits on success and rolls back on error."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

from app.config import get_settings

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


def make_engine(url: str) -> Engine:
    """An engine for the metadata store; SQLite gets WAL and a busy timeout."""
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
    )


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
        session.commit()
        callbacks: list[AfterCommit] = session.info.pop("after_commit", [])
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
    for callback in callbacks:
        callback()


def get_session() -> Iterator[Session]:
    """FastAPI dependency: one session per request, committed when the endpoint returns."""
    with session_scope() as session:
        yield session


DbSession = Annotated[Session, Depends(get_session)]
