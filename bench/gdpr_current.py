"""Reading the current snapshot with N GDPR restatements in force, against a twin table with their
rows physically absent (issue 26): the whole GDPR set, as every read applied it before, vs the
GDPR deletes past the snapshot's materialized mark (`app.privacy.reads.in_force` with
`with_deletes_of`), as `/rows` and `read_dataset` apply them now.

Run: `.venv/bin/python -m bench.gdpr_current [--rows 1000000] [--files 5] [--levels 1000,10000]
[--group 200] [--tail 200] [--runs 3] [--keep]`.

One process, one fresh PostgreSQL database and warehouse, Spark `local[2]`. `--rows` events of
`--rows`/5 identities go in as `--files` batches (Spark appends, as ingest writes them). Level by
level (cumulative), N GDPR restatements of one identity each are committed `--group` to a
snapshot (the tombstone commit the committer makes, the restatement rows the committer records),
then the materializer's passes (plan and ROW DELTA commit, as its job runs them) until nothing
waits. At each level, at the current snapshot:
  - "materialized": right after the passes;
  - "tail": after `--tail` more GDPR restatements that no pass has materialized yet;
each read as the whole set (old) and the snapshot's part (new) through PyArrow
(`visible.row_batches`, every column) and Spark (`read_dataset`, every column hashed), plus plain
Spark SQL and the twin (written from the data with every erased identity's rows left out).
After one read of each (the engines, data files and delete files warm), cold: a read after the
GDPR caches (`in_force`'s sets, the filters) were emptied, as after any GDPR commit; warm: best
of `--runs` more, interleaved. Every read's rows (and in Spark the sum
of row hashes) must equal the twin's, else the run fails.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.common import DATASET, events
from bench.restatements.infra import in_fresh_store
from bench.restatements.lake import Lake, append, create
from bench.restatements.reads import spark_scan
from bench.restatements.shared import NS, log, timed

ORG = NS  # the dataset is `bench.events`: the table bench.restatements.lake names


def arrow_scan(table: Any, snapshot: Any, gdpr: Any) -> tuple[int, int]:
    from app.lake import visible

    _, batches = visible.row_batches(table, snapshot, gdpr=gdpr)
    rows = size = 0
    for batch in batches:
        rows += batch.num_rows
        size += batch.nbytes
    return rows, size


def forget_gdpr_caches() -> None:
    """What a GDPR commit makes every reader build again: `in_force`'s set and the filters."""
    from app.lake import visible
    from app.privacy import reads

    for cache in (reads._SETS, reads._BY_RESTATEMENT, visible._FILTERS):
        with cache.lock:
            cache.items.clear()


def erase(lake: Lake, dataset_id: str, ids: list[str], group: int) -> None:
    """GDPR restatements of one id each, `group` to a tombstone commit, recorded as committed."""
    from app.db import session_scope
    from app.lake import commit
    from app.lake.tombstones import NewTombstone
    from app.models import Restatement, RestatementKind, RestatementState

    for start in range(0, len(ids), group):
        part = ids[start : start + group]
        table = lake.load("events")
        field_id = table.schema().find_field("user_id").field_id
        request_id = f"gdpr-{uuid.uuid4().hex}"
        snapshot = commit.commit(
            table,
            files=[],
            new_tombstones=[NewTombstone(field_id, i, request_id, "gdpr") for i in part],
            properties={"icebatch.operation": "gdpr", "icebatch.request-id": request_id},
        )
        now = datetime.now(UTC)
        with session_scope() as session:
            session.add_all(
                Restatement(
                    org=ORG,
                    dataset_id=dataset_id,
                    kind=RestatementKind.GDPR,
                    state=RestatementState.COMMITTED,
                    request_id=request_id,
                    column="user_id",
                    ids=[i],
                    commit_id=request_id,
                    snapshot_id=snapshot.snapshot_id,
                    sequence_number=snapshot.sequence_number,
                    tombstones_written=1,
                    committed_at=now,
                )
                for i in part
            )


