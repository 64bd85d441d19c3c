"""`python -m app.cli` (how `icebatch api` and `up` start the server: `serve`)."""

from app.cli import main

main()
