"""Audit events stored by group commit: one writer thread per process, one transaction for every
event waiting, each call's answer held until its own event is stored.

A transaction per event cost each mutating call a thread-pool hop, a pooled connection (its
liveness ping), an ORM unit of work and a commit of its own (a WAL flush): at a few hundred calls
a second, more than the call's own work. Calls that end together now share one multi-row INSERT
and one commit, and the guarantee is the same: an answer a client has seen is in the trail.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from app.audit import repository
from app.db import session_scope

log = logging.getLogger(__name__)
MAX_GROUP = 500  # events in one INSERT at most (a bounded statement under a flood)


@dataclass
class _Waiting:
    row: dict[str, Any]
    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[None]


@dataclass
class AuditWriter:
    """The process's writer: `store` hands it an event and returns once it is committed."""

    pending: list[_Waiting] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    wake: threading.Condition = field(init=False)
    thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        self.wake = threading.Condition(self.lock)

    async def store(self, row: dict[str, Any]) -> None:
        """Store one event (the columns of `AuditEvent`); raises what storing it raised."""
        loop = asyncio.get_running_loop()
        waiting = _Waiting(row, loop, loop.create_future())
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="audit-writer", daemon=True)
                self.thread.start()
            self.pending.append(waiting)
            self.wake.notify()
        await waiting.done

    def _run(self) -> None:
        while True:
            with self.lock:
                while not self.pending:
                    self.wake.wait()
                group, self.pending = self.pending[:MAX_GROUP], self.pending[MAX_GROUP:]
            error: BaseException | None = None
            try:
                with session_scope() as session:
                    repository.append(session, [w.row for w in group])
            except Exception as exc:  # every waiting call learns it; the writer goes on
                error = exc
            for waiting in group:
                try:
                    waiting.loop.call_soon_threadsafe(_settle, waiting.done, error)
                except RuntimeError:  # the call's event loop is gone (a test's, at its end)
                    log.debug("audit event stored for a closed event loop")


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():  # the call was cancelled meanwhile
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


WRITER = AuditWriter()
