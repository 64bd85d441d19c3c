"""Named pause points for the crash tests: `ICEBATCH_FAILPOINTS=after-commit=5,...` makes the
worker sleep at that point, so a test can kill it inside a commit step at a known place."""

from __future__ import annotations

import logging
import os
import time

log = logging.getLogger(__name__)


def failpoint(name: str) -> None:
    """Pause at `name` for the seconds ICEBATCH_FAILPOINTS gives it; no-op otherwise."""
    for item in os.environ.get("ICEBATCH_FAILPOINTS", "").split(","):
        point, _, seconds = item.partition("=")
        if point.strip() == name:
            log.warning("failpoint %s: pausing %s s", name, seconds)
            time.sleep(float(seconds or 0))
