"""An embedded-mode Icebatch service for the vacuum and incremental benchmarks: `icebatch api` and
`icebatch worker` as real processes on a fresh `ICEBATCH_HOME` (SQLite metadata store and
catalog, SQLite broker), and the HTTP calls the benchmarks make (ingest, jobs, datasets)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.common import (
    ICEBATCH,
    Procs,
    create_key,
    free_port,
    start,
    stop,
    wait_for,
    worker_ready,
)

BEGAN = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - BEGAN:7.1f}s] {message}", flush=True)


@dataclass
class Service:
    client: httpx.Client
    home: Path
    procs: Procs


def env_for(home: Path) -> dict[str, str]:
    env = {**os.environ, "ICEBATCH_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    for key in ("ICEBATCH_DATABASE_URL", "ICEBATCH_BROKER_URL", "ICEBATCH_WAREHOUSE"):
        env.pop(key, None)
    return env


@contextlib.contextmanager
def service(home: Path, store: dict[str, str] | None = None) -> Iterator[Service]:
    """Start API + worker on `home`; stop both (and the worker's Spark JVM) at the end. `store`:
    settings that replace the embedded ones (e.g. a PostgreSQL store and a Redis broker)."""
    home.mkdir(parents=True, exist_ok=True)
    env = env_for(home) | (store or {})
    key = create_key(env)
    port, worker_log = free_port(), home / "worker.log"
    procs = [start([ICEBATCH, "api", "--port", str(port)], env, home / "api.log")]
    procs.append(start([ICEBATCH, "worker"], env, worker_log))
    headers = {"Authorization": f"Bearer {key}"}
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=600
        ) as client:

            def api_up() -> bool:
                with contextlib.suppress(httpx.TransportError):
                    return client.get("/healthz").status_code == 200
                return False

            wait_for(api_up, "the API", procs)
            wait_for(worker_ready(worker_log), "the worker", procs)
            yield Service(client, home, procs)
    finally:
        stop(procs)


def create_dataset(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    return dict(client.post("/v1/datasets", json=body).raise_for_status().json())


def wait_job(client: httpx.Client, job_id: str, timeout: float = 1800) -> dict[str, Any]:
    """Poll a job until it finishes; raise unless it succeeded."""
    deadline = time.monotonic() + timeout
    while (job := client.get(f"/v1/jobs/{job_id}").raise_for_status().json())[
        "finished_at"
    ] is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} did not finish")
        time.sleep(0.1)
    if job["state"] != "succeeded":
        raise RuntimeError(f"job {job_id} ({job['kind']}) {job['state']}: {job.get('error')}")
    return dict(job)


def run_job(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST a job-starting request (202) and wait for the job: the finished job."""
    started = client.post(path, json=body)
    if started.status_code != 202:
        raise RuntimeError(f"POST {path} {body}: {started.status_code} {started.text}")
    return wait_job(client, started.json()["id"])


def ingest(
    client: httpx.Client, dataset_id: str, *paths: Path, timeout: float = 900
) -> dict[str, Any]:
    """Upload Parquet files as one batch and wait for `success`: the batch."""
    batch = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": "parquet"})
    batch_id = batch.raise_for_status().json()["id"]
    for path in paths:
        with path.open("rb") as handle:
            client.put(f"/v1/batches/{batch_id}/files/{path.name}", content=handle.read())
    client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}).raise_for_status()
    deadline = time.monotonic() + timeout
    while (state := client.get(f"/v1/batches/{batch_id}").json())["status"] not in (
        "success",
        "failed",
    ):
        if time.monotonic() > deadline:
            raise TimeoutError(f"batch {batch_id} did not finish")
        time.sleep(0.1)
    if state["status"] != "success":
        raise RuntimeError(f"batch {batch_id} failed: {state.get('errors')}")
    return dict(state)


def revert(client: httpx.Client, batch_id: str) -> dict[str, Any]:
    """REVERT a batch and wait for its job: the finished job."""
    done = client.post(f"/v1/batches/{batch_id}", params={"action": "REVERT"})
    return wait_job(client, done.raise_for_status().json()["job"]["id"])


def current_snapshot(client: httpx.Client, dataset_id: str) -> int:
    got = client.get(f"/v1/datasets/{dataset_id}").raise_for_status().json()
    return int(got["current_snapshot_id"])


def load_table(home: Path, table: str) -> Any:
    """The dataset's Iceberg table (`catalog.ns.name` as the API names it), via PyIceberg."""
    from app.config import Settings
    from app.lake.catalog import make_catalog

    catalog = make_catalog(Settings(home=home))
    return catalog.load_table(table.split(".", 1)[1])
