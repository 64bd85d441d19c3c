"""Commands started together on a new embedded home (`icebatch api` and `icebatch worker` from
two terminals, a `keys create` beside them) each bring the store to the newest schema: the
first creates it, the others find it done, none fails on a half-made schema."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ICEBATCH = str(Path(sys.executable).with_name("icebatch"))


def test_commands_started_together_on_a_new_home_all_migrate(tmp_path: Path) -> None:
    env = {**os.environ, "ICEBATCH_HOME": str(tmp_path / "home")}
    for key in ("ICEBATCH_DATABASE_URL", "ICEBATCH_BROKER_URL", "ICEBATCH_WAREHOUSE"):
        env.pop(key, None)
    commands = [[ICEBATCH, "migrate"]] * 2 + [[ICEBATCH, "keys", "create", "--org", "acme"]] * 2
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for argv in commands
    ]
    outcomes = [(p.communicate(timeout=120)[1].decode(), p.returncode) for p in procs]
    assert [code for _, code in outcomes] == [0] * len(commands), outcomes
    created = [err for err, _ in outcomes if "created store at" in err]
    assert len(created) == 1, outcomes  # one command made the store; the others found it
    listed = subprocess.run(
        [ICEBATCH, "keys", "list", "--org", "acme"], env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("acme") >= 2, listed.stdout  # both keys were stored
