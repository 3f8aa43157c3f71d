"""`engine loop`: the AlphaZero loop (engine.train.loop) gated by the arena (arena.gate).

The library's loop never imports `arena`; this command, in the composition root, wires the
arena's referee in (imported when the command runs, so `engine uci` pays nothing for it).
"""
from __future__ import annotations

import click

from engine.cli.commands import reply_weight_option, selfplay_knobs
from engine.games.gomoku import RULES as GOMOKU_RULES

__all__ = ["loop"]


@click.command()
@click.option("--game", type=click.Choice(["gomoku", "chess"]), default="gomoku", show_default=True)
@click.option("--board", default=None, help="Gomoku boards, comma-separated: 9,15,20 [9].")
@click.option("--rule", type=click.Choice(list(GOMOKU_RULES)), default="freestyle", show_default=True)
@click.option("--run", "run_dir", type=click.Path(file_okay=False), required=True,
              help="Run directory (loop.json, nets/, selfplay/, train/, arena.sqlite, ratings.png); "
                   "rerun the same command to resume.")
@click.option("--generations", type=click.IntRange(min=1), default=5, show_default=True,
              help="Generations in all (a resumed run may raise it).")
@click.option("--net", default="res4x32", show_default=True, help="Architecture of a fresh start.")
@click.option("--init", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Start from this network (e.g. a teacher-distilled one) instead of random weights.")
@click.option("--games", type=click.IntRange(min=1), default=32, show_default=True,
              help="Self-play games per generation.")
@click.option("--lockstep", type=click.IntRange(min=1), default=8, show_default=True,
              help="Games per self-play unit (played in lockstep; one shard each).")
@click.option("--nodes", type=click.IntRange(min=1), default=64, show_default=True,
              help="Playouts of a full self-play search.")
@click.option("--temp-plies", type=click.IntRange(min=0), default=6, show_default=True,
              help="Opening plies with moves sampled from the visits.")
@selfplay_knobs(resign=-0.9, resign_playthrough=0.2, full_share=0.5, fast_nodes=16)
@click.option("--steps", type=click.IntRange(min=1), default=200, show_default=True,
              help="Training updates per generation.")
@click.option("--batch-size", type=click.IntRange(min=1), default=128, show_default=True)
@click.option("--lr", type=click.FloatRange(min=0.0, min_open=True), default=1e-3, show_default=True)
@click.option("--window", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Replay window: train on the newest samples, at least this many.")
@click.option("--gate-games", type=click.IntRange(min=0), default=20, show_default=True,
              help="Candidate vs best games per board (colours swapped).")
@click.option("--gate-nodes", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.55, show_default=True,
              help="Promote the candidate at this score against the best or more.")
@click.option("--always-promote", is_flag=True, help="Promote every candidate (AlphaZero style).")
@click.option("--alphabeta-games", type=click.IntRange(min=0), default=8, show_default=True)
@click.option("--alphabeta-depth", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Worker processes [cores].")
@click.option("--ray", default=None, metavar="ADDRESS",
              help="Run the units on Ray: auto | host:port | local (pip install 'plyzero[ray]').")
@click.option("--inference/--no-inference", default=False, show_default=True,
              help="Self-play workers share one inference process (the GPU's owner).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="cpu", show_default=True,
              help="Where self-play inference and training run (cuda: bf16 autocast).")
@click.option("--data", multiple=True, type=click.Path(exists=True),
              help="Shards (file or folder, repeatable) trained on in every generation besides the "
                   "self-play window: teacher games, earlier self-play.")
@click.option("--holdout", multiple=True, type=click.Path(exists=True),
              help="Shards (file or folder, repeatable) never trained on: every generation's network is "
                   "measured on each (policy top-1, value MSE, sign; generations.md, training.png).")
@click.option("--int8/--no-int8", default=True, show_default=True,
              help="On the CPU, self-play and the gate search with each network's int8 export, as the "
                   "shipped players do.")
@reply_weight_option
@click.option("--train-threads", type=click.IntRange(min=1), default=1, show_default=True,
              help="Torch threads while training (the phase runs alone: up to the cores).")
@click.option("--seed", type=int, default=0, show_default=True)
def loop(game: str, board: str | None, rule: str, run_dir: str, generations: int, net: str, init: str | None,
         games: int, lockstep: int, nodes: int, fast_nodes: int, full_share: float, temp_plies: int,
         resign: float, resign_playthrough: float, forced_playouts: float, steps: int, batch_size: int, lr: float,
         window: int,
         gate_games: int, gate_nodes: int, threshold: float, always_promote: bool, alphabeta_games: int,
         alphabeta_depth: int, workers: int | None, ray: str | None, inference: bool, device: str,
         data: tuple[str, ...], holdout: tuple[str, ...], int8: bool, reply_weight: float, train_threads: int,
         seed: int) -> None:
    """Self-play, train, gate and promote, generation after generation (resumable)."""
    from pathlib import Path

    from arena.gate import ArenaArbiter
    from engine.cli import board_specs
    from engine.games import game_class
    from engine.nn.spec import parse_net
    from engine.train.loop import LoopConfig, generation_table, run_loop
    from engine.train.pool import open_pool
    from engine.train.selfplay import SelfPlayConfig
    from engine.train.trainer import TrainConfig

    if board is None and game_class(game).sized:
        board = "9"
    specs = board_specs(game, board, rule)
    try:
        parse_net(net, game)
        config = LoopConfig(
            specs=tuple(specs), net=net, init=init, generations=generations, games=games, lockstep=lockstep,
            selfplay=SelfPlayConfig(playouts=nodes, temperature_plies=temp_plies, full_search_share=full_share,
                                    fast_playouts=fast_nodes, resign_value=resign,
                                    resign_playthrough=resign_playthrough, forced_playouts=forced_playouts,
                                    device=device),
            # each generation fine-tunes the best network: warm up, then a cosine decay to the floor
            steps=steps, train=TrainConfig(batch_size=batch_size, lr=lr, warmup_steps=min(100, steps // 5),
                                           decay_steps=steps - min(100, steps // 5),
                                           checkpoint_every=max(1, steps // 2), log_every=max(1, steps // 4),
                                           seed=seed, device=device, threads=train_threads,
                                           reply_weight=reply_weight),
            window=window, gate_games=gate_games, gate_nodes=gate_nodes, threshold=threshold,
            always_promote=always_promote, alphabeta_games=alphabeta_games, alphabeta_depth=alphabeta_depth,
            inference=inference, seed=seed, data=tuple(data), holdout=tuple(holdout), int8=int8)
        resuming = (Path(run_dir) / "loop.json").is_file()
        with open_pool(workers, ray) as pool:
            click.echo(f"loop in {run_dir}: {pool.workers} {pool.kind} workers"
                       + (", resuming" if resuming else ""))
            state = run_loop(run_dir, config, ArenaArbiter(run_dir, echo=click.echo), pool,
                             generations=generations, echo=click.echo)
    except ValueError as exc:  # LoopError, CheckpointError, RunError, bad Ray address: one line
        raise click.ClickException(str(exc)) from None
    click.echo(generation_table(state), nl=False)
    click.echo(f"done: {len(state.history)} generations, best {state.best}")
