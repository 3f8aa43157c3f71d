"""Tournament configuration: TOML and command-line flags -> frozen dataclasses.

Everything a tournament needs is checked here, before any game starts, so bad input
is one `ConfigError` line (the CLI turns it into a click error).  The
`fingerprint` names the games a configuration produces; the store uses it to resume.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from arena.clock import MoveLimits, TimeControlError, parse_tc
from engine.games import game_class, game_names, game_profile
from engine.players import PLAYER_NAMES, PLAYER_OPTIONS, find_weights, option_by_key

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["ConfigError", "EngineSpec", "Adjudication", "SprtSpec", "TournamentConfig",
           "parse_engine", "parse_kv", "load_toml", "build_config", "BUILTIN_SETTINGS"]

# Built-in player settings -> `engine uci|gomocup` flags, one per player option
# (engine/players/options.py) except the player itself, which has its own key.
BUILTIN_SETTINGS: dict[str, str] = {spec.key: f"--{spec.key}" for spec in PLAYER_OPTIONS
                                    if spec.name != "player"}
LIMIT_KEYS = ("depth", "nodes", "movetime")     # per-engine search limits
PROTOCOLS = ("uci", "gomocup")
# auto: what `plyzero-uci` and `pbrain-plyzero` play with no options (the shipped default)
BUILTIN_PLAYERS: tuple[str, ...] = (*PLAYER_NAMES, "auto")


class ConfigError(ValueError):
    """Bad tournament input: one line that says what and where."""


@dataclass(frozen=True)
class EngineSpec:
    """One participant.  Either a built-in `player` (run as `engine uci|gomocup --player X` with
    the arena's own interpreter: `python -m engine.cli ...`, see
    argv) or an external `command`.  options: UCI setoption / Gomocup INFO pairs.  depth/nodes/movetime:
    this engine's own search limits (override the tournament's)."""
    name: str
    player: str | None = None
    command: tuple[str, ...] = ()
    protocol: str | None = None
    settings: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    depth: int | None = None
    nodes: int | None = None
    movetime: float | None = None

    @property
    def builtin(self) -> bool:
        return self.player is not None

    def protocol_for(self, game: str) -> str | None:
        """uci, gomocup, or None: a game no protocol speaks (built-in players search in-process)."""
        return self.protocol or game_class(game).protocol

    def argv(self, game: str) -> list[str]:
        """The command line that starts this engine for `game`."""
        if not self.builtin:
            return list(self.command)
        protocol = self.protocol_for(game)
        if protocol is None:
            raise ValueError(f"{game} has no engine protocol to start {self.name!r} with")
        argv = [sys.executable, "-m", "engine.cli", protocol, "--player", str(self.player)]
        settings = dict(self.settings)
        settings.setdefault("threads", "1")  # DESIGN: one network thread when engines share cores
        if self.nodes is not None:
            settings.setdefault("nodes", str(self.nodes))
        for key, value in sorted(settings.items()):
            argv += [BUILTIN_SETTINGS[key], value]
        return argv

    def environment(self) -> dict[str, str] | None:
        if not self.env and not self.builtin:
            return None
        env = dict(os.environ)
        if self.builtin:
            env.setdefault("OMP_NUM_THREADS", "1")
        env.update(dict(self.env))
        return env

    def limits(self, base: MoveLimits) -> MoveLimits:
        changes = {k: getattr(self, k) for k in LIMIT_KEYS if getattr(self, k) is not None}
        return replace(base, **changes) if changes else base


@dataclass(frozen=True)
class Adjudication:
    """Chess adjudication (cutechess semantics; scores in centipawns, from the engines).

    draw: after `draw_movenumber` full moves, both engines within `draw_score` of 0 for
    `draw_movecount` consecutive moves each.  resign: one engine at or below -`resign_score`
    for `resign_movecount` consecutive moves of its own.  max_moves: draw after that many
    full moves (gomoku: none; the board fills).
    """
    draw_movenumber: int | None = None
    draw_movecount: int = 8
    draw_score: int = 10
    resign_movecount: int | None = None
    resign_score: int = 1000
    max_moves: int | None = 200


@dataclass(frozen=True)
class SprtSpec:
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05


@dataclass(frozen=True)
class TournamentConfig:
    game: str
    engines: tuple[EngineSpec, ...]
    boards: tuple[int, ...] = ()           # gomoku board sizes (square); () for chess
    rule: str = "freestyle"
    games: int = 2                         # games per pairing (per board size)
    format: str = "roundrobin"
    openings: str | None = None            # file; None: built-in (chess) / generated (gomoku)
    opening_plies: int | None = None       # gomoku generated openings: stones (None: 2-4)
    limits: MoveLimits = field(default_factory=MoveLimits)
    adjudication: Adjudication = field(default_factory=Adjudication)
    sprt: SprtSpec | None = None
    seed: int = 1
    concurrency: int = 1
    db: str = "arena.sqlite"
    pgn_out: str | None = None
    swap2: bool = False                    # gomoku: the engines place the opening by swap2

    def fingerprint(self) -> str:
        """Hash of everything that decides how a game is played; games count, format,
        concurrency and output paths are left out, so raising --games resumes and adds
        (and swap2 while off, so databases from before it resume)."""
        payload = {k: v for k, v in asdict(self).items()
                   if k not in ("games", "format", "concurrency", "db", "pgn_out", "sprt", "boards")
                   and not (k == "swap2" and not v)}
        text = json.dumps(payload, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def settings_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, default=str)


# ---------------------------------------------------------------- parsing helpers

def parse_kv(text: str, what: str) -> dict[str, str]:
    """`a=1 b=2` or `a=1,b=2` -> {"a": "1", "b": "2"}."""
    out: dict[str, str] = {}
    for item in text.replace(",", " ").split():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{what}: expected key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _int(value: Any, what: str, low: int = 1) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: expected an integer, got {value!r}") from None
    if number < low:
        raise ConfigError(f"{what}: must be at least {low}, got {number}")
    return number


def _float(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: expected a number, got {value!r}") from None
    if not number > 0:
        raise ConfigError(f"{what}: must be positive, got {value!r}")
    return number


def _engine_from_mapping(raw: Mapping[str, Any], where: str) -> EngineSpec:
    """Build an EngineSpec from TOML-table or flag keys (validated, command resolved)."""
    raw = dict(raw)
    options = {str(k): str(v) for k, v in dict(raw.pop("options", {}) or {}).items()}
    env = {str(k): str(v) for k, v in dict(raw.pop("env", {}) or {}).items()}
    for key in [k for k in raw if "." in k]:
        prefix, _, sub = key.partition(".")
        if prefix == "option":
            options[sub] = str(raw.pop(key))
        elif prefix == "env":
            env[sub] = str(raw.pop(key))
    player = raw.pop("player", None)
    command = raw.pop("cmd", raw.pop("command", None))
    protocol = raw.pop("proto", raw.pop("protocol", None))
    cwd = raw.pop("dir", raw.pop("cwd", None))
    name = raw.pop("name", None)
    limits: dict[str, Any] = {}
    if "depth" in raw:
        limits["depth"] = _int(raw.pop("depth"), f"{where}: depth")
    if "nodes" in raw:
        limits["nodes"] = _int(raw.pop("nodes"), f"{where}: nodes")
    if "movetime" in raw:
        limits["movetime"] = _float(raw.pop("movetime"), f"{where}: movetime")
    if protocol is not None and protocol not in PROTOCOLS:
        raise ConfigError(f"{where}: unknown protocol {protocol!r} (expected uci or gomocup)")
    if cwd is not None and not Path(cwd).is_dir():
        raise ConfigError(f"{where}: working directory {cwd!r} does not exist")
    if command is not None:
        if player is not None:
            raise ConfigError(f"{where}: give either cmd or player, not both")
        argv = shlex.split(command) if isinstance(command, str) else [str(c) for c in command]
        if not argv:
            raise ConfigError(f"{where}: empty engine command")
        exe = argv[0]
        base = Path(cwd) if cwd and not os.path.isabs(exe) and os.sep in exe else Path(".")
        found = shutil.which(exe) if os.sep not in exe else (
            str(base / exe) if os.access(base / exe, os.X_OK) and (base / exe).is_file() else None)
        if found is None:
            raise ConfigError(f"{where}: engine command {exe!r} not found or not executable")
        if raw:
            raise ConfigError(f"{where}: unknown engine key(s) {', '.join(sorted(raw))}")
        return EngineSpec(name=str(name or Path(exe).name), command=tuple(argv), protocol=protocol,
                          options=tuple(sorted(options.items())), cwd=cwd,
                          env=tuple(sorted(env.items())), **limits)
    if player is None:
        raise ConfigError(f"{where}: needs a built-in player name or cmd=...")
    if player not in BUILTIN_PLAYERS:
        raise ConfigError(f"{where}: unknown player {player!r} (expected one of {', '.join(BUILTIN_PLAYERS)})")
    settings: dict[str, str] = {}
    for key in list(raw):
        if key not in BUILTIN_SETTINGS:
            raise ConfigError(f"{where}: unknown setting {key!r} for built-in player "
                              f"(expected {', '.join(sorted(set(LIMIT_KEYS) | set(BUILTIN_SETTINGS)))})")
        settings[key] = str(raw.pop(key))
        try:
            option_by_key(key).parse(settings[key])
        except ValueError as exc:
            raise ConfigError(f"{where}: {key}: {exc}") from None
    if "weights" in settings and not Path(find_weights(settings["weights"])).is_file():
        raise ConfigError(f"{where}: weights file {settings['weights']!r} not found")
    return EngineSpec(name=str(name or player), player=player, protocol=protocol,
                      settings=tuple(sorted(settings.items())), options=tuple(sorted(options.items())),
                      cwd=cwd, env=tuple(sorted(env.items())), **limits)


def parse_engine(text: str) -> EngineSpec:
    """`random`, `alphabeta:depth=3,hash=16` or `name=sf,cmd=stockfish,proto=uci,option.Hash=16`.

    A `cmd` containing spaces or commas is split with shell rules (`cmd='python fake.py'`)."""
    text = text.strip()
    where = f"engine {text!r}"
    if "=" not in text.split(":")[0] and "," not in text.split(":")[0]:
        player, _, rest = text.partition(":")
        raw: dict[str, Any] = {"player": player}
        raw.update(parse_kv(rest, where) if rest else {})
        return _engine_from_mapping(raw, where)
    try:  # split on commas outside quotes; spaces stay inside values (cmd='python fake.py')
        lexer = shlex.shlex(text, posix=True)
        lexer.whitespace, lexer.whitespace_split = ",", True
        parts = [p.strip() for p in lexer if p.strip()]
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    raw = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep:
            raise ConfigError(f"{where}: expected key=value, got {part!r}")
        raw[key] = value
    return _engine_from_mapping(raw, where)


def load_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read config {path!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"malformed TOML in {path!r}: {exc}") from None


def _unique_names(engines: list[EngineSpec]) -> tuple[EngineSpec, ...]:
    seen: dict[str, int] = {}
    out = []
    for spec in engines:
        count = seen.get(spec.name, 0) + 1
        seen[spec.name] = count
        out.append(spec if count == 1 else replace(spec, name=f"{spec.name}-{count}"))
    return tuple(out)


def _adjudication(raw: Mapping[str, Any]) -> Adjudication:
    adj = Adjudication()
    if "maxmoves" in raw:
        value = raw["maxmoves"]
        adj = replace(adj, max_moves=None if value in (0, "0", None) else _int(value, "maxmoves"))
    draw = raw.get("draw")
    if draw:
        d = parse_kv(draw, "draw") if isinstance(draw, str) else dict(draw)
        adj = replace(adj, draw_movenumber=_int(d.get("movenumber", 40), "draw movenumber", 0),
                      draw_movecount=_int(d.get("movecount", 8), "draw movecount"),
                      draw_score=_int(d.get("score", 10), "draw score", 0))
    resign = raw.get("resign")
    if resign:
        r = parse_kv(resign, "resign") if isinstance(resign, str) else dict(resign)
        adj = replace(adj, resign_movecount=_int(r.get("movecount", 3), "resign movecount"),
                      resign_score=_int(r.get("score", 1000), "resign score"))
    return adj


def _sprt(raw: Any) -> SprtSpec | None:
    if not raw:
        return None
    values = parse_kv(raw, "sprt") if isinstance(raw, str) else dict(raw)
    unknown = set(values) - {"elo0", "elo1", "alpha", "beta"}
    if unknown:
        raise ConfigError(f"sprt: unknown key(s) {', '.join(sorted(unknown))}")
    try:
        spec = SprtSpec(**{k: float(v) for k, v in values.items()})
    except ValueError:
        raise ConfigError(f"sprt: numbers expected, got {raw!r}") from None
    if not (0 < spec.alpha < 0.5 and 0 < spec.beta < 0.5) or spec.elo1 <= spec.elo0:
        raise ConfigError("sprt: need 0 < alpha, beta < 0.5 and elo1 > elo0")
    return spec


def build_config(file_settings: Mapping[str, Any], flags: Mapping[str, Any]) -> TournamentConfig:
    """Merge TOML settings and flags (flags win; None/empty flags are 'not given') and validate."""
    from engine.games.gomoku import MAX_SIZE, MIN_SIZE, RULES

    aliases = {"board": "boards", "engines": "engine", "max_moves": "maxmoves"}
    merged: dict[str, Any] = dict(file_settings)
    merged.update(dict(merged.pop("limits", {}) or {}))
    merged.update(dict(merged.pop("adjudication", {}) or {}))
    merged = {aliases.get(k, k): v for k, v in merged.items()}
    for key, value in flags.items():
        if value is not None and value != () and value != []:
            merged[aliases.get(key, key)] = value
    known = {"game", "board", "boards", "rule", "games", "format", "openings", "opening_plies",
             "movetime", "tc", "match_time", "nodes", "depth", "margin", "timeout", "maxmoves",
             "max_moves", "draw", "resign", "sprt", "seed", "concurrency", "db", "pgn_out",
             "engine", "engines", "max_memory", "suspend", "swap2"}
    unknown = set(merged) - known
    if unknown:
        raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    game = merged.get("game", "chess")
    if game not in game_names():
        raise ConfigError(f"unknown game {game!r} (expected {' or '.join(game_names())})")
    boards: tuple[int, ...] = ()
    gomocup = game_class(game).protocol == "gomocup"    # the Gomocup protocol's limits apply
    if game_class(game).sized:
        raw_boards = merged.get("boards", 15)
        if isinstance(raw_boards, str):
            raw_boards = [b for b in raw_boards.replace(",", " ").split()]
        if not isinstance(raw_boards, (list, tuple)):
            raw_boards = [raw_boards]
        boards = tuple(_int(b, "board size") for b in raw_boards)
        for size in boards:
            if not MIN_SIZE <= size <= MAX_SIZE:
                raise ConfigError(f"board size {size} outside {MIN_SIZE}..{MAX_SIZE}")
        if len(set(boards)) != len(boards) or not boards:
            raise ConfigError("board sizes must be distinct and at least one")
    rule = merged.get("rule", "freestyle")
    if rule not in RULES:
        raise ConfigError(f"unknown rule {rule!r} (expected one of {', '.join(RULES)})")
    fmt = merged.get("format", "roundrobin")
    if fmt not in ("roundrobin", "gauntlet"):
        raise ConfigError(f"unknown format {fmt!r} (expected roundrobin or gauntlet)")

    raw_engines = merged.get("engine", [])
    engines = []
    for i, raw in enumerate(raw_engines):
        if isinstance(raw, str):
            engines.append(parse_engine(raw))
        elif isinstance(raw, Mapping):
            engines.append(_engine_from_mapping(raw, f"engine #{i + 1}"))
        else:
            raise ConfigError(f"engine #{i + 1}: expected a string or a table")
    if len(engines) < 2:
        raise ConfigError("a tournament needs at least two engines")
    for spec in engines:
        if game_class(game).protocol is None and not spec.builtin:
            raise ConfigError(f"engine {spec.name!r}: {game} has no engine protocol; only built-in players play it")
        if spec.protocol_for(game) != game_class(game).protocol:
            raise ConfigError(f"engine {spec.name!r}: protocol {spec.protocol} cannot play {game}")

    try:
        tc = parse_tc(str(merged["tc"])) if merged.get("tc") else None
    except TimeControlError as exc:
        raise ConfigError(str(exc)) from None
    match_time = _float(merged["match_time"], "match_time") if merged.get("match_time") else None
    if tc is not None and gomocup:
        if tc.increment or tc.moves:
            raise ConfigError(f"{game} time control: Gomocup has no increment or move count; "
                              "use --tc SECONDS (timeout_match) and --movetime (timeout_turn)")
        match_time, tc = tc.base, None
    limits = MoveLimits(
        movetime=_float(merged["movetime"], "movetime") if merged.get("movetime") else None,
        tc=tc, match_time=match_time,
        nodes=_int(merged["nodes"], "nodes") if merged.get("nodes") else None,
        depth=_int(merged["depth"], "depth") if merged.get("depth") else None,
        margin=float(merged.get("margin", 1.0)),
        timeout=_float(merged.get("timeout", 60.0), "timeout"),
        max_memory_mb=_int(merged["max_memory"], "max_memory") if merged.get("max_memory") else None,
        suspend=bool(merged.get("suspend", False)))
    if game_class(game).protocol != "gomocup" and (limits.max_memory_mb is not None or limits.suspend):
        raise ConfigError(f"max_memory and suspend are the Gomocup judge's settings: {game} speaks "
                          f"{game_class(game).protocol}")
    if limits.margin < 0:
        raise ConfigError("margin must not be negative")
    if not limits.timed and limits.nodes is None and limits.depth is None:
        # no tournament-wide limit: a default clock, so no engine is ever sent a bare `go`
        limits = replace(limits, movetime=0.1 if gomocup else None, tc=None if gomocup else parse_tc("10+0.1"))

    if gomocup:  # Gomocup has no depth or node limits: built-ins take --nodes at startup
        if limits.depth is not None or any(e.depth for e in engines):
            raise ConfigError(f"depth limits need UCI; for {game} use --movetime, --tc or nodes")
        bad = [e.name for e in engines if not e.builtin and (e.nodes or limits.nodes)]
        if bad:
            raise ConfigError(f"engine {bad[0]!r}: Gomocup cannot pass a node limit to an external brain")
        if limits.nodes is not None:
            engines = [e if e.nodes else replace(e, nodes=limits.nodes) for e in engines]
    openings = merged.get("openings")
    if (openings is not None and not Path(openings).is_file()
            and openings not in game_profile(game).openings().named_suites):
        raise ConfigError(f"openings file {openings!r} not found")
    plies = merged.get("opening_plies")
    swap2 = bool(merged.get("swap2", False))
    if swap2 and not gomocup:
        raise ConfigError(f"swap2 is a gomoku opening: {game} has none")
    if swap2 and (openings is not None or plies is not None):
        raise ConfigError("swap2: the engines place the opening; leave out openings and opening_plies")
    return TournamentConfig(
        game=game, engines=_unique_names(engines), boards=boards, rule=rule,
        games=_int(merged.get("games", 2), "games"), format=fmt, openings=openings,
        opening_plies=_int(plies, "opening_plies", 0) if plies is not None else None,
        limits=limits, adjudication=_adjudication(merged), sprt=_sprt(merged.get("sprt")),
        seed=int(merged.get("seed", 1)),
        concurrency=_int(merged.get("concurrency", os.cpu_count() or 1), "concurrency"),
        db=str(merged.get("db", "arena.sqlite")), pgn_out=merged.get("pgn_out"), swap2=swap2)
