"""Restatement throughput across datasets as workers are added, Spark on a cluster (issue 14).

Run (root: the cluster's worker hosts are network namespaces):
`.venv/bin/python -m bench.scaling [--workers 1,2,3] [--datasets 3] [--rate 240]
[--duration 30] [--in-flight 48]`.

For each worker count, a fresh installation (PostgreSQL database, Redis database): 2 API
processes, N `icebatch worker --concurrency 2` whose Spark runs on `scripts/cluster.sh up
--netns` (master + 2 worker hosts), D datasets of 20,000 rows each ingested through the API.
GDPR requests (one user id each) are fired over HTTP at `--rate` in all, spread evenly over the
datasets, for `--duration` s; then every job is awaited. Reported: accepted and committed
restatements per second, each request's time to committed (p50/p99), the CPU seconds of each
process group per 1,000 restatements, how busy the machine was, and what PostgreSQL's active
backends were waiting on (sampled every 0.2 s: a hot row shows as `Lock` waits).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.parquet as pq

from bench import embedded
from bench.common import (
    DATASET,
    ICEBATCH,
    Procs,
    create_key,
    events,
    free_port,
    start,
    stop,
    wait_for,
    work_dir,
    worker_ready,
)
from bench.restatements.infra import create_database, drop_database, redis_database
from bench.restatements.load import Request, fire
from bench.restatements.observe import cpu_seconds, job_latencies, machine_ticks, pending_jobs
from bench.restatements.shared import PG, REDIS

ROOT = Path(__file__).resolve().parent.parent
ROWS, USERS = 20_000, 5_000


class PgWaits(threading.Thread):
    """Samples what PostgreSQL's active client backends wait on, every 0.2 s."""

    def __init__(self, database_url: str) -> None:
        super().__init__(name="pg-waits", daemon=True)
        self.database_url, self.halt, self.seen = database_url, threading.Event(), Counter[str]()
        self.statements = Counter[str]()  # what the backends waiting on a lock were running

    def run(self) -> None:
        query = (
            "SELECT coalesce(wait_event_type || ':' || wait_event, 'running'), "
            "left(regexp_replace(query, '\\s+', ' ', 'g'), 60) FROM pg_stat_activity "
            "WHERE datname = current_database() AND state = 'active' "
            "AND pid <> pg_backend_pid()"
        )
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            while not self.halt.wait(0.2):
                for what, statement in conn.execute(query).fetchall():
                    self.seen[what] += 1
                    if what.startswith("Lock:"):
                        self.statements[statement] += 1


def cluster(*args: str, folder: Path) -> None:
    env = {
        **os.environ,
        "ICEBATCH_CLUSTER_DIR": str(folder),
        "ICEBATCH_CLUSTER_NAME": "ibbench",
        "ICEBATCH_CLUSTER_SUBNET": "10.79.0",
    }
    subprocess.run(["bash", str(ROOT / "scripts" / "cluster.sh"), *args], env=env, check=True)


def cluster_env(folder: Path) -> dict[str, str]:
    out = {}
    for line in (folder / "env").read_text().splitlines():
        key, _, value = line.removeprefix("export ").partition("=")
        out[key] = value
    return out


def one_run(
    args: argparse.Namespace, workers: int, spark: dict[str, str], home: Path
) -> dict[str, Any]:
    database = create_database("icebatch_bench_scaling")
    try:
        with redis_database() as redis_db:
            return _run(args, workers, spark, home, f"{PG}/{database}", f"{REDIS}/{redis_db}")
    finally:
        drop_database(database)


