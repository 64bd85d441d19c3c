"""What a level measures once the load is paused and the service has settled: commit latencies
by probe, the table's metadata, the API's read of a 1% slice, the maintenance jobs since the
last level, the metadata store's rows and the materialization lag."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg

from bench import embedded
from bench.common import wait_for
from bench.restatements.observe import pending_jobs
from bench.restatements.service import materialization_lag
from bench.scale.service import Service
from bench.scale.workload import Workload

MAINTENANCE = ("vacuum", "expire", "materialize", "compact")


def settle(svc: Service, timeout: float) -> float:
    """Wait until no job is queued or running and every tombstone is materialized."""
    from app.lake import tombstones

    def settled() -> bool:
        if pending_jobs(svc.database_url):
            return False
        table = svc.table()
        return tombstones.unmaterialized(table, table.current_snapshot()).num_rows == 0

    began = time.perf_counter()
    wait_for(settled, "the jobs and the materializer", svc.procs, timeout)
    return time.perf_counter() - began


def seen(svc: Service, target: str) -> Callable[[], bool]:
    return lambda: target in svc.observer.first_seen


def probe_restatements(svc: Service, workload: Workload, count: int, timeout: float) -> list[float]:
    """`count` GDPR deletes one at a time on the quiet service: 202 -> tombstone visible."""
    out = []
    for _ in range(count):
        target = workload.take_gdpr()
        body = {"dataset_ids": [svc.dataset_id], "column": "user_id", "values": [target]}
        svc.client.post("/v1/privacy/jobs", json=body).raise_for_status()
        answered = time.perf_counter()
        wait_for(seen(svc, target), "a probe", svc.procs, timeout)
        out.append(max(0.0, svc.observer.first_seen[target] - answered))
        workload.deleted.append(target)
    return out


def probe_appends(svc: Service, workload: Workload, count: int) -> list[float]:
    """`count` ingests of a small side batch one at a time: open -> upload -> 'success'."""
    out = []
    for _ in range(count):
        path = workload.new_side_file()
        began = time.perf_counter()
        batch = embedded.ingest(svc.client, svc.dataset_id, path)
        seconds = time.perf_counter() - began
        out.append(seconds)
        workload.live[batch["id"]] = path
        workload.pool.append(batch["id"])
    return out


def table_shape(table: Any) -> dict[str, Any]:
    """metadata.json bytes, snapshots, manifests of the current snapshot (data and delete),
    live data and delete files, active tombstones and the tombstone list's segments."""
    from pyiceberg.manifest import ManifestContent

    from app.lake import tombstones, visible

    snapshot = table.current_snapshot()
    manifests = snapshot.manifests(table.io)
    planned = visible.plan(table, snapshot)
    listed = tombstones.read_list(table.io, tombstones.list_location(table, snapshot))
    return {
        "metadata_json_bytes": len(table.io.new_input(table.metadata_location)),
        "snapshots": len(table.snapshots()),
        "metadata_log": len(table.metadata.metadata_log),
        "data_manifests": sum(1 for m in manifests if m.content == ManifestContent.DATA),
        "delete_manifests": sum(1 for m in manifests if m.content == ManifestContent.DELETES),
        "data_files": len(planned),
        "delete_files": len({d.file_path for p in planned for d in p.delete_files}),
        "active_tombstones": listed.total,
        "tombstone_segments": len(listed.segments),
    }


def slice_reads(svc: Service, visible_rows: int, runs: int) -> dict[str, Any]:
    """`GET /rows` of 1% of the visible rows from the middle of the table (the rows before it
    are read and skipped, as a consumer paging through gets them): seconds of each run."""
    limit = max(1, visible_rows // 100)
    params = {"offset": visible_rows // 2, "limit": limit}
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        with svc.client.stream("GET", f"/v1/datasets/{svc.dataset_id}/rows", params=params) as r:
            r.raise_for_status()
            got = sum(1 for line in r.iter_lines() if line)
        times.append(time.perf_counter() - began)
        if got != limit:
            raise RuntimeError(f"the 1% slice read {got} rows, not {limit}")
    return {"rows": limit, "offset": params["offset"], "seconds": times}


def maintenance_jobs(svc: Service, since: datetime) -> dict[str, Any]:
    """The automatic maintenance jobs created since `since` (jobs API), per kind: durations
    (finished_at - started_at), failures, and what the vacuums did."""
    out: dict[str, Any] = {}
    for kind in MAINTENANCE:
        jobs: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"kind": kind, "limit": 100}
            if cursor:
                params["cursor"] = cursor
            page = svc.client.get("/v1/jobs", params=params).raise_for_status().json()
            fresh = [j for j in page["items"] if datetime.fromisoformat(j["created_at"]) >= since]
            jobs += fresh
            cursor = page["next"]
            if not cursor or len(fresh) < len(page["items"]):
                break
        done = [j for j in jobs if j["duration_seconds"] is not None]
        out[kind] = {
            "count": len(jobs),
            "failed": sum(1 for j in jobs if j["state"] == "failed"),
            "seconds": [float(j["duration_seconds"]) for j in done],
            "spans": [(j["started_at"], j["finished_at"]) for j in done],
        }
        if kind == "vacuum":
            results = [j["result"] or {} for j in done]
            for key in ("files_rewritten", "files_deleted", "rows_purged", "tombstones_purged"):
                out[kind][key] = sum(int(r.get(key, 0)) for r in results)
    return out


def store_rows(database_url: str) -> dict[str, int]:
    """Rows of every table of the metadata store (the Iceberg catalog's tables included)."""
    with psycopg.connect(database_url) as conn:
        names = [
            str(r[0])
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                "AND table_type = 'BASE TABLE' ORDER BY table_name"
            ).fetchall()
        ]
        counts = {}
        for name in names:
            row = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()
            counts[name] = int(row[0]) if row else 0
        return counts


def broker_backlog(broker_url: str) -> int:
    """Messages waiting in the broker's queue (Kombu keeps one Redis list per priority step):
    job messages whose job may be long done (a group commit takes many jobs at once)."""
    import redis

    client = redis.Redis.from_url(broker_url)
    try:
        keys = [k for k in client.scan_iter("icebatch*") if client.type(k) == b"list"]
        return sum(int(client.llen(key)) for key in keys)
    finally:
        client.close()


def lag(svc: Service, since_ms: int) -> dict[str, Any]:
    """Tombstone commit -> materialized, for the commits since `since_ms` (the observer's log:
    retention may have expired those snapshots from the table's)."""
    return materialization_lag(list(svc.observer.snapshots), since_ms)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
