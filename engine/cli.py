"""`engine …`: a thin click layer over library functions.

The `uci` and `gomocup` sub-commands are attached in `protocols/cli.py` (the console
script's target) so that `engine/` never imports `protocols/`.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import click

from engine.factory import PLAYERS, PlayerOptions

__all__ = ["main", "player_options"]


def player_options(default_player: str = "alphabeta") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator adding the player flags once for every command; passes `options: PlayerOptions`."""
    defaults = PlayerOptions()

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @click.option("--player", type=click.Choice(sorted(PLAYERS) + ["auto"]), default=default_player,
                      show_default=True,
                      help="Which searcher plays (auto: mcts with the shipped network, else alphabeta).")
        @click.option("--weights", type=click.Path(dir_okay=False), default=None,
                      help="Network checkpoint (mcts); default: the shipped one for the game.")
        @click.option("--nodes", type=click.IntRange(min=1), default=None,
                      help="Per-move node budget when no clock is given.")
        @click.option("--batch", type=click.IntRange(min=1), default=defaults.batch, show_default=True,
                      help="MCTS leaves per network call.")
        @click.option("--cpuct", type=click.FloatRange(min=0.0), default=defaults.cpuct, show_default=True)
        @click.option("--threads", type=click.IntRange(min=1), default=defaults.threads, show_default=True,
                      help="Network inference threads.")
        @click.option("--hash", "hash_mb", type=click.IntRange(min=1), default=defaults.hash_mb,
                      show_default=True, help="Alpha-beta transposition table, MB.")
        @click.option("--seed", type=int, default=None, help="Random seed (random/uct/mcts noise).")
        @click.option("--device", type=click.Choice(["auto", "cpu", "cuda", "mps"]), default="auto",
                      show_default=True)
        @click.option("--backend", type=click.Choice(["auto", "torch", "onnx"]), default="auto",
                      show_default=True, help="CPU inference runtime for mcts.")
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            names = PlayerOptions.field_names()
            opts = PlayerOptions(**{k: kwargs.pop(k) for k in list(kwargs) if k in names})
            return fn(*args, options=opts, **kwargs)
        return wrapper
    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """PlyZero engine: play (uci, gomocup), measure (bench)."""


@main.command()
@click.option("--game", "games", type=click.Choice(["chess", "gomoku"]), multiple=True,
              help="Game(s) to bench (default: both).")
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Fixed depth per position.")
@click.option("--movetime", type=click.FloatRange(min=0.001), default=None, help="Seconds per position.")
@player_options()
def bench(games: tuple[str, ...], depth: int | None, movetime: float | None, options: PlayerOptions) -> None:
    """Search a fixed set of positions and print nodes, time and nodes/s (like Stockfish's bench)."""
    from engine.bench import run_bench
    from engine.types import Limits

    limits = None
    if depth is not None or movetime is not None or options.nodes is not None:
        limits = Limits(depth=depth, time=movetime, nodes=options.nodes)
    try:
        run_bench(list(games) or ["chess", "gomoku"], options, limits, echo=click.echo)
    except ValueError as exc:  # bad weights file, unknown player, bad position: one line, no traceback
        raise click.ClickException(str(exc)) from None


@main.command("init-net")
@click.argument("path", type=click.Path(dir_okay=False, writable=True))
@click.option("--game", type=click.Choice(["chess", "gomoku"]), required=True)
@click.option("--net", default="res6x64", show_default=True, help="Architecture, res{blocks}x{channels}.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--onnx/--no-onnx", default=True, show_default=True,
              help="Also write the sidecar .onnx the torch-free CPU path loads.")
def init_net(path: str, game: str, net: str, seed: int, onnx: bool) -> None:
    """Write a randomly initialised network (benchmarks, wiring tests, a training start)."""
    from engine.nn.checkpoint import create_random_checkpoint

    try:
        meta = create_random_checkpoint(path, game, net, seed=seed)
        click.echo(f"wrote {path} ({game}, {net}, sha256 {str(meta.get('sha256', ''))[:12]})")
        if onnx:
            from engine.nn.onnx_backend import export_sidecar
            click.echo(f"wrote {export_sidecar(path)}")
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
