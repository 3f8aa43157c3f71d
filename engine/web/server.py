"""The local web server: one page, its static files, chess piece images and a JSON API.

Standard library only (ThreadingHTTPServer): each request gets a thread, so a long poll for
the live view or a search in progress never blocks the page.  The live view is a long poll,
`GET /api/state?after=<version>`, answered as soon as the board changes.

One game per server, held by one browser tab at a time: a tab claims it (`POST /api/claim`)
and sends its token in `X-Plyzero-Session`; another tab is told the game is open elsewhere
and may take it over, after which the first tab is told so.  The token header and the JSON
content type also keep other web sites' pages out (their requests cannot set either without
a preflight we never grant), and the Host check keeps out DNS-rebinding pages.

Off loopback every request must show the board's key (engine/web/guard.py).  On any
address, no request chooses a program to run: external engines come from the command line's
AllowList only (engine/web/settings.py).  A socket timeout and caps on open connections
keep slow clients and floods from holding the server's threads.
"""
from __future__ import annotations

import json
import sys
import webbrowser
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

from engine.games import game_names
from engine.web.guard import (LOOPBACK, REFUSED_RESPONSE, TOKEN_HEADER, ConnectionCap, ServerLimits, TabClaim,
                               is_loopback, key_cookie, key_matches, new_key, presented_key)
from engine.web.opponents import ExternalFactory, player_names, shipped_networks
from engine.web.session import Session
from engine.web.settings import AllowList, GameSettings, RequestError, parse_settings

__all__ = ["PlayServer", "make_server", "serve", "TOKEN_HEADER", "MAX_BODY"]

MAX_BODY = 64 * 1024
POLL_SECONDS = 10.0          # a long poll answers after this long even when nothing changed
STALE_SECONDS = 3 * POLL_SECONDS   # a tab not heard from for this long has gone (it polls more often)
STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8"}
PIECES = "PNBRQK"


def _static(name: str) -> bytes | None:
    if "/" in name or name.startswith("."):
        return None
    try:
        return (resources.files("engine.web") / "static" / name).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None


def piece_svg(code: str) -> bytes | None:
    """`wN` / `bq`-style codes -> python-chess's SVG of that piece."""
    if len(code) != 2 or code[0] not in "wb" or code[1].upper() not in PIECES:
        return None
    import chess
    import chess.svg
    symbol = code[1].upper() if code[0] == "w" else code[1].lower()
    return chess.svg.piece(chess.Piece.from_symbol(symbol)).encode()


