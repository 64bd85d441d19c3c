"""Jobs in flight per org: a request that would queue more than the org's cap of queued and
running jobs is a 429 (checked at enqueue time, in the request's transaction, so a refused
request leaves nothing behind).

Every queued job counts, restatements carried by another job's message (`publish=False`)
included: the cap bounds the work an org has waiting, and a carried restatement still adds
tombstones to a group commit. The same count sets the broker priority of the job's message
(`broker_priority`), so one org's backlog does not starve another org's first jobs on the
workers. The count is not locked: requests of one org running at the same
moment may each see room and overshoot the cap by as many as run at once (a fairness limit, not
an exact quota; a lock per org would make one org's flood hold every pooled connection).
"""

from __future__ import annotations

import time

from sqlalchemy.orm import Session

from app.config import Settings, get_settings
from app.errors import TooManyRequests
from app.jobs import repository
from app.limits.rejections import REJECTIONS


def inflight_cap(settings: Settings, org: str) -> int:
    """The org's cap on queued + running jobs (its override, else the default); 0 = none."""
    own = settings.org_limits.get(org)
    if own is not None and own.max_inflight_jobs is not None:
        return own.max_inflight_jobs
    return settings.max_inflight_jobs_per_org


# An org's jobs in flight below the first number → the broker priority of its next job (Redis
# consumes lower numbers first: kombu keeps one list per step 0, 3, 6, 9); 9 beyond them.
FAIR_PRIORITIES = ((4, 0), (16, 3), (64, 6))


# An org far below its cap (under half of it) is not counted again for this long: at hundreds
# of requests a second, a count per request is a query per request that cannot refuse anything.
# The estimate then grows by one per job this process queues; near the cap, every request
# counts. (Broker priorities only use the low steps of FAIR_PRIORITIES.)
FRESH_SECONDS = 0.25
_known: dict[str, tuple[float, int]] = {}  # org → (time.monotonic() of its count, estimate)


def job_backlog(session: Session, org: str, *, enforce: bool) -> int:
    """The org's queued and running jobs (counted as far as the cap and priorities need);
    with `enforce`, TooManyRequests (429) when they reach the org's cap."""
    settings = get_settings()
    cap = inflight_cap(settings, org)
    now, known = time.monotonic(), _known.get(org)
    far_below = (
        known is not None
        and now - known[0] < FRESH_SECONDS
        and known[1] >= FAIR_PRIORITIES[-1][0]
        and (cap == 0 or known[1] < cap // 2)
    )
    if known is not None and far_below:
        counted = known[1]
        _known[org] = (known[0], counted + 1)
    else:
        counted = repository.count_active(session, org, up_to=max(cap, FAIR_PRIORITIES[-1][0]))
        _known[org] = (now, counted + 1)
    if not enforce or cap == 0 or counted < cap:
        return counted
    REJECTIONS.labels("inflight_jobs").inc()
    seconds = settings.inflight_retry_after_seconds
    raise TooManyRequests(
        f"org {org!r} has {cap} jobs queued or running, its limit; retry after {seconds} s, "
        "once some have finished (GET /v1/jobs?state=queued lists them)",
        limit="inflight_jobs",
        retry_after=seconds,
    )


def broker_priority(backlog: int) -> int:
    """The priority of an org's next job message: its first jobs overtake another org's
    backlog in the one queue every worker reads (Redis; the embedded broker keeps FIFO)."""
    return next((priority for below, priority in FAIR_PRIORITIES if backlog < below), 9)
