"""Ingest throughput: Icebatch (real API + worker processes) against a plain Spark write.

Run: `.venv/bin/python -m bench.ingest [--rows 2000000] [--format parquet|csv] [--keep]`.
Each side gets the same warm-up batch, then `--runs` rounds, each one batch through Icebatch and
Spark's own append of the same file to an Iceberg table of the same layout, alternating which
goes first: the machine's drift falls on both alike. The best run of each side is reported, and
the ratio of each round (the worker's SparkSession is long-lived, so the steady state is what
production sees). Spark's plain Parquet writes follow, as further baselines.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from bench import common
from bench.common import (
    DATASET,
    ICEBATCH,
    create_key,
    free_port,
    machine_line,
    start,
    stop,
    wait_for,
    work_dir,
    worker_ready,
)

DAYS, USERS, DONE = 30, 50_000, ("success", "failed")
SPARK_DDL = "event_id LONG NOT NULL, user_id STRING, event_time TIMESTAMP_NTZ, payload STRING"


def events(rows: int, seed: int) -> pa.Table:
    """`rows` events: ~50k users, 30 days of event_time, a random 80-120 byte payload."""
    rng = np.random.default_rng(seed)
    users = pa.array([f"user_{i:05d}" for i in range(USERS)])
    return common.events(rows, 0, users, DAYS, rng)


def write_input(table: pa.Table, fmt: str, path: Path) -> Path:
    (pcsv.write_csv if fmt == "csv" else pq.write_table)(table, path)
    return path


def chunks(path: Path, size: int = 1 << 20) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while block := handle.read(size):
            yield block


def poll(deadline: float, what: str) -> None:
    if time.perf_counter() > deadline:
        raise TimeoutError(f"{what} did not finish in time")
    time.sleep(0.1)


def ingest(client: httpx.Client, dataset_id: str, fmt: str, path: Path) -> dict[str, Any]:
    """Upload one file as one batch and wait for success: row count, job and end-to-end secs."""
    began = time.perf_counter()
    batch = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": fmt})
    batch_id = batch.raise_for_status().json()["id"]
    client.put(f"/v1/batches/{batch_id}/files/{path.name}", content=chunks(path)).raise_for_status()
    done = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
    job_id = done.raise_for_status().json()["job"]["id"]
    deadline = began + 1200
    while (state := client.get(f"/v1/batches/{batch_id}").json())["status"] not in DONE:
        poll(deadline, f"batch {batch_id}")
    wall = time.perf_counter() - began
    while (job := client.get(f"/v1/jobs/{job_id}").json())["finished_at"] is None:
        poll(deadline, f"job {job_id}")  # the batch is closed just before its job row
    if state["status"] != "success":
        raise RuntimeError(f"batch failed: {state.get('errors')} {job.get('error')}")
    span = datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["started_at"])
    stages = " ".join(f"{s['stage']} {s['seconds']:.2f}" for s in job.get("stages") or [])
    return {"rows": state["row_count"], "job": span.total_seconds(), "e2e": wall, "stages": stages}


class Icebatch:
    """API + worker in `home`, an API key and the dataset: batches ingested one at a time."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "ICEBATCH_HOME": str(home)}
        key = create_key(env)
        port, worker_log = free_port(), home / "worker.log"
        self.procs = [start([ICEBATCH, "api", "--port", str(port)], env, home / "api.log")]
        self.procs.append(start([ICEBATCH, "worker"], env, worker_log))
        headers = {"Authorization": f"Bearer {key}"}
        url = f"http://127.0.0.1:{port}"
        self.client = httpx.Client(base_url=url, headers=headers, timeout=300)

        def api_up() -> bool:
            with contextlib.suppress(httpx.TransportError):
                return self.client.get("/healthz").status_code == 200
            return False

        wait_for(api_up, "the API", self.procs)
        wait_for(worker_ready(worker_log), "the worker", self.procs)
        self.dataset = self.client.post("/v1/datasets", json=DATASET).raise_for_status().json()

    def ingest(self, fmt: str, path: Path) -> dict[str, Any]:
        return ingest(self.client, self.dataset["id"], fmt, path)

    def close(self) -> None:
        self.client.close()
        stop(self.procs)
        self.procs = []


