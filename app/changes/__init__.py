"""Incremental reads (`GET /changes`) and exports (`POST /exports`) of a dataset's changes."""
