"""Iceberg knowledge shared by the API and the workers: catalog, tables, snapshots, reads."""
