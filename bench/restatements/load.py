"""Part (d)'s load: GDPR requests fired over HTTP at a fixed rate (an open loop), at most a
given number in flight, through the lean client of `bench.restatements.wire` (the load must not
take the cores the service is measured on)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bench.restatements.wire import Answer, WireError, wires


@dataclass
class Request:
    values: list[str]
    due: float = 0.0
    sent: float = 0.0
    answered: float = 0.0
    status: int = 0  # 0: still queued in the client when the window closed; -1: HTTP error
    job_id: str = ""
    error: str = ""


# sends request i (of the list `pace` was given) and returns the answer that decides it
Send = Callable[[int, Request], Awaitable[Answer]]


async def pace(requests: list[Request], rate: float, cap: int, duration: float, send: Send) -> None:
    """Open loop: request i is due at i / rate, at most `cap` in flight; a request still
    waiting for a slot when `duration` is over is not sent. A 202's job id is the answer's
    `id`, or its `job.id` (a batch action)."""
    gate = asyncio.Semaphore(cap)
    began = time.perf_counter()

    async def one(i: int, request: Request) -> None:
        async with gate:
            if time.perf_counter() > began + duration:
                return
            request.sent = time.perf_counter()
            try:
                response = await send(i, request)
            except WireError as exc:
                request.status, request.error = -1, str(exc)
                return
            request.answered = time.perf_counter()
            request.status = response.status_code
            if response.status_code == 202:
                body = response.json()
                request.job_id = body["job"]["id"] if "job" in body else body["id"]
            else:
                request.error = response.text[:200]

    tasks = []
    for i, request in enumerate(requests):
        request.due = began + i / rate
        delay = request.due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i, request)))
    await asyncio.gather(*tasks)


async def fire(
    urls: list[str],
    key: str,
    dataset_id: str,
    requests: list[Request],
    rate: float,
    cap: int,
    duration: float,
) -> None:
    """GDPR requests (one privacy job each) paced by `pace`, round robin over the API
    processes."""
    async with wires(urls, key, cap) as pool:

        async def send(i: int, request: Request) -> Answer:
            body = {"dataset_ids": [dataset_id], "column": "user_id", "values": request.values}
            return await pool[i % len(pool)].post("/v1/privacy/jobs", json_body=body)

        await pace(requests, rate, cap, duration, send)
