"""Part (b): full scans with 0 / 1k / 10k / 100k active tombstones against the twins written
without the hidden rows, in Spark (`read_dataset`), plain Spark SQL (no Icebatch code) and
PyArrow (`visible.row_batches`).

Each level is read at the materializer's snapshot (its tombstones in Iceberg position deletes,
issue 13); `read_dataset` and the PyArrow path are also read at the level's own snapshot, before
that materialization ("not materialized": the levels below it are)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.restatements.commits import Levels
from bench.restatements.lake import Lake
from bench.restatements.shared import COLUMNS, DIAG, LEVELS, log, timed


def spark_scan(frame: Any) -> tuple[int, int]:
    """Materialize every column: row count and a sum of row hashes (equal rows, equal sums)."""
    from pyspark.sql import functions as F

    row = frame.agg(
        F.count(F.lit(1)).alias("n"), F.sum(F.xxhash64(*[F.col(c) for c in COLUMNS])).alias("h")
    ).collect()[0]
    return int(row["n"]), int(row["h"] or 0)


def arrow_scan(table: Any, snapshot: Any) -> tuple[int, int]:
    """Every column of every visible row through `visible.row_batches`: rows and bytes."""
    from app.lake import visible

    _, batches = visible.row_batches(table, snapshot)
    rows = size = 0
    for batch in batches:
        rows += batch.num_rows
        size += batch.nbytes
    return rows, size


def part_b(lake: Lake, levels: Levels, runs: int, arrow_runs: int) -> dict[str, Any]:
    """Full scans at each level: Icebatch (tombstones) vs the twin without the hidden rows."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from app.lake import gdpr_tombstones as lake_gdpr
    from app.lake import visible as lake_visible
    from workers.spark.read import TID, _ids, read_dataset

    spark, out = lake.spark, {}
    base = lake.name("events")
    # a level is the tombstones of its snapshot: no GDPR tombstone of a later level reaches
    # into it (the bench's tables are no datasets of a metadata store)
    erased = lake_gdpr.GdprTombstones.none()

    def at(level: int, materialized: bool = True) -> int:
        if level == 0:
            return levels.snapshots[0]
        return (levels.materialized if materialized else levels.snapshots)[level]

    def ice_read(snap: int) -> Any:
        return read_dataset(spark, base, as_of=snap, catalog=lake.catalog, gdpr=erased)

    def ice_spark(level: int, materialized: bool = True) -> Callable[[], tuple[int, int]]:
        snap = at(level, materialized)
        return lambda: spark_scan(ice_read(snap))

    def plain_sql(level: int) -> Callable[[], tuple[int, int]]:
        query = f"SELECT * FROM {base} VERSION AS OF {at(level)}"
        return lambda: spark_scan(spark.sql(query))

    def plan_spark(level: int) -> Callable[[], tuple[int, int]]:
        """read_dataset's own work before Spark runs anything: load the table, build the
        tombstone filter, plan the files and pick those whose bounds may hold a tombstone."""
        snap = at(level)
        return lambda: (ice_read(snap), (0, 0))[1]

    def twin_spark(level: int) -> Callable[[], tuple[int, int]]:
        if level == 0:
            query = f"SELECT * FROM {base} VERSION AS OF {levels.snapshots[0]}"
            return lambda: spark_scan(spark.sql(query))
        return lambda: spark_scan(spark.table(lake.name(f"absent_{level}")))

    def ice_arrow(level: int, materialized: bool = True) -> Callable[[], tuple[int, int]]:
        def run() -> tuple[int, int]:
            table = lake.load("events")
            return arrow_scan(table, table.snapshot_by_id(at(level, materialized)))

        return run

    def twin_arrow(level: int) -> Callable[[], tuple[int, int]]:
        def run() -> tuple[int, int]:
            if level == 0:
                table = lake.load("events")
                return arrow_scan(table, table.snapshot_by_id(levels.snapshots[0]))
            table = lake.load(f"absent_{level}")
            return arrow_scan(table, table.current_snapshot())

        return run

    def with_file() -> tuple[int, int]:
        """Diagnostic: the plain scan plus Iceberg's `_file` metadata column, which
        read_dataset selects to join each row to its file's sequence number."""
        frame = spark.sql(f"SELECT *, _file FROM {base} VERSION AS OF {levels.snapshots[DIAG]}")
        row = frame.agg(
            F.count(F.lit(1)).alias("n"),
            F.sum(F.xxhash64(*[F.col(c) for c in [*COLUMNS, "_file"]])).alias("h"),
        ).collect()[0]
        return int(row["n"]), 0

    def anti_only() -> tuple[int, int]:
        """Diagnostic: the plain scan left-anti joined with the broadcast tombstone ids alone,
        no `_file` column and no per-file sequence join: valid here because every tombstone is
        newer than every data file (the case of a fast path)."""
        table = lake.load("events")
        snapshot = table.snapshot_by_id(levels.snapshots[DIAG])
        filt = lake_visible.tombstone_filter(table, snapshot, erased)
        ns = next(n for n in filt.namespaces if n.column == "user_id")
        ids = _ids(spark, ns.ids, ns.max_seq, T.StringType()).select(TID)
        frame = spark.sql(f"SELECT * FROM {base} VERSION AS OF {levels.snapshots[DIAG]}")
        return spark_scan(frame.join(F.broadcast(ids), frame["user_id"] == ids[TID], "left_anti"))

    for engine, ice, twin, count in (
        ("spark", ice_spark, twin_spark, runs),
        ("arrow", ice_arrow, twin_arrow, arrow_runs),
    ):
        if count <= 0:
            continue
        times: dict[tuple[int, str], list[float]] = {}
        results: dict[tuple[int, str], tuple[int, int]] = {}
        for run in range(count):
            for level in LEVELS:
                pair = [("icebatch", ice(level)), ("absent", twin(level))]
                if level:
                    pair.append(("not materialized", ice(level, False)))
                if engine == "spark":
                    pair += [("planning", plan_spark(level)), ("plain SQL", plain_sql(level))]
                if engine == "spark" and level == DIAG:
                    pair += [("scan + _file", with_file), ("anti join only", anti_only)]
                for side, fn in pair if run % 2 == 0 else pair[::-1]:
                    seconds, results[(level, side)] = timed(fn)
                    times.setdefault((level, side), []).append(seconds)
            log(f"  (b) {engine} run {run + 1} done")
        if engine == "spark" and results[(DIAG, "anti join only")] != results[(DIAG, "absent")]:
            raise RuntimeError("(b) the anti-join-only diagnostic read other rows")
        for level in LEVELS:
            twin_result = results[(level, "absent")]
            for side in ("icebatch", "not materialized", "plain SQL"):
                if (level, side) not in results:
                    continue
                ice_result = results[(level, side)]
                # Spark: equal row counts and equal sums of row hashes; Arrow: equal row counts
                same = (
                    ice_result == twin_result
                    if engine == "spark"
                    else ice_result[0] == twin_result[0]
                )
                if not same:
                    raise RuntimeError(
                        f"(b) {engine} {side} at {level}: read {ice_result} != twin {twin_result}"
                    )
        out[engine] = {"times": times, "rows": {lv: results[(lv, "absent")][0] for lv in LEVELS}}
    return out
