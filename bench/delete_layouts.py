"""What position deletes cost a plain engine, by layout (issue 26's note): Iceberg v2 position
delete files scoped to a data file or to a partition, and v3 deletion vectors, against a twin
with the deleted rows absent. Plain Spark SQL only (Iceberg's own reader, no Icebatch code).

Run: `.venv/bin/python -m bench.delete_layouts [--rows 1000000] [--files 5] [--rounds 10]
[--per-round 1000] [--runs 3] [--keep]`.

One process, one fresh PostgreSQL database (the JDBC catalog), Spark `local[2]`. The same
`--rows` events (`--rows`/5 identities, day-partitioned over 4 days, `--files` appends) go into
one table per layout, all merge-on-read; then `--rounds` Spark `DELETE`s of `--per-round`
identities each, as `--rounds` materializer passes would add deletes. Then, best of `--runs`
(interleaved), a full scan of each (rows and the sum of row hashes, every column), checked
equal to the twin's; with each table's count of data and delete files.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench.common import events
from bench.restatements.infra import in_fresh_store
from bench.restatements.reads import spark_scan
from bench.restatements.shared import log, timed

LAYOUTS = {
    "v2 file-scoped": {"format-version": "2", "write.delete.granularity": "file"},
    "v2 partition-scoped": {"format-version": "2", "write.delete.granularity": "partition"},
    "v3 deletion vectors": {"format-version": "3"},
    "absent": {"format-version": "2"},
}


def create(spark: Any, name: str, properties: dict[str, str]) -> None:
    props = {
        **properties,
        "write.delete.mode": "merge-on-read",
        "write.update.mode": "merge-on-read",
        "write.merge.mode": "merge-on-read",
    }
    listed = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    spark.sql(
        f"CREATE TABLE {name} (event_id bigint, user_id string, event_time timestamp_ntz, "
        f"payload string, _batch_id string) USING iceberg PARTITIONED BY (days(event_time)) "
        f"TBLPROPERTIES ({listed})"
    )


def files_of(spark: Any, name: str) -> str:
    row = spark.sql(
        f"SELECT sum(IF(content = 0, 1, 0)) AS d, sum(IF(content = 1, 1, 0)) AS p FROM {name}.files"
    ).collect()[0]
    return f"{int(row['d'] or 0)} data / {int(row['p'] or 0)} delete files"


def run(args: argparse.Namespace, work: Path) -> None:
    from pyspark.sql import functions as F

    from app.cli import migrate
    from app.config import get_settings
    from workers.spark.session import build_session

    migrate()
    settings = get_settings()
    spark = build_session(settings)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {settings.catalog_name}.layouts")
    rng = np.random.default_rng(args.seed)
    universe = [f"u{i:07d}" for i in range(args.rows // 5)]
    users = pa.array(universe)
    per_file = args.rows // args.files
    paths = []
    for i in range(args.files):
        paths.append(work / f"batch-{i}.parquet")
        pq.write_table(events(per_file, i * per_file, users, 4, rng), paths[-1])
    order = rng.permutation(np.array(universe, dtype=object)).tolist()
    erased = order[: args.rounds * args.per_round]
    names = {layout: f"{settings.catalog_name}.layouts.t{i}" for i, layout in enumerate(LAYOUTS)}
    for layout, name in names.items():
        create(spark, name, LAYOUTS[layout])
        for i, path in enumerate(paths):
            frame = spark.read.parquet(str(path))
            if layout == "absent":
                frame = frame.where(~F.col("user_id").isin(erased))
            frame.select(
                "event_id",
                "user_id",
                F.col("event_time").cast("timestamp_ntz").alias("event_time"),
                "payload",
                F.lit(f"b{i}").alias("_batch_id"),
            ).sortWithinPartitions("event_time").writeTo(name).append()
        if layout == "absent":
            continue
        spent = 0.0
        for r in range(args.rounds):
            ids = erased[r * args.per_round : (r + 1) * args.per_round]
            listed = ", ".join(f"'{v}'" for v in ids)
            seconds, _ = timed(lambda: spark.sql(f"DELETE FROM {name} WHERE user_id IN ({listed})"))  # noqa: B023
            spent += seconds
        log(f"{layout}: {args.rounds} deletes in {spent:.1f}s, {files_of(spark, name)}")
    times: dict[str, list[float]] = {layout: [] for layout in names}
    results = {}
    order_of = list(names)
    for run_ in range(args.runs):
        for layout in order_of if run_ % 2 == 0 else order_of[::-1]:
            seconds, results[layout] = timed(lambda: spark_scan(spark.table(names[layout])))  # noqa: B023
            times[layout].append(seconds)
    for layout, got in results.items():
        if got != results["absent"]:
            raise RuntimeError(f"{layout} read {got} != twin {results['absent']}")
    absent = min(times["absent"])
    left = results["absent"][0]
    print(f"\n{len(erased):,} identities deleted in {args.rounds} rounds; {left:,} rows left")
    print("| layout | files | full scan s (best) | ÷ absent |")
    print("|---|---|---|---|")
    for layout, name in names.items():
        best = min(times[layout])
        print(f"| {layout} | {files_of(spark, name)} | {best:.2f} | {best / absent:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.delete_layouts", description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    in_fresh_store("delete_layouts", args.keep, lambda work: run(args, work))


if __name__ == "__main__":
    main()
