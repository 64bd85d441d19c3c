"""CDC replication's jobs: the dumper (`stage.py`), the processor (`process.py`, `merge.py`)."""
