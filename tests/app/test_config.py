from __future__ import annotations

from pathlib import Path

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
