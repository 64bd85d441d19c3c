# Developer shortcuts; README gives the same commands in full.
.PHONY: setup test test-fast lint up bench

setup:
	bash scripts/setup.sh

test:
	bash scripts/test.sh

test-fast:
	.venv/bin/python -m pytest -m "not spark" -q

lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy app workers bench

up:
	.venv/bin/icebatch up

bench:
	.venv/bin/python -m bench.ingest