def iceberg_twin(spark_name: str) -> str:
    """An empty Iceberg table with the dataset's table's schema, partition spec, sort order and
    properties (its layout: the Spark name of the new table)."""
    from app.lake.catalog import get_catalog

    catalog = get_catalog()
    identifier = spark_name.split(".", 1)[1]
    table = catalog.load_table(identifier)
    twin = f"{identifier}_plain_spark"
    catalog.create_table(
        twin,
        schema=table.schema(),
        partition_spec=table.spec(),
        sort_order=table.sort_order(),
        properties=table.properties,
    )
    return f"{spark_name.split('.', 1)[0]}.{twin}"


class Spark:
    """A worker-like SparkSession in this process: Spark's own append of the same rows (with a
    batch id, as the job writes them) to an Iceberg table laid out as the dataset's `table`,
    and plain Parquet writes of them: what the job costs over Iceberg's writer and over Spark."""

    def __init__(self, home: Path, fmt: str, table: str) -> None:
        os.environ["ICEBATCH_HOME"] = str(home)
        from app.config import get_settings
        from workers.spark.session import build_session

        self.home, self.fmt = home, fmt
        self.spark = build_session(get_settings())
        self.twin = iceberg_twin(table)

    def read(self, path: Path) -> Any:
        options: dict[str, Any] = {"header": True, "schema": SPARK_DDL} if self.fmt == "csv" else {}
        return self.spark.read.format(self.fmt).load(str(path), **options)

    def append(self, path: Path) -> float:
        from pyspark.sql import functions as F

        from app.lake.types import BATCH_COLUMN

        began = time.perf_counter()
        self.read(path).withColumn(BATCH_COLUMN, F.lit(str(uuid.uuid4()))).writeTo(
            self.twin
        ).append()
        return time.perf_counter() - began

    def copy(self, path: Path, partitioned: bool, codec: str = "snappy") -> float:
        from pyspark.sql import functions as F

        began = time.perf_counter()
        frame = self.read(path)
        if partitioned:
            frame = frame.withColumn("day", F.to_date("event_time")).repartition("day")
            out = self.home / f"spark-by-day-{codec}"
            frame.write.mode("overwrite").option("compression", codec).partitionBy("day").parquet(
                str(out)
            )
        else:
            frame.write.mode("overwrite").parquet(str(self.home / "spark-out"))
        return time.perf_counter() - began

    def landed(self) -> int:
        return int(self.spark.table(self.twin).count())


def run(
    home: Path, fmt: str, data: Path, warmup: Path, runs: int
) -> tuple[list[dict[str, Any]], dict[str, list[float]]]:
    """The job and Spark's own append, alternated round by round (the machine's drift falls on
    both sides alike; each JVM has done the same work before each round: the warm-up batch and
    the rounds before), then Spark's plain Parquet writes: each batch's figures and each Spark
    measure's seconds per run."""
    icebatch = Icebatch(home)
    spark: Spark | None = None
    try:
        icebatch.ingest(fmt, warmup)  # starts the worker's SparkSession
        spark = Spark(home, fmt, icebatch.dataset["table"])
        spark.append(warmup)
        jobs: list[dict[str, Any]] = []
        appends: list[float] = []
        for round_ in range(runs):
            if round_ % 2 == 0:
                jobs.append(icebatch.ingest(fmt, data))
                appends.append(spark.append(data))
            else:
                appends.append(spark.append(data))
                jobs.append(icebatch.ingest(fmt, data))
        icebatch.close()
        figures = {"iceberg": appends}
        figures["plain"] = [spark.copy(data, False) for _ in range(runs)]
        figures["by_day"] = [spark.copy(data, True) for _ in range(runs)]
        # the table's layout: one folder per day, zstd (app/lake/tables.py)
        figures["by_day_zstd"] = [spark.copy(data, True, "zstd") for _ in range(runs)]
        if (landed := spark.landed()) != runs * spark.read(data).count() + spark.read(
            warmup
        ).count():
            raise RuntimeError(f"Spark's Iceberg appends landed {landed} rows")
        return jobs, figures
    finally:
        icebatch.close()
        if spark is not None:
            spark.spark.stop()


