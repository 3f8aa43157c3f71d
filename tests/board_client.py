"""A web board server on a free port in this process, and a JSON client for its API (what
the page does, without a browser)."""
from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any, Callable

from engine.web import AllowList, GameSettings, PlayServer, ServerLimits, make_server
from engine.web.guard import KEY_HEADER
from engine.web.server import TOKEN_HEADER


class BoardClient:
    """Talks to 127.0.0.1 whatever address the server listens on; sends the board's key in
    its header when given one.  `headers`: the last response's headers."""

    def __init__(self, server: PlayServer, token: str | None = None, key: str | None = None):
        self.server = server
        host, self.port = server.server_address[:2]
        self.host = "127.0.0.1" if str(host) in ("0.0.0.0", "") else str(host)
        self.token = token
        self.key = key
        self.headers: Any = None

    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 60.0) -> tuple[int, Any]:
        """(status, parsed JSON or text)."""
        conn = http.client.HTTPConnection(str(self.host), int(self.port), timeout=timeout)
        sent = dict(headers or {})
        if self.token is not None:
            sent.setdefault(TOKEN_HEADER, self.token)
        if self.key is not None:
            sent.setdefault(KEY_HEADER, self.key)
        payload = raw
        if body is not None:
            payload = json.dumps(body).encode()
        if payload is not None:
            sent.setdefault("Content-Type", "application/json")
        try:
            conn.request(method, path, body=payload, headers=sent)
            response = conn.getresponse()
            data = response.read()
            kind = response.getheader("Content-Type", "")
            self.headers = response.headers
        finally:
            conn.close()
        if kind.startswith("application/json"):
            return response.status, json.loads(data)
        return response.status, data.decode()

    def claim(self, force: bool = False) -> tuple[int, Any]:
        status, data = self.request("POST", "/api/claim", {"token": self.token, "force": force})
        if status == 200:
            self.token = data["token"]
        return status, data

    def post(self, path: str, body: Any = None) -> Any:
        """POST that must succeed; returns the snapshot."""
        status, data = self.request("POST", path, {} if body is None else body)
        assert status == 200, f"{path} {body}: {status} {data}"
        return data

    def state(self, after: int = -1) -> Any:
        status, data = self.request("GET", f"/api/state?after={after}")
        assert status == 200, data
        return data

    def wait_for(self, predicate: Callable[[Any], bool], timeout: float = 60.0) -> Any:
        """Long-poll until a snapshot satisfies predicate; fails with the last one seen."""
        deadline = time.monotonic() + timeout
        snap = self.state()
        while not predicate(snap):
            assert time.monotonic() < deadline, f"board never reached the expected state; last: {snap}"
            snap = self.state(snap["version"])
        return snap

    def idle(self, timeout: float = 60.0) -> Any:
        """The board once no search runs."""
        return self.wait_for(lambda s: s["thinking"] is None, timeout)


class RunningBoard:
    """A server serving on a thread; `client()` gives a client that has claimed the game.
    `host`, `key`, `allowed` (external engines, networks), `limits` and `external` go to
    make_server; `key` is the board's key (made by the server off loopback, else None)."""

    def __init__(self, settings: GameSettings, *, host: str = "127.0.0.1", key: str | None = None,
                 allowed: AllowList = AllowList(), limits: ServerLimits = ServerLimits(), **kwargs: Any):
        self.server = make_server(settings, host=host, port=0, key=key, allowed=allowed, limits=limits, **kwargs)
        self.url = self.server.url
        self.key = self.server.key
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def client(self, claim: bool = True, with_key: bool = True) -> BoardClient:
        client = BoardClient(self.server, key=self.key if with_key else None)
        if claim:
            status, data = client.claim()
            assert status == 200, data
        return client

    def close(self) -> None:
        self.server.close()
        self._thread.join(10)
