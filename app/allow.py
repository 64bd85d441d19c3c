"""The `Allow` header of a 405 (RFC 9110 §15.5.6): every method the app's routes take at the
request's path, whichever route Starlette happened to match first."""

from __future__ import annotations

from collections.abc import Iterable

from starlette.routing import BaseRoute, Route


def allowed_methods(routes: Iterable[BaseRoute], path: str) -> list[str]:
    """The methods of the routes whose path matches `path`, sorted."""
    methods: set[str] = set()
    for route in routes:
        if isinstance(route, Route) and route.methods and route.path_regex.match(path):
            methods |= route.methods
    return sorted(methods)