def report(rows: int, ice: list[dict[str, Any]], spark: dict[str, list[float]]) -> None:
    runs = {
        "Icebatch job": [r["job"] for r in ice],
        "Icebatch end-to-end": [r["e2e"] for r in ice],
        "plain Spark write": spark["plain"],
        "(Spark write by day)": spark["by_day"],
        "Spark by day, zstd": spark["by_day_zstd"],
        "Spark Iceberg append": spark["iceberg"],
    }
    best = {name: min(secs) for name, secs in runs.items()}
    print(f"| {'measure':<21} | {'rows':>9} | {'seconds':>7} | {'rows/s':>9} | all runs (s)")
    print(f"|{'-' * 23}|{'-' * 11}|{'-' * 9}|{'-' * 11}|{'-' * 20}")
    for name, secs in best.items():
        every = " ".join(f"{x:.2f}" for x in runs[name])
        print(f"| {name:<21} | {rows:>9,} | {secs:>7.2f} | {rows / secs:>9,.0f} | {every}")
    for i, run in enumerate(ice, 1):  # where a job's time goes (its stages, seconds each)
        print(f"job {i} stages (s): {run['stages']}")
    spark_s = best["plain Spark write"]
    print(f"ratio job / Spark (rows/s): {spark_s / best['Icebatch job']:.2f} (goal >= 0.8)")
    print(f"ratio end-to-end / Spark (rows/s): {spark_s / best['Icebatch end-to-end']:.2f}")
    by_day = best["(Spark write by day)"]
    print(f"ratio job / Spark write by day (snappy): {by_day / best['Icebatch job']:.2f}")
    same = best["Spark by day, zstd"]
    print(
        f"ratio job / Spark write in the table's layout (by day, zstd): "
        f"{same / best['Icebatch job']:.2f} (goal >= 0.9)"
    )
    iceberg = best["Spark Iceberg append"]
    print(
        f"ratio job / Spark's append to an Iceberg table of the same layout: "
        f"{iceberg / best['Icebatch job']:.2f} (best of each side)"
    )
    rounds = [a / r["job"] for a, r in zip(spark["iceberg"], ice, strict=True)]
    print(
        f"ratio job / Spark's append, round by round: {' '.join(f'{x:.2f}' for x in rounds)}; "
        f"median {statistics.median(rounds):.2f} (goal >= 0.9)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    parser.add_argument("--runs", type=int, default=3, help="measured batches per side")
    parser.add_argument("--warmup-rows", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=20261101)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only
    machine_line(os.environ.get("ICEBATCH_SPARK_MASTER", "local[*]"))
    with work_dir("icebatch-bench-", args.keep) as work:
        table = events(args.rows, args.seed)
        data = write_input(table, args.format, work / f"events.{args.format}")
        warm = table.slice(0, args.warmup_rows)
        warmup = write_input(warm, args.format, work / f"warmup.{args.format}")
        del table, warm
        size = data.stat().st_size / 1e6
        print(
            f"input: {args.rows:,} rows, {size:.0f} MB {args.format}; warm-up "
            f"{args.warmup_rows:,} rows; best of {args.runs} runs per side",
            flush=True,
        )
        ice, spark = run(work / "home", args.format, data, warmup, args.runs)
        if bad := [r["rows"] for r in ice if r["rows"] != args.rows]:
            raise RuntimeError(f"row_count {bad} != {args.rows}")
        report(args.rows, ice, spark)


if __name__ == "__main__":
    main()
