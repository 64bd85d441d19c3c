"""The `icebatch` client commands on real processes (`icebatch up`, embedded), as a user types
them: what they print (tables, --json, row errors, progress), exit codes, `login` profiles."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.fixtures.batches import csv_rows
from tests.fixtures.datasets import EVENTS
from tests.fixtures.service import BIN, Service, new_org

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


class Cli:
    """Runs `icebatch` as a subprocess with a given environment."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd

    def __call__(self, *args: str, code: int = 0, **env: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(BIN), *args],
            env={**self.env, **env},
            cwd=self.cwd,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "--json").stdout)


@pytest.mark.parametrize("service", ["embedded"], indirect=True)
def test_the_walkthrough_with_the_cli(service: Service, tmp_path: Path) -> None:
    key = service.create_key(new_org())
    service.start_up()
    base = {k: v for k, v in service.env.items() if not k.startswith("ICEBATCH_API")}
    config = tmp_path / "config" / "icebatch.toml"
    base |= {"ICEBATCH_CONFIG": str(config), "ICEBATCH_URL": service.url}
    icebatch = Cli({**base, "ICEBATCH_API_KEY": key}, tmp_path)
    (tmp_path / "schema.json").write_text(json.dumps(EVENTS["schema"]))

    created = icebatch.json(
        "datasets", "create", "--name", "events", "--schema", "@schema.json",
        "--partition", json.dumps(EVENTS["partition"]), "--identity", "user_id",
    )  # fmt: skip
    assert (created["name"], created["identity_columns"]) == ("events", ["user_id"])
    listed = icebatch("datasets", "list").stdout
    assert created["id"] in listed
    assert "events" in listed

    (tmp_path / "day1.csv").write_bytes(csv_rows([(1, "u1"), (2, "u2")]))
    (tmp_path / "day2.csv").write_bytes(csv_rows([(3, "u3")]))
    landed = icebatch.json("batches", "upload", "events", "day1.csv", "day2.csv")
    returned = datetime.now(UTC)
    assert (landed["status"], landed["row_count"], landed["file_count"]) == ("success", 3, 2)
    # the CLI sees the finished job within 1 s (a short fixed poll, 304s while unchanged)
    ingest = icebatch.json("jobs", "show", landed["job_id"])
    late = returned - datetime.fromisoformat(ingest["finished_at"])
    assert late < timedelta(seconds=1), (late, ingest["finished_at"], returned)
    shown = icebatch("batches", "show", landed["id"]).stdout
    assert "success" in shown
    assert str(landed["snapshot_id"]) in shown

    # a failed batch: its row errors are printed and the command exits 1
    (tmp_path / "bad.csv").write_text(
        "event_id,user_id,event_time,payload\nseven,u9,2024-03-01T10:00:00,x\n"
        "8,u9,2024-01-01T10:00:00+99:99,y\n"
    )
    failed = icebatch("batches", "upload", "events", "bad.csv", code=1)
    assert "Traceback" not in failed.stderr
    # the value column shows the bad value as sent, not reformatted (the reason quotes it too)
    assert re.search(r"event_time +2024-01-01T10:00:00\+99:99 +cannot parse", failed.stderr)
    assert "2024-01-01 10:00:00" not in failed.stderr
    assert "failed: 2 row error(s)" in failed.stderr
    assert "bad.csv" in failed.stderr
    assert "event_id" in failed.stderr
    assert "seven" in failed.stderr
    statuses = [b["status"] for b in icebatch.json("batches", "list", "--dataset", "events")]
    assert sorted(statuses) == ["failed", "success"]

    # progress bars when asked for, on stderr only
    (tmp_path / "day3.csv").write_bytes(csv_rows([(4, "u4")]))
    progressed = icebatch("batches", "upload", "events", "day3.csv", "--progress", "--json")
    assert "upload day3.csv" in progressed.stderr
    third = json.loads(progressed.stdout)
    assert third["status"] == "success"
    quiet = icebatch("batches", "upload", "events", "bad.csv", "-q", code=1).stdout
    failed_ids = {b["id"] for b in icebatch.json("batches", "list", "--status", "failed")}
    assert quiet.strip() in failed_ids
    reverted = icebatch.json("batches", "revert", third["id"])
    assert reverted["status"] == "reverted"

    (tmp_path / "ids.txt").write_text("u1\n\nu3\n")
    deleted = icebatch(
        "privacy", "delete", "--dataset", "events", "--column", "user_id",
        "--values-file", "ids.txt", "--json", "--progress",
    )  # fmt: skip
    privacy = json.loads(deleted.stdout)
    assert (privacy["status"], privacy["value_count"], privacy["rows_hidden"]) == ("complete", 2, 2)
    # its progress is the privacy job's: its state and 100% once complete, never a batch's
    bar = deleted.stderr.strip().splitlines()[-1]
    assert f"privacy job {privacy['id']}" in bar
    assert "100.0%" in bar
    assert "complete" in bar
    assert "batch" not in deleted.stderr

    out = tmp_path / "appended.parquet"
    changes = icebatch("changes", "events", "--kind", "appended", "--out", str(out))
    rows = pq.read_table(out).to_pylist()
    assert {(r["event_id"], r["user_id"]) for r in rows} == {(2, "u2")}  # the only row left
    assert "1 rows appended" in changes.stderr
    lines = icebatch("changes", "events", "--kind", "appended", "--out", "-").stdout.splitlines()
    assert [json.loads(line)["event_id"] for line in lines] == [2]

    job = icebatch.json("jobs", "list", "--kind", "ingest")[0]
    assert job["state"] in ("succeeded", "failed")
    assert (
        job["id"] in icebatch("jobs", "show", job["id"], code=int(job["state"] == "failed")).stdout
    )
    vacuum = icebatch.json("vacuum", "events")
    assert vacuum["state"] == "succeeded"

    # errors: one line with the detail, an exit code, never a traceback
    missing = icebatch("batches", "show", "00000000-0000-0000-0000-000000000000", code=3)
    assert "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr
    wrong = icebatch("datasets", "list", code=4, ICEBATCH_API_KEY="ib_0_wrong")
    assert "unknown" in wrong.stderr

    # login keeps url and key in a profile (mode 0600) that later commands use
    anonymous = Cli(base, tmp_path)
    nothing = anonymous("datasets", "list", code=4, ICEBATCH_URL="")  # no key: exit 4
    assert "icebatch login" in nothing.stderr
    anonymous("login", "--url", service.url, "--api-key", key)
    assert stat.S_IMODE(os.stat(config).st_mode) == 0o600
    assert key in config.read_text()
    assert "events" in anonymous("datasets", "list", ICEBATCH_URL="").stdout
    anonymous("--profile", "other", "datasets", "list", code=2, ICEBATCH_URL="")
