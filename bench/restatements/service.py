"""Part (d): the real service (PostgreSQL, Redis, `icebatch api` + `icebatch worker`) under
GDPR requests over HTTP, at each rate in turn."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench import embedded
from bench.common import (
    DATASET,
    ICEBATCH,
    Procs,
    create_key,
    free_port,
    start,
    stop,
    wait_for,
    worker_ready,
)
from bench.restatements.data import Data
from bench.restatements.infra import create_database, drop_database, redis_database
from bench.restatements.load import Request, fire
from bench.restatements.observe import (
    Observer,
    cpu_seconds,
    job_latencies,
    machine_ticks,
    pending_jobs,
    worker_tasks,
)
from bench.restatements.shared import PG, REDIS, USERS, log, pct, timed


def upload_batches(client: httpx.Client, dataset_id: str, groups: list[list[Path]]) -> float:
    """Ingest each group of files as one batch through the API; total seconds."""
    began = time.perf_counter()
    for files in groups:
        embedded.ingest(client, dataset_id, *files, timeout=600)
    return time.perf_counter() - began


@dataclass
class Service:
    """The running service of part (d) and what its runs share."""

    urls: list[str]
    key: str
    dataset_id: str
    identifier: str
    database_url: str
    procs: Procs
    groups: dict[int, str]
    worker_log: Path
    observer: Observer
    users: Iterator[int]
    rng: np.random.Generator


def load_run(
    svc: Service, data: Data, rate: float, duration: float, cap: int, drain: float
) -> dict[str, Any]:
    """Fire GDPR requests at `rate` for `duration` seconds; wait for every job; the figures."""
    total = int(rate * duration)
    requests = [
        Request([data.identities[next(svc.users)] for _ in range(int(svc.rng.integers(1, 4)))])
        for _ in range(total)
    ]
    log_offset = svc.worker_log.stat().st_size
    first_commit = len(svc.observer.commits)
    cpu_before, ticks_before = cpu_seconds(svc.groups), machine_ticks()
    began, began_ms = time.perf_counter(), int(time.time() * 1000)
    asyncio.run(fire(svc.urls, svc.key, svc.dataset_id, requests, rate, cap, duration))
    window = time.perf_counter() - began
    cpu_after, ticks_after = cpu_seconds(svc.groups), machine_ticks()
    accepted = [r for r in requests if r.status == 202]
    log(f"(d) {rate:.0f}/s: {len(accepted)} of {total} accepted in {window:.1f}s; draining")
    drain_began = time.perf_counter()
    wait_for(lambda: pending_jobs(svc.database_url) == 0, "the jobs", svc.procs, drain)
    drained = time.perf_counter() - drain_began
    lag = materialization_lag(svc.observer.catalog.load_table(svc.identifier).snapshots(), began_ms)
    time.sleep(max(0.3, svc.observer.every * 4))
    with svc.worker_log.open("rb") as handle:
        handle.seek(log_offset)
        tasks = worker_tasks(handle.read().decode(errors="replace"))
    visible_after: list[float] = []
    missing = 0
    for r in accepted:
        seen = [svc.observer.first_seen.get(v) for v in r.values]
        if any(s is None for s in seen):
            missing += 1
            continue
        visible_after.append(max(0.0, max(s for s in seen if s is not None) - r.answered))
    commits = svc.observer.commits[first_commit:]
    statuses: dict[str, int] = {}
    for r in requests:
        label = {0: "not sent", -1: f"error {r.error}"}.get(r.status, str(r.status))
        statuses[label] = statuses.get(label, 0) + 1
    busy = (ticks_after[0] - ticks_before[0]) / max(1, ticks_after[1] - ticks_before[1])
    return {
        "rate": rate,
        "in_flight": cap,
        "offered": total,
        "window": window,
        "accepted": len(accepted),
        "accepted_per_s": len(accepted) / window,
        "statuses": statuses,
        "post_latency": [r.answered - r.sent for r in accepted],
        "visible": visible_after,
        "missing": missing,
        "jobs": job_latencies(svc.database_url, {r.job_id for r in accepted}),
        "drain_seconds": drained,
        "group_sizes": [
            int(c.get("icebatch.request-count", 0))
            for c in commits
            if c.get("icebatch.operation") != "materialize"
        ],
        "cpu": {k: cpu_after[k] - cpu_before.get(k, 0.0) for k in cpu_after},
        "machine_busy": busy,
        "worker": tasks,
        "values": [v for r in accepted for v in r.values],
        "materialization": lag,
    }


def warm_indexes(table: Any, column: str) -> None:
    """Build the column indexes (app.lake.column_index) of the current snapshot's files (a
    checkout from before them, measured as a baseline, has none)."""
    from app.lake import visible

    try:
        from app.lake import column_index
    except ImportError:
        return

    for planned in visible.plan(table, table.current_snapshot()):
        column_index.for_file(table, planned.data_file, column)
        column_index.for_file(table, planned.data_file, "_batch_id")


def materialization_lag(snapshots: Iterable[Any], since_ms: int) -> dict[str, Any]:
    """From a snapshot log: for each tombstone commit since `since_ms`, the seconds until the
    first materializer snapshot whose mark covers it (issue 13), and the materializer's runs."""
    from app.lake import tombstones

    commits, marks = [], []
    for snapshot in snapshots:
        if snapshot.timestamp_ms < since_ms or snapshot.summary is None:
            continue
        own = snapshot.summary.additional_properties
        if own.get("icebatch.operation") == "materialize":
            marks.append((int(own[tombstones.MATERIALIZED]), snapshot.timestamp_ms))
        elif int(own.get(tombstones.ADDED, 0)):
            commits.append((snapshot.sequence_number or 0, snapshot.timestamp_ms))
    marks.sort(key=lambda m: m[1])
    lags, unmaterialized = [], 0
    for seq, at in commits:
        done = next((ts for mark, ts in marks if mark >= seq and ts >= at), None)
        if done is None:
            unmaterialized += 1
        else:
            lags.append((done - at) / 1000)
    return {"lags": lags, "commits": len(commits), "runs": len(marks), "never": unmaterialized}


