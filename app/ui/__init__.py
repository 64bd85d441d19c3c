"""The batch status web UI at `/ui`: pages served by the API process, filled in the browser
from the JSON API with the user's key (kept in the tab's sessionStorage only)."""
