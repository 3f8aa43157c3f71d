"""Console-script target for `engine`: the engine CLI plus the commands that talk to engine
processes (the protocol servers, and the teacher when it drives an external UCI engine)."""
from __future__ import annotations

import sys

import click

from engine.cli import board_option, board_specs, game_option, generate_shards, main, player_options, rule_option
from engine.factory import PlayerOptions

__all__ = ["main"]


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


PLUGIN_GROUP = "plyzero.engine_commands"


def _plugin(name: str) -> click.Command | None:
    """A sub-command another installed package declares for `engine` (arena's `loop`)."""
    from importlib.metadata import entry_points
    for point in entry_points(group=PLUGIN_GROUP, name=name):
        command = point.load()
        return command if isinstance(command, click.Command) else None
    return None


class _EngineGroup(click.Group):
    """engine/cli.py's group, plus plug-in commands looked up only when a name is not ours."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or _plugin(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        from importlib.metadata import entry_points
        return sorted(set(super().list_commands(ctx)) | {p.name for p in entry_points(group=PLUGIN_GROUP)})


main = _EngineGroup(name=main.name, commands=main.commands, callback=main.callback, params=main.params,
                    help=main.help, context_settings=main.context_settings)


if __name__ == "__main__":  # `python -m protocols.cli uci …`: how the arena launches built-in players
    main()
