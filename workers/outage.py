"""A metadata store outage, as a worker lives through it: pause until the store answers, resume.

The store holds the jobs table, the leases and the Iceberg catalog: while it is down a worker
can do nothing useful, and a failure caused by the outage says nothing about the job. So such a
failure neither fails the job nor spends one of its attempts: the worker waits, then goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from app.db import is_store_outage, store_answers

log = logging.getLogger(__name__)
T = TypeVar("T")

# how the JVM (Spark's JDBC catalog, PostgreSQL's JDBC driver) words a lost metadata store: a
# SQLException (PSQLException, UncheckedSQLException, ...) whose text says the connection is gone
JAVA_SQL_ERROR = "SQLException"
JAVA_OUTAGE_MARKERS = (
    "terminating connection due to administrator command",
    "Connection refused",
    "refused. Check that the hostname and port are correct",
    "This connection has been closed",
    "An I/O error occurred while sending to the backend",
    "the database system is starting up",
    "the database system is shutting down",
    "SQLTransientConnectionException",
    "SQLNonTransientConnectionException",
)
PROBE_EVERY_SECONDS = 1.0


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` came from the metadata store being away (Python or JVM side)."""
    if is_store_outage(exc):
        return True
    message = str(exc)
    return JAVA_SQL_ERROR in message and any(m in message for m in JAVA_OUTAGE_MARKERS)


def describe(exc: BaseException) -> str:
    """One line on what went wrong (a JVM error's text is a whole stack trace)."""
    message = str(exc)
    marker = next((m for m in JAVA_OUTAGE_MARKERS if m in message), None)
    first = (message.splitlines() or [""])[0]
    return f"{type(exc).__name__}: {marker or first}"[:300]


def wait_for_store() -> float:
    """Block until the metadata store answers; the seconds it took."""
    started = time.monotonic()
    logged = 0.0
    while not store_answers():
        waited = time.monotonic() - started
        if waited - logged >= 30 or not logged:
            log.warning("metadata store unreachable for %.0f s; pausing", waited)
            logged = waited or 1e-9
        time.sleep(PROBE_EVERY_SECONDS)
    return time.monotonic() - started


def through_outages(step: Callable[[], T], what: str) -> T:
    """Run `step` (a unit of work on the store that may be repeated), pausing through outages."""
    while True:
        try:
            return step()
        except Exception as exc:
            if not is_outage(exc):
                raise
            log.warning("%s: the metadata store is away (%s); pausing", what, describe(exc))
            waited = wait_for_store()
            log.warning("%s: the metadata store is back after %.1f s; resuming", what, waited)
