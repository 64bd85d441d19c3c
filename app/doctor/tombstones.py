"""Tombstone files: every list in force at a retained snapshot, each of its segments and each
readable vacuumed-tombstones file can be read, and each segment holds what its list says.

Files are read from the warehouse, not from the process's file cache, so a file lost or damaged
since it was cached is seen. A lost tombstone cannot be rebuilt safely (it would need a new
commit): these findings need a human.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from app.db import session_scope
from app.doctor import repository
from app.doctor.findings import Finding, Subject, finding
from app.lake import tombstones
from app.lake.snapshots import own_properties
from app.models import Restatement, RestatementState

CHECK = "tombstones"
RESTORE = (
    "restore the file from a backup of the warehouse (tombstone files are immutable: never "
    "write one by hand); until then {} fail"
)
READS = "reads of those snapshots"


def check(subject: Subject) -> list[Finding]:
    table = subject.table
    users: dict[str, list[int]] = {}  # list location -> snapshots it is in force at
    for snapshot in table.snapshots():
        location = tombstones.list_location(table, snapshot)
        if location:
            users.setdefault(location, []).append(snapshot.snapshot_id)
    out: list[Finding] = []
    segments: dict[str, tuple[tombstones.Segment, list[int]]] = {}
    for location, at in users.items():
        try:
            listed = read_list(subject, location)
        except Exception as exc:
            out.append(
                finding(
                    subject,
                    CHECK,
                    f"the tombstone list {location}, in force at {_snapshots(at)}, cannot be "
                    f"read ({_reason(exc)})",
                    RESTORE.format(READS),
                )
            )
            continue
        for segment in listed.segments:
            segments.setdefault(segment.path, (segment, []))[1].extend(at)
    with session_scope() as session:
        committed = [
            r
            for r in repository.restatements(session, subject.dataset_id)
            if r.state == RestatementState.COMMITTED
        ]
    for segment, at in segments.values():
        problem = _segment_problem(subject, segment)
        if problem is not None:
            out.append(
                finding(
                    subject,
                    CHECK,
                    f"the tombstone segment {segment.path} ({segment.count} tombstones added at "
                    f"sequence numbers {segment.min_seq}..{segment.max_seq}, in force at "
                    f"{_snapshots(at)}) {problem}",
                    f"{RESTORE.format(READS)}. It holds tombstones of "
                    f"{_owners(committed, segment)}",
                )
            )
    out += _vacuum_files(subject)
    return out


def read_list(subject: Subject, location: str) -> tombstones.TombstoneList:
    with subject.table.io.new_input(location).open() as stream:
        return tombstones.TombstoneList.from_json(stream.read().decode())


def _segment_problem(subject: Subject, segment: tombstones.Segment) -> str | None:
    try:
        with subject.table.io.new_input(segment.path).open() as stream:
            rows = pq.read_table(stream, schema=tombstones.SCHEMA)
    except Exception as exc:
        return f"cannot be read ({_reason(exc)})"
    if rows.num_rows != segment.count:
        return f"holds {rows.num_rows} tombstones where its list says {segment.count}"
    return None


def _vacuum_files(subject: Subject) -> list[Finding]:
    """A vacuum snapshot's vacuumed-tombstones file is read by increments that start before it,
    as long as its parent is retained."""
    table = subject.table
    ids = {s.snapshot_id for s in table.snapshots()}
    out = []
    for snapshot in table.snapshots():
        path = own_properties(snapshot).get(tombstones.VACUUM_FILE)
        if not path or snapshot.parent_snapshot_id not in ids:
            continue
        try:
            with table.io.new_input(path).open() as stream:
                pq.read_table(stream, schema=tombstones.SCHEMA)
        except Exception as exc:
            out.append(
                finding(
                    subject,
                    CHECK,
                    f"the vacuumed-tombstones file {path} of vacuum snapshot "
                    f"{snapshot.snapshot_id} cannot be read ({_reason(exc)}): increments that "
                    "start before that vacuum fail",
                    RESTORE.format("those increments"),
                )
            )
    return out


def _owners(committed: list[Restatement], segment: tombstones.Segment) -> str:
    """The committed restatements whose tombstones the segment may hold (by sequence number)."""
    owners = [
        f"{r.kind} {r.id}"
        for r in committed
        if r.sequence_number is not None and segment.min_seq <= r.sequence_number <= segment.max_seq
    ]
    return "restatements " + ", ".join(owners) if owners else "no restatement still on record"


def _snapshots(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in sorted(set(ids))[:5])
    more = len(set(ids)) - 5
    return f"snapshots {shown}" + (f" and {more} more" if more > 0 else "")


def _reason(exc: Exception) -> str:
    if isinstance(exc, FileNotFoundError):
        return "the file is missing"
    if isinstance(exc, json.JSONDecodeError | KeyError | TypeError):
        return f"not a tombstone list: {exc}"
    return f"{type(exc).__name__}: {exc}"[:300]
