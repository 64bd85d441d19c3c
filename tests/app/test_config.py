from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.config import Settings


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


def test_embedded_state_defaults_to_one_folder_per_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("ICEBATCH_")]:
        monkeypatch.delenv(name)  # another test's store in this process (xdist) is not the default
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.chdir(tmp_path)  # never the folder a command runs in
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert Settings().home == tmp_path / "data" / "icebatch"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # not absolute: ignored (XDG spec)
    assert Settings().home == tmp_path / "user" / ".local" / "share" / "icebatch"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert Settings().home == tmp_path / "user" / ".local" / "share" / "icebatch"
    assert Settings().database_url == f"sqlite:///{Settings().home / 'icebatch.db'}"
    monkeypatch.setenv("ICEBATCH_HOME", str(tmp_path / "elsewhere"))  # still overrides it
    assert Settings().home == tmp_path / "elsewhere"
