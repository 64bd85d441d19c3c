"""A tenant's lock for one dumper or processor run: the commit lease (`app/lake/lease.py`) under
a key of the tenant, renewed in the background for as long as the run lasts."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.config import get_settings
from app.lake import lease
from app.lake.lease import CommitLeaseLost
from workers.runtime import JobContext


@contextmanager
def tenant_lock(ctx: JobContext, key: str, wait_seconds: float) -> Iterator[Callable[[], None]]:
    """Hold the lease `key` (waiting up to `wait_seconds`; TimeoutError after); yields a check
    to call right before committing: CommitLeaseLost when the lease passed to another run."""
    deadline = time.monotonic() + wait_seconds
    pause = 0.05
    token = lease.acquire(key)
    while token is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"lease {key} stayed taken for {wait_seconds:.0f} s")
        ctx.check_lease()
        time.sleep(pause)
        pause = min(pause * 2, 1.0)
        token = lease.acquire(key)
    held = token
    stop, lost = threading.Event(), threading.Event()
    period = get_settings().commit_lease_seconds / 3

    def renew() -> None:
        while not stop.wait(period):
            try:
                if not lease.renew(key, held):
                    lost.set()
                    return
            except Exception:  # a store blip: the next renewal or the final check decides
                continue

    def check() -> None:
        if lost.is_set() or not lease.renew(key, held):
            raise CommitLeaseLost(key)

    thread = threading.Thread(target=renew, name=f"lease-{key}", daemon=True)
    thread.start()
    try:
        yield check
    finally:
        stop.set()
        thread.join(timeout=1)
        with contextlib.suppress(Exception):  # it expires on its own
            lease.release(key, held)
