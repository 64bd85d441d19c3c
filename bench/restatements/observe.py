"""Part (d)'s measurements: when each tombstone shows in the table's current snapshot (the
observer thread), the jobs' states and latencies, CPU use and the worker's restate tasks."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import psycopg


class Observer(threading.Thread):
    """Polls the catalog row of the table; on each new metadata location, reads the tombstone
    list and records when each tombstone id was first seen in the current snapshot."""

    def __init__(self, catalog: Any, database_url: str, identifier: str, every: float) -> None:
        super().__init__(name="observer", daemon=True)
        self.catalog, self.identifier, self.every = catalog, identifier, every
        self.database_url = database_url
        self.first_seen: dict[str, float] = {}
        self.segments: set[str] = set()
        self.commits: list[dict[str, Any]] = []
        # every snapshot seen, in the order seen: the log outlives snapshot expiry here
        self.snapshots: list[Any] = []
        self.halt = threading.Event()

    def run(self) -> None:
        from app.lake import tombstones

        namespace, table = self.identifier.split(".")
        query = (
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE table_namespace = %s AND table_name = %s"
        )
        last: str | None = None
        seen_snapshots: set[int] = set()
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            while not self.halt.is_set():
                row = conn.execute(query, (namespace, table)).fetchone()
                now = time.perf_counter()
                if row and row[0] != last:
                    last = row[0]
                    loaded = self.catalog.load_table(self.identifier)
                    for snap in loaded.snapshots():
                        if snap.snapshot_id in seen_snapshots:
                            continue
                        seen_snapshots.add(snap.snapshot_id)
                        self.snapshots.append(snap)
                        props = snap.summary.additional_properties if snap.summary else {}
                        if props.get("icebatch.operation") == "gdpr":
                            self.commits.append(props)
                    location = tombstones.list_location(loaded, loaded.current_snapshot())
                    listed = tombstones.read_list(loaded.io, location)
                    for segment in listed.segments:
                        if segment.path in self.segments:
                            continue
                        self.segments.add(segment.path)
                        ids = tombstones.read_segment(loaded.io, segment.path).column("id")
                        for value in ids.to_pylist():
                            self.first_seen.setdefault(value, now)
                self.halt.wait(self.every)


def pending_jobs(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
        return int(row.fetchone()[0])  # type: ignore[index]


def job_latencies(database_url: str, privacy_ids: set[str]) -> dict[str, Any]:
    """Per privacy job: its dataset job's finished_at - the privacy job's created_at (both
    written by the service, same clock), and the jobs' states."""
    query = (
        "SELECT p.id, j.state, EXTRACT(EPOCH FROM j.finished_at - p.created_at) "
        "FROM privacy_jobs p JOIN restatements r ON r.privacy_job_id = p.id "
        "JOIN jobs j ON j.id = r.job_id"
    )
    with psycopg.connect(database_url) as conn:
        rows = [r for r in conn.execute(query).fetchall() if r[0] in privacy_ids]
    done = [float(r[2]) for r in rows if r[2] is not None and r[1] == "succeeded"]
    states: dict[str, int] = {}
    for r in rows:
        states[r[1]] = states.get(r[1], 0) + 1
    return {"seconds": done, "states": states}


def cpu_seconds(groups: dict[int, str]) -> dict[str, float]:
    """CPU seconds (user + system) so far of our process groups (a group holds the worker's
    JVM too), of this process, and of every postgres and redis-server process."""
    tick = os.sysconf("SC_CLK_TCK")
    out = dict.fromkeys([*groups.values(), "bench client", "postgres", "redis"], 0.0)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        seconds = (int(fields[11]) + int(fields[12])) / tick
        group = int(fields[2])
        if group in groups:
            out[groups[group]] += seconds
        elif int(entry.name) == os.getpid():
            out["bench client"] += seconds
        elif comm in ("postgres", "redis-server"):
            out["postgres" if comm == "postgres" else "redis"] += seconds
    return out


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


TASK_DONE = re.compile(r"Task icebatch\.restate\[[^\]]+\] succeeded in ([0-9.eE-]+)s")


def worker_tasks(text: str) -> dict[str, float]:
    """From the worker's log: restate tasks, the seconds they took, and the tasks that took
    over 20 ms (those that committed a group; the others found their job already done)."""
    took = [float(m) for m in TASK_DONE.findall(text)]
    long = [t for t in took if t > 0.02]
    return {
        "tasks": len(took),
        "task_seconds": sum(took),
        "long_tasks": len(long),
        "long_seconds": sum(long),
        "skipped": text.count("is not queued"),
    }
