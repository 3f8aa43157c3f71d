"""The commands that talk to engine processes: the protocol servers (`engine uci`, `engine
gomocup`, and `pbrain-plyzero`, the Gomocup brain's launcher), the teacher (which drives an
external UCI engine or Gomocup brain) and the web board (`engine play`)."""
from __future__ import annotations

import sys
import click

from engine.cli.commands import (board_option, board_specs, game_option, generate_shards, main, player_options,
                                 rule_option)
from engine.games import game_class, game_profile
from engine.players import PlayerOptions

__all__ = ["main", "pbrain_main"]


@main.command()
@player_options(default_player="auto")
def uci(options: PlayerOptions) -> None:
    """Speak UCI (chess) on stdin/stdout."""
    from protocols.uci import serve
    sys.exit(serve(options, sys.stdin, sys.stdout))


@main.command()
@player_options(default_player="auto")
def gomocup(options: PlayerOptions) -> None:
    """Speak the Gomocup (piskvork) protocol on stdin/stdout."""
    from protocols.gomocup import serve_stdio
    sys.exit(serve_stdio(options))   # stderr silenced, one malloc arena (see protocols/gomocup.py)


def _info_pairs(pairs: tuple[str, ...], hint: str) -> tuple[tuple[str, str], ...]:
    """--gomocup-info / --uci-option KEY=VALUE (repeatable) -> (key, value) pairs."""
    parsed = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip() or " " in key.strip():
            raise click.BadParameter(f"{pair!r}: expected KEY=VALUE, e.g. max_node=30000",
                                     param_hint=hint)
        parsed.append((key.strip(), value.strip()))
    return tuple(parsed)


@main.command()
@game_option
@board_option
@rule_option
@click.option("--games", type=click.IntRange(min=1), required=True, help="Games in all, spread over the boards.")
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Teacher depth per move.")
@click.option("--nodes", type=click.IntRange(min=1), default=None,
              help="Teacher nodes per move (UCI `go nodes`, Gomocup INFO max_node).")
@click.option("--movetime", type=click.FloatRange(min=0.001), default=None, help="Teacher seconds per move.")
@click.option("--multipv", type=click.IntRange(min=1), default=1, show_default=True,
              help="Lines per move; above 1 the policy target is a softmax over their values.")
@click.option("--tau", type=click.FloatRange(min=1e-6), default=0.1, show_default=True,
              help="Temperature of that softmax (value units: win - loss in [-1, 1]).")
@click.option("--opening-plies", type=click.IntRange(min=0), default=4, show_default=True,
              help="Random plies at the start of each game (after the --openings position).")
@click.option("--openings", type=click.Path(dir_okay=False), default=None,
              help="Chess: EPD/FEN or PGN file of start positions [the built-in suite]; 'none' for startpos. "
                   "Gomoku: a .psq file of games (e.g. `arena report --pgn`); each teacher game starts "
                   "partway through one of them [random stones near the centre].")
@click.option("--epsilon", type=click.FloatRange(0.0, 1.0), default=0.05, show_default=True,
              help="Chance of a random move per ply (still labelled with the teacher's choice).")
@click.option("--max-plies", type=click.IntRange(min=1), default=None, help="Draw after this many plies.")
@click.option("--uci", default=None, help="Chess: an external UCI engine command, e.g. /usr/games/stockfish.")
@click.option("--uci-option", "uci_options", multiple=True, metavar="NAME=VALUE",
              help="A UCI option for that engine (repeatable), e.g. Hash=16.")
@click.option("--gomocup", default=None,
              help="Gomoku: a Gomocup brain command as the teacher, e.g. /path/to/pbrain-rapfi.")