class PlayServer(ThreadingHTTPServer):
    """The board's server.  `key`: what every request must show (None: no key, allowed on
    loopback only; off loopback a fresh one is made when none is given)."""
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128     # a burst of connections waits to be accepted (or refused), not for SYN retries

    def __init__(self, address: tuple[str, int], session: Session, *, key: str | None = None,
                 limits: ServerLimits = ServerLimits()):
        super().__init__(address, Handler)
        self.session = session
        self.tabs = TabClaim(STALE_SECONDS)
        self.limits = limits
        self.connections = ConnectionCap(limits.per_client, limits.total)
        host, port = self.server_address[:2]
        self.loopback = is_loopback(str(host))
        self.key = key if key is not None or self.loopback else new_key()
        shown = "127.0.0.1" if str(host) in ("0.0.0.0", "") else str(host)
        self.url = f"http://{shown}:{port}/" + (f"?key={self.key}" if self.key else "")

    def key_shown(self, query: str, headers: Any) -> tuple[bool, str]:
        """(does the request show the key, or need none; where it showed it: "url" | "header" | "cookie")."""
        if self.key is None:
            return True, ""
        candidate, where = presented_key(query, headers)
        return (True, where) if key_matches(self.key, candidate) else (False, "")

    def host_allowed(self, header: str | None) -> bool:
        """On loopback only this machine's names for it (DNS rebinding defence)."""
        if not self.loopback:
            return True
        if header is None:
            return False
        host = header.rsplit(":", 1)[0] if not header.endswith("]") else header
        return host in LOOPBACK

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection if the caps leave room; else a 503 and close, at once."""
        if not self.connections.admit(str(client_address[0])):
            try:
                request.setblocking(False)          # the accepting thread never waits on a client
                request.send(REFUSED_RESPONSE)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.release(str(client_address[0]))
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release(str(client_address[0]))

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up or timed out is no error worth a traceback in the terminal."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._serving = True
        super().serve_forever(poll_interval)

    def close(self) -> None:
        """Stop serving (from another thread than serve_forever's), end the search, close the opponent."""
        if getattr(self, "_serving", False):
            self.shutdown()
        self.server_close()
        self.session.close()


class Handler(BaseHTTPRequestHandler):
    server: PlayServer
    protocol_version = "HTTP/1.1"
    _key_cookie: str | None = None        # set when this request showed the key in its URL

    def setup(self) -> None:
        """As StreamRequestHandler.timeout would, but per server: a silent socket is closed."""
        super().setup()
        self.connection.settimeout(self.server.limits.timeout)

    def log_message(self, format: str, *args: Any) -> None:   # quiet: the terminal shows the URL only
        pass

    # --- plumbing ----------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")     # the address may carry the key
        if status >= 400:          # the body may be unread: start afresh on a new connection
            self.send_header("Connection", "close")
            self.close_connection = True
        if self._key_cookie is not None and status < 400:
            self.send_header("Set-Cookie", self._key_cookie)
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _body(self) -> Any:
        if self.headers.get_content_type() != "application/json":
            raise RequestError("send JSON (Content-Type: application/json)", 415)
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            raise RequestError("bad Content-Length") from None
        if length > MAX_BODY:
            raise RequestError(f"request body over {MAX_BODY} bytes", 413)
        raw = self.rfile.read(length) if length > 0 else b"{}"
        try:
            return json.loads(raw or b"{}")
        except (ValueError, UnicodeDecodeError) as exc:
            raise RequestError(f"malformed JSON: {exc}") from None

    def _dispatch(self, routes: dict[str, Callable[[], None]]) -> None:
        self._key_cookie = None
        if not self.server.host_allowed(self.headers.get("Host")):
            self._error(403, "this board answers pages served from this machine only")
            return
        url = urlsplit(self.path)
        shown, where = self.server.key_shown(url.query, self.headers)
        if not shown:
            self._error(403, "this board needs its key: open the address `engine play` printed (…/?key=…)")
            return
        if where == "url" and self.server.key is not None:
            self._key_cookie = key_cookie(self.server.key)
        path = url.path
        route = routes.get(path)
        try:
            if route is not None:
                route()
            elif path.startswith("/static/") and self.command in ("GET", "HEAD"):
                self._static_file(path[len("/static/"):])
            elif path.startswith("/pieces/") and path.endswith(".svg") and self.command in ("GET", "HEAD"):
                svg = piece_svg(path[len("/pieces/"):-len(".svg")])
                if svg is None:
                    raise RequestError(f"no piece {path}", 404)
                self._send(200, svg, "image/svg+xml", {"Cache-Control": "max-age=3600"})
            elif path in GET_ROUTES or path in POST_ROUTES:
                raise RequestError(f"{self.command} is not allowed on {path}", 405)
            else:
                raise RequestError(f"no such page {path}", 404)
        except RequestError as exc:
            self._error(exc.status, str(exc))
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True   # the tab went away, or stalled, mid-request
        except Exception as exc:   # a bug must not take the server down: one line to the page
            self._error(500, f"internal error: {type(exc).__name__}: {exc}")

    def do_GET(self) -> None:
        self._dispatch({path: getattr(self, name) for path, name in GET_ROUTES.items()})

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        self._dispatch({path: getattr(self, name) for path, name in POST_ROUTES.items()})

    def _not_allowed(self) -> None:
        self._dispatch({})

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

    def _static_file(self, name: str) -> None:
        body = _static(name)
        suffix = name[name.rfind("."):] if "." in name else ""
        if body is None or suffix not in STATIC_TYPES:
            raise RequestError(f"no such file {name}", 404)
        self._send(200, body, STATIC_TYPES[suffix])

    def _token(self) -> None:
        self.server.tabs.check(self.headers.get(TOKEN_HEADER))

    # --- pages and API -------------------------------------------------------------------

    def page(self) -> None:
        self._static_file("index.html")

    def options(self) -> None:
        session = self.server.session
        self._json(200, {"players": player_names(),
                         "networks": {game: [*shipped_networks(game), *session.allowed.networks]
                                      for game in game_names()},
                         "external": session.external_names})

    def state(self) -> None:
        self._token()
        query = parse_qs(urlsplit(self.path).query)
        try:
            after = int(query.get("after", ["-1"])[0])
        except ValueError:
            raise RequestError("after: expected the version number the page has") from None
        snapshot = self.server.session.snapshot(after, POLL_SECONDS)
        self._token()          # taken over while this poll waited: say so now
        self._json(200, snapshot)

    def record(self) -> None:
        self._token()
        name, text = self.server.session.record()
        self._json(200, {"filename": name, "text": text})

    def claim(self) -> None:
        body = self._body()
        token = body.get("token") if isinstance(body, dict) else None
        force = bool(body.get("force")) if isinstance(body, dict) else False
        token = self.server.tabs.claim(token if isinstance(token, str) else None, force)
        self.server.session.wake()
        self._json(200, {"token": token})

    def _act(self, action: Callable[[Any], None]) -> None:
        body = self._body()
        self._token()
        if not isinstance(body, dict):
            raise RequestError("expected a JSON object")
        action(body)
        self._json(200, self.server.session.snapshot())

    def new(self) -> None:
        session = self.server.session
        self._act(lambda body: session.new_game(parse_settings(body, session.settings, session.allowed)))

    def move(self) -> None:
        self._act(lambda body: self.server.session.play(_text(body, "move")))

    def position(self) -> None:
        self._act(lambda body: self.server.session.set_position(_text(body, "position", allow_empty=True)))

    def undo(self) -> None:
        self._act(lambda body: self.server.session.undo())

    def swap(self) -> None:
        self._act(lambda body: self.server.session.swap())

    def resign(self) -> None:
        self._act(lambda body: self.server.session.resign())

    def stop(self) -> None:
        self._act(lambda body: self.server.session.stop())

    def analyse(self) -> None:
        self._act(lambda body: self.server.session.analyse(bool(body.get("on", True))))


def _text(body: dict[str, Any], key: str, allow_empty: bool = False) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not (value.strip() or allow_empty):
        raise RequestError(f"{key}: expected a string")
    return value


GET_ROUTES = {"/": "page", "/index.html": "page", "/api/options": "options", "/api/state": "state",
              "/api/record": "record"}
POST_ROUTES = {"/api/claim": "claim", "/api/new": "new", "/api/move": "move", "/api/position": "position",
               "/api/undo": "undo", "/api/swap": "swap", "/api/resign": "resign", "/api/stop": "stop",
               "/api/analyse": "analyse"}


def make_server(settings: GameSettings, *, host: str = "127.0.0.1", port: int = 8000,
                external: ExternalFactory | None = None, allowed: AllowList = AllowList(), key: str | None = None,
                limits: ServerLimits = ServerLimits()) -> PlayServer:
    """A server with its first game set up (RequestError for bad settings, OSError for a busy
    port).  `allowed`: the external engines and extra networks the page may pick (the network
    `settings` names is added); `key`, `limits`: see PlayServer.  Call serve_forever() on
    it, close() when done."""
    weights = dict(settings.opponent.options).get("weights")
    if settings.opponent.kind == "builtin" and weights and weights not in allowed.networks:
        allowed = replace(allowed, networks=(*allowed.networks, str(weights)))
    session = Session(settings, external=external, allowed=allowed)
    try:
        return PlayServer((host, port), session, key=key, limits=limits)
    except BaseException:
        session.close()
        raise


def serve(settings: GameSettings, *, host: str = "127.0.0.1", port: int = 8000, open_browser: bool = True,
          external: ExternalFactory | None = None, allowed: AllowList = AllowList(), key: str | None = None,
          echo: Callable[[str], None] = print) -> None:
    """Serve the board until Ctrl-C."""
    server = make_server(settings, host=host, port=port, external=external, allowed=allowed, key=key)
    echo(f"PlyZero board on {server.url}  (Ctrl-C to stop)")
    if not server.loopback:
        echo(f"listening on {host}: every request needs the key in that address (from another machine, "
             "use this one's address with the same ?key=); external engines only from --external")
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
