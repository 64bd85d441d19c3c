"""How long a vacuum holds a dataset's commit lease, against a restatement group commit's hold
on the same table in the same run (issue 26, goal 3: "hold it no longer than a group commit").

Run: `.venv/bin/python -m bench.lease_hold [--batches 24] [--rows-per-batch 20000] [--days 6]
[--rounds 5] [--users-per-round 3] [--postgres] [--keep]`.

One fresh embedded-mode home (`icebatch api` + `icebatch worker` as real processes, the worker's
Prometheus metrics on a port of its own): `--batches` Parquet batches are ingested (one file per
batch and day), then `--rounds` times: a GDPR privacy job for `--users-per-round` users (one
restatement group commit), then `POST /vacuum {"mode": "full"}` (rewrites the files those users'
rows were in). After each job the worker's `icebatch_commit_lease_held_seconds` is read: the
difference in its sum is that job's hold. The materializer's holds (position deletes) are
reported beside them. Each vacuum is checked to have rewritten files and purged the users' rows.
`--postgres`: a fresh PostgreSQL database as the metadata store and Iceberg catalog, and Redis
(database 1) as the broker, instead of the embedded SQLite ones.

Printed: each hold, and the ratio vacuum hold ÷ group-commit hold (medians; goal <= 1).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np

from bench import embedded
from bench.common import DATASET, free_port, local_run, work_dir
from bench.embedded import log
from bench.vacuum import generate

USERS = 20_000
PG = "postgresql://postgres@127.0.0.1:5432"
BROKER = "redis://127.0.0.1:6379/1"  # a database of its own: the test suite takes 2-15
HELD = "icebatch_commit_lease_held_seconds"


def holds(port: int) -> dict[str, tuple[float, float]]:
    """(count, sum) of the worker's lease holds so far, by operation."""
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    found: dict[str, list[float]] = {}
    for line in text.splitlines():
        for suffix, index in (("_count", 0), ("_sum", 1)):
            if line.startswith(HELD + suffix + "{"):
                operation = line.split('operation="', 1)[1].split('"', 1)[0]
                found.setdefault(operation, [0.0, 0.0])[index] = float(line.rsplit(" ", 1)[1])
    return {k: (v[0], v[1]) for k, v in found.items()}


def held_since(
    before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]]
) -> dict[str, tuple[int, float]]:
    """Holds (count, seconds) observed between two readings, by operation."""
    out = {}
    for operation, (count, total) in after.items():
        was = before.get(operation, (0.0, 0.0))
        if count > was[0]:
            out[operation] = (int(count - was[0]), total - was[1])
    return out


def gdpr(client: httpx.Client, did: str, users: list[str]) -> None:
    body = {"dataset_ids": [did], "column": "user_id", "values": users}
    job = client.post("/v1/privacy/jobs", json=body).raise_for_status().json()["id"]
    deadline = time.monotonic() + 600
    while (got := client.get(f"/v1/privacy/jobs/{job}").json())["status"] != "complete":
        if got["status"] == "failed" or time.monotonic() > deadline:
            raise RuntimeError(f"privacy job {job}: {got}")
        time.sleep(0.1)


def settle(port: int, seconds: float = 3.0) -> dict[str, tuple[float, float]]:
    """The holds once no new one was observed for `seconds` (the materializer is debounced)."""
    last, quiet = holds(port), time.monotonic()
    while time.monotonic() - quiet < seconds:
        time.sleep(0.5)
        now = holds(port)
        if now != last:
            last, quiet = now, time.monotonic()
    return last


@contextlib.contextmanager
def store(postgres: bool) -> Iterator[dict[str, str]]:
    """The settings of the run's store: none (embedded), or a fresh PostgreSQL database."""
    if not postgres:
        yield {}
        return
    import psycopg
    import redis

    redis.Redis.from_url(BROKER).flushdb()  # no message of an earlier run
    database = f"bench_lease_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    try:
        yield {"ICEBATCH_DATABASE_URL": f"{PG}/{database}", "ICEBATCH_BROKER_URL": BROKER}
    finally:
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def run(args: argparse.Namespace, work: Path, settings: dict[str, str]) -> dict[str, list[float]]:
    paths = generate(work / "data", args.batches, args.rows_per_batch, args.days, 26, USERS)
    port = free_port()
    os.environ["ICEBATCH_WORKER_METRICS_PORT"] = str(port)
    found: dict[str, list[float]] = {}
    with embedded.service(work / "home", settings) as svc:
        client = svc.client
        did = embedded.create_dataset(client, DATASET)["id"]
        for path in paths:
            embedded.ingest(client, did, path)
        log(f"{len(paths)} batches ingested")
        rng = np.random.default_rng(7)
        for round_ in range(args.rounds):
            users = [f"user_{i:05d}" for i in rng.choice(USERS, args.users_per_round, False)]
            before = settle(port)
            gdpr(client, did, users)
            middle = settle(port)
            vacuum = embedded.run_job(client, f"/v1/datasets/{did}/vacuum", {"mode": "full"})
            after = settle(port)
            result = vacuum["result"]
            if not result.get("files_rewritten") or not result.get("rows_purged"):
                raise RuntimeError(f"the vacuum purged nothing: {result}")
            line = []
            for stage in (held_since(before, middle), held_since(middle, after)):
                for operation, (count, seconds) in sorted(stage.items()):
                    found.setdefault(operation, []).append(seconds / count)
                    line.append(f"{operation} {seconds / count * 1000:.0f} ms ×{count}")
            rewritten = result["files_rewritten"]
            log(f"round {round_ + 1}: {', '.join(line)}; vacuum rewrote {rewritten} files")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=24)
    parser.add_argument("--rows-per-batch", type=int, default=20_000)
    parser.add_argument("--days", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--users-per-round", type=int, default=3)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    local_run()
    with work_dir("bench-lease-", args.keep) as work, store(args.postgres) as settings:
        print(f"store: {settings.get('ICEBATCH_DATABASE_URL', 'embedded SQLite')}")
        found = run(args, work, settings)
    for operation, seconds in sorted(found.items()):
        shown = ", ".join(f"{s * 1000:.0f}" for s in seconds)
        print(f"{operation:>12}: median {statistics.median(seconds) * 1000:.0f} ms ({shown} ms)")
    if found.get("vacuum") and found.get("restate"):
        ratio = statistics.median(found["vacuum"]) / statistics.median(found["restate"])
        print(f"vacuum hold ÷ group-commit hold (medians): {ratio:.2f} (goal <= 1)")


if __name__ == "__main__":
    main()