@click.option("--gomocup-info", multiple=True, metavar="KEY=VALUE",
              help="An INFO setting for that brain (repeatable), e.g. max_memory=67108864.")
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Directory for the shards.")
@click.option("--games-per-shard", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Teacher processes at once (each its own engine).")
def teacher(game: str, board: str | None, rule: str, games: int, depth: int | None, nodes: int | None,
            movetime: float | None, multipv: int, tau: float, opening_plies: int, openings: str | None,
            epsilon: float, max_plies: int | None, uci: str | None, uci_options: tuple[str, ...],
            gomocup: str | None, gomocup_info: tuple[str, ...], out: str, games_per_shard: int, seed: int,
            workers: int) -> None:
    """Teacher games (alpha-beta, a UCI engine for chess, a Gomocup brain for gomoku) into
    npz sample shards; rerunning the same command finishes the missing shards.

    \f
    In serve.py, with the other commands that start engine processes (--uci / --gomocup)."""
    import shlex

    from engine.train.teacher import TeacherConfig

    specs = board_specs(game, board, rule)
    protocol = game_class(game).protocol
    if uci is not None and protocol != "uci":
        raise click.BadParameter(f"an external UCI teacher cannot play {game} (its engines speak {protocol})",
                                 param_hint="--uci")
    if gomocup is not None and protocol != "gomocup":
        raise click.BadParameter(f"a Gomocup teacher cannot play {game} (its engines speak {protocol})",
                                 param_hint="--gomocup")
    if (uci_options and uci is None) or (gomocup_info and gomocup is None):
        raise click.UsageError("--uci-option needs --uci and --gomocup-info needs --gomocup")
    if depth is None and movetime is None and nodes is None:
        depth = 2
    from engine.games.openings import OpeningError

    try:   # the game's own openings: chess FENs (EPD, PGN; the built-in suite), gomoku .psq games
        starts = {} if openings == "none" else game_profile(game).openings().teacher_starts(openings)
    except OpeningError as exc:
        raise click.BadParameter(str(exc), param_hint="--openings") from None
    try:
        settings = TeacherConfig(depth=depth, movetime=movetime, nodes=nodes, multipv=multipv, soft_tau=tau,
                                 opening_plies=opening_plies, epsilon=epsilon, max_plies=max_plies,
                                 uci=tuple(shlex.split(uci)) if uci else None,
                                 uci_options=_info_pairs(uci_options, "--uci-option"),
                                 gomocup=tuple(shlex.split(gomocup)) if gomocup else None,
                                 gomocup_info=_info_pairs(gomocup_info, "--gomocup-info"), **starts)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    make_teacher = None
    if uci is not None:
        from protocols.uci_teacher import uci_teacher
        make_teacher = uci_teacher
    elif gomocup is not None:
        from protocols.gomocup_teacher import gomocup_teacher
        make_teacher = gomocup_teacher
    generate_shards("teacher", specs, games, games_per_shard, seed, out, settings, None, workers, make_teacher)


@main.command()
@click.option("--game", type=click.Choice(["chess", "gomoku"]), default="gomoku", show_default=True)
@click.option("--board", default="15", show_default=True, help="Gomoku board: 15, or 12x10.")
@rule_option
@click.option("--movetime", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="Engine seconds per move (0: the player's own budget, e.g. --nodes).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on (this machine only by default); any other needs the board's key.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="0: any free port.")
@click.option("--no-browser", is_flag=True, help="Print the address instead of opening the default browser.")
@click.option("--external", "externals", multiple=True, metavar="[NAME=]COMMAND",
              help="An external engine the page may pick by NAME (repeatable; UCI for chess, a Gomocup brain "
                   "for gomoku), e.g. sf=/usr/games/stockfish. Split like a shell would, run without one; "
                   "NAME defaults to the program's file name. The page can run no other program.")
@click.option("--key", default=None,
              help="The key every request must show (16+ characters of A-Z a-z 0-9 _ -) [off loopback: a "
                   "fresh random one, printed in the address].")
@player_options(default_player="auto")
def play(game: str, board: str, rule: str, movetime: float, host: str, port: int, no_browser: bool,
         externals: tuple[str, ...], key: str | None, options: PlayerOptions) -> None:
    """Play or analyse in the browser against any player, and watch its search.

    \f
    In serve.py, with the other commands that start engine processes: the page may pick an
    external engine given with --external (protocols/external_searcher.py)."""
    from dataclasses import asdict, fields

    from engine.web import GameSettings, Opponent, RequestError, allow_list, serve
    from engine.web.guard import check_key
    from engine.web.opponents import PAGE_OPTIONS
    from protocols.external_searcher import external_searcher

    width, _, height = board.lower().partition("x")
    if not (width.isdigit() and (height or width).isdigit()):
        raise click.BadParameter(f"{board!r}: expected a size like 15 or 12x10", param_hint="--board")
    try:
        allowed = allow_list(externals)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--external") from None
    if key is not None:
        try:
            check_key(key)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--key") from None
    defaults = {f.name: f.default for f in fields(PlayerOptions)}
    chosen = tuple((k, v) for k, v in asdict(options).items() if k in PAGE_OPTIONS and (k == "player" or v != defaults[k]))
    settings = GameSettings(game=game, width=int(width), height=int(height or width), rule=rule, movetime=movetime,
                            opponent=Opponent(options=chosen))
    try:
        serve(settings, host=host, port=port, open_browser=not no_browser, external=external_searcher,
              allowed=allowed, key=key, echo=click.echo)
    except RequestError as exc:          # bad board size, unknown network...
        raise click.ClickException(str(exc)) from None
    except OSError as exc:               # port in use, address not available
        raise click.ClickException(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@player_options(default_player="auto")
def pbrain_main(options: PlayerOptions) -> None:
    """PlyZero Gomocup brain (piskvork protocol on stdin/stdout)."""
    from protocols.gomocup import serve_stdio
    sys.exit(serve_stdio(options))
