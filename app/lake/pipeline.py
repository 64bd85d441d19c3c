"""The commit pipeline: every write to a dataset's table goes through `run`.

An operation (`Operation`) says what it is (`OperationKind`), plans its write (it may use Spark),
commits the plan through one engine adapter (the fenced PyIceberg commit of `app/lake/commit.py`,
Iceberg's Java rewrite / row-delta in `workers/spark/iceberg_java.py`, or a Spark append), and
records the outcome through its domain's service. Everything DESIGN.md §4 asks of a commit is
done here, once, for every operation:

- **once**: before each plan and each commit attempt the snapshot log is searched for the
  operation's request id (`icebatch.request-id`), on the very table state the attempt is fenced
  to, so a retried or duplicated job records the snapshot that landed instead of committing again;
- **serialized**: operations that change tombstones or files (`Lease`) commit under the dataset's
  commit lease (`app/lake/lease.py`), renewed right before each attempt, after checking that the
  job still owns its attempt (`Job.check_lease`);
- **fenced**: a commit that meets a new parent (`ParentMoved`) is built again on the new parent,
  up to `attempts` times; a plan the new state invalidates (`Replan`, from an attempt or from
  the planning itself) is discarded and made again, up to `replans` times — never replayed as
  it was;
- **nothing left behind**: the files a plan wrote are removed when it is dropped or fails, unless
  its snapshot landed after all (a commit whose outcome is unknown is looked up, not guessed);
- the failpoints the crash tests pause at fire at the same places for every operation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app.failpoints import failpoint
from app.lake import lease, snapshots
from app.lake.commit import ParentMoved

log = logging.getLogger(__name__)


class OperationKind(StrEnum):
    """What a commit does; the value is the snapshot summary's `icebatch.operation`, except for
    restatement groups, whose summary names their kind (revert, replay, gdpr)."""

    INGEST = "ingest"
    RESTATE = "restate"
    VACUUM = "vacuum"
    COMPACT = "compact"
    MATERIALIZE = "materialize"
    CDC_STAGE = "cdc-stage"
    CDC_MERGE = "cdc"
    AUDIT_ARCHIVE = "audit-archive"

    @property
    def failpoints(self) -> tuple[str, str]:
        """The pauses (before, after) its commit (the names the crash tests use)."""
        return _FAILPOINTS[self]


_FAILPOINTS = {
    OperationKind.INGEST: ("ingest-spark", "after-ingest-commit"),
    OperationKind.RESTATE: ("before-commit", "after-commit"),
    OperationKind.VACUUM: ("before-rewrite-commit", "after-rewrite-commit"),
    OperationKind.COMPACT: ("before-rewrite-commit", "after-rewrite-commit"),
    OperationKind.MATERIALIZE: ("before-materialize-commit", "after-materialize-commit"),
    OperationKind.CDC_STAGE: ("cdc-stage-before-commit", "cdc-stage-after-commit"),
    OperationKind.CDC_MERGE: ("cdc-process-before-commit", "cdc-process-after-commit"),
    OperationKind.AUDIT_ARCHIVE: ("audit-archive-before-commit", "audit-archive-after-commit"),
}


class Replan(Exception):
    """The plan no longer fits the table (its files changed): drop it and plan again."""


class GaveUp(RuntimeError):
    """The table kept changing for longer than the operation's budget; the job retries."""


@dataclass(frozen=True)
class Committed:
    """A snapshot an operation landed (or found landed: `recovered`)."""

    snapshot_id: int
    sequence_number: int
    operation: str  # Iceberg's: append, replace, overwrite, delete
    recovered: bool = False
    snapshot: Snapshot | None = field(default=None, compare=False)  # when PyIceberg's

    @classmethod
    def of(cls, snapshot: Snapshot, *, recovered: bool = False) -> Committed:
        summary = snapshot.summary
        return cls(
            snapshot.snapshot_id,
            snapshot.sequence_number or 0,
            summary.operation.value if summary is not None else "append",
            recovered,
            snapshot,
        )


@dataclass(frozen=True)
class Summary:
    """The snapshot summary properties Icebatch writes: typed here, flattened once."""

    operation: str
    request_id: str
    batch_id: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def properties(self) -> dict[str, str]:
        out = {snapshots.OPERATION: self.operation, snapshots.REQUEST_ID: self.request_id}
        if self.batch_id is not None:
            out[snapshots.BATCH_ID] = self.batch_id
        return out | self.extra


class Job(Protocol):
    """What the pipeline needs of the job that runs an operation (`workers.runtime.JobContext`)."""

    def check_lease(self) -> None:
        """Raise unless the job still owns its attempt (it was not re-queued meanwhile)."""
        ...


@dataclass(frozen=True)
class Lease:
    """Commit under the dataset's commit lease: taken for the commit (waiting up to
    `wait_seconds`), or `held` already by the caller (a group committer's token)."""

    dataset_id: str
    wait_seconds: float = 0.0
    held: int | None = None


P = TypeVar("P")
R = TypeVar("R", bound=BaseModel)
R_co = TypeVar("R_co", bound=BaseModel, covariant=True)


@dataclass(frozen=True)
class Tables:
    """How the pipeline gets the table: `load` before each plan; before each commit attempt,
    `reload` (default: `load`) — except the first attempt when `reuse_planned` (the planned
    table is current: a group committer's table, kept current by its own commits)."""

    load: Callable[[], Table]
    reload: Callable[[Table], Table] | None = None
    reuse_planned: bool = False

    def again(self, table: Table) -> Table:
        return self.reload(table) if self.reload is not None else self.load()


