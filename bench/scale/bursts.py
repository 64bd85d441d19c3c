"""The load: bursts of restatements over HTTP (GDPR deletes of one identity, reverts and replays
of side batches) paced by `bench.restatements.load.pace`, the side batches they need ingested
first, and the model updated from what the service did."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from bench.common import wait_for
from bench.restatements.load import Request, pace
from bench.restatements.observe import pending_jobs
from bench.restatements.shared import log
from bench.restatements.wire import Answer, wires
from bench.scale.service import Service
from bench.scale.workload import Workload

KINDS = ("gdpr", "revert", "replay")


@dataclass
class Op:
    """One request: a restatement (`gdpr`, `revert`, `replay`) or an `ingest` of a side batch."""

    kind: str
    target: str = ""  # the identity deleted, or the batch reverted or replayed
    path: Path | None = None  # the rows a replay or an ingest uploads
    batch_id: str = ""  # the batch a replay or an ingest opened


async def send_ops(
    svc: Service, ops: list[Op], requests: list[Request], rate: float, cap: int
) -> None:
    """Every op, paced; an upload's answer is its COMPLETE's (202), or the step that failed."""
    async with wires(svc.urls, svc.key, cap) as pool:

        async def send(i: int, request: Request) -> Answer:
            op, client = ops[i], pool[i % len(pool)]
            if op.kind == "gdpr":
                body = {"dataset_ids": [svc.dataset_id], "column": "user_id", "values": [op.target]}
                return await client.post("/v1/privacy/jobs", json_body=body)
            if op.kind == "revert":
                return await client.post(f"/v1/batches/{op.target}", params={"action": "REVERT"})
            assert op.path is not None
            opened_body: dict[str, Any] = {"dataset_id": svc.dataset_id, "format": "parquet"}
            if op.kind == "replay":
                opened_body["replay"] = {"predecessors": [op.target], "reason": "corrected rows"}
            opened = await client.post("/v1/batches", json_body=opened_body)
            if opened.status_code != 201:
                return opened
            op.batch_id = opened.json()["id"]
            put = await client.put(
                f"/v1/batches/{op.batch_id}/files/{op.path.name}", content=op.path.read_bytes()
            )
            if put.status_code != 201:
                return put
            return await client.post(f"/v1/batches/{op.batch_id}/complete")

        await pace(requests, rate, cap, float("inf"), send)


def fire(svc: Service, ops: list[Op], rate: float, cap: int) -> list[Request]:
    requests = [Request([op.target or op.kind]) for op in ops]
    asyncio.run(send_ops(svc, ops, requests, rate, cap))
    return requests


def drain(svc: Service, timeout: float) -> float:
    """Wait until no job is queued or running; the seconds it took."""
    began = time.perf_counter()
    wait_for(lambda: pending_jobs(svc.database_url) == 0, "the jobs", svc.procs, timeout)
    return time.perf_counter() - began


def statuses(database_url: str, batch_ids: list[str]) -> dict[str, str]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT id, status FROM batches WHERE id = ANY(%s)", (batch_ids,))
        return {str(r[0]): str(r[1]) for r in rows.fetchall()}


def failed_jobs(database_url: str) -> list[tuple[str, str, str]]:
    """Failed ingest and restatement jobs (the checkpoints report failed maintenance jobs)."""
    query = (
        "SELECT id, kind, error FROM jobs WHERE state = 'failed' "
        "AND kind IN ('ingest', 'revert', 'replay', 'gdpr')"
    )
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(query).fetchall()
        return [(str(r[0]), str(r[1]), str(r[2])[:300]) for r in rows]


def apply(svc: Service, workload: Workload, ops: list[Op], requests: list[Request]) -> None:
    """Update the model from the accepted requests, after the drain; fail loudly when a job
    failed or a batch is not in the state its restatement leads to."""
    failed = failed_jobs(svc.database_url)
    if failed:
        raise RuntimeError(f"{len(failed)} jobs failed, e.g. {failed[:3]}")
    expect: dict[str, str] = {}
    for op, request in zip(ops, requests, strict=True):
        accepted = request.status == 202
        if op.kind == "gdpr" and accepted:
            workload.deleted.append(op.target)
        elif op.kind in ("revert", "replay"):
            if not accepted:
                workload.pool.append(op.target)
                continue
            workload.live.pop(op.target)
            expect[op.target] = "reverted" if op.kind == "revert" else "replaced"
        if op.kind in ("replay", "ingest") and accepted:
            assert op.path is not None
            workload.live[op.batch_id] = op.path
            workload.pool.append(op.batch_id)
            expect[op.batch_id] = "success"
    found = statuses(svc.database_url, list(expect))
    wrong = {b: (found.get(b), s) for b, s in expect.items() if found.get(b) != s}
    if wrong:
        raise RuntimeError(f"{len(wrong)} batches not as expected (found, expected): {wrong}")


def fill_pool(
    svc: Service, workload: Workload, need: int, args: argparse.Namespace
) -> dict[str, Any]:
    """Ingest side batches until `need` are free to restate (not restatements: the traffic
    that gives reverts and replays something to restate)."""
    ops = [Op("ingest", path=workload.new_side_file()) for _ in range(need - len(workload.pool))]
    if not ops:
        return {"ingested": 0, "seconds": 0.0}
    began = time.perf_counter()
    requests = fire(svc, ops, args.ingest_rate, args.ingest_in_flight)
    drain(svc, args.drain_timeout)
    apply(svc, workload, ops, requests)
    refused = [r.error for r in requests if r.status != 202]
    if refused:
        raise RuntimeError(f"{len(refused)} side batch ingests refused, e.g. {refused[:3]}")
    return {"ingested": len(ops), "seconds": time.perf_counter() - began}


def plan(workload: Workload, count: int, mix: tuple[float, float, float]) -> list[Op]:
    """`count` restatements drawn by `mix` (GDPR, revert, replay shares); a revert or a replay
    takes a free side batch from the pool (filled beforehand)."""
    kinds = workload.rng.choice(len(KINDS), size=count, p=list(mix))
    ops = []
    for k in kinds.tolist():
        if KINDS[k] == "gdpr":
            ops.append(Op("gdpr", workload.take_gdpr()))
            continue
        target = workload.pool.pop(int(workload.rng.integers(len(workload.pool))))
        path = workload.corrected(workload.live[target]) if KINDS[k] == "replay" else None
        ops.append(Op(KINDS[k], target, path))
    return ops


def burst(svc: Service, workload: Workload, count: int, args: argparse.Namespace) -> dict[str, Any]:
    """Fill the pool, fire `count` restatements, drain, update the model; the burst's figures:
    per kind, the requests accepted and each accepted one's 202 -> tombstone visible."""
    need = int(count * (args.mix[1] + args.mix[2]) * 1.5) + 10
    filled = fill_pool(svc, workload, need, args)
    ops = plan(workload, count, args.mix)
    began, began_at = time.perf_counter(), datetime.now(UTC)
    requests = fire(svc, ops, args.rate, args.in_flight)
    window = time.perf_counter() - began
    drained = drain(svc, args.drain_timeout)
    time.sleep(max(0.3, args.poll * 4))  # the observer's last poll
    apply(svc, workload, ops, requests)
    out: dict[str, Any] = {
        "began_at": began_at.isoformat(),
        "window": window,
        "drain": drained,
        "pool": filled,
        "kinds": {},
    }
    missing = 0
    for kind in KINDS:
        mine = [(o, r) for o, r in zip(ops, requests, strict=True) if o.kind == kind]
        accepted = [(o, r) for o, r in mine if r.status == 202]
        visible, answered = [], []
        for o, r in accepted:
            seen = svc.observer.first_seen.get(o.target)
            if seen is None:
                missing += 1
            else:
                visible.append(max(0.0, seen - r.answered))
                answered.append(r.answered - began)
        errors = Counter(f"{r.status} {r.error[:60]}" for _, r in mine if r.status != 202)
        out["kinds"][kind] = {
            "sent": len(mine),
            "accepted": len(accepted),
            "visible": visible,
            "answered": answered,  # seconds after the burst began, beside `visible`
            "post": [r.answered - r.sent for _, r in accepted],
            "errors": dict(errors),
        }
    out["accepted"] = sum(k["accepted"] for k in out["kinds"].values())
    out["missing"] = missing
    if missing:
        raise RuntimeError(f"{missing} accepted restatements never showed in the table")
    log(
        f"  burst: {out['accepted']}/{count} accepted in {window:.1f}s "
        f"({out['accepted'] / window:.0f}/s), drained {drained:.1f}s, "
        f"{filled['ingested']} side batches first ({filled['seconds']:.1f}s)"
    )
    return out
