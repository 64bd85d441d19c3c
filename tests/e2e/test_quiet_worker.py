"""An idle worker with the beat (`icebatch worker --beat`, as `icebatch up` runs it) logs what
it did, not each empty periodic pass: Celery's four lines per pass go to DEBUG. It runs at a
lower CPU priority than the API."""

from __future__ import annotations

import os
import shelve
import time
from pathlib import Path

import pytest

from tests.fixtures.service import Service, embedded_env, wait_for

pytestmark = pytest.mark.e2e

# the beat's first maintenance pass is due 1 s after it starts, its second 2 s after: a window of
# 3 s holds both with a second to spare (at 2 s the second fell on its edge and was missed)
IDLE_SECONDS = 3.0


def passes(home: Path) -> dict[str, int]:
    """How many times the beat sent each periodic task (its own schedule file's count)."""
    with shelve.open(str(home / "celerybeat-schedule"), flag="r") as schedule:
        return {name: entry.total_run_count for name, entry in schedule["entries"].items()}


def test_an_idle_worker_logs_no_periodic_pass(tmp_path: Path) -> None:
    env = {
        **embedded_env(),
        "ICEBATCH_CDC_SCHEDULE_SECONDS": "0.2",  # 15 CDC passes in the idle window
        "ICEBATCH_SCHEDULER_SECONDS": "1",
        # a priority of its own (1: the default 10 gives a worker leading its session a tenth of
        # a busy CPU, and the beat below would miss its passes while other tests run)
        "ICEBATCH_WORKER_NICE": "1",
    }
    service = Service(env, tmp_path)
    try:
        service.start_worker(args=("--beat",))
        wait_for(lambda: " ready." in service.log("worker"), 60, "the worker")
        at_ready = len(service.log("worker").splitlines())
        # the worker yields the CPU to an API on the same host
        worker_pid = service.processes["worker"].pid
        assert os.getpriority(os.PRIO_PROCESS, worker_pid) == max(1, os.nice(0))
        # it leads its own session (as under systemd): the session's share is lowered too
        group = Path(f"/proc/{worker_pid}/autogroup")
        if group.exists():
            assert group.read_text().split()[-1] == "1"
        time.sleep(IDLE_SECONDS)
        idle = service.log("worker").splitlines()[at_ready:]
    finally:
        service.stop()  # a warm shutdown: the beat writes its schedule file
    ran = passes(tmp_path)
    # the beat ran: every 0.2 s (CDC) and every 1 s (maintenance) for 3 s and more
    assert ran["icebatch-cdc"] >= 8, ran
    assert ran["icebatch-maintenance"] >= 2, ran
    # before: 3 lines per pass (sent, received, succeeded), 40 or more here; now at most the
    # beat's "Starting..." line
    assert len(idle) <= 2, "\n".join(idle)
