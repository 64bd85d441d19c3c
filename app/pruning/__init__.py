"""Pruning the metadata store: what each table may lose once it is old, and what it must keep."""
