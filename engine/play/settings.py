"""What a person picks on the page (game, board, rule, opponent, colour, time), read and
checked from JSON.  Every bad value becomes a RequestError with a one-line message."""
from __future__ import annotations

import math
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from engine.games import GameSetupError, game_on_board
from engine.games.base import Game
from engine.play.players import PAGE_OPTIONS

__all__ = ["RequestError", "Opponent", "GameSettings", "parse_settings", "MODES", "PROTOCOLS"]

MODES = ("play", "analysis")
PROTOCOLS = {"chess": "uci", "gomoku": "gomocup"}   # the external protocol each game speaks
MAX_LINES = 8


class RequestError(Exception):
    """A request the board cannot do; `status` is its HTTP status (400 bad input, 409 wrong moment)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Opponent:
    """A built-in player with options, or an external engine's command line (split like a
    shell would, run without one)."""
    kind: str = "builtin"                   # "builtin" | "external"
    options: tuple[tuple[str, Any], ...] = (("player", "auto"),)
    command: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        if self.kind == "external":
            return self.command[0].rsplit("/", 1)[-1]
        opts = dict(self.options)
        extra = [f"{k}={v}" for k, v in self.options if k != "player"]
        return f"{opts.get('player', 'auto')}" + (f" ({', '.join(extra)})" if extra else "")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "options": dict(self.options), "command": shlex.join(self.command)}


@dataclass(frozen=True)
class GameSettings:
    game: str = "gomoku"
    width: int = 15
    height: int = 15
    rule: str = "freestyle"
    mode: str = "play"
    human: int = 0                 # 0: the person plays first (White / black stones)
    movetime: float = 1.0          # seconds per engine move; 0: the player's own budget
    lines: int = 3                 # best lines (MultiPV) the engine reports
    position: str = ""             # FEN (chess) or stones "x,y x,y ..." (gomoku, first player first)
    opponent: Opponent = field(default_factory=Opponent)

    def make_game(self) -> Game:
        return game_on_board(self.game, self.width, self.height, self.rule)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["opponent"] = self.opponent.to_json()
        return out


def _number(payload: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    value = payload.get(key, default)
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RequestError(f"{key}: expected a number, got {value!r}")
    try:
        number = kind(value)
    except ValueError:
        raise RequestError(f"{key}: expected a{'n integer' if kind is int else ' number'}, got {value!r}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise RequestError(f"{key}: expected a finite number, got {value!r}")
    return number


def _choice(payload: Mapping[str, Any], key: str, choices: tuple[str, ...], default: str) -> str:
    value = payload.get(key, default)
    if value not in choices:
        raise RequestError(f"{key}: expected one of {', '.join(choices)}, got {value!r}")
    return str(value)


def parse_opponent(payload: Any, game: str) -> Opponent:
    if not isinstance(payload, Mapping):
        raise RequestError("opponent: expected an object")
    kind = _choice(payload, "kind", ("builtin", "external"), "builtin")
    if kind == "external":
        text = payload.get("command")
        if not isinstance(text, str) or not text.strip():
            raise RequestError("opponent: an external engine needs a command line")
        try:
            argv = tuple(shlex.split(text))
        except ValueError as exc:
            raise RequestError(f"opponent command {text!r}: {exc}") from None
        return Opponent(kind="external", command=argv)
    raw = payload.get("options", {})
    if not isinstance(raw, Mapping):
        raise RequestError("opponent options: expected an object")
    options: list[tuple[str, Any]] = []
    for key, value in raw.items():
        if key not in PAGE_OPTIONS:
            raise RequestError(f"unknown player option {key!r} (expected {', '.join(PAGE_OPTIONS)})")
        if value is None or value == "":
            continue
        kind_of = PAGE_OPTIONS[key]
        options.append((key, str(value) if kind_of is str else _number(raw, key, kind_of, None)))
    if not any(key == "player" for key, _ in options):
        options.insert(0, ("player", "auto"))
    return Opponent(kind="builtin", options=tuple(options))


def parse_settings(payload: Any, base: GameSettings | None = None) -> GameSettings:
    """Settings from a JSON object; keys left out keep `base`'s values.  Checks the board by
    building the game (sizes 5..26, known rule), the numbers by range."""
    if not isinstance(payload, Mapping):
        raise RequestError("expected a JSON object with the game settings")
    base = base or GameSettings()
    game = _choice(payload, "game", ("chess", "gomoku"), base.game)
    width = _number(payload, "width", int, base.width)
    height = _number(payload, "height", int, width if "width" in payload else base.height)
    settings = GameSettings(
        game=game, width=width, height=height,
        rule=_choice(payload, "rule", ("freestyle", "standard"), base.rule),
        mode=_choice(payload, "mode", MODES, base.mode),
        human=_number(payload, "human", int, base.human),
        movetime=_number(payload, "movetime", float, base.movetime),
        lines=_number(payload, "lines", int, base.lines),
        position=str(payload.get("position", base.position if game == base.game else "") or ""),
        opponent=(parse_opponent(payload["opponent"], game) if "opponent" in payload
                  else base.opponent if game == base.game or base.opponent.kind == "builtin" else Opponent()))
    if settings.human not in (0, 1):
        raise RequestError(f"human: 0 (play first) or 1 (play second), got {settings.human}")
    if not 0 <= settings.movetime <= 3600:
        raise RequestError(f"movetime: 0..3600 seconds, got {settings.movetime}")
    if not 1 <= settings.lines <= MAX_LINES:
        raise RequestError(f"lines: 1..{MAX_LINES}, got {settings.lines}")
    try:
        settings.make_game()
    except GameSetupError as exc:
        raise RequestError(str(exc)) from None
    return settings
