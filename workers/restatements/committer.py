"""The group committer: the holder of a dataset's commit lease commits every ready restatement.

Restatements that are ready together (of one kind) become one group, one snapshot; each keeps
its own result (`group.py` commits and records a group). A committer that dies mid-group leaves
it `committing`; the next holder commits it under the same commit id, and the snapshot log
decides whether it landed, so no group is ever committed twice.
"""

from __future__ import annotations

import logging
import time
import uuid

from pyiceberg.table import Table

from app.config import get_settings
from app.db import session_scope
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake import lease
from app.lake.catalog import get_catalog
from app.maintenance import service as maintenance
from app.models import Dataset, RestatementState
from app.restatements import repository as restatements
from workers import runtime
from workers.restatements.group import commit_group
from workers.runtime import JobContext, PermanentJobError

log = logging.getLogger(__name__)


def wait_until_committed(ctx: JobContext, restatement_id: str, dataset_id: str) -> None:
    """Return once the restatement is committed, committing it (and others) if need be.

    A committer that handed the lease to a maintenance job with groups left to commit takes it
    back once that job has committed, even when its own restatement is committed already: were
    it to leave, the groups left would wait for a worker slot to take a new message, behind
    the jobs queued meanwhile (at scale, seconds a burst: bench/RESULTS.md, "Costs at scale").
    Its own job was settled by its group's record then: it no longer checks the job's attempt,
    and waits as long as the maintenance job is at its commit stage (a dead one stops counting
    once its heartbeat is stale: `lease.maintenance_waiting`)."""
    last_beat, pause = time.monotonic(), 0.02
    waiting_since: float | None = last_beat  # until the lease is first ours (a metric)
    handed_over = False  # the last drain stopped for a maintenance job, with groups left
    while True:
        with session_scope() as session:
            state = restatements.state_of(session, restatement_id)
        committed = state == RestatementState.COMMITTED
        if committed and not handed_over:
            pass_on(dataset_id)
            return
        if state == RestatementState.FAILED:
            pass_on(dataset_id)
            raise PermanentJobError(f"restatement {restatement_id} failed")
        token = lease.acquire_unless_yielding(dataset_id)
        if token is not None:
            if waiting_since is not None:
                lease.LEASE_WAIT.labels("restate").observe(time.monotonic() - waiting_since)
                waiting_since = None
            try:
                handed_over = drain(dataset_id, token)
            finally:
                lease.release(dataset_id, token)
            pause = 0.02
            continue
        if time.monotonic() - last_beat > 1.0:
            if not committed:  # once it is, the job is over: the group's record settled it
                ctx.check_lease()
            last_beat = time.monotonic()
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def pass_on(dataset_id: str) -> None:
    """Before a committer leaves: when ready restatements of the dataset are left whose jobs
    ride on no message (carried: `app/restatements/service._enqueue`) and no queued job of a
    ready one has a message, send the oldest such job's message, so a worker drains them.

    A committer leaves once its own restatement is committed. A restatement carried by a job X
    whose restatement this committer's group took (its request raced the group's claim) is
    left ready when the drain handed the lease to a maintenance job (`drain`): X's worker finds
    X finished, and no message would come for it until the reconciler's forgotten-job pass,
    5 x `stale_after_seconds` (300 s by default) later."""
    with session_scope() as session:
        job = restatements.carried_without_carrier(session, dataset_id)
        if job is None:
            return
        log.info(
            "dataset %s: ready restatements left without a message; sending job %s's",
            dataset_id,
            job.id,
        )
        jobs.add_outbox(session, job)


def _load(dataset_id: str) -> Table:
    with session_scope() as session:
        dataset = session.get(Dataset, dataset_id)
        assert dataset is not None
        identifier = dataset.table_identifier
    return get_catalog().load_table(identifier)


def drain(dataset_id: str, token: int) -> bool:
    """Under the lease: finish interrupted groups, then commit ready groups until none is left,
    or until a maintenance job waits for the lease (it goes next; app/lake/lease.py): whether
    it stopped for one with ready restatements left. Between
    groups, a materialize job of the dataset queued for longer than
    `materialize_inline_after_seconds` is run here, under this lease: the worker's slots may all
    be held by committers draining a flood (a solo worker's one slot is this one), and the
    materializer's lag must not last as long as the flood."""
    table = _load(dataset_id)
    for commit_id in _interrupted(dataset_id):
        commit_group(table, dataset_id, token, commit_id)
    while not lease.maintenance_waiting(dataset_id):
        claimed = _claim_next_group(dataset_id)
        if claimed is None:
            return False
        commit_group(table, dataset_id, token, claimed)
        if _materialize_overdue(dataset_id, token):
            table = _load(dataset_id)  # the materializer's snapshot is the next parent
    log.info("dataset %s: handing the commit lease to a waiting maintenance job", dataset_id)
    with session_scope() as session:
        return restatements.any_ready(session, dataset_id)


# per dataset, the materialize job this process last found queued and when it first did (its
# own monotonic clock: a job's created_at is its creator's clock, which may be skewed)
_queued_since: dict[str, tuple[str, float]] = {}


def _materialize_overdue(dataset_id: str, token: int) -> bool:
    """Run the dataset's materialize job under `token` when this process has seen it queued for
    `materialize_inline_after_seconds`; whether one ran."""
    after = get_settings().materialize_inline_after_seconds
    if after <= 0:
        return False
    with session_scope() as session:
        job = maintenance.queued_materialize(session, dataset_id)
        job_id = job.id if job is not None else None
    if job_id is None:
        _queued_since.pop(dataset_id, None)
        return False
    now = time.monotonic()
    seen, since = _queued_since.get(dataset_id, (None, now))
    if seen != job_id:
        _queued_since[dataset_id] = (job_id, now)
        since = now
    if now - since < after:
        return False
    _queued_since.pop(dataset_id, None)
    log.info(
        "dataset %s: materialize job %s overdue, running it between groups", dataset_id, job_id
    )
    runtime.run_inline(JobKind.MATERIALIZE, job_id, token)
    return True


def _interrupted(dataset_id: str) -> list[str]:
    """Commit ids of groups a previous committer marked `committing` and did not record.

    Such a group keeps its commit id for life: whether it landed is decided by the snapshot log
    (checked before every attempt), so it can never be committed twice under two ids.
    """
    with session_scope() as session:
        return restatements.interrupted_commit_ids(session, dataset_id)


def _claim_next_group(dataset_id: str) -> str | None:
    """Mark the next group `committing` under a new commit id: the oldest ready restatement's
    kind, and every ready one of that kind (capped in tombstones)."""
    cap = get_settings().max_group_tombstones
    with session_scope() as session:
        rows = restatements.ready(session, dataset_id)
        if not rows:
            return None
        kind, count = rows[0].kind, 0
        group: list[str] = []
        for row in rows:
            if row.kind != kind:
                continue
            if group and count + len(row.ids) > cap:
                break
            group.append(row.id)
            count += len(row.ids)
        commit_id = f"group-{uuid.uuid4()}"
        restatements.claim(session, group, commit_id)
    return commit_id
