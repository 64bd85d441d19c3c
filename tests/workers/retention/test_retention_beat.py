"""`icebatch worker --beat`: the worker runs Celery's embedded beat, which sends the maintenance
pass (`icebatch.schedule`) every `scheduler_seconds`, and the worker runs it. Celery's lines
about each pass are DEBUG (workers/periodic_logs.py): this worker logs at DEBUG to see them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.service import FAST_RECOVERY, Service, wait_for

pytestmark = pytest.mark.e2e


def test_worker_beat_runs_the_scheduler(tmp_path: Path) -> None:
    env = {
        **FAST_RECOVERY,
        "ICEBATCH_DATABASE_URL": "",
        "ICEBATCH_BROKER_URL": "",
        "ICEBATCH_WAREHOUSE": "",
        "ICEBATCH_CATALOG_NAME": "icebatch",
        "ICEBATCH_SCHEDULER_SECONDS": "1",
        "ICEBATCH_LOG_LEVEL": "debug",
    }
    service = Service(env, tmp_path)
    try:
        service.start_worker(args=("--beat",))

        def passes() -> int:
            lines = service.log("worker").splitlines()
            return sum(
                "Task icebatch.schedule[" in x and "succeeded in" in x and '"debug"' in x
                for x in lines
            )

        wait_for(lambda: passes() >= 2, 90, "two scheduler passes sent by beat")
        log = service.log("worker")
        assert "beat: Starting" in log
        assert "Traceback" not in log
        assert (tmp_path / "celerybeat-schedule").exists() or list(
            tmp_path.glob("celerybeat-schedule*")
        )
    finally:
        service.stop()
