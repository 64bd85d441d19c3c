"""What changed in the metadata store, told to every API process: the caches the pollers' path
reads (API keys, batch and job versions) are exact because every change to their rows reaches
them.

Two sources, both needed:
- **PostgreSQL `LISTEN/NOTIFY`.** Triggers on `api_keys`, `batches`, `jobs` and `restatements`
  (migration 0010)
  send `<kind>:<id>` on the channel `icebatch_changed` when a row changes, at its commit, whoever
  wrote it: another API process, a worker, the CLI, a set-based UPDATE, a hand-written SQL fix.
  Each process listens on one connection of its own (a daemon thread), and checks that
  connection twice a second. A cache answers only while the channel was heard from within
  `FRESH_SECONDS`: when PostgreSQL, the network or the thread is down, every read goes to the
  store, so a change is seen within 1 s even with no notification. When the channel comes back,
  every cache is emptied (what was missed meanwhile is unknown).
- **This process's own writes**, at their commit (session events), so that a client sees what
  its own request did from its next request on, before the notification comes back.

SQLite (embedded mode) has no channel: the caches stay empty and every read goes to the store.
Every entry is read again after `MAX_AGE_SECONDS` in any case (a floor for what no
notification tells: a change made with triggers off).

A cache fills under a ticket taken before its read: a value read before a change, and stored
after the change's notification, is refused, so a late fill never hides a change.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any, Generic, TypeVar

import psycopg
from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session, UOWTransaction
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import BinaryExpression, BindParameter, BooleanClauseList

from app.config import get_settings
from app.db import pg_connect_args

log = logging.getLogger(__name__)
CHANNEL = "icebatch_changed"
FRESH_SECONDS = 1.0  # a cache answers only while the channel was heard from this recently
CHECK_SECONDS = 0.25  # how often the listener checks its connection
MAX_ENTRIES = 100_000
# an entry is read again after this long however quiet the channel: what no notification can
# tell (a change made with triggers off) is seen within it
MAX_AGE_SECONDS = 30.0

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
Invalidate = Callable[[str | None], None]  # an id, or None: everything


class Feed:
    """The channel of one database: a listener thread, and who to tell (`subscribe`)."""

    def __init__(self, dsn: str | None) -> None:
        self._dsn = dsn
        self._heard_at = float("-inf")
        self._subscribers: dict[str, list[Invalidate]] = {}
        self._lock = threading.Lock()
        self._listener: threading.Thread | None = None
        self._started_at = float("-inf")

    def fresh(self) -> bool:
        """Whether the channel was heard from within FRESH_SECONDS (caches may answer). Starts
        the listener when it is not running (at most once a second): a process listens while
        its caches are used, and a store that went away costs nothing once they are not."""
        now = time.monotonic()
        if now - self._heard_at < FRESH_SECONDS:
            return True
        if self._dsn is not None and now - self._started_at >= 1.0:
            with self._lock:
                running = self._listener is not None and self._listener.is_alive()
                if not running and now - self._started_at >= 1.0:
                    self._started_at = now
                    self._listener = threading.Thread(
                        target=self._listen, name="icebatch-invalidation", daemon=True
                    )
                    self._listener.start()
        return False

    def subscribe(self, kind: str, invalidate: Invalidate) -> None:
        with self._lock:
            self._subscribers.setdefault(kind, []).append(invalidate)

    def tell(self, kind: str, id_: str | None) -> None:
        """`kind:id` changed (None: every `kind`); also what a notification does."""
        for invalidate in self._subscribers.get(kind, ()):
            invalidate(id_)

    def _everything(self) -> None:
        for kind in list(self._subscribers):
            self.tell(kind, None)

    def _listen(self) -> None:
        """Listen until the connection fails; then the caches are off until `fresh` starts
        another listener."""
        assert self._dsn is not None
        heard = False
        try:
            with psycopg.connect(
                self._dsn,
                autocommit=True,
                application_name="icebatch-invalidation",
                **pg_connect_args(get_settings()),
            ) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                self._everything()  # what changed before LISTEN is unknown
                while True:
                    self._heard_at = time.monotonic()
                    heard = True
                    for notify in conn.notifies(timeout=CHECK_SECONDS):
                        kind, _, id_ = notify.payload.partition(":")
                        self.tell(kind, id_)
                    conn.execute("SELECT 1")  # a dead connection raises here
        except Exception:
            self._heard_at = float("-inf")
            self._everything()
            if heard:
                log.warning("invalidation channel lost; caches off until it is back", exc_info=True)


def _dsn(url: str) -> str | None:
    if not url.startswith("postgresql"):
        return None
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


_FEEDS: dict[str, Feed] = {}
_FEEDS_LOCK = threading.Lock()


def _feed_for(url: str) -> Feed:
    with _FEEDS_LOCK:
        found = _FEEDS.get(url)
        if found is None:
            found = _FEEDS[url] = Feed(_dsn(url))
        return found


def feed() -> Feed:
    """This process's feed for the metadata store (the listener starts on first use: a process
    with no cache, a worker, never starts one)."""
    return _feed_for(get_settings().database_url)


def _started() -> Feed | None:
    return _FEEDS.get(get_settings().database_url)


def cache(name: str, *kinds: str, size: int = MAX_ENTRIES) -> Cache[Any, Any]:
    """The process's cache `name` for the current metadata store, dropped on `kinds`, holding
    at most `size` entries."""
    return _cache_for(get_settings().database_url, name, kinds, size)


@lru_cache(maxsize=16)
def _cache_for(url: str, name: str, kinds: tuple[str, ...], size: int) -> Cache[Any, Any]:
    return Cache(_feed_for(url), *kinds, size=size)


class Cache(Generic[K, V]):
    """Values by key, dropped when `source` says one of their ids changed.

    `ticket()` before reading the store, `put(key, value, ticket, ids)` after: refused when one
    of `ids` changed since the ticket, or when the channel is not fresh."""

    def __init__(self, source: Feed, *kinds: str, size: int = MAX_ENTRIES) -> None:
        self._feed = source
        self._size = size
        self._entries: dict[K, tuple[V, float]] = {}  # value, time.monotonic() when stored
        self._by_id: dict[tuple[str, str], set[K]] = {}
        self._changed: dict[tuple[str, str], int] = {}  # (kind, id) → change count at its change
        self._count = 0  # changes seen
        self._cleared = 0  # change count at the last drop of everything
        self._lock = threading.Lock()
        self._kinds = kinds
        for kind in kinds:
            source.subscribe(kind, functools.partial(self._drop, kind))

    def get(self, key: K) -> V | None:
        if not self._feed.fresh():
            return None
        found = self._entries.get(key)
        if found is None or time.monotonic() - found[1] >= MAX_AGE_SECONDS:
            return None
        return found[0]

    def ticket(self) -> int:
        return self._count

    def put(self, key: K, value: V, ticket: int, ids: list[tuple[str, str]]) -> None:
        if not self._feed.fresh():
            return
        with self._lock:
            if ticket < self._cleared or any(self._changed.get(i, -1) > ticket for i in ids):
                return
            if len(self._entries) >= self._size:
                self._clear()
                return
            self._entries[key] = (value, time.monotonic())
            for i in ids:
                self._by_id.setdefault(i, set()).add(key)

    def _drop(self, kind: str, id_: str | None) -> None:
        with self._lock:
            self._count += 1
            if id_ is None or len(self._changed) >= MAX_ENTRIES:
                self._clear()
                return
            self._changed[(kind, id_)] = self._count
            for key in self._by_id.pop((kind, id_), ()):
                self._entries.pop(key, None)

    def _clear(self) -> None:
        self._entries.clear()
        self._by_id.clear()
        self._changed.clear()
        self._cleared = self._count = self._count + 1


# ---- this process's own writes -------------------------------------------------------------

_TABLES = {"api_keys": "key", "batches": "batch", "jobs": "job", "restatements": "restatement"}


def _written(session: Session) -> set[tuple[str, str | None]]:
    found: set[tuple[str, str | None]] = session.info.setdefault("icebatch_written", set())
    return found


@event.listens_for(Session, "after_flush")
def _after_flush(session: Session, flush_context: UOWTransaction) -> None:
    for obj in (*session.dirty, *session.deleted):
        kind = _TABLES.get(getattr(obj, "__tablename__", ""))
        if kind is not None:
            _written(session).add((kind, getattr(obj, "id", None)))


@event.listens_for(Session, "do_orm_execute")
def _bulk(state: ORMExecuteState) -> None:
    """A set-based UPDATE or DELETE: of the row whose `id` its WHERE names (`id = :value`, as
    the row locks and heartbeats do), else of rows unknown, so all of that kind."""
    if state.is_update or state.is_delete:
        table = getattr(state.statement, "table", None)
        kind = _TABLES.get(getattr(table, "name", ""))
        if kind is not None:
            where = getattr(state.statement, "whereclause", None)
            _written(state.session).add((kind, _named_id(where, state.parameters)))


def _named_id(where: Any, parameters: Any) -> str | None:
    """The value of `id` an AND of conditions pins (`id = value`), or None."""
    if where is None:
        return None
    terms = list(where.clauses) if isinstance(where, BooleanClauseList) else [where]
    if isinstance(where, BooleanClauseList) and where.operator is not operators.and_:
        return None
    for term in terms:
        if not isinstance(term, BinaryExpression) or term.operator is not operators.eq:
            continue
        left, right = term.left, term.right
        if getattr(left, "name", None) != "id" or not isinstance(right, BindParameter):
            continue
        value = right.value
        if value is None and isinstance(parameters, dict):
            value = parameters.get(right.key)
        return value if isinstance(value, str) else None
    return None


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    written = session.info.pop("icebatch_written", None)
    started = _started() if written else None
    if written and started is not None:
        for kind, id_ in written:
            started.tell(kind, id_)


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    session.info.pop("icebatch_written", None)
