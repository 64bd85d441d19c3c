"""The ingest job's validation pass alone: its read of a batch, typed to the dataset's schema,
with every row checked (`workers.uploads.rows`: `validated_frame` + `checked_rows`), against
Spark reading the same file with the typed schema and checking nothing. Both write to Spark's
`noop` sink, so only reading, typing and checking are timed (the Iceberg write and commit are
`bench.ingest`'s).

Run: `.venv/bin/python -m bench.ingest_validation [--rows 2000000] [--format csv|parquet]
[--runs 8]`. The two sides alternate, one run each per round; best and median per side, and
their ratio (typed read ÷ validation pass: 1.0 is free validation).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import machine_line
from bench.ingest import SPARK_DDL, events, write_input


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--format", choices=["csv", "parquet"], default="csv")
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="icebatch-bench-") as folder:
        home = Path(folder)
        os.environ["ICEBATCH_HOME"] = str(home / "home")
        run(args, home)


def run(args: argparse.Namespace, home: Path) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType, TimestampType
    from pyspark.sql import functions as F

    from app.config import get_settings
    from app.lake.types import BATCH_COLUMN
    from workers.spark.session import build_session
    from workers.uploads.inputs import StagedFile
    from workers.uploads.rows import checked_rows, validated_frame

    path = write_input(events(args.rows, seed=1), args.format, home / f"data.{args.format}")
    size_mb = path.stat().st_size / 1e6
    machine_line("local[*]")
    print(f"input: {args.rows:,} rows, {size_mb:.0f} MB {args.format}; {args.runs} rounds")
    schema = Schema(
        NestedField(1, "event_id", LongType(), required=True),
        NestedField(2, "user_id", StringType()),
        NestedField(3, "event_time", TimestampType()),
        NestedField(4, "payload", StringType()),
    )
    files = [StagedFile(name=path.name, path=path)]
    spark = build_session(get_settings())

    def validation() -> None:
        frame = checked_rows(validated_frame(spark, files, args.format, schema), "bench")
        frame.write.format("noop").mode("overwrite").save()

    def typed_read() -> None:
        reader = spark.read.format(args.format)
        if args.format == "csv":
            reader = reader.option("header", True).schema(SPARK_DDL)
        frame = reader.load(str(path))
        frame.withColumn(BATCH_COLUMN, F.lit("bench")).write.format("noop").mode("overwrite").save()

    sides: dict[str, Callable[[], None]] = {
        "validation pass": validation,
        "typed read": typed_read,
    }
    try:
        for side in sides.values():
            side()  # warm-up: the JVM's first plans and classes are not the job's steady state
        times: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(args.runs):
            for name, side in sides.items():
                began = time.perf_counter()
                side()
                times[name].append(time.perf_counter() - began)
    finally:
        spark.stop()
    for name, seconds in times.items():
        print(
            f"{name:16} best {min(seconds):.2f} s, median {statistics.median(seconds):.2f} s; "
            f"all: {' '.join(f'{s:.2f}' for s in seconds)}"
        )
    best = min(times["typed read"]) / min(times["validation pass"])
    median = statistics.median(times["typed read"]) / statistics.median(times["validation pass"])
    print(f"ratio typed read / validation pass: best {best:.2f}, median {median:.2f}")


if __name__ == "__main__":
    main()
