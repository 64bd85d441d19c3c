"""The worker's Spark warm-up: its ingest-shaped job on a throwaway catalog, and its switch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workers.spark import warmup

pytestmark = pytest.mark.spark


def test_the_warm_up_job_writes_and_reads_back_its_rows(spark: Any, tmp_path: Path) -> None:
    assert warmup.workload(spark, tmp_path) == 2  # the two rows of its CSV
    # its table is in the temp folder, one folder per day: nothing of the real catalog's
    data = tmp_path / "warehouse" / "warm" / "events" / "data"
    days = sorted(p.name for p in data.iterdir())
    assert days == ["event_time_day=2024-01-01", "event_time_day=2024-01-02"]


def test_the_warm_up_is_off_when_set_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.config import get_settings

    monkeypatch.setenv("ICEBATCH_SPARK_WARM_UP", "false")
    get_settings.cache_clear()
    try:
        assert warmup.start() is None
    finally:
        get_settings.cache_clear()