class Operation(Protocol[P, R_co]):
    """One write to a table, in the pipeline's steps."""

    kind: OperationKind
    request_id: str  # what its snapshot carries as icebatch.request-id

    def plan(self, table: Table) -> P | None:
        """What to commit on `table`'s current snapshot; None when there is nothing to commit
        (then `nothing` is the result). May raise Replan."""
        ...

    def commit(self, table: Table, plan: P, summary: Summary) -> Committed | None:
        """Commit `plan` on `table`'s current snapshot through an engine adapter: what landed,
        or None when the engine does not say (a Spark write: the pipeline finds its snapshot
        by the request id). Raises ParentMoved when the parent moved (built again on the new
        one) or Replan."""
        ...

    def summary(self, plan: P) -> Summary: ...

    def discard(self, plan: P) -> None:
        """Remove the files the plan wrote (it will never be committed)."""
        ...

    def record(self, committed: Committed, plan: P | None) -> R_co:
        """Record the outcome through the owning domain's service; the job's result. `plan` is
        None when a previous attempt's snapshot was found in the log."""
        ...

    def nothing(self) -> R_co:
        """The result when `plan` found nothing to commit."""
        ...


@dataclass
class Budget:
    replans: int = 4
    attempts: int = 8


@dataclass(frozen=True)
class _Run(Generic[P, R]):
    op: Operation[P, R]
    tables: Tables
    job: Job | None
    lease: Lease | None
    budget: Budget


def run(
    operation: Operation[P, R],
    tables: Tables | Callable[[], Table],
    *,
    job: Job | None,
    lease: Lease | None = None,
    budget: Budget | None = None,
) -> R:
    """Run `operation`: look up → plan → lease → attempts → record (see the module's
    docstring). `tables` may be a plain loader (the table loaded before each plan and each
    commit attempt)."""
    if not isinstance(tables, Tables):
        tables = Tables(tables)
    it = _Run(operation, tables, job, lease, budget or Budget())
    op = operation
    for plans in range(1, it.budget.replans + 1):
        table = tables.load()
        landed = snapshots.find_by_request_id(table, op.request_id)
        if landed is not None:  # a retry of a job whose commit landed
            log.info("%s %s already landed as %s", op.kind, op.request_id, landed.snapshot_id)
            return op.record(Committed.of(landed, recovered=True), None)
        try:
            plan = op.plan(table)
        except Replan as exc:  # found while planning (the op dropped what it wrote)
            log.info("%s %s: %s; planning again (%s)", op.kind, op.request_id, exc, plans)
            continue
        if plan is None:
            return op.nothing()
        try:
            with _holding(it) as token:
                committed = _attempts(it, plan, table, token)
        except Replan as exc:
            op.discard(plan)
            log.info("%s %s: %s; planning again (%s)", op.kind, op.request_id, exc, plans)
            continue
        except BaseException:
            if not _landed_after_all(it):
                op.discard(plan)
            raise
        failpoint(op.kind.failpoints[1])
        return op.record(committed, plan)
    raise GaveUp(f"{op.kind} {op.request_id}: the table kept changing ({plans} plans)")


@contextmanager
def _holding(it: _Run[P, R]) -> Iterator[int | None]:
    """The commit lease's token for the attempts: none, the caller's, or taken here."""
    spec = it.lease
    if spec is None or spec.held is not None:
        yield spec.held if spec is not None else None
        return
    check = it.job.check_lease if it.job is not None else _nothing
    user = "restate" if it.op.kind is OperationKind.RESTATE else "rewrite"
    with lease.holding(
        spec.dataset_id, seconds=spec.wait_seconds, check=check, user=user, operation=it.op.kind
    ) as t:
        yield t


def _attempts(it: _Run[P, R], plan: P, planned: Table, token: int | None) -> Committed:
    op, tables, spec = it.op, it.tables, it.lease
    summary = op.summary(plan)
    table = planned if tables.reuse_planned else tables.load()
    for attempt in range(it.budget.attempts):
        if attempt:
            table = tables.again(table)
        landed = snapshots.find_by_request_id(table, op.request_id)
        if landed is not None:
            return Committed.of(landed, recovered=True)
        if token is not None and spec is not None and not lease.renew(spec.dataset_id, token):
            raise lease.CommitLeaseLost(spec.dataset_id)
        if it.job is not None:
            it.job.check_lease()
        failpoint(op.kind.failpoints[0])
        try:
            committed = op.commit(table, plan, summary)
        except ParentMoved as exc:
            log.info("%s %s: the parent moved (%s, %s)", op.kind, op.request_id, exc, attempt)
            continue
        if committed is not None:
            return committed
        landed = snapshots.find_by_request_id(tables.again(table), op.request_id)
        if landed is None:
            raise RuntimeError(f"{op.kind} {op.request_id}: committed, yet not in the log")
        return Committed.of(landed)
    raise GaveUp(f"{op.kind} {op.request_id}: the parent kept moving")


def _landed_after_all(it: _Run[P, R]) -> bool:
    """Whether the operation's snapshot is in the log (a commit whose outcome the failure left
    unknown): then its files are the table's, never to be discarded."""
    try:
        tables = it.tables
        table = tables.reload(tables.load()) if tables.reload else tables.load()
        return snapshots.find_by_request_id(table, it.op.request_id) is not None
    except Exception:  # the store or catalog is away: keep the files (orphan cleanup)
        log.warning("could not tell whether %s landed; keeping its files", it.op.request_id)
        return True


def _nothing() -> None:
    return None