def run_service(args: argparse.Namespace, data: Data, work: Path) -> dict[str, Any]:
    database = create_database("icebatch_bench_svc")
    try:
        with redis_database() as redis_db:
            return service_part(args, data, work / "service", database, redis_db)
    finally:
        drop_database(database)


def service_env(
    home: Path, database_url: str, redis_db: int, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """The service processes' environment: this process's, with the checkout this bench runs
    from first on PYTHONPATH (so `icebatch` runs the same code, not the venv's editable
    install), the run's databases, and `extra` settings on top."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "ICEBATCH_HOME": str(home),
        "ICEBATCH_DATABASE_URL": database_url,
        "ICEBATCH_BROKER_URL": f"{REDIS}/{redis_db}",
        "ICEBATCH_WAREHOUSE": "",
        "PYTHONUNBUFFERED": "1",
        **(extra or {}),
    }


def start_processes(
    env: dict[str, str],
    home: Path,
    procs: Procs,
    api_processes: int,
    concurrency: int,
    beat: bool = False,
) -> tuple[list[str], Path]:
    """Start `api_processes` API processes, then one worker (with the maintenance scheduler,
    Celery beat, when `beat`), each added to `procs` for the caller to stop; the APIs' URLs
    and the worker's log."""
    urls: list[str] = []
    for i in range(api_processes):  # one at a time: each runs the migrations first
        port = free_port()
        procs.append(start([ICEBATCH, "api", "--port", str(port)], env, home / f"api{i}.log"))
        urls.append(f"http://127.0.0.1:{port}")

        def api_up(url: str = urls[-1]) -> bool:
            with contextlib.suppress(httpx.TransportError):
                return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
            return False

        wait_for(api_up, "the API", procs, 120)
    worker_log = home / "worker.log"
    argv = [ICEBATCH, "worker", "--concurrency", str(concurrency), *(["--beat"] if beat else [])]
    procs.append(start(argv, env, worker_log))
    wait_for(worker_ready(worker_log), "the worker", procs, 120)
    return urls, worker_log


def service_part(
    args: argparse.Namespace, data: Data, home: Path, database: str, redis_db: int
) -> dict[str, Any]:
    from app.config import Settings
    from app.lake import visible
    from app.lake.catalog import make_catalog

    home.mkdir(parents=True)
    database_url = f"{PG}/{database}"
    # the org's fair-use limits above what the offered rates need (a deployment taking
    # hundreds of restatements a second from one org raises them so): the limiter's cost is
    # measured, its 429s are not
    limits = {
        "ICEBATCH_RATE_LIMIT_PER_SECOND": "2000",
        "ICEBATCH_RATE_LIMIT_BURST": "4000",
        "ICEBATCH_MAX_INFLIGHT_JOBS_PER_ORG": "10000",
    }
    env = service_env(home, database_url, redis_db, limits)
    key = create_key(env)
    procs: Procs = []
    headers = {"Authorization": f"Bearer {key}"}
    try:
        urls, worker_log = start_processes(
            env, home, procs, args.api_processes, args.worker_concurrency
        )
        with httpx.Client(base_url=urls[0], headers=headers, timeout=300) as client:
            created = client.post("/v1/datasets", json=DATASET).raise_for_status().json()
            dataset_id, identifier = created["id"], created["table"].split(".", 1)[1]
            files = data.files[: args.service_files] if args.service_files else data.files
            size = max(1, len(files) // args.service_batches)
            groups = [files[i : i + size] for i in range(0, len(files), size)]
            log(f"(d) ingesting {len(files)} files as {len(groups)} batches through the API")
            ingest_seconds = upload_batches(client, dataset_id, groups)
        catalog = make_catalog(Settings(home=home, database_url=database_url))
        table = catalog.load_table(identifier)
        table_rows = sum(
            int(s.summary.additional_properties.get("added-records", 0))
            for s in table.snapshots()
            if s.summary
        )
        log(f"(d) table ready: {table_rows:,} rows ingested in {ingest_seconds:.1f}s")
        observer = Observer(catalog, database_url, identifier, args.poll)
        observer.start()
        rng = np.random.default_rng(args.seed + 7)
        names = {p.pid: f"api{i + 1}" for i, p in enumerate(procs[:-1])}
        svc = Service(
            urls,
            key,
            dataset_id,
            identifier,
            database_url,
            procs,
            {**names, procs[-1].pid: "worker"},
            worker_log,
            observer,
            iter(rng.permutation(USERS).tolist()),
            rng,
        )
        runs = []
        try:
            if args.warmup > 0:
                rate, cap = args.rates[0]
                warm = load_run(svc, data, rate, args.warmup, cap or args.in_flight, 300.0)
                log(
                    f"(d) warm-up: {warm['accepted_per_s']:.1f}/s accepted for {args.warmup:g}s, "
                    f"p99 visible {pct(warm['visible'], 0.99):.2f}s (not reported)"
                )
            for rate, cap in args.rates:
                cap = cap or args.in_flight
                runs.append(load_run(svc, data, rate, args.duration, cap, args.drain_timeout))
        finally:
            observer.halt.set()
            observer.join()
        table = catalog.load_table(identifier)
        values = sorted({v for run in runs for v in run.pop("values")})
        # this process's column indexes built first (as a running worker has them), so the
        # counts below are the committer's warm cost and no build is left running at the end
        warm_seconds, _ = timed(lambda: warm_indexes(table, "user_id"))
        check_seconds, leftover = timed(
            lambda: visible.count_by_value(table, table.current_snapshot(), "user_id", values)
        )
        # and through an engine that knows no tombstone: PyIceberg's plain scan (position deletes)
        scanned = table.scan(selected_fields=("user_id",)).to_arrow()["user_id"]
        plain_leftover = int(pc.sum(pc.is_in(scanned, pa.array(values))).as_py() or 0)
        planned = visible.plan(table, table.current_snapshot())
        # what the committer's rows-hidden count costs a group of 10 ids (after each commit)
        probe = [data.identities[next(svc.users)] for _ in range(10)]
        probe_seconds = min(
            timed(
                lambda: visible.count_by_value(table, table.current_snapshot(), "user_id", probe)
            )[0]
            for _ in range(3)
        )
        return {
            "table_rows": table_rows,
            "files": len(files),
            "batches": len(groups),
            "ingest_seconds": ingest_seconds,
            "runs": runs,
            "check_values": len(values),
            "leftover_rows": sum(leftover.values()),
            "check_seconds": check_seconds,
            "index_seconds": warm_seconds,
            "probe_seconds": probe_seconds,
            "snapshots": len(table.snapshots()),
            "plain_leftover": plain_leftover,
            "data_files": len(planned),
            "delete_files": len({d.file_path for p in planned for d in p.delete_files}),
        }
    finally:
        stop(procs)
