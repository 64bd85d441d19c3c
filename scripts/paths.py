"""Files and calls from an endpoint to its commit, for each public operation (the map's claim).

Runs each operation in this process, as a new user's first day would (the embedded store, the
API through FastAPI's TestClient, every queued job run as a worker runs it), and keeps the call
stack at two moments: when the request writes what it hands the workers (its job row, or a CDC
event chunk), and when a job commits to Iceberg (PyIceberg's transaction commit, the Java
snapshot swap, a Spark append or MERGE). A stack is cut to the project's own frames (app/,
workers/) from the endpoint down, and from the job's handler down (the runtime around every
handler is left out). Prints, per operation: the files and the calls on those stacks, and the
broker crossings (jobs run before the commit). It reads no module of the project by name but
the hooks' (`workers.spark.iceberg_java`), so one copy measures any revision of the code:

    .venv/bin/python scripts/paths.py            # in a checkout, with scripts/setup.sh done
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path.cwd()
HOME = Path(tempfile.mkdtemp(prefix="icebatch-paths-"))
os.environ.update(
    ICEBATCH_HOME=str(HOME),
    ICEBATCH_MATERIALIZE_DELETES="false",  # its own operation: not on these paths
    ICEBATCH_SPARK_WARM_UP="false",
    ICEBATCH_LOG_LEVEL="WARNING",
)
sys.path.insert(0, str(ROOT))

Frame = tuple[str, str]  # (file relative to the checkout, function)


def project_frames(stack: list[traceback.FrameSummary]) -> list[Frame]:
    out = []
    for frame in stack:
        path = Path(frame.filename)
        if not path.is_relative_to(ROOT) or path.name == "paths.py":
            continue
        relative = str(path.relative_to(ROOT))
        if relative.startswith(("app/", "workers/")):
            out.append((relative, frame.name))
    return out


def api_half(frames: list[Frame]) -> list[Frame]:
    """From the endpoint down."""
    for i, (path, _) in enumerate(frames):
        if path.endswith("endpoints.py"):
            return frames[i:]
    return frames


def worker_half(frames: list[Frame]) -> list[Frame]:
    """From the job's handler down (after the last runtime or Celery frame)."""
    last = max(
        (
            i
            for i, (p, _) in enumerate(frames)
            if p in ("workers/runtime.py", "workers/celery_app.py")
        ),
        default=-1,
    )
    return frames[last + 1 :]


@dataclass
class Trace:
    handed: list[list[Frame]] = field(default_factory=list)  # the request's hand-over stacks
    commits: list[list[Frame]] = field(default_factory=list)
    jobs: int = 0
    jobs_at_commit: list[int] = field(default_factory=list)
    # every project function run by the handing request (from its endpoint) and by the jobs
    # (from their handlers) before their commits: what a reader of the path reads
    request_reach: set[Frame] = field(default_factory=set)
    api_reach: set[Frame] = field(default_factory=set)
    job_reach: set[Frame] = field(default_factory=set)
    worker_reach: list[set[Frame]] = field(default_factory=list)  # at each commit
    in_handler: bool = False


CURRENT = Trace()


def profile(frame: Any, event: str, arg: Any) -> None:
    if event != "call":
        return
    path = frame.f_code.co_filename
    if not path.startswith(str(ROOT)) or path.endswith("paths.py"):
        return
    relative = path[len(str(ROOT)) + 1 :]
    if not relative.startswith(("app/", "workers/")):
        return
    name = (relative, frame.f_code.co_qualname)
    trace = CURRENT
    if relative.endswith("endpoints.py") and not relative.startswith("app/ui"):
        caller = frame.f_back.f_code.co_filename if frame.f_back else ""
        if not caller.startswith(str(ROOT)):  # a route entered from FastAPI: a new request
            trace.request_reach = set()
    trace.request_reach.add(name)
    caller = frame.f_back.f_code.co_filename if frame.f_back else ""
    infra = ("workers/runtime.py", "workers/celery_app.py")
    if caller.endswith(infra) and not relative.endswith(infra) and relative.startswith("workers/"):
        trace.in_handler = True
    if trace.in_handler:
        trace.job_reach.add(name)


def hook(owner: Any, name: str, record: Callable[[tuple[Any, ...]], bool]) -> None:
    original = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if record(args):
            CURRENT.commits.append(worker_half(project_frames(traceback.extract_stack()[:-1])))
            CURRENT.jobs_at_commit.append(CURRENT.jobs)
            CURRENT.worker_reach.append(set(CURRENT.job_reach))
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def install_hooks() -> None:
    from pyiceberg.table import Transaction
    from pyspark.sql import SparkSession
    from pyspark.sql.readwriter import DataFrameWriterV2
    from sqlalchemy.orm import Session

    from workers.spark import iceberg_java

    hook(Transaction, "commit_transaction", lambda args: True)
    hook(DataFrameWriterV2, "append", lambda args: True)
    hook(SparkSession, "sql", lambda args: str(args[1]).lstrip().upper().startswith("MERGE"))
    # the Java snapshot swap: `swap_in` since the staged commits, `_swap_in` before
    swap = "swap_in" if hasattr(iceberg_java, "swap_in") else "_swap_in"
    hook(iceberg_java, swap, lambda args: True)
    hook(iceberg_java, "commit_empty", lambda args: True)
    original_add = Session.add

    def add(self: Session, instance: Any, *args: Any, **kwargs: Any) -> None:
        if type(instance).__name__ in ("Job", "CdcChunk") and not CURRENT.handed:
            CURRENT.handed.append(api_half(project_frames(traceback.extract_stack()[:-1])))
            CURRENT.api_reach = set(CURRENT.request_reach)
        return original_add(self, instance, *args, **kwargs)

    Session.add = add  # type: ignore[method-assign]