def _run(
    args: argparse.Namespace,
    workers: int,
    spark: dict[str, str],
    home: Path,
    database_url: str,
    broker_url: str,
) -> dict[str, Any]:
    home.mkdir(parents=True)
    env = {
        **os.environ,
        **spark,
        "ICEBATCH_SPARK_CORES_MAX": "2",
        "ICEBATCH_SPARK_EXECUTOR_MEMORY": "768m",
        "ICEBATCH_SPARK_DRIVER_MEMORY": "1g",
        "ICEBATCH_HOME": str(home),
        "ICEBATCH_DATABASE_URL": database_url,
        "ICEBATCH_BROKER_URL": broker_url,
        "ICEBATCH_WAREHOUSE": "",
        "ICEBATCH_RATE_LIMIT_PER_SECOND": "0",
        "ICEBATCH_MAX_INFLIGHT_JOBS_PER_ORG": "0",
        "PYTHONUNBUFFERED": "1",
    }
    key = create_key(env)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs: Procs = []
    try:
        argv = [ICEBATCH, "api", "--port", str(port), "--workers", "2"]
        procs.append(start(argv, env, home / "api.log"))

        def api_up() -> bool:
            with contextlib.suppress(httpx.TransportError):
                return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
            return False

        wait_for(api_up, "the API", procs, 120)
        for i in range(workers):
            log_path = home / f"worker{i + 1}.log"
            argv = [ICEBATCH, "worker", "--concurrency", str(args.worker_concurrency)]
            procs.append(start(argv, env, log_path))
            wait_for(worker_ready(log_path), f"worker {i + 1}", procs, 120)
        rng = np.random.default_rng(7)
        users = pa.array([f"user-{i:06d}" for i in range(USERS)])
        datasets = []
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=url, headers=headers, timeout=300) as client:
            for d in range(args.datasets):
                body = {**DATASET, "name": f"events_{d}"}
                datasets.append(client.post("/v1/datasets", json=body).raise_for_status().json())
                path = home / f"events-{d}.parquet"
                pq.write_table(events(ROWS, d * ROWS, users, 4, rng), path)
                embedded.ingest(client, datasets[-1]["id"], path, timeout=600)
        per = args.rate / args.datasets
        total = int(per * args.duration)
        order = rng.permutation(USERS)
        loads = [
            [Request([str(users[int(order[(d * total + i) % USERS])])]) for i in range(total)]
            for d in range(args.datasets)
        ]
        groups = {
            p.pid: name
            for p, name in zip(
                procs, ["api", *[f"worker{i + 1}" for i in range(workers)]], strict=True
            )
        }
        waits = PgWaits(database_url)
        waits.start()
        cpu_before, ticks_before = cpu_seconds(groups), machine_ticks()
        began = time.perf_counter()

        async def everything() -> None:
            cap = max(1, args.in_flight // args.datasets)
            await asyncio.gather(
                *(
                    fire([url], key, ds["id"], load, per, cap, args.duration)
                    for ds, load in zip(datasets, loads, strict=True)
                )
            )

        asyncio.run(everything())
        window = time.perf_counter() - began
        wait_for(lambda: pending_jobs(database_url) == 0, "the jobs", procs, 600)
        finished = time.perf_counter() - began
        waits.halt.set()
        waits.join()
        cpu_after, ticks_after = cpu_seconds(groups), machine_ticks()
        accepted = [r for load in loads for r in load if r.status == 202]
        jobs = job_latencies(database_url, {r.job_id for r in accepted})
        busy = (ticks_after[0] - ticks_before[0]) / max(1, ticks_after[1] - ticks_before[1])
        return {
            "workers": workers,
            "offered": args.datasets * total,
            "accepted": len(accepted),
            "accepted_per_s": len(accepted) / window,
            "committed_per_s": len(jobs["seconds"]) / finished,
            "states": jobs["states"],
            "latency": jobs["seconds"],
            "cpu": {k: cpu_after[k] - cpu_before.get(k, 0.0) for k in cpu_after},
            "machine_busy": busy,
            "pg_waits": dict(waits.seen),
            "pg_lock_statements": dict(waits.statements.most_common(4)),
        }
    finally:
        stop(procs)


def report(runs: list[dict[str, Any]]) -> None:
    base = runs[0]["committed_per_s"]
    print(
        "\nworkers | accepted/s | committed/s (x 1 worker) | to committed p50 / p99 | machine busy"
    )
    for r in runs:
        p50, p99 = (
            np.percentile(r["latency"], q) if r["latency"] else float("nan") for q in (50, 99)
        )
        print(
            f"{r['workers']:7d} | {r['accepted_per_s']:10.1f} | {r['committed_per_s']:8.1f} "
            f"({r['committed_per_s'] / base:4.2f}x)         | {p50:6.2f} s / {p99:6.2f} s"
            f"        | {100 * r['machine_busy']:.0f}%   states {r['states']}"
        )
    print("\nCPU seconds per 1,000 restatements (process groups; a worker's group holds its JVM)")
    for r in runs:
        per = 1000 / max(1, r["accepted"])
        parts = ", ".join(f"{k} {v * per:.1f}" for k, v in sorted(r["cpu"].items()) if v)
        print(f"  {r['workers']} worker(s): {parts}")
    print("\nPostgreSQL active backends, sampled every 0.2 s (share of samples)")
    for r in runs:
        total = max(1, sum(r["pg_waits"].values()))
        top = sorted(r["pg_waits"].items(), key=lambda kv: -kv[1])[:6]
        shares = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top)
        print(f"  {r['workers']} worker(s): {total} samples: {shares}")
        for statement, n in r["pg_lock_statements"].items():
            print(f"      waiting on a lock: {100 * n / total:.0f}%  {statement}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scaling", description=__doc__)
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--datasets", type=int, default=3)
    parser.add_argument("--rate", type=float, default=240.0)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--in-flight", type=int, default=48)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    print(
        f"command: python -m bench.scaling --workers {args.workers} --datasets {args.datasets} "
        f"--rate {args.rate:g} --duration {args.duration:g} --in-flight {args.in_flight}"
    )
    with work_dir("icebatch-scaling-", args.keep) as work:
        folder = work / "cluster"
        try:  # `down` even when `up` failed half-way (a master started, the workers did not)
            cluster(
                "up", "--netns", "--workers", "2", "--cores", "3", "--memory", "3g", folder=folder
            )
            spark = cluster_env(folder)
            runs = [one_run(args, n, spark, work / f"run-{n}") for n in counts]
        finally:
            cluster("down", folder=folder)
    report(runs)


if __name__ == "__main__":
    main()
