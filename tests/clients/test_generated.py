"""The SDK's generated half is exactly what the pinned generator makes of the committed spec."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_client_matches_the_committed_spec() -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "generate_client.sh"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_every_operation_has_a_generated_function() -> None:
    import json

    spec = json.loads((ROOT / "clients" / "openapi.json").read_text())
    generated = {
        p.stem for p in (ROOT / "clients/python/icebatch_client/_generated/api").rglob("*.py")
    }
    operations = {op["operationId"] for path in spec["paths"].values() for op in path.values()}
    assert operations <= generated, operations - generated
