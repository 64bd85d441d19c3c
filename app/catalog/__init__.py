"""The Iceberg REST catalog protocol under `/iceberg` (apache/iceberg
`open-api/rest-catalog-open-api.yaml`): how other engines read Icebatch tables, with an Icebatch
key, read-only, each key seeing its own org's namespace.

`endpoints.py` (the routes, one sub-application mounted by `app.main`), `served.py` (which
snapshots an engine may load: only those whose tombstones are all Iceberg deletes, none older
than an erasure), `errors.py` (the spec's error model).
"""
