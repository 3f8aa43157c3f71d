"""The browser board: play or analyse chess and gomoku against any player in a local page,
and watch the search (evaluation, lines, visit heat map) while it thinks.

`serve(settings)` runs the server; `Session` is the game it serves; the page lives in
static/ and is served from the package (nothing comes from the internet).  External engines
come only from the command line's AllowList; off loopback every request needs the board's
key (guard.py).
"""
from engine.web.guard import ServerLimits
from engine.web.opponents import ExternalFactory
from engine.web.server import PlayServer, make_server, serve
from engine.web.session import Session
from engine.web.settings import AllowList, GameSettings, Opponent, RequestError, allow_list, parse_settings

__all__ = ["serve", "make_server", "PlayServer", "Session", "GameSettings", "Opponent", "RequestError",
           "parse_settings", "ExternalFactory", "AllowList", "allow_list", "ServerLimits"]
