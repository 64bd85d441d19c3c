"""Fair use against a real API process: one org floods uploads and batch completions from
several concurrent clients (its own process, ignoring Retry-After); another org's cheap reads
keep their latency.

The flood is paused (SIGSTOP) and resumed every two seconds: the quiet org's reads with the
flood running and without it are measured under the same background load (the machine may run
other work meanwhile), the unloaded ones in the windows between.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.datasets import EVENTS
from tests.fixtures.service import Service, new_org

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]

# The flooder's own admitted work is real work for the one API process: each batch creation or
# upload holds ~20-30 ms of CPU under the GIL, and on this 2-core machine an admitted 0.5-2
# requests a second already moves the quiet org's p99 (1-2 % of its reads overlap one; p50
# stays flat). The limit is what an operator sizes to the API's capacity; here it admits one
# request every four seconds, and everything else the flood sends is refused.
FLOODER = {"rate_limit_per_second": 0.25, "rate_limit_burst": 1, "max_inflight_jobs": 1}
FLOOD_CLIENTS = 8  # at most the refusals a process holds at once (10)
WINDOWS = 12  # flood running in every other one
WINDOW = 2.0  # seconds
# seconds after a pause or resume before reads are counted: a resumed flood first spends what
# its bucket saved while paused, a burst a continuous flood never has
SETTLE = 0.4
ROUNDS = 3  # see the test
PACE = 0.0125  # the quiet org reads 80 times a second at most (its rate: 100)


def latencies(client: httpx.Client, seconds: float) -> list[float]:
    """GET /v1/datasets, paced, for `seconds`: each answer's latency (all must be 200)."""
    out = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        response = client.get("/v1/datasets")
        out.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
        time.sleep(max(0.0, PACE - out[-1]))
    return out


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def p99(samples: list[float]) -> float:
    return percentile(samples, 0.99)


def p50(samples: list[float]) -> float:
    return percentile(samples, 0.5)


@pytest.mark.parametrize("service", ["postgres"], indirect=True)  # the Redis limiter
def test_a_flooding_org_does_not_starve_a_quiet_one(service: Service) -> None:
    flooder, quiet = new_org(), new_org()
    service.env["ICEBATCH_ORG_LIMITS"] = json.dumps({flooder: FLOODER})
    service.start_api()
    flood_key, quiet_key = service.create_key(flooder), service.create_key(quiet)
    quiet_client = service.client(quiet_key)
    with service.client(flood_key) as c:
        flood_dataset = c.post("/v1/datasets", json=EVENTS).json()["id"]
    assert quiet_client.post("/v1/datasets", json=EVENTS).status_code == 201
    latencies(quiet_client, 1)  # warm up

    # The flood's cost is systematic: it shows in every round. A round can also fail for the
    # machine's other work landing in its flood windows; the latency bound must hold in one of
    # ROUNDS rounds (each printed). The flood's own outcomes are checked on the first round,
    # whose flooder starts with no job in flight.
    rounds: list[tuple[float, float]] = []
    for round_number in range(ROUNDS):
        unloaded_reads, loaded_reads, summary = flooded_round(
            service, flood_key, flood_dataset, quiet_client
        )
        unloaded, loaded = p99(unloaded_reads), p99(loaded_reads)
        rounds.append((loaded, unloaded))
        print(
            f"\nround {round_number + 1}: quiet org p99: unloaded {unloaded * 1000:.1f} ms"
            f" ({len(unloaded_reads)} reads), during the flood {loaded * 1000:.1f} ms"
            f" ({len(loaded_reads)} reads); p50 {p50(unloaded_reads) * 1000:.1f} /"
            f" {p50(loaded_reads) * 1000:.1f} ms; flood: {summary}"
        )
        if round_number == 0:
            check_flood(summary)
        if loaded <= 2 * unloaded:
            break
    loaded, unloaded = rounds[-1]
    assert loaded <= 2 * unloaded, rounds


def flooded_round(
    service: Service, flood_key: str, flood_dataset: str, quiet_client: httpx.Client
) -> tuple[list[float], list[float], dict[str, Any]]:
    """The quiet org's read latencies without and with the flood, and the flood's summary."""
    flood = subprocess.Popen(
        [sys.executable, "-m", "tests.fixtures.flood", service.url, flood_key, flood_dataset]
        + [str(WINDOWS * WINDOW + 2), str(FLOOD_CLIENTS)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,  # `-m tests.fixtures.flood` imports from the repository root
    )
    time.sleep(1)  # the flood has drained the flooder's burst
    unloaded_reads: list[float] = []
    loaded_reads: list[float] = []
    for window in range(WINDOWS):
        flooding = window % 2 == 0
        os.kill(flood.pid, signal.SIGCONT if flooding else signal.SIGSTOP)
        time.sleep(SETTLE)
        (loaded_reads if flooding else unloaded_reads).extend(
            latencies(quiet_client, WINDOW - SETTLE)
        )
    os.kill(flood.pid, signal.SIGCONT)
    out, _ = flood.communicate(timeout=60)
    summary: dict[str, Any] = json.loads(out)
    return unloaded_reads, loaded_reads, summary


def check_flood(summary: dict[str, Any]) -> None:
    """The rate refused the flooder, each 429 said when to retry, and what passed fits."""
    cap = FLOODER["max_inflight_jobs"]
    outcomes = summary["outcomes"]
    assert summary["bad_retry_after"] == 0
    # no worker: the jobs stay queued; completions racing for the last slot may each see it free
    # (the cap's own 429 is tested in tests/app/limits/test_fair_use_api.py)
    assert outcomes.get("202", 0) <= cap + FLOOD_CLIENTS - 1
    # what passed the rate limit (everything but its 429s) fits the bucket: burst + rate × time
    passed = sum(n for outcome, n in outcomes.items() if outcome != "429 request_rate")
    assert outcomes["429 request_rate"] > 3 * passed  # it did flood
    assert passed <= FLOODER["rate_limit_burst"] + FLOODER["rate_limit_per_second"] * (
        summary["seconds"] + 1
    )
