"""One store wherever you stand: `icebatch keys create` run in another folder than the service
writes to the per-user store (`$XDG_DATA_HOME/icebatch`), says that it created it, and leaves
no `./.icebatch` behind. Real `icebatch` processes, no ICEBATCH_* setting."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent / "icebatch"


def icebatch(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=True
    )


def test_keys_create_in_another_folder_uses_the_same_store(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ICEBATCH_")}
    env.update({"HOME": str(tmp_path / "user"), "XDG_DATA_HOME": str(tmp_path / "data")})
    other_dir = tmp_path / "elsewhere"  # not where the service was started
    other_dir.mkdir()
    store = tmp_path / "data" / "icebatch"

    created = icebatch(other_dir, env, "keys", "create", "--org", "acme")
    key_id = created.stderr.split("API key ")[1].split()[0]
    prefix = created.stdout.strip().split("_")[1]  # ib_<prefix>_<secret>
    # a log line like the others: JSON, since stderr is not a terminal here
    logged = [json.loads(line) for line in created.stderr.splitlines() if line.startswith("{")]
    assert [r["event"] for r in logged if "created store" in r["event"]] == [
        f"created store at {store}"
    ]

    # the per-user store holds that key (before: ./.icebatch of the folder it ran in, a store
    # the service never reads, so the service answered 401)
    with sqlite3.connect(store / "icebatch.db") as db:
        rows = db.execute("SELECT id, org, prefix FROM api_keys").fetchall()
    assert rows == [(key_id, "acme", prefix)]
    assert not (other_dir / ".icebatch").exists()
