"""Resolving a change range (ids or times, expiry-aware) and starting exports."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from sqlalchemy.orm import Session

from app.changes import repository
from app.changes.schemas import ExportCreate, ExportOut
from app.errors import Gone, InvalidInput, SnapshotNotFound
from app.jobs import service as jobs
from app.jobs.kinds import ExportPayload, JobKind
from app.lake import changes, changes_read, snapshots
from app.models import Dataset, ExpiredSnapshot
from app.privacy import reads as gdpr
from app.retention import service as retention


def _time(name: str, value: str) -> datetime:
    try:
        return snapshots.parse_time(value)
    except ValueError:
        raise InvalidInput(f"{name}={value!r} is not an ISO 8601 time") from None


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class RangeResolver:
    """Snapshots named by id or time, with 404 for unknown ones and 410 for expired ones."""

    def __init__(self, session: Session, dataset: Dataset, table: Table) -> None:
        self.session, self.dataset, self.table = session, dataset, table

    def expired(self, snapshot_id: int) -> ExpiredSnapshot | None:
        return repository.expired_snapshot(self.session, self.dataset.id, snapshot_id)

    def any_expired(self) -> bool:
        return repository.any_expired(self.session, self.dataset.id)

    def gone(self, snapshot_id: int | None, what: str) -> Gone:
        retained = sorted(self.table.snapshots(), key=lambda s: s.sequence_number or 0)
        oldest = retained[0] if retained else None
        where = (
            f"the oldest retained snapshot is {oldest.snapshot_id} (committed "
            f"{datetime.fromtimestamp(oldest.timestamp_ms / 1000, UTC).isoformat()})"
            if oldest
            else "no snapshot is retained"
        )
        return Gone(
            f"{what} reaches snapshot {snapshot_id}, expired by retention; {where}. Read the "
            "rows at a retained snapshot (GET /rows?as_of=) and take increments from there",
            snapshot_id=snapshot_id,
            oldest_retained_snapshot_id=oldest.snapshot_id if oldest else None,
        )

    def by_id(self, name: str, snapshot_id: int) -> Snapshot:
        snapshot = self.table.snapshot_by_id(snapshot_id)
        if snapshot is not None:
            return snapshot
        if self.expired(snapshot_id) is not None:
            raise self.gone(snapshot_id, f"{name}={snapshot_id}")
        raise SnapshotNotFound(
            f"{name}={snapshot_id} is not in dataset {self.dataset.id!r}'s snapshot log"
            + retention.forgotten_hint(self.session, self.dataset.id)
        )

    def by_time(self, name: str, value: str) -> Snapshot | None:
        """The latest snapshot committed at or before the time (None: before the first)."""
        moment = _time(name, value)
        found = snapshots.snapshot_at(self.table, moment)
        floor = (found.sequence_number or 0) if found else -1
        lost = repository.last_expired_after(self.session, self.dataset.id, floor, moment)
        if lost is not None and _aware(lost.committed_at) <= moment:
            raise self.gone(lost.snapshot_id, f"{name}={value}")
        return found

    def resolve(
        self,
        from_snapshot: int | None,
        to_snapshot: int | None,
        since: str | None,
        until: str | None,
    ) -> changes.ChangeRange:
        if from_snapshot is not None and since:
            raise InvalidInput("give from_snapshot or since, not both")
        if to_snapshot is not None and until:
            raise InvalidInput("give to_snapshot or until, not both")
        if to_snapshot is not None:
            end: Snapshot | None = self.by_id("to_snapshot", to_snapshot)
        elif until:
            end = self.by_time("until", until)
        else:
            end = self.table.current_snapshot()
        start: Snapshot | None = None
        if from_snapshot is not None:
            start = self.by_id("from_snapshot", from_snapshot)
        elif since:
            start = self.by_time("since", since)
        try:
            return changes.snapshot_range(self.table, start, end)
        except changes.MissingSnapshot as exc:
            if self.expired(exc.snapshot_id) is not None or self.any_expired():
                raise self.gone(exc.snapshot_id, "the range") from None
            raise InvalidInput(
                f"the range needs snapshot {exc.snapshot_id}, which is not in the snapshot log"
            ) from None
        except changes.NotAncestor as exc:
            raise InvalidInput(
                f"{exc}: an increment runs from a snapshot to one of its descendants"
            ) from None


def resolve(
    session: Session,
    dataset: Dataset,
    table: Table,
    *,
    from_snapshot: int | None = None,
    to_snapshot: int | None = None,
    since: str | None = None,
    until: str | None = None,
) -> changes.ChangeRange:
    return RangeResolver(session, dataset, table).resolve(from_snapshot, to_snapshot, since, until)


@dataclass(frozen=True)
class ChangeStream:
    """The rows of one kind of change over a resolved range, as Arrow batches."""

    range: changes.ChangeRange
    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]


def read_changes(
    session: Session,
    dataset: Dataset,
    table: Table,
    kind: str,
    *,
    from_snapshot: int | None = None,
    to_snapshot: int | None = None,
    since: str | None = None,
    until: str | None = None,
) -> ChangeStream:
    """Resolve the range (404 unknown, 410 expired snapshots) and read its changes of `kind`."""
    rng = resolve(
        session,
        dataset,
        table,
        from_snapshot=from_snapshot,
        to_snapshot=to_snapshot,
        since=since,
        until=until,
    )
    erased = gdpr.in_force(session, dataset.id, table)
    schema, batches = changes_read.read_changes(
        table, rng, kind, list(dataset.identity_columns), erased
    )
    return ChangeStream(rng, schema, batches)


def start_export(
    session: Session, org: str, dataset: Dataset, table: Table, body: ExportCreate
) -> ExportOut:
    """Resolve the range now (errors are the caller's) and queue the Spark export job."""
    rng = resolve(
        session,
        dataset,
        table,
        from_snapshot=body.from_snapshot,
        to_snapshot=body.to_snapshot,
        since=body.since,
        until=body.until,
    )
    first = rng.start.snapshot_id if rng.start else None
    last = rng.end.snapshot_id if rng.end else None
    job = jobs.enqueue(
        session,
        JobKind.EXPORT,
        org=org,
        subject_id=dataset.id,
        payload=ExportPayload(kind=body.kind, from_snapshot_id=first, to_snapshot_id=last),
    )
    return ExportOut(
        kind=body.kind, from_snapshot_id=first, to_snapshot_id=last, job=jobs.to_out(job)
    )
