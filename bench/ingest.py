"""Ingest throughput: Icebatch (real API + worker processes) against a plain Spark write.

Run: `.venv/bin/python -m bench.ingest [--rows 2000000] [--format parquet|csv] [--keep]`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

ICEBATCH = str(Path(sys.executable).with_name("icebatch"))
START = np.datetime64("2026-01-01T00:00:00", "us").astype(np.int64)
DAYS, USERS, WARMUP_ROWS = 30, 50_000, 20_000
DONE = ("success", "failed")
ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _", "u1")
ARROW_SCHEMA = pa.schema(
    [pa.field("event_id", pa.int64(), nullable=False), ("user_id", pa.string())]
    + [("event_time", pa.timestamp("us")), ("payload", pa.string())]
)
SPARK_DDL = "event_id LONG NOT NULL, user_id STRING, event_time TIMESTAMP_NTZ, payload STRING"
SCHEMA = [
    {"name": "event_id", "type": "long", "required": True},
    {"name": "user_id", "type": "string"},
    {"name": "event_time", "type": "timestamp"},
    {"name": "payload", "type": "string"},
]


def events(rows: int, seed: int) -> pa.Table:
    """`rows` events: ~50k users, 30 days of event_time, a ~100-byte random payload."""
    rng = np.random.default_rng(seed)
    users = pa.array([f"user_{i:05d}" for i in range(USERS)])
    user_idx = pa.array(rng.integers(0, USERS, rows, dtype=np.int32))
    micros = START + rng.integers(0, DAYS * 86_400_000_000, rows, dtype=np.int64)
    lengths = rng.integers(80, 121, rows, dtype=np.int32)
    offsets = np.zeros(rows + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    chars = ALPHABET[rng.integers(0, len(ALPHABET), int(offsets[-1]), dtype=np.uint8)]
    payload = pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(chars))
    columns = {
        "event_id": pa.array(np.arange(rows, dtype=np.int64)),
        "user_id": users.take(user_idx),
        "event_time": pa.array(micros, pa.timestamp("us")),
        "payload": payload,
    }
    return pa.table(columns, schema=ARROW_SCHEMA)


def write_input(table: pa.Table, fmt: str, path: Path) -> Path:
    if fmt == "csv":
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each process we started, then SIGKILL its group (the worker's Spark JVM)."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def wait_for(check: Any, what: str, timeout: float, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if any(p.poll() is not None for p in procs):
            raise RuntimeError(f"a process exited while waiting for {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.2)


def chunks(path: Path, size: int = 1 << 20) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while block := handle.read(size):
            yield block


def poll(deadline: float, what: str) -> None:
    if time.perf_counter() > deadline:
        raise TimeoutError(f"{what} did not finish in time")
    time.sleep(0.1)


def ingest(client: httpx.Client, dataset_id: str, fmt: str, path: Path) -> dict[str, Any]:
    """Upload one file as one batch and wait for success: job and end-to-end seconds."""
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
    return {"rows": state["row_count"], "job": span.total_seconds(), "e2e": wall}


def run_icebatch(home: Path, fmt: str, data: Path, warmup: Path, rows: int) -> dict[str, Any]:
    env = {**os.environ, "ICEBATCH_HOME": str(home)}
    made = subprocess.run(
        [ICEBATCH, "keys", "create", "--org", "bench"], env=env, capture_output=True, check=True
    )
    key = made.stdout.decode().strip().splitlines()[-1]
    port = free_port()
    worker_log = home / "worker.log"
    procs = [start([ICEBATCH, "api", "--port", str(port)], env, home / "api.log")]
    procs.append(start([ICEBATCH, "worker"], env, worker_log))
    try:
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=300
        ) as client:

            def api_up() -> bool:
                try:
                    return client.get("/healthz").status_code == 200
                except httpx.TransportError:
                    return False

            wait_for(api_up, "the API", 120, procs)
            wait_for(lambda: " ready." in worker_log.read_text(), "the worker", 120, procs)
            dataset = client.post(
                "/v1/datasets",
                json={
                    "name": "events",
                    "schema": SCHEMA,
                    "partition": [{"column": "event_time", "transform": "day"}],
                    "identity_columns": ["user_id"],
                },
            )
            dataset_id = dataset.raise_for_status().json()["id"]
            first = ingest(client, dataset_id, fmt, warmup)  # starts the worker's SparkSession
            result = ingest(client, dataset_id, fmt, data)
    finally:
        stop(procs)
    if result["rows"] != rows:
        raise RuntimeError(f"row_count {result['rows']} != {rows}")
    return {**result, "cold_job": first["job"]}


def run_spark(home: Path, fmt: str, data: Path, warmup: Path) -> float:
    """Seconds of `spark.read.<fmt>(input).write.parquet(out)` in a worker-like session."""
    os.environ["ICEBATCH_HOME"] = str(home)
    from app.config import get_settings
    from workers.spark.session import build_session

    spark = build_session(get_settings())

    def copy(path: Path, out: Path) -> float:
        began = time.perf_counter()
        if fmt == "csv":
            frame = spark.read.csv(str(path), header=True, schema=SPARK_DDL)
        else:
            frame = spark.read.parquet(str(path))
        frame.write.mode("overwrite").parquet(str(out))
        return time.perf_counter() - began

    try:
        copy(warmup, home / "spark-warmup")  # same JIT warm-up as the worker got
        return copy(data, home / "spark-out")
    finally:
        spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    parser.add_argument("--seed", type=int, default=20261101)
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only
    master = os.environ.get("ICEBATCH_SPARK_MASTER", "local[*]")
    memory = os.environ.get("ICEBATCH_SPARK_DRIVER_MEMORY", "4g")
    cores = len(os.sched_getaffinity(0))
    print(
        f"machine: nproc={cores}, Spark master {master}, driver memory {memory}, load "
        + "/".join(f"{x:.1f}" for x in os.getloadavg()),
        flush=True,
    )
    work = Path(tempfile.mkdtemp(prefix="icebatch-bench-"))
    try:
        began = time.perf_counter()
        table = events(args.rows, args.seed)
        data = write_input(table, args.format, work / f"events.{args.format}")
        warmup = write_input(table.slice(0, WARMUP_ROWS), args.format, work / f"w.{args.format}")
        del table
        size = data.stat().st_size / 1e6
        print(
            f"input: {args.rows:,} rows, {size:.0f} MB {args.format}, "
            f"generated in {time.perf_counter() - began:.1f}s",
            flush=True,
        )
        ice = run_icebatch(work / "home", args.format, data, warmup, args.rows)
        spark_s = run_spark(work / "home", args.format, data, warmup)
        report(args.rows, args.format, ice, spark_s)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def report(rows: int, fmt: str, ice: dict[str, Any], spark_s: float) -> None:
    print(
        f"format: {fmt}; worker's first (cold) job on {WARMUP_ROWS:,} rows: {ice['cold_job']:.1f}s"
    )
    lines = [("Icebatch job", ice["job"]), ("Icebatch end-to-end", ice["e2e"])]
    lines.append(("plain Spark write", spark_s))
    print(f"| {'measure':<22}| {'rows':>10} | {'seconds':>8} | {'rows/s':>10} |")
    print(f"|{'-' * 23}|{'-' * 12}|{'-' * 10}|{'-' * 12}|")
    for name, seconds in lines:
        print(f"| {name:<22}| {rows:>10,} | {seconds:>8.1f} | {rows / seconds:>10,.0f} |")
    print(f"ratio job / Spark (rows/s): {spark_s / ice['job']:.2f} (goal >= 0.8)")
    print(f"ratio end-to-end / Spark (rows/s): {spark_s / ice['e2e']:.2f}")


if __name__ == "__main__":
    main()
