"""`icebatch up` exits as its children did, and 0 when they ended on the SIGTERM it sent them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.cli.server import _exit_code


def ended(code: str) -> subprocess.Popen[bytes]:
    child = subprocess.Popen([sys.executable, "-c", code])
    child.wait(timeout=30)
    return child


SIGTERMED = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"  # as uvicorn ends on it


@pytest.mark.parametrize(
    ("code", "asked_to_stop", "expected"),
    [
        ("pass", True, 0),
        (SIGTERMED, True, 0),  # the stop `up` asked for
        (SIGTERMED, False, 143),  # a SIGTERM from elsewhere, as a shell reports it
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", True, 137),
        ("raise SystemExit(3)", True, 3),
        ("raise SystemExit(3)", False, 3),
    ],
)
def test_exit_code(code: str, asked_to_stop: bool, expected: int) -> None:
    assert _exit_code(ended(code), asked_to_stop) == expected
