"""README runs as written: its walk-through's shell blocks, in order, as one `bash -euo pipefail`
script against `icebatch up` in a fresh embedded store (an unset variable, a placeholder, a
renamed option or a refused request fails it), then what they did, read back over HTTP.

The only liberties taken with README's text: `http://127.0.0.1:8000` becomes the test server's
address, and `curl` runs with `--fail-with-body`, so an HTTP error fails its step as a CLI error
does. Blocks README marks `readme-test: skip` are not run; each says why."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import httpx
import pytest

from tests.fixtures.readme import README, readme_line, script, walkthrough
from tests.fixtures.service import BIN, Service, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
# curl fails on an HTTP error; each command is traced with the script's elapsed seconds; a
# failing command names its line (an unset variable's message already does)
PREAMBLE = (
    "shopt -s expand_aliases\nalias curl='curl --fail-with-body'\n"
    "PS4='+ ${SECONDS}s: '\n"
    "trap 'echo \"walkthrough.sh: line $LINENO: exit $?\" >&2' ERR\n"
    "set -x\n"
)


def test_readme_walkthrough_blocks_are_shell_or_skipped_with_a_reason() -> None:
    blocks = walkthrough(README.read_text())
    assert len([b for b in blocks if b.skip is None]) >= 5, "README lost its walk-through markers"
    for block in blocks:
        if block.skip is None:
            assert block.lang == "bash", f"README.md:{block.line}: {block.lang!r} block, not marked"
        else:
            assert len(block.skip) > 10, f"README.md:{block.line}: skip without a reason"


@pytest.mark.parametrize("service", ["embedded"], indirect=True)
def test_readme_walkthrough_runs_as_written(service: Service, tmp_path: Path) -> None:
    service.start_up()
    text = script(walkthrough(README.read_text())).replace("http://127.0.0.1:8000", service.url)
    text = PREAMBLE + text
    user = tmp_path / "user"  # the newcomer's home and working folder
    user.mkdir()
    (tmp_path / "walkthrough.sh").write_text(text)
    env = {
        key: value
        for key, value in service.env.items()
        if not key.startswith(("ICEBATCH_API_KEY", "ICEBATCH_CONFIG", "ICEBATCH_PROFILE"))
    }
    env |= {
        "PATH": f"{BIN.parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(user),
        "XDG_CONFIG_HOME": str(user / ".config"),
        "XDG_DATA_HOME": str(user / ".local/share"),
        "ICEBATCH_URL": service.url,
    }
    done = subprocess.run(
        ["bash", "-euo", "pipefail", str(tmp_path / "walkthrough.sh")],
        cwd=user,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    print("\n".join(line for line in done.stderr.splitlines() if line.startswith("=== README")))
    where = re.findall(r"walkthrough\.sh: line (\d+)", done.stderr)
    at = f" at README.md line {readme_line(text, int(where[-1]))}" if where else ""
    assert done.returncode == 0, (
        f"README's walk-through stopped{at} (exit {done.returncode}):\n"
        f"--- stderr (tail)\n{done.stderr[-6000:]}\n--- stdout (tail)\n{done.stdout[-3000:]}"
    )

    # what the walk-through did, read back from the API with the key `icebatch login` saved
    saved = tomllib.loads((user / ".config/icebatch/config.toml").read_text())
    key = saved["default"]["api_key"]
    with service.client(key) as api:
        datasets = {d["name"]: d for d in api.get("/v1/datasets").json()["items"]}
        events = datasets["events"]
        assert events["retention"]["min_snapshots"] == 3
        consumers = api.get(f"/v1/datasets/{events['id']}/consumers").json()["items"]
        assert [c["name"] for c in consumers] == ["warehouse-sync"]
        batches = api.get("/v1/batches", params={"dataset_id": events["id"]}).json()["items"]
        # a.csv three times (one reverted, one replaced by fix.csv), fix.csv, bad.csv
        statuses = sorted(b["status"] for b in batches)
        assert statuses == ["failed", "replaced", "reverted", "success", "success"]
        privacy = api.get("/v1/privacy/jobs").json()["items"]
        assert sorted(j["value_count"] for j in privacy) == [1, 2]
        # the CDC events folded by hand: u1's PUT then PATCH (city added, score removed), linked
        # to crm:42 by related_ids
        profile = api.get("/v1/cdc/profiles/u1").json()
        assert sorted(profile["members"]) == ["crm:42", "u1"]
        assert {r["entity_id"]: r["document"] for r in profile["records"]} == {
            "u1": {"name": "Ada", "address": {"country": "FR", "city": "Lyon"}},
            "crm:42": {"tier": "gold"},
        }
        assert (profile["merged"]["name"], profile["merged"]["tier"]) == ("Ada", "gold")
        # a plain model of the walk-through: a.csv (u1, u2) landed three times, one reverted,
        # one replaced by fix.csv (u1); then every row of u1, and of u2 and u7, GDPR-deleted
        ids = [j["id"] for j in privacy]
        wait_for(lambda: all(_privacy_done(api, i) for i in ids), 120, "the GDPR deletes")
        landed = {(1, "u1", "hello"), (2, "u2", "world"), (1, "u1", "fixed")}
        assert _rows(api, events["id"]) == {r for r in landed if r[1] not in {"u1", "u2", "u7"}}


def _privacy_done(api: httpx.Client, job_id: str) -> bool:
    return api.get(f"/v1/privacy/jobs/{job_id}").json()["status"] in ("complete", "erased")


def _rows(api: httpx.Client, dataset_id: str) -> set[tuple[int, str, str]]:
    answer = api.get(f"/v1/datasets/{dataset_id}/rows", params={"format": "jsonl"})
    assert answer.status_code == 200, answer.text
    rows = [json.loads(line) for line in answer.text.splitlines() if line]
    return {(r["event_id"], r["user_id"], r["payload"]) for r in rows}
