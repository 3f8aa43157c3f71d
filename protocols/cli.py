"""Console-script targets: `engine` (the engine CLI plus the commands that talk to engine
processes: the protocol servers, and the teacher when it drives an external UCI engine) and
`pbrain-plyzero` (the Gomocup brain's launcher).  The only click code in protocols/."""
from __future__ import annotations

import sys

import click

from engine.cli import board_option, board_specs, game_option, generate_shards, main, player_options, rule_option
from engine.players import PlayerOptions

__all__ = ["main", "pbrain_main"]


@main.command()
@player_options(default_player="alphabeta")
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


@main.command()
@game_option
@board_option
@rule_option
@click.option("--games", type=click.IntRange(min=1), required=True, help="Games in all, spread over the boards.")
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Teacher depth per move.")
@click.option("--movetime", type=click.FloatRange(min=0.001), default=None, help="Teacher seconds per move.")
@click.option("--multipv", type=click.IntRange(min=1), default=1, show_default=True,
              help="Lines per move; above 1 the policy target is a softmax over their values.")
@click.option("--tau", type=click.FloatRange(min=1e-6), default=0.1, show_default=True,
              help="Temperature of that softmax (value units).")
@click.option("--opening-plies", type=click.IntRange(min=0), default=4, show_default=True)
@click.option("--epsilon", type=click.FloatRange(0.0, 1.0), default=0.05, show_default=True,
              help="Chance of a random move per ply.")
@click.option("--max-plies", type=click.IntRange(min=1), default=None, help="Draw after this many plies.")
@click.option("--uci", default=None, help="Chess: an external UCI engine command, e.g. /usr/games/stockfish.")
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Directory for the shards.")
@click.option("--games-per-shard", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True)
def teacher(game: str, board: str | None, rule: str, games: int, depth: int | None, movetime: float | None,
            multipv: int, tau: float, opening_plies: int, epsilon: float, max_plies: int | None,
            uci: str | None, out: str, games_per_shard: int, seed: int, workers: int) -> None:
    """Teacher games (alpha-beta, or a UCI engine for chess) into npz sample shards.

    Lives here rather than in engine/cli.py because --uci starts an engine process."""
    import shlex

    from engine.train.teacher import TeacherConfig

    specs = board_specs(game, board, rule)
    if uci is not None and game != "chess":
        raise click.BadParameter("an external UCI teacher plays chess only", param_hint="--uci")
    if depth is None and movetime is None:
        depth = 2
    settings = TeacherConfig(depth=depth, movetime=movetime, multipv=multipv, soft_tau=tau,
                             opening_plies=opening_plies, epsilon=epsilon, max_plies=max_plies,
                             uci=tuple(shlex.split(uci)) if uci else None)
    make_teacher = None
    if uci is not None:
        from protocols.uci_teacher import uci_teacher
        make_teacher = uci_teacher
    generate_shards("teacher", specs, games, games_per_shard, seed, out, settings, None, workers, make_teacher)


@main.command()
@click.option("--game", type=click.Choice(["chess", "gomoku"]), default="gomoku", show_default=True)
@click.option("--board", default="15", show_default=True, help="Gomoku board: 15, or 12x10.")
@rule_option
@click.option("--movetime", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="Engine seconds per move (0: the player's own budget, e.g. --nodes).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve on (this machine only by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="0: any free port.")
@click.option("--no-browser", is_flag=True, help="Print the address instead of opening the default browser.")
@player_options(default_player="auto")
def play(game: str, board: str, rule: str, movetime: float, host: str, port: int, no_browser: bool,
         options: PlayerOptions) -> None:
    """Play or analyse in the browser against any player, and watch its search.

    Lives here rather than in engine/cli.py because the page may pick an external engine,
    which this layer starts (protocols/external_searcher.py)."""
    from dataclasses import asdict, fields

    from engine.play import GameSettings, Opponent, RequestError, serve
    from engine.play.players import PAGE_OPTIONS
    from protocols.external_searcher import external_searcher

    width, _, height = board.lower().partition("x")
    if not (width.isdigit() and (height or width).isdigit()):
        raise click.BadParameter(f"{board!r}: expected a size like 15 or 12x10", param_hint="--board")
    defaults = {f.name: f.default for f in fields(PlayerOptions)}
    chosen = tuple((k, v) for k, v in asdict(options).items() if k in PAGE_OPTIONS and (k == "player" or v != defaults[k]))
    settings = GameSettings(game=game, width=int(width), height=int(height or width), rule=rule, movetime=movetime,
                            opponent=Opponent(options=chosen))
    try:
        serve(settings, host=host, port=port, open_browser=not no_browser, external=external_searcher,
              echo=click.echo)
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


if __name__ == "__main__":  # `python -m protocols.cli uci …`: how the arena launches built-in players
    main()