def materialize(lake: Lake) -> int:
    """The materializer's passes until no tombstone waits; how many committed."""
    from app.lake import materialize_plan
    from workers.maintenance.materialize import commit_resolution
    from workers.spark import iceberg_java

    passes = 0
    while True:
        table = lake.load("events")
        resolution = materialize_plan.resolve(table, table.current_snapshot())
        if resolution is None:
            return passes
        java_table = iceberg_java.load_table(lake.spark, f"{NS}.events")
        properties = {"icebatch.operation": "materialize", "icebatch.request-id": uuid.uuid4().hex}
        commit_resolution(lake.spark, java_table, table, resolution, properties)
        passes += 1


def write_twin(lake: Lake, name: str, files: list[Path], erased: set[str], folder: Path) -> None:
    """The twin: each batch's rows without the erased identities', appended the same way."""
    create(lake, name)
    folder.mkdir(parents=True, exist_ok=True)
    value_set = pa.array(sorted(erased), pa.string())
    for i, path in enumerate(files):
        rows = pq.read_table(path)
        kept = rows.filter(pc.invert(pc.is_in(rows["user_id"], value_set=value_set)))
        out = folder / f"{name}-{i}.parquet"
        pq.write_table(kept, out)
        append(lake, name, out, f"b{i}")


def measure(
    lake: Lake, dataset_id: str, twin: str, runs: int, materialized: bool
) -> dict[str, dict[str, float | int]]:
    """Cold and warm seconds of each read of the current snapshot (results checked)."""
    from app.db import session_scope
    from app.privacy import reads
    from workers.spark.read import read_dataset

    name = lake.name("events")
    table = lake.load("events")
    snapshot = table.current_snapshot()
    at = snapshot.snapshot_id

    def whole() -> Any:
        with session_scope() as session:
            return reads.in_force(session, dataset_id, table)

    def part() -> Any:
        with session_scope() as session:
            return reads.in_force(session, dataset_id, table, with_deletes_of=snapshot)

    sides: dict[str, Callable[[], tuple[int, int]]] = {
        "arrow old": lambda: arrow_scan(table, snapshot, whole()),
        "arrow new": lambda: arrow_scan(table, snapshot, part()),
        "arrow absent": lambda: arrow_scan(
            lake.load(twin), lake.load(twin).current_snapshot(), None
        ),
        "spark old": lambda: spark_scan(
            read_dataset(lake.spark, name, at, catalog=lake.catalog, gdpr=whole())
        ),
        "spark new": lambda: spark_scan(read_dataset(lake.spark, name, at, catalog=lake.catalog)),
        "spark plain sql": lambda: spark_scan(
            lake.spark.sql(f"SELECT * FROM {name} VERSION AS OF {at}")
        ),
        "spark absent": lambda: spark_scan(lake.spark.table(lake.name(twin))),
    }
    out: dict[str, dict[str, float | int]] = {}
    results: dict[str, tuple[int, int]] = {}
    for read in sides.values():  # the engines, the data files and the delete files warm
        read()
    for side, read in sides.items():  # cold: each after the GDPR caches were emptied
        forget_gdpr_caches()
        seconds, results[side] = timed(read)
        out[side] = {"cold": seconds, "warm": float("inf")}
    order = list(sides)
    for run in range(runs):
        for side in order if run % 2 == 0 else order[::-1]:
            seconds, results[side] = timed(sides[side])
            out[side]["warm"] = min(out[side]["warm"], seconds)
    # plain SQL applies the position deletes alone: exact once nothing waits for a pass
    for side in ("spark old", "spark new", "spark plain sql")[: 3 if materialized else 2]:
        if results[side] != results["spark absent"]:
            raise RuntimeError(f"{side} read {results[side]} != twin {results['spark absent']}")
    for side in ("arrow old", "arrow new"):
        if results[side][0] != results["arrow absent"][0]:
            raise RuntimeError(f"{side} read {results[side][0]} rows != twin's")
    forget_gdpr_caches()
    in_force_old, old_set = timed(whole)
    in_force_new, new_set = timed(part)
    out["in_force old"] = {"cold": in_force_old, "set": old_set.rows.num_rows}
    out["in_force new"] = {"cold": in_force_new, "set": new_set.rows.num_rows}
    out["rows"] = {"visible": results["arrow absent"][0]}
    return out


