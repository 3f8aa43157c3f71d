"""What a person picks on the page (game, board, rule, opponent, colour, time), read and
checked from JSON.  Every bad value becomes a RequestError with a one-line message.

Nothing a request carries chooses a program to run or a file to open: an external engine is
picked by its name on the AllowList, which only `engine play --external` fills, and a
network by a shipped name or the one the command line gave."""
from __future__ import annotations

import math
import re
import shlex
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from engine.games import GameSetupError, game_names, game_on_board
from engine.games.base import Game
from engine.games.gomoku import RULES as GOMOKU_RULES
from engine.web.opponents import PAGE_OPTIONS, PAGE_RANGES, shipped_networks

__all__ = ["RequestError", "Opponent", "GameSettings", "AllowList", "parse_settings", "parse_opponent",
           "external_engine", "allow_list", "MODES", "PROTOCOLS"]

MODES = ("play", "analysis")
PROTOCOLS = {"chess": "uci", "gomoku": "gomocup"}   # the external protocol each game speaks
MAX_LINES = 8
OPPONENT_KEYS = ("kind", "name", "options")
FROM_COMMAND_LINE = "external engines come only from `engine play --external`"
_ENGINE_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


class RequestError(Exception):
    """A request the board cannot do; `status` is its HTTP status (400 bad input, 409 wrong moment)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Opponent:
    """A built-in player with options, or an external engine from the AllowList: its name
    there (`engine`) and the argument list it runs (no shell)."""
    kind: str = "builtin"                   # "builtin" | "external"
    options: tuple[tuple[str, Any], ...] = (("player", "auto"),)
    command: tuple[str, ...] = ()
    engine: str = ""

    @property
    def name(self) -> str:
        if self.kind == "external":
            return self.engine or _basename(self.command[0])
        opts = dict(self.options)
        extra = [f"{k}={v}" for k, v in self.options if k != "player"]
        return f"{opts.get('player', 'auto')}" + (f" ({', '.join(extra)})" if extra else "")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "options": dict(self.options), "engine": self.engine}


@dataclass(frozen=True)
class AllowList:
    """What a request may pick beyond the built-in players, fixed when the board starts:
    external engines (name -> argv, from the command line only) and networks besides the
    shipped ones (the one the command line gave)."""
    engines: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    networks: tuple[str, ...] = ()

    def __post_init__(self) -> None:       # a copy no one can change once the board runs
        frozen = MappingProxyType({name: tuple(argv) for name, argv in self.engines.items()})
        object.__setattr__(self, "engines", frozen)

    def names(self) -> list[str]:
        return list(self.engines)

    def external(self, name: str) -> Opponent:
        """The listed engine `name` as an opponent; RequestError for any other name."""
        if not self.engines:
            raise RequestError(f"this board offers no external engine: {FROM_COMMAND_LINE}")
        if name not in self.engines:
            raise RequestError(f"no external engine {name!r} on this board (it offers "
                               f"{', '.join(map(repr, self.engines))}): {FROM_COMMAND_LINE}")
        return Opponent(kind="external", command=self.engines[name], engine=name)

    def allows(self, opponent: Opponent) -> bool:
        """Is this external opponent exactly one of the listed engines?"""
        return self.engines.get(opponent.engine) == opponent.command

    def check_network(self, game: str, weights: str) -> None:
        shipped = shipped_networks(game)
        if weights not in shipped and weights not in self.networks:
            offered = ", ".join([*shipped, *self.networks]) or "none"
            raise RequestError(f"weights: {weights!r} is not a network this board offers ({offered}); "
                               "other files only from `engine play --weights`")


def _basename(program: str) -> str:
    return program.rstrip("/").rsplit("/", 1)[-1] or program


def external_engine(spec: str) -> tuple[str, tuple[str, ...]]:
    """`[NAME=]COMMAND` from the command line -> (name, argv).  COMMAND is split like a shell
    would (and later run without one); NAME defaults to the program's file name.  The text
    before a first `=` is a NAME only if it is a plain word (letters, digits, `_.+-`), so
    `stockfish --opt=1` is a command.  ValueError with a one-line reason."""
    name, sep, command = spec.partition("=")
    if not (sep and _ENGINE_NAME.fullmatch(name.strip())):
        name, command = "", spec
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ValueError(f"{spec!r}: {exc}") from None
    if not argv:
        raise ValueError(f"{spec!r}: no command to run")
    return name.strip() or _basename(argv[0]), argv


def allow_list(specs: Iterable[str], networks: Iterable[str] = ()) -> AllowList:
    """The AllowList from `--external` specs (duplicate names: ValueError) and `--weights`."""
    engines: dict[str, tuple[str, ...]] = {}
    for spec in specs:
        name, argv = external_engine(spec)
        if name in engines:
            raise ValueError(f"two external engines named {name!r}: name them, e.g. --external {name}2=COMMAND")
        engines[name] = argv
    return AllowList(engines=engines, networks=tuple(networks))


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


def parse_opponent(payload: Any, game: str, allowed: AllowList = AllowList()) -> Opponent:
    """`{"kind": "external", "name": "sf"}` or `{"kind": "builtin", "options": {...}}`."""
    if not isinstance(payload, Mapping):
        raise RequestError("opponent: expected an object")
    if "command" in payload:
        raise RequestError(f"opponent: a request cannot name a program to run; {FROM_COMMAND_LINE} "
                           "(pick one by name)")
    unknown = [key for key in payload if key not in OPPONENT_KEYS]
    if unknown:
        raise RequestError(f"opponent: unknown key {unknown[0]!r} (expected {', '.join(OPPONENT_KEYS)})")
    kind = _choice(payload, "kind", ("builtin", "external"), "builtin")
    if kind == "external":
        name = payload.get("name")
        if not isinstance(name, str) or not name:
            raise RequestError(f"opponent: an external engine is picked by name; {FROM_COMMAND_LINE}")
        return allowed.external(name)
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
        if kind_of is str:
            if key == "weights":
                allowed.check_network(game, str(value))
            options.append((key, str(value)))
            continue
        number = _number(raw, key, kind_of, None)
        low, high = PAGE_RANGES.get(key, (-math.inf, math.inf))
        if not low <= number <= high:
            raise RequestError(f"{key}: {low:g}..{high:g} on this board, got {number}")
        options.append((key, number))
    if not any(key == "player" for key, _ in options):
        options.insert(0, ("player", "auto"))
    return Opponent(kind="builtin", options=tuple(options))


def parse_settings(payload: Any, base: GameSettings | None = None, allowed: AllowList = AllowList()) -> GameSettings:
    """Settings from a JSON object; keys left out keep `base`'s values.  Checks the board by
    building the game (sizes 5..26, known rule), the numbers by range, the opponent against
    `allowed`."""
    if not isinstance(payload, Mapping):
        raise RequestError("expected a JSON object with the game settings")
    base = base or GameSettings()
    game = _choice(payload, "game", game_names(), base.game)
    width = _number(payload, "width", int, base.width)
    height = _number(payload, "height", int, width if "width" in payload else base.height)
    settings = GameSettings(
        game=game, width=width, height=height,
        rule=_choice(payload, "rule", GOMOKU_RULES, base.rule),
        mode=_choice(payload, "mode", MODES, base.mode),
        human=_number(payload, "human", int, base.human),
        movetime=_number(payload, "movetime", float, base.movetime),
        lines=_number(payload, "lines", int, base.lines),
        position=str(payload.get("position", base.position if game == base.game else "") or ""),
        opponent=(parse_opponent(payload["opponent"], game, allowed) if "opponent" in payload
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
