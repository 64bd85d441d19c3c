"""The service under test: PostgreSQL and Redis databases of its own, `icebatch api` processes
and one `icebatch worker --beat` (automatic vacuum, expiry and materialization on; or the
worker and a Celery beat process apart), the dataset
with its base rows ingested through the API, and the observer of its tombstones."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench import embedded
from bench.common import DATASET, Procs, create_key, start, stop
from bench.restatements.infra import create_database, drop_database, redis_database
from bench.restatements.observe import Observer
from bench.restatements.service import service_env, start_processes
from bench.restatements.shared import PG, log, timed
from bench.scale.workload import Workload


def beat_argv(home: Path) -> list[str]:
    """Celery beat alone, sending the maintenance and CDC schedules (`--beat process`)."""
    app = ["-m", "celery", "-A", "workers.celery_app", "beat", "--loglevel", "INFO"]
    return [sys.executable, *app, "--schedule", str(home / "celerybeat-schedule")]


@dataclass
class Service:
    urls: list[str]
    key: str
    client: httpx.Client  # to the first API process
    dataset_id: str
    identifier: str  # namespace.table in the catalog
    database_url: str
    broker_url: str
    home: Path
    procs: Procs
    catalog: Any  # PyIceberg catalog of the service's database (this process)
    observer: Observer
    ingest_seconds: float

    def table(self) -> Any:
        return self.catalog.load_table(self.identifier)


def settings(args: argparse.Namespace) -> dict[str, str]:
    """The service's maintenance as a user would run it, and no fair-use limit: the bench's own
    pacing is the load (`--set` overrides any of these)."""
    out = {
        "ICEBATCH_SCHEDULER_SECONDS": str(args.scheduler_seconds),
        "ICEBATCH_AUTO_VACUUM_TOMBSTONES": str(args.vacuum_at),
        "ICEBATCH_AUTO_EXPIRE": "true",
        "ICEBATCH_MATERIALIZE_DELETES": "true",
        "ICEBATCH_RETENTION_MAX_SNAPSHOT_AGE_SECONDS": str(args.retention_seconds),
        "ICEBATCH_RETENTION_MIN_SNAPSHOTS": str(args.min_snapshots),
        "ICEBATCH_RATE_LIMIT_PER_SECOND": "0",
        "ICEBATCH_MAX_INFLIGHT_JOBS_PER_ORG": "0",
    }
    for item in args.set:
        name, _, value = item.partition("=")
        out[name] = value
    return out


@contextlib.contextmanager
def running(args: argparse.Namespace, home: Path, workload: Workload) -> Iterator[Service]:
    """Start the service, create the dataset and ingest the base batches; stop it all after."""
    from app.config import Settings
    from app.lake.catalog import make_catalog

    database = create_database("icebatch_bench_scale")
    try:
        with redis_database() as redis_db:
            home.mkdir(parents=True)
            database_url = f"{PG}/{database}"
            env = service_env(home, database_url, redis_db, settings(args))
            key = create_key(env)
            procs: Procs = []
            try:
                embedded_beat = args.beat == "worker"
                urls, _ = start_processes(
                    env, home, procs, args.api_processes, args.worker_concurrency, embedded_beat
                )
                if not embedded_beat:  # the scheduler as a process of its own
                    procs.append(start(beat_argv(home), env, home / "beat.log"))
                headers = {"Authorization": f"Bearer {key}"}
                with httpx.Client(base_url=urls[0], headers=headers, timeout=300) as client:
                    created = client.post("/v1/datasets", json=DATASET).raise_for_status().json()
                    identifier = created["table"].split(".", 1)[1]
                    groups = workload.base_groups
                    log(f"ingesting {sum(map(len, groups))} files as {len(groups)} batches")
                    seconds, batches = timed(
                        lambda: [
                            embedded.ingest(client, created["id"], *files, timeout=1800)
                            for files in groups
                        ]
                    )
                    workload.base_batches = [b["id"] for b in batches]
                    catalog = make_catalog(Settings(home=home, database_url=database_url))
                    observer = Observer(catalog, database_url, identifier, args.poll)
                    observer.start()
                    try:
                        yield Service(
                            urls,
                            key,
                            client,
                            created["id"],
                            identifier,
                            database_url,
                            env["ICEBATCH_BROKER_URL"],
                            home,
                            procs,
                            catalog,
                            observer,
                            seconds,
                        )
                    finally:
                        observer.halt.set()
                        observer.join()
            finally:
                stop(procs)
    finally:
        drop_database(database)
