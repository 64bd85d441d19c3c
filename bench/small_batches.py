"""Small batches: seconds per batch through the Spark job against the small-batch path
(`ICEBATCH_SMALL_BATCH_BYTES`, workers/uploads/small.py), in one run.

Run: `.venv/bin/python -m bench.small_batches [--rows 100,1000,10000,50000] [--runs 5]`.
Two embedded services (API + worker processes) one after the other: the first with the small
path off (`ICEBATCH_SMALL_BATCH_BYTES=0`), the second with it on for every size measured. Each
gets the same warm-up batch (it starts the worker's SparkSession), then `--runs` batches per
size and format; the median job time (started → finished) and end-to-end time (first upload →
batch status final) are reported, and the ratio Spark ÷ small.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import datetime
from pathlib import Path

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from bench import common
from bench.common import DATASET, machine_line, work_dir
from bench.embedded import service

FORMATS = ("parquet", "csv")


def write_input(rows: int, fmt: str, folder: Path, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    users = pa.array([f"user_{i:05d}" for i in range(1000)])
    table = common.events(rows, seed * 10_000_000, users, 2, rng)
    path = folder / f"in-{rows}-{seed}.{fmt}"
    if fmt == "csv":
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path)
    return path


def ingest(client: httpx.Client, dataset_id: str, fmt: str, path: Path) -> dict[str, float]:
    began = time.perf_counter()
    batch_id = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": fmt}).json()[
        "id"
    ]
    client.put(f"/v1/batches/{batch_id}/files/{path.name}", content=path.read_bytes())
    client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}).raise_for_status()
    while (state := client.get(f"/v1/batches/{batch_id}").json())["status"] not in (
        "success",
        "failed",
    ):
        time.sleep(0.02)
    wall = time.perf_counter() - began
    if state["status"] != "success":
        raise RuntimeError(f"batch failed: {state.get('errors')}")
    while (job := client.get(f"/v1/jobs/{state['job_id']}").json())["finished_at"] is None:
        time.sleep(0.02)
    span = datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["started_at"])
    return {"job": span.total_seconds(), "e2e": wall}


def measure(
    home: Path, limit: int, inputs: dict[tuple[str, int], list[Path]], warmup: Path
) -> dict[tuple[str, int], dict[str, float]]:
    os.environ["ICEBATCH_SMALL_BATCH_BYTES"] = str(limit)
    out = {}
    with service(home) as svc:
        client = svc.client
        dataset_id = client.post("/v1/datasets", json=DATASET).raise_for_status().json()["id"]
        ingest(client, dataset_id, "parquet", warmup)
        for (fmt, rows), paths in inputs.items():
            runs = [ingest(client, dataset_id, fmt, p) for p in paths]
            out[fmt, rows] = {k: statistics.median(r[k] for r in runs) for k in ("job", "e2e")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", default="100,1000,10000,50000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    sizes = [int(x) for x in args.rows.split(",")]
    common.local_run()
    machine_line(os.environ.get("ICEBATCH_SPARK_MASTER", "local[*]"))
    with work_dir("icebatch-small-", args.keep) as work:
        (work / "in").mkdir()
        inputs = {
            (fmt, rows): [write_input(rows, fmt, work / "in", s) for s in range(1, args.runs + 1)]
            for fmt in FORMATS
            for rows in sizes
        }
        warmup = write_input(1000, "parquet", work / "in", 0)
        biggest = max(p.stat().st_size for paths in inputs.values() for p in paths)
        spark = measure(work / "spark", 0, inputs, warmup)
        small = measure(work / "small", biggest + 1, inputs, warmup)
        sizes_of = {key: paths[0].stat().st_size for key, paths in inputs.items()}
    print("format  rows    bytes      Spark job  small job  ratio  |  Spark e2e  small e2e  ratio")
    for (fmt, rows), size in sizes_of.items():
        a, b = spark[fmt, rows], small[fmt, rows]
        print(
            f"{fmt:7} {rows:7d} {size:10d} {a['job']:9.3f}s {b['job']:9.3f}s "
            f"{a['job'] / b['job']:6.1f}x |  {a['e2e']:8.3f}s {b['e2e']:8.3f}s "
            f"{a['e2e'] / b['e2e']:6.1f}x"
        )


if __name__ == "__main__":
    main()
