"""A lean HTTP/1.1 client for load: keep-alive connections on asyncio streams, nothing else.

The load generator shares the machine's 2 cores with the service it measures. httpx's async
client costs ~3 ms of CPU a request (its layers: h11 state machines, its transports, its
models), the API ~5-10 ms: at 200 requests/s the client alone would take a third of a core.
Requests here are a formatted head and a body on a pooled connection; answers are a parsed
status line, headers and a body by Content-Length (what uvicorn answers). Like `wrk`, it is
a tool for load against the project's own server, not a general HTTP client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit


class WireError(Exception):
    """The connection failed or the answer could not be read (the request's outcome is
    unknown)."""


class _Unanswered(Exception):
    """The connection failed before any byte of the answer came back."""


@dataclass
class Answer:
    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode(errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


class Wire:
    """At most `cap` keep-alive connections to one server; a request takes a free one (or
    opens one) and gives it back once its answer is read."""

    def __init__(self, base_url: str, headers: dict[str, str], cap: int) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.fixed = "".join(f"{k}: {v}\r\n" for k, v in {"Host": parts.netloc, **headers}.items())
        self.free: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.gate = asyncio.Semaphore(cap)

    async def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        content: bytes | None = None,
        params: dict[str, str] | None = None,
    ) -> Answer:
        body = content if content is not None else b""
        extra = ""
        if json_body is not None:
            body = json.dumps(json_body).encode()
            extra = "Content-Type: application/json\r\n"
        target = f"{path}?{urlencode(params)}" if params else path
        length = f"Content-Length: {len(body)}\r\n\r\n"
        head = f"{method} {target} HTTP/1.1\r\n{self.fixed}{extra}{length}"
        data = head.encode() + body
        async with self.gate:
            while self.free:  # a kept connection the server closed meanwhile (its keep-alive
                # timeout) fails before any answer byte: the request never ran, send it anew
                connection = self.free.pop()
                try:
                    return await self._send(connection, data)
                except _Unanswered:
                    continue
            try:
                return await self._send(await self._open(), data)
            except _Unanswered as exc:
                raise WireError(str(exc.__cause__)) from exc

    async def _send(
        self, connection: tuple[asyncio.StreamReader, asyncio.StreamWriter], data: bytes
    ) -> Answer:
        try:
            answer, keep = await self._exchange(connection, data)
        except asyncio.IncompleteReadError as exc:
            connection[1].close()
            if not exc.partial:
                raise _Unanswered() from exc
            raise WireError(f"{type(exc).__name__}: {exc}") from exc
        except ConnectionError as exc:
            connection[1].close()
            raise _Unanswered() from exc
        except (OSError, ValueError) as exc:
            connection[1].close()
            raise WireError(f"{type(exc).__name__}: {exc}") from exc
        if keep:
            self.free.append(connection)
        else:
            connection[1].close()
        return answer

    async def post(self, path: str, **kwargs: Any) -> Answer:
        return await self.request("POST", path, **kwargs)

    async def put(self, path: str, **kwargs: Any) -> Answer:
        return await self.request("PUT", path, **kwargs)

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        except OSError as exc:
            raise WireError(f"{type(exc).__name__}: {exc}") from exc

    @staticmethod
    async def _exchange(
        connection: tuple[asyncio.StreamReader, asyncio.StreamWriter], data: bytes
    ) -> tuple[Answer, bool]:
        reader, writer = connection
        writer.write(data)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" not in headers:
            raise ValueError("an answer without Content-Length")
        content = await reader.readexactly(int(headers["content-length"]))
        return Answer(status, content), headers.get("connection", "").lower() != "close"

    async def close(self) -> None:
        for _, writer in self.free:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        self.free.clear()


@contextlib.asynccontextmanager
async def wires(urls: list[str], key: str, cap: int) -> AsyncIterator[list[Wire]]:
    """One `Wire` per API process, `cap` connections in all (requests go round robin)."""
    share = max(1, -(-cap // len(urls)))
    opened = [Wire(u, {"Authorization": f"Bearer {key}"}, share) for u in urls]
    try:
        yield opened
    finally:
        for wire in opened:
            await wire.close()
