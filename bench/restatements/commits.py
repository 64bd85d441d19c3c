"""Part (c): tombstone commit latency at 1k and at 100k active tombstones; building the levels
(the base table's snapshots at 0, 1k, 10k, 100k tombstones) that part (b) reads too."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from bench.restatements.data import Data
from bench.restatements.lake import Lake, commit_tombstones
from bench.restatements.shared import LEVELS, NS


@dataclass
class Levels:
    """Snapshots of the base table at 0, 1k, 10k, 100k active tombstones, and commit timings."""

    snapshots: dict[int, int] = field(default_factory=dict)  # level -> snapshot id
    # level -> the snapshot of the materializer's commit right after it (position deletes)
    materialized: dict[int, int] = field(default_factory=dict)
    materialize: dict[int, dict[str, float]] = field(default_factory=dict)  # level -> its cost
    commit_small: dict[int, list[float]] = field(default_factory=dict)  # level -> load+commit s
    commit_only: dict[int, list[float]] = field(default_factory=dict)  # level -> commit s
    history: int = 0  # snapshots of each table when part (c) starts
    commit_empty: dict[int, list[float]] = field(default_factory=dict)  # level -> load+commit s
    build_seconds: float = 0.0


def materialize(lake: Lake, name: str) -> dict[str, float]:
    """Run the materializer's two steps on the table, as its job does (no lease: the bench is
    the only writer): resolve the tombstones past the mark to position delete files, commit
    them. Returns its cost and size."""
    from app.lake import materialize_plan as lake_materialize
    from workers.maintenance.materialize import commit_resolution
    from workers.spark import iceberg_java

    began = time.perf_counter()
    table = lake.load(name)
    resolution = lake_materialize.resolve(table, table.current_snapshot())
    if resolution is None:
        raise RuntimeError(f"{name}: nothing to materialize")
    resolved = time.perf_counter()
    java_table = iceberg_java.load_table(lake.spark, f"{NS}.{name}")
    properties = {"icebatch.operation": "materialize", "icebatch.request-id": "bench"}
    commit_resolution(lake.spark, java_table, table, resolution, properties)
    return {
        "resolve": resolved - began,
        "commit": time.perf_counter() - resolved,
        "tombstones": resolution.tombstones,
        "files_read": resolution.files_read,
        "delete_files": len(resolution.files),
        "replaced": sum(len(f.replaced) for f in resolution.files),
        "positions": resolution.positions,
    }


def build_levels(lake: Lake, data: Data, chunk: int, small: int, count: int) -> Levels:
    """Commit GDPR tombstones on the base table in `chunk`s up to each level, recording the
    level's snapshot, then materialize them (issue 13) and record that snapshot too.
    Tombstones follow `data.order`, so level n's set is exactly the first n identities of it
    (the twins drop those identities' rows).

    Part (c) compares commits at 1k and 100k active tombstones with nothing else different:
    `low` is registered on the base table's metadata before any tombstone (same data files and
    manifests), gets the first 1k tombstones, then commits without tombstones until it has as
    many snapshots as the base table. Then `count` commits of `small` new tombstones go to each
    table, alternating, so both histories grow in step."""
    levels, done = Levels(), 0
    base = lake.load("events")
    levels.snapshots[0] = base.current_snapshot().snapshot_id
    low = lake.catalog.register_table(f"{NS}.low", base.metadata_location)
    with low.transaction() as transaction:  # its first metadata files are the base table's too
        transaction.set_properties({"write.metadata.delete-after-commit.enabled": "false"})
    began = time.perf_counter()
    for level in LEVELS[1:]:
        while done < level:
            take = min(chunk, level - done)
            ids = data.tombstoned(done + take)[done:]
            commit_tombstones(lake, "events", "user_id", ids, "build")
            done += take
        levels.snapshots[level] = lake.load("events").current_snapshot().snapshot_id
        levels.materialize[level] = materialize(lake, "events")
        levels.materialized[level] = lake.load("events").current_snapshot().snapshot_id
    levels.build_seconds = time.perf_counter() - began
    commit_tombstones(lake, "low", "user_id", data.tombstoned(LEVELS[1]), "build")
    while len(lake.load("low").snapshots()) < len(lake.load("events").snapshots()):
        commit_tombstones(lake, "low", "user_id", [], "pad")
    levels.history = len(lake.load("events").snapshots())
    for level in (LEVELS[1], LEVELS[-1]):
        levels.commit_small[level], levels.commit_only[level] = [], []
    for k in range(count):
        ids = data.tombstoned(done + small)[done:]
        done += small
        order = [("low", LEVELS[1]), ("events", LEVELS[-1])]
        for name, level in order if k % 2 == 0 else order[::-1]:
            whole, only = commit_tombstones(lake, name, "user_id", ids, "latency")
            levels.commit_small[level].append(whole)
            levels.commit_only[level].append(only)
        for name, level in order:  # control: a commit that adds a snapshot and no tombstone
            levels.commit_empty.setdefault(level, []).append(
                commit_tombstones(lake, name, "user_id", [], "control")[0]
            )
    return levels
