"""Part (d)'s load: GDPR requests fired over HTTP at a fixed rate (an open loop), at most a
given number in flight."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import httpx


@dataclass
class Request:
    values: list[str]
    due: float = 0.0
    sent: float = 0.0
    answered: float = 0.0
    status: int = 0  # 0: still queued in the client when the window closed; -1: HTTP error
    job_id: str = ""
    error: str = ""


async def fire(
    urls: list[str],
    key: str,
    dataset_id: str,
    requests: list[Request],
    rate: float,
    cap: int,
    duration: float,
) -> None:
    """Open loop: request i is due at i / rate, at most `cap` in flight (round robin over the
    API processes); a request still waiting for a slot when `duration` is over is not sent."""
    limits = httpx.Limits(max_connections=cap, max_keepalive_connections=cap)
    headers = {"Authorization": f"Bearer {key}"}
    gate = asyncio.Semaphore(cap)
    clients = [
        httpx.AsyncClient(base_url=u, headers=headers, timeout=60, limits=limits) for u in urls
    ]
    began = time.perf_counter()

    async def one(i: int, request: Request) -> None:
        async with gate:
            if time.perf_counter() > began + duration:
                return
            request.sent = time.perf_counter()
            body = {"dataset_ids": [dataset_id], "column": "user_id", "values": request.values}
            try:
                response = await clients[i % len(clients)].post("/v1/privacy/jobs", json=body)
            except httpx.HTTPError as exc:
                request.status, request.error = -1, type(exc).__name__
                return
            request.answered = time.perf_counter()
            request.status = response.status_code
            if response.status_code == 202:
                request.job_id = response.json()["id"]
            else:
                request.error = response.text[:200]

    try:
        tasks = []
        for i, request in enumerate(requests):
            request.due = began + i / rate
            delay = request.due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i, request)))
        await asyncio.gather(*tasks)
    finally:
        for client in clients:
            await client.aclose()