def show(level: int, state: str, got: dict[str, dict[str, float | int]]) -> None:
    def ratio(side: str, base: str, kind: str) -> str:
        return f"{got[side][kind] / got[base][kind]:.2f}x"

    old, new = got["in_force old"], got["in_force new"]
    print(
        f"\n{level:,} GDPR restatements in force, {state} ({got['rows']['visible']:,} rows "
        f"visible); GDPR set old {old['set']:,} tombstones, in_force {old['cold']:.3f} s; "
        f"new {new['set']:,}, {new['cold']:.3f} s"
    )
    print("| read | cold s | warm s | cold ÷ absent | warm ÷ absent |")
    print("|---|---|---|---|---|")
    for side in got:
        if side.startswith(("in_force", "rows")):
            continue
        base = "arrow absent" if side.startswith("arrow") else "spark absent"
        print(
            f"| {side} | {got[side]['cold']:.2f} | {got[side]['warm']:.2f} | "
            f"{ratio(side, base, 'cold')} | {ratio(side, base, 'warm')} |"
        )


def run(args: argparse.Namespace, work: Path) -> None:
    from app.cli import migrate
    from app.config import get_settings
    from app.datasets import service as datasets
    from app.datasets.service import DatasetCreate
    from app.db import session_scope
    from app.lake.catalog import get_catalog
    from workers.spark.session import build_session

    migrate()
    settings = get_settings()
    lake = Lake(build_session(settings), get_catalog(), settings.catalog_name)
    with session_scope() as session:
        dataset = datasets.create(session, lake.catalog, ORG, DatasetCreate.model_validate(DATASET))
        dataset_id = dataset.id
    rng = np.random.default_rng(args.seed)
    universe = [f"u{i:07d}" for i in range(args.rows // 5)]
    users = pa.array(universe)
    files = []
    per_file = args.rows // args.files
    for i in range(args.files):
        path = work / f"batch-{i}.parquet"
        pq.write_table(events(per_file, i * per_file, users, 4, rng), path)
        files.append(path)

    def ingest() -> None:
        for i, path in enumerate(files):
            append(lake, "events", path, f"b{i}")

    seconds, _ = timed(ingest)
    log(f"{args.rows:,} rows, {len(universe):,} identities, {args.files} batches: {seconds:.1f}s")
    order = rng.permutation(np.array(universe, dtype=object)).tolist()
    erased: list[str] = []
    for level in args.levels:
        new_ids = order[len(erased) : level]
        seconds, _ = timed(lambda: erase(lake, dataset_id, new_ids, args.group))  # noqa: B023
        erased += new_ids
        passes_seconds, passes = timed(lambda: materialize(lake))
        log(f"level {level:,}: erased in {seconds:.1f}s, {passes} passes in {passes_seconds:.1f}s")
        for state, extra in (("materialized", 0), ("tail", args.tail)):
            if extra:
                tail = order[len(erased) : len(erased) + extra]
                erase(lake, dataset_id, tail, args.group)
                erased += tail
            twin = f"absent_{level}_{state}"
            write_twin(lake, twin, files, set(erased), work / twin)
            got = measure(lake, dataset_id, twin, args.runs, materialized=not extra)
            show(len(erased), state, got)
            lake.spark.sql(f"DROP TABLE {lake.name(twin)} PURGE")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.gdpr_current", description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--levels", default="1000,10000")
    parser.add_argument("--group", type=int, default=200, help="GDPR restatements per commit")
    parser.add_argument("--tail", type=int, default=200, help="GDPR restatements not materialized")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    args.levels = [int(x) for x in args.levels.split(",")]
    in_fresh_store("gdpr_current", args.keep, lambda work: run(args, work))


if __name__ == "__main__":
    main()
