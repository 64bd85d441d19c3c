"""Snapshot retention: which snapshots a policy keeps, and every file each snapshot references.

Iceberg's manifests know data files, manifests and manifest lists; they do not know tombstone
files (lists, segments, vacuumed-tombstone files), which only the snapshot summaries name. Expiry
and orphan cleanup here count both, so they never delete a file a retained snapshot still needs
(Iceberg's own `remove_orphan_files` would delete every tombstone file: never use it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlparse

from pyarrow import fs as pafs
from pyiceberg.manifest import ManifestFile
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app import clock
from app.config import get_settings
from app.lake import tombstones
from app.lake.snapshots import own_properties

VACUUM_FILE = tombstones.VACUUM_FILE
STAGED_PREFIX = "staged-"


@dataclass(frozen=True)
class Policy:
    """How much history a dataset keeps (a dataset's own values override the settings)."""

    min_snapshots: int
    max_snapshot_age_seconds: float
    orphan_age_seconds: float


def effective_policy(own: dict[str, Any] | None) -> Policy:
    """A dataset's own policy values (`Dataset.retention`) over the settings' defaults."""
    settings = get_settings()
    own = own or {}
    return Policy(
        min_snapshots=int(own.get("min_snapshots", settings.retention_min_snapshots)),
        max_snapshot_age_seconds=float(
            own.get("max_snapshot_age_seconds", settings.retention_max_snapshot_age_seconds)
        ),
        orphan_age_seconds=float(own.get("orphan_age_seconds", settings.orphan_age_seconds)),
    )


@dataclass(frozen=True)
class Pin:
    """A consumer checkpoint: it keeps every snapshot from `sequence_number` on."""

    name: str
    sequence_number: int
    set_at: datetime  # when the consumer last set its checkpoint


@dataclass
class RetentionPlan:
    retained: list[Snapshot]
    expired: list[Snapshot]
    pinned_by: dict[str, list[int]] = field(default_factory=dict)
    ignored_pins: list[str] = field(default_factory=list)


def newest_first(snapshots: Iterable[Snapshot]) -> list[Snapshot]:
    return sorted(snapshots, key=lambda s: (s.sequence_number or 0, s.timestamp_ms), reverse=True)


def plan_retention(
    table: Table, policy: Policy, pins: list[Pin], *, now: datetime, pin_max_age_seconds: float
) -> RetentionPlan:
    """Keep the current snapshot, the newest `min_snapshots`, those younger than the max age,
    those pinned by a live consumer, and for each of them the ancestors back to the snapshot
    that owns its tombstone list (`tombstones.list_location` walks there)."""
    snapshots = newest_first(table.snapshots())
    by_id = {s.snapshot_id: s for s in snapshots}
    keep: set[int] = set()
    current = table.current_snapshot()
    if current is not None:
        keep.add(current.snapshot_id)
    keep.update(s.snapshot_id for s in snapshots[: max(policy.min_snapshots, 0)])
    cutoff_ms = (now.timestamp() - policy.max_snapshot_age_seconds) * 1000
    keep.update(s.snapshot_id for s in snapshots if s.timestamp_ms >= cutoff_ms)
    plan = RetentionPlan(retained=[], expired=[])
    for pin in pins:
        if (now - pin.set_at).total_seconds() > pin_max_age_seconds:
            plan.ignored_pins.append(pin.name)
            continue
        pinned = [
            s.snapshot_id for s in snapshots if (s.sequence_number or 0) >= pin.sequence_number
        ]
        plan.pinned_by[pin.name] = pinned
        keep.update(pinned)
    for snapshot_id in list(keep):
        keep.update(list_chain(by_id, by_id[snapshot_id]))
    plan.retained = [s for s in snapshots if s.snapshot_id in keep]
    plan.expired = [s for s in snapshots if s.snapshot_id not in keep]
    return plan


def list_chain(by_id: dict[int, Snapshot], snapshot: Snapshot) -> list[int]:
    """The ancestors of `snapshot` back to the one that owns its tombstone list (none when no
    ancestor has a list: then there is nothing to resolve)."""
    chain: list[int] = []
    while tombstones.FILE not in own_properties(snapshot):
        parent = by_id.get(snapshot.parent_snapshot_id or -1)
        if parent is None:
            return []
        chain.append(parent.snapshot_id)
        snapshot = parent
    return chain


def normalize(location: str) -> str:
    """A location as the file system of the warehouse names it (`file:/a`, `file:///a` → `/a`)."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return "/" + parsed.path.lstrip("/")
    return f"{parsed.netloc}/{parsed.path.lstrip('/')}"


class FileIndex:
    """Files referenced by snapshots of one table (manifests are read once each)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._manifests: dict[str, set[str]] = {}
        self.sizes: dict[str, int] = {}

    def _entries(self, manifest: ManifestFile) -> set[str]:
        path = manifest.manifest_path
        if path not in self._manifests:
            found = set()
            for entry in manifest.fetch_manifest_entry(self.table.io, discard_deleted=True):
                name = normalize(entry.data_file.file_path)
                found.add(name)
                self.sizes[name] = entry.data_file.file_size_in_bytes
            self._manifests[path] = found
        return self._manifests[path]

    def data_files(self, snapshot: Snapshot) -> set[str]:
        """The live data (and delete) files of `snapshot`."""
        out: set[str] = set()
        for manifest in snapshot.manifests(self.table.io):
            out |= self._entries(manifest)
        return out

    def tombstone_files(self, snapshot: Snapshot, vacuumed: bool = True) -> set[str]:
        """The tombstone list in force at `snapshot`, its segments, and its vacuumed file."""
        out: set[str] = set()
        location = tombstones.list_location(self.table, snapshot)
        if location:
            out.add(normalize(location))
            listed = tombstones.read_list(self.table.io, location)
            out.update(normalize(s.path) for s in listed.segments)
        vacuum_file = own_properties(snapshot).get(VACUUM_FILE)
        if vacuum_file and vacuumed:
            out.add(normalize(vacuum_file))
        return out

    def files(self, snapshot: Snapshot, vacuumed: bool = True) -> set[str]:
        """Everything `snapshot` references: manifest list, manifests, data and tombstone files."""
        out = {normalize(snapshot.manifest_list)}
        for manifest in snapshot.manifests(self.table.io):
            out.add(normalize(manifest.manifest_path))
            out |= self._entries(manifest)
        return out | self.tombstone_files(snapshot, vacuumed)

    def referenced(self, snapshots: Iterable[Snapshot], *, readable: bool = False) -> set[str]:
        """Every file the snapshots reference. With `readable`, the set is what stays
        readable: a vacuum snapshot's vacuumed-tombstones file serves only increments that start
        before it, so it counts only while the vacuum's parent is among `snapshots` (the oldest
        retained snapshot's file, named by nothing that can still be read, may go: it holds
        erased GDPR values)."""
        chosen = list(snapshots)
        ids = {s.snapshot_id for s in chosen}
        out: set[str] = set()
        for snapshot in chosen:
            keep = not readable or snapshot.parent_snapshot_id in ids
            out |= self.files(snapshot, vacuumed=keep)
        return out


def metadata_in_use(table: Table) -> set[str]:
    """The current metadata file and the previous ones its metadata log names."""
    kept = {normalize(table.metadata_location)}
    kept.update(normalize(entry.metadata_file) for entry in table.metadata.metadata_log)
    return kept


@dataclass(frozen=True)
class ListedFile:
    path: str  # as the file system names it (see `normalize`)
    size: int
    mtime: datetime


def file_system(table: Table) -> tuple[pafs.FileSystem, str]:
    filesystem, root = pafs.FileSystem.from_uri(table.location())
    return filesystem, root.rstrip("/")


def list_files(table: Table, under: str = "") -> list[ListedFile]:
    """Every file under the table location (or one of its folders)."""
    filesystem, root = file_system(table)
    selector = pafs.FileSelector(
        f"{root}/{under}".rstrip("/"), recursive=True, allow_not_found=True
    )
    out = []
    for info in filesystem.get_file_info(selector):
        if info.type != pafs.FileType.File:
            continue
        mtime = info.mtime or clock.now()
        if mtime.tzinfo is None:
            mtime = mtime.replace(tzinfo=UTC)
        out.append(ListedFile(info.path, int(info.size or 0), mtime))
    return out


def staged_batch(path: str, table: Table) -> str | None:
    """The batch id of a staged replay file (`data/staged-<batch id>-<tag>/…`), else None."""
    root = normalize(table.location()).rstrip("/")
    relative = path.removeprefix(root + "/")
    parts = relative.split("/")
    if len(parts) >= 3 and parts[0] == "data" and parts[1].startswith(STAGED_PREFIX):
        return parts[1][len(STAGED_PREFIX) : len(STAGED_PREFIX) + 36]
    return None


def orphans(
    table: Table,
    referenced: set[str],
    *,
    cutoff: datetime,
    in_flight: set[str],
    finished: set[str],
) -> list[ListedFile]:
    """Files under the table location that orphan cleanup deletes: referenced by nothing in
    `referenced` (what retained snapshots need, metadata files included) and older than `cutoff`,
    or staged replay files of a restatement that `finished`; never the staged files of one
    still `in_flight`."""
    out = []
    for listed in list_files(table):
        if listed.path in referenced:
            continue
        batch = staged_batch(listed.path, table)
        if batch is not None and batch in in_flight:
            continue
        if listed.mtime < cutoff or (batch is not None and batch in finished):
            out.append(listed)
    return out


def delete_files(table: Table, paths: Iterable[str]) -> list[str]:
    """Delete files (normalized paths); returns those that were deleted (gone already: skipped)."""
    filesystem, _ = file_system(table)
    deleted = []
    for path in paths:
        try:
            filesystem.delete_file(path)
        except FileNotFoundError:
            continue
        deleted.append(path)
    return deleted


def sizes(table: Table, paths: Iterable[str]) -> dict[str, int]:
    """Sizes of existing files (a missing file is left out)."""
    filesystem, _ = file_system(table)
    out = {}
    for info in filesystem.get_file_info(list(paths)):
        if info.type == pafs.FileType.File:
            out[info.path] = int(info.size or 0)
    return out
