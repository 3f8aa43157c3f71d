"""Who may use a board, and how much of it: the tab that holds the game, the key a network
board requires, and the caps on open connections that keep a flood or a slow client from
stalling the game.

The key is like Jupyter's token: made fresh when the board starts, printed in its address,
and required on every request of a board that has one (a board off loopback always does).
A request shows it as `?key=` in its URL, in the `X-Plyzero-Key` header, or in the cookie the
server sets when the page is loaded with the key in its URL (so the page's own script,
images and fetches carry it).
"""
from __future__ import annotations

import hmac
import re
import secrets
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Callable, Mapping
from urllib.parse import parse_qs

from engine.web.settings import RequestError

__all__ = ["TOKEN_HEADER", "KEY_HEADER", "KEY_COOKIE", "LOOPBACK", "REFUSED_RESPONSE", "TabClaim", "ServerLimits",
           "ConnectionCap", "is_loopback", "new_key", "check_key", "presented_key", "key_matches", "key_cookie"]

TOKEN_HEADER = "X-Plyzero-Session"
KEY_HEADER = "X-Plyzero-Key"
KEY_COOKIE = "plyzero_key"
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
_KEY_CHARS = re.compile(r"[A-Za-z0-9_-]{16,128}")

# Sent as is, by the accepting thread, to a connection over the cap: no handler thread starts.
_REFUSED_BODY = b'{"error": "too many open connections to this board: try again in a moment"}'
REFUSED_RESPONSE = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(_REFUSED_BODY) + _REFUSED_BODY)


class TabClaim:
    """Which tab holds the game: a token, and when that tab was last heard from (a tab not
    heard from for `stale_seconds` has gone, and another may claim the game unasked)."""

    def __init__(self, stale_seconds: float, clock: Callable[[], float] = time.monotonic):
        self._stale, self._clock = stale_seconds, clock
        self._lock = threading.Lock()
        self.owner: str | None = None
        self.seen = 0.0

    def claim(self, token: str | None, force: bool) -> str:
        with self._lock:
            now = self._clock()
            if self.owner is not None and token != self.owner and not force and now - self.seen < self._stale:
                raise RequestError("this game is open in another tab: take it over here, or use that tab", 409)
            if token is None or token != self.owner:
                token = secrets.token_urlsafe(16)
            self.owner, self.seen = token, now
            return token

    def check(self, token: str | None) -> None:
        if not token:
            raise RequestError(f"no {TOKEN_HEADER} header: load the board's page (it claims the game)", 401)
        with self._lock:
            if token != self.owner:
                raise RequestError("this game was taken over by another tab", 409)
            self.seen = self._clock()


@dataclass(frozen=True)
class ServerLimits:
    """How much of a board its clients may hold.  `timeout`: seconds a socket may stay silent
    mid-request or between requests before it is closed (the long poll waits on the game,
    not on the socket, so it is not cut by this); `per_client` / `total`: open connections
    per client address and in all (a browser tab needs a few)."""
    timeout: float = 30.0
    per_client: int = 64
    total: int = 256


def is_loopback(host: str) -> bool:
    return host in LOOPBACK


def new_key() -> str:
    return secrets.token_urlsafe(24)


def check_key(key: str) -> str:
    """A key given on the command line: 16..128 URL- and cookie-safe characters (ValueError otherwise)."""
    if not _KEY_CHARS.fullmatch(key):
        raise ValueError("a key is 16 to 128 characters of A-Z a-z 0-9 _ -")
    return key


def presented_key(query: str, headers: Mapping[str, str]) -> tuple[str | None, str]:
    """(the key a request shows, where: "url" | "header" | "cookie" | "").  `query` is the
    URL's query string; `headers` the request's (a case-insensitive mapping)."""
    in_url = parse_qs(query).get("key")
    if in_url:
        return in_url[0], "url"
    in_header = headers.get(KEY_HEADER)
    if in_header:
        return in_header, "header"
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("Cookie") or "")
    except CookieError:          # a malformed cookie header: as if it had none
        return None, ""
    morsel = cookie.get(KEY_COOKIE)
    return (morsel.value, "cookie") if morsel is not None else (None, "")


def key_matches(key: str, candidate: str | None) -> bool:
    """Constant-time comparison, safe for any text a request sends."""
    if candidate is None:
        return False
    return hmac.compare_digest(key.encode(), candidate.encode("utf-8", "replace"))


def key_cookie(key: str) -> str:
    """The Set-Cookie value that lets the page's own requests carry the key."""
    return f"{KEY_COOKIE}={key}; HttpOnly; SameSite=Strict; Path=/"


class ConnectionCap:
    """Open connections per client address and in all.  `admit` counts one in if there is
    room (False: refuse it); every admitted connection is `release`d once, when it closes."""

    def __init__(self, per_client: int, total: int):
        self.per_client, self.total = per_client, total
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()
        self._total = 0

    def admit(self, address: str) -> bool:
        with self._lock:
            if self._open[address] >= self.per_client or self._total >= self.total:
                return False
            self._open[address] += 1
            self._total += 1
            return True

    def release(self, address: str) -> None:
        with self._lock:
            self._open[address] -= 1
            self._total -= 1
            if self._open[address] <= 0:
                del self._open[address]

    def open_count(self, address: str | None = None) -> int:
        with self._lock:
            return self._total if address is None else self._open[address]
