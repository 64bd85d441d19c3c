"""The warehouse against the snapshots: every file a retained snapshot needs is there, and no
unreferenced file older than the dataset's orphan age is left (orphan cleanup's own selection,
`app.lake.retention.orphans`, decides which; the repair deletes exactly those)."""

from __future__ import annotations

from pyiceberg.table import Table

from app import clock
from app.db import session_scope
from app.doctor.findings import Finding, Subject, finding
from app.lake import retention
from app.lake.catalog import get_catalog
from app.lake.tombstones import FOLDER
from app.retention import service as retention_service

CHECK = "orphans"
MISSING = "files"
SHOWN = 5


def check(subject: Subject) -> list[Finding]:
    table = subject.table
    snapshot_files = retention.FileIndex(table).referenced(table.snapshots(), readable=True)
    referenced = snapshot_files | retention.metadata_in_use(table)
    existing = {f.path for f in retention.list_files(table)}
    out: list[Finding] = []
    # manifest lists, manifests and data files; tombstone files have their own check
    # (`app.doctor.tombstones`, which says what they held), and the metadata log may name
    # metadata files Iceberg itself deleted
    missing = sorted(p for p in snapshot_files - existing if f"/{FOLDER}/" not in p)
    if missing:
        out.append(
            finding(
                subject,
                MISSING,
                f"{len(missing)} files that retained snapshots reference are missing from the "
                f"warehouse: {_some(missing)}; reads that touch them fail",
                "restore them from a backup of the warehouse; never let Iceberg's own "
                "remove_orphan_files or expire_snapshots run on an Icebatch table",
            )
        )
    orphans = find_orphans(table, referenced, subject.dataset_id, subject.policy.orphan_age_seconds)
    if orphans:
        size = sum(o.size for o in orphans)
        out.append(
            finding(
                subject,
                CHECK,
                f"{len(orphans)} files ({size} bytes) under the table location are referenced by "
                "no retained snapshot and older than the orphan age "
                f"({subject.policy.orphan_age_seconds:g} s), or staged by a replay that "
                f"finished: {_some([o.path for o in orphans])}",
                "--repair deletes them, as the expire job's orphan cleanup does",
                repair=lambda: delete_orphans(
                    subject.dataset_id, subject.identifier, subject.policy.orphan_age_seconds
                ),
            )
        )
    return out


def referenced_files(table: Table) -> set[str]:
    """Every file the table's snapshots need (as orphan cleanup counts them)."""
    referenced = retention.FileIndex(table).referenced(table.snapshots(), readable=True)
    return referenced | retention.metadata_in_use(table)


def find_orphans(
    table: Table, referenced: set[str], dataset_id: str, orphan_age_seconds: float
) -> list[retention.ListedFile]:
    """What orphan cleanup would delete now."""
    with session_scope() as session:
        cutoff = retention_service.orphan_cutoff(
            session, dataset_id, orphan_age_seconds, clock.now()
        )
        in_flight, finished = retention_service.staged_batches(session, dataset_id)
    return retention.orphans(
        table, referenced, cutoff=cutoff, in_flight=in_flight, finished=finished
    )


def delete_orphans(dataset_id: str, identifier: str, orphan_age_seconds: float) -> str:
    """Select the orphans again (the table may have moved since the check) and delete them."""
    table = get_catalog().load_table(identifier)
    orphans = find_orphans(table, referenced_files(table), dataset_id, orphan_age_seconds)
    sizes = {o.path: o.size for o in orphans}
    deleted = retention.delete_files(table, sorted(sizes))
    return f"deleted {len(deleted)} orphan files ({sum(sizes[p] for p in deleted)} bytes)"


def _some(paths: list[str]) -> str:
    more = len(paths) - SHOWN
    return ", ".join(paths[:SHOWN]) + (f" and {more} more" if more > 0 else "")
