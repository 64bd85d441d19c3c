"""A tenant's lock for one dumper or processor run: the commit lease (`app/lake/lease.py`) under
a key of the tenant, renewed in the background for as long as the run lasts; each commit of the
run renews it once more right before it (the pipeline, given the token as a held lease)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from app.config import get_settings
from app.lake import lease
from workers.runtime import JobContext


@contextmanager
def tenant_lock(ctx: JobContext, key: str, wait_seconds: float) -> Iterator[int]:
    """Hold the lease `key` (waiting up to `wait_seconds`: LeaseTimeout, a TimeoutError, after);
    yields its token."""
    held = lease.wait(key, seconds=wait_seconds, check=ctx.check_lease, user="cdc", max_pause=1.0)
    stop = threading.Event()
    period = get_settings().commit_lease_seconds / 3

    def renew() -> None:
        while not stop.wait(period):
            try:
                if not lease.renew(key, held):
                    return  # lost: the run's next commit finds out (CommitLeaseLost)
            except Exception:  # a store blip: the next renewal or the commit's decides
                continue

    thread = threading.Thread(target=renew, name=f"lease-{key}", daemon=True)
    thread.start()
    try:
        yield held
    finally:
        stop.set()
        thread.join(timeout=1)
        with contextlib.suppress(Exception):  # it expires on its own
            lease.release(key, held)
