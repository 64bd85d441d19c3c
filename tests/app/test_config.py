from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.config import Settings, default_home


def test_embedded_defaults_live_under_home(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, database_url="", broker_url="", warehouse="")
    assert settings.database_url == f"sqlite:///{tmp_path / 'icebatch.db'}"
    assert settings.broker_url.startswith("sqla+sqlite:///")
    assert settings.warehouse == (tmp_path / "warehouse").as_uri()
    assert settings.jdbc_url == f"jdbc:sqlite:{tmp_path / 'icebatch.db'}"
    assert settings.is_sqlite


def test_postgres_urls_for_sqlalchemy_and_jdbc(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, database_url="postgresql://ice:s3cr%40t@db.local:6543/meta")
    assert settings.sqlalchemy_url == "postgresql+psycopg://ice:s3cr%40t@db.local:6543/meta"
    assert settings.jdbc_url == "jdbc:postgresql://db.local:6543/meta"
    assert settings.jdbc_properties == {"user": "ice", "password": "s3cr@t"}
    assert not settings.is_sqlite


def test_the_default_home_is_one_per_user_wherever_a_command_runs(tmp_path: Path) -> None:
    assert default_home({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "icebatch"
    # the XDG spec: a relative XDG_DATA_HOME is invalid and ignored
    assert default_home({"XDG_DATA_HOME": "rel"}) == Path.home() / ".local/share/icebatch"
    assert default_home({}) == Path.home() / ".local/share/icebatch"


def test_keys_made_in_another_folder_land_in_the_store_up_uses(tmp_path: Path) -> None:
    """`icebatch keys create` run elsewhere than `icebatch up` once made a second store in
    `./.icebatch` and printed a key the service refused: now both find the per-user store,
    and the command that creates it says where."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ICEBATCH_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    icebatch = str(Path(sys.executable).parent / "icebatch")
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()

    def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [icebatch, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done

    made = run(here, "keys", "create", "--org", "acme")
    store = tmp_path / "data" / "icebatch"
    assert f"created a new embedded store in {store}" in made.stderr
    key_id = made.stderr.split("API key ")[1].split()[0]
    listed = run(there, "keys", "list", "--org", "acme")
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:]] == [key_id]
    assert "created a new embedded store" not in listed.stderr
    assert not (here / ".icebatch").exists()
    assert not (there / ".icebatch").exists()