def run_jobs() -> None:
    from sqlalchemy import select

    from app.db import session_scope
    from app.models import Job, JobState
    from workers.celery_app import celery

    for module in celery.conf.include:
        importlib.import_module(module)
    while True:
        with session_scope() as session:
            rows = session.execute(
                select(Job.id, Job.task_name)
                .where(Job.state == JobState.QUEUED)
                .order_by(Job.created_at, Job.id)
            ).all()
        if not rows:
            return
        for job_id, task_name in rows:
            CURRENT.jobs += 1
            CURRENT.in_handler = False
            celery.tasks[task_name](job_id)
            CURRENT.in_handler = False


@contextmanager
def measured(name: str, results: dict[str, Trace]) -> Iterator[None]:
    global CURRENT
    CURRENT = Trace()
    yield
    run_jobs()
    results[name] = CURRENT


def summarize(trace: Trace, commits: str) -> dict[str, Any]:
    """`commits`: which commits make the path (first, or all for CDC's two)."""
    in_jobs = [(s, j) for s, j in zip(trace.commits, trace.jobs_at_commit, strict=True) if j]
    chosen = in_jobs[:1] if commits == "first" else in_jobs  # not the request's own (a table)
    stacks = trace.handed[:1] + [s for s, _ in chosen]
    frames = [f for s in stacks for f in s]
    jobs = [j for _, j in chosen]
    last = [i for i, j in enumerate(trace.jobs_at_commit) if j][: len(chosen)]
    reach = trace.api_reach | (trace.worker_reach[last[-1]] if last else set())
    return {
        "chain_files": len({p for p, _ in frames}),
        "chain_calls": len(frames),
        "reach_files": len({p for p, _ in reach}),
        "reach_functions": len(reach),
        "broker_crossings": max(jobs) if jobs else 0,
        "chain": [f"{p}:{n}" for p, n in frames],
        "reach": sorted(f"{p}:{n}" for p, n in reach),
    }


def main() -> None:
    from fastapi.testclient import TestClient

    from app.auth import create_key
    from app.cli.server import migrate
    from app.db import session_scope
    from app.main import create_app
    from app.models import Scope

    migrate()
    with session_scope() as session:
        key = create_key(session, "paths", Scope("admin"))
    client = TestClient(create_app(), headers={"Authorization": f"Bearer {key}"})
    install_hooks()
    threading.setprofile(profile)
    sys.setprofile(profile)
    results: dict[str, Trace] = {}
    schema = {
        "name": "events",
        "schema": [
            {"name": "event_id", "type": "long", "required": True},
            {"name": "user_id", "type": "string"},
        ],
        "identity_columns": ["user_id"],
    }
    created = client.post("/v1/datasets", json=schema)
    assert created.status_code == 201, created.text
    dataset = created.json()["id"]

    def batch(rows: str, **extra: Any) -> str:
        body = {"dataset_id": dataset, "format": "csv", **extra}
        batch_id = str(client.post("/v1/batches", json=body).json()["id"])
        put = client.put(f"/v1/batches/{batch_id}/files/a.csv", content=rows.encode())
        assert put.status_code == 201, put.text
        done = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
        assert done.status_code == 202, done.text
        return batch_id

    with measured("ingest", results):
        first = batch("event_id,user_id\n1,u1\n2,u2\n")
    second = batch("event_id,user_id\n3,u3\n4,u4\n")
    run_jobs()
    with measured("revert", results):
        reverted = client.post(f"/v1/batches/{first}", params={"action": "REVERT"})
        assert reverted.status_code == 202, reverted.text
    with measured("replay", results):
        batch("event_id,user_id\n3,u3\n", replay={"predecessors": [second]})
    with measured("gdpr delete", results):
        body = {"dataset_ids": [dataset], "column": "user_id", "values": ["u3"]}
        deleted = client.post("/v1/privacy/jobs", json=body)
        assert deleted.status_code == 202, deleted.text
    with measured("vacuum", results):
        vacuum = client.post(f"/v1/datasets/{dataset}/vacuum", json={"mode": "full"})
        assert vacuum.status_code == 202, vacuum.text
    with measured("cdc event", results):
        event = {
            "op": "PUT",
            "entity_id": "u9",
            "record_type": "profile",
            "timestamp": datetime.now(UTC).isoformat(),
            "payload": {"name": "Ada"},
        }
        posted = client.post("/v1/cdc/events", content=json.dumps(event))
        assert posted.status_code == 202, posted.text
        assert client.post("/v1/cdc/process").status_code in (200, 202)
        run_jobs()
        assert client.post("/v1/cdc/process").status_code in (200, 202)
    report = {
        name: summarize(trace, "all" if name == "cdc event" else "first")
        for name, trace in results.items()
    }
    print("operation    chain: files calls   reach: files functions   broker crossings")
    for name, row in report.items():
        print(
            f"{name:12s} {row['chain_files']:12d} {row['chain_calls']:5d} "
            f"{row['reach_files']:14d} {row['reach_functions']:9d} {row['broker_crossings']:18d}"
        )
    out = HOME / "paths.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"paths: {out}")


if __name__ == "__main__":
    main()
