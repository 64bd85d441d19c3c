"""`DbSession`: the request's session as a FastAPI dependency. Apart from `app.db` so that the
processes without an HTTP server (workers, the CLI's server commands) do not import FastAPI
(about 0.2 s of a process's start, most of it building FastAPI's OpenAPI models)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from sqlalchemy.orm import Session

from app.db import get_session

DbSession = Annotated[Session, Depends(get_session)]
