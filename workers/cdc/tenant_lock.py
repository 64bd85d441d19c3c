"""A tenant's lock for one dumper or processor run: the commit lease (`app/lake/lease.py`) under
a key of the tenant, renewed in the background for as long as the run lasts; each commit of the
run renews it once more right before it (the pipeline, given the token as a held lease)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.lake import lease
from workers.runtime import JobContext


@contextmanager
def tenant_lock(ctx: JobContext, key: str, wait_seconds: float) -> Iterator[int]:
    """Hold the lease `key` (waiting up to `wait_seconds`: LeaseTimeout, a TimeoutError, after);
    yields its token."""
    held = lease.wait(key, seconds=wait_seconds, check=ctx.check_lease, user="cdc", max_pause=1.0)
    with lease.renewed(key, held):  # lost: the run's next commit finds out (CommitLeaseLost)
        yield held
