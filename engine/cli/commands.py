"""`engine …`: the group, the options every command shares, and the engine's own commands
(bench, init-net, quantize, selfplay, import, train, validate), a thin click layer over library
functions.  serve.py and loop.py add the rest (engine/cli/__init__.py)."""
from __future__ import annotations

import functools
from typing import Any, Callable

import click

from engine.games.gomoku import RULES as GOMOKU_RULES
from engine.players import PLAYER_OPTIONS, OptionSpec, PlayerOptions

__all__ = ["main", "player_options", "board_specs", "generate_shards", "game_option", "board_option",
           "rule_option", "selfplay_knobs", "reply_weight_option"]


def _click_type(spec: OptionSpec) -> Any:
    if spec.kind == "choice":
        return click.Choice(list(spec.choices))
    if spec.kind == "path":
        return click.Path(dir_okay=False)
    if spec.kind == "float":
        return click.FloatRange(min=spec.minimum, max=spec.maximum)
    if spec.kind == "int":
        return click.IntRange(min=None if spec.minimum is None else int(spec.minimum),
                              max=None if spec.maximum is None else int(spec.maximum))
    return int


def player_options(default_player: str = "alphabeta") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator adding one flag per player option (engine/players/options.py) to a command;
    passes `options: PlayerOptions`."""
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            opts = PlayerOptions(**{spec.name: kwargs.pop(spec.name) for spec in PLAYER_OPTIONS})
            return fn(*args, options=opts, **kwargs)
        for spec in reversed(PLAYER_OPTIONS):
            default = default_player if spec.name == "player" else spec.default
            wrapper = click.option(f"--{spec.key.replace('_', '-')}", spec.name, type=_click_type(spec),
                                   default=default, show_default=default is not None,
                                   help=spec.help)(wrapper)
        return wrapper
    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """PlyZero engine: play (uci, gomocup), measure (bench), train (selfplay, teacher, train)."""


@main.command()
@click.option("--game", "games", type=click.Choice(["chess", "gomoku"]), multiple=True,
              help="Game(s) to bench (default: both).")
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Fixed depth per position.")
@click.option("--movetime", type=click.FloatRange(min=0.001), default=None, help="Seconds per position.")
@click.option("--scale", is_flag=True,
              help="Scale figures for --weights on --device: evaluator positions/s per batch size, "
                   "search_many nodes/s, self-play positions/s (engine/bench_scale.py).")
@click.option("--threats", is_flag=True, help="Bench the gomoku threat solver (VCF, defence) instead.")
@player_options()
def bench(games: tuple[str, ...], depth: int | None, movetime: float | None, scale: bool, threats: bool,
          options: PlayerOptions) -> None:
    """Search a fixed set of positions and print nodes, time and nodes/s (like Stockfish's bench)."""
    from engine.bench import run_bench, run_threat_bench
    from engine.types import Limits

    if threats:
        run_threat_bench(echo=click.echo)
        return
    if scale:
        from engine.bench_scale import run_scale_bench
        from engine.players import find_weights
        from engine.train.samples import GameSpec
        if options.weights is None:
            raise click.BadParameter("--scale measures a network: pass --weights", param_hint="--weights")
        game = (games or ("gomoku",))[0]
        try:
            run_scale_bench(find_weights(options.weights), GameSpec.named(game), device=options.device,
                            nodes=options.nodes or 64, leaves=options.batch, echo=click.echo)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        return
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


@main.command()
@click.argument("weights")
@click.option("--board", default="15,20", show_default=True,
              help="Gomoku: the square board sizes the calibration games are played on.")
@click.option("--rules", default="freestyle,renju,caro", show_default=True,
              help="Gomoku: the rules the calibration games are played under, on each board.")
@click.option("--games", type=click.IntRange(min=1), default=16, show_default=True,
              help="Calibration games, moves sampled from the network's own policy.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Where to write it [<weights>.int8.onnx, which players pick up by themselves].")
def quantize(weights: str, board: str, rules: str, games: int, seed: int, out: str | None) -> None:
    """Write a checkpoint's int8 ONNX export: about 2.4x the positions per second on CPU."""
    from engine.nn.quantize import quantize_sidecar
    from engine.players.networks import find_weights

    try:
        sizes = [int(part) for part in board.split(",")]
    except ValueError:
        raise click.BadParameter(f"{board!r}: expected sizes like 15,20", param_hint="--board") from None
    try:
        written = quantize_sidecar(find_weights(weights), boards=sizes, rules=rules.split(","), games=games,
                                   seed=seed, out=out)
        click.echo(f"wrote {written}")
    except (ValueError, OSError) as exc:   # CheckpointError is a ValueError
        raise click.ClickException(str(exc)) from None


# --- training -------------------------------------------------------------------------------

def board_specs(game: str, board: str | None, rule: str) -> list[Any]:
    """--board "9,15,12x10" -> one GameSpec per board (gomoku); chess takes no --board.
    Shared with serve.py (the teacher command), hence public."""
    from engine.games import GameSetupError, game_class
    from engine.train.samples import GameSpec

    if not game_class(game).sized:
        if board is not None:
            raise click.BadParameter(f"{game} has no board sizes", param_hint="--board")
        return [GameSpec.named(game)]
    specs = []
    for part in (board or "15").split(","):
        try:
            width, _, height = part.strip().lower().partition("x")
            spec = GameSpec.named(game, int(width), int(height or width), rule)
        except (ValueError, GameSetupError) as exc:
            detail = str(exc) if isinstance(exc, GameSetupError) else "expected sizes like 9,15 or 12x10"
            raise click.BadParameter(f"{part.strip()!r}: {detail}", param_hint="--board") from None
        specs.append(spec)
    return specs


def generate_shards(kind: str, specs: list[Any], games: int, per_shard: int, seed: int, out: str,
                    settings: Any, weights: str | None, workers: int, make_teacher: Any = None,
                    ray: str | None = None) -> None:
    """Plan and run the data jobs (reruns skip finished shards), one line each, then a summary.
    ray: run the jobs as Ray tasks on that cluster (engine.train.pool) instead of local processes."""
    from engine.train.jobs import plan_jobs, run_jobs
    from engine.train.pool import open_pool

    try:
        jobs = plan_jobs(kind, specs, games, per_shard, seed, out, settings, weights, make_teacher)
        with open_pool(workers, ray) as pool:
            results = run_jobs(jobs, workers, echo=click.echo, pool=pool, show_progress=True)
    except ValueError as exc:  # bad network file, bad settings: one line, no traceback
        raise click.ClickException(str(exc)) from None
    done = [r for r in results if not r.skipped]
    positions, seconds = sum(r.positions for r in done), sum(r.seconds for r in done)
    click.echo(f"{kind}: {len(done)} shards written, {len(results) - len(done)} skipped; "
               f"{positions} positions in {seconds:.1f} s of play")


def selfplay_knobs(*, resign: float | None, resign_playthrough: float, full_share: float,
                   fast_nodes: int | None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Self-play's resignation and playout-cap flags, with the given defaults (`engine selfplay`
    and `engine loop` share them)."""
    options = [
        click.option("--resign", type=click.FloatRange(-1.0, 0.0), default=resign, show_default=True,
                     help="Resign at this root value or below (none: never)."),
        click.option("--resign-playthrough", type=click.FloatRange(0.0, 1.0), default=resign_playthrough,
                     show_default=True, help="Share of games never resigned, to count false resignations."),
        click.option("--full-share", type=click.FloatRange(0.0, 1.0, min_open=True), default=full_share,
                     show_default=True,
                     help="Playout-cap randomisation: share of moves searched fully and kept as samples."),
        click.option("--fast-nodes", type=click.IntRange(min=1), default=fast_nodes, show_default=True,
                     help="Playouts of a fast (not kept) search [nodes / 4]."),
        click.option("--forced-playouts", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
                     help="KataGo's forced playouts and policy target pruning in the full searches: "
                          "k (2 in KataGo; 0 = off)."),
    ]

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            fn = option(fn)
        return fn
    return decorate


reply_weight_option = click.option(
    "--reply-weight", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
    help="Weight of the opponent-reply auxiliary loss (KataGo: 0.15; 0 = off). Gomoku: the network "
         "gets a reply head if it has none; play never computes it.")
game_option = click.option("--game", type=click.Choice(["chess", "gomoku"]), required=True)
board_option = click.option("--board", default=None,
                             help="Gomoku boards, comma-separated: 9,15 or 12x10 (default 15).")
rule_option = click.option("--rule", type=click.Choice(list(GOMOKU_RULES)), default="freestyle",
                            show_default=True)


@main.command()
@game_option
@board_option
@rule_option
@click.option("--weights", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Network checkpoint; default: uniform priors (a network-free start).")
@click.option("--games", type=click.IntRange(min=1), required=True, help="Games in all, spread over the boards.")
@click.option("--nodes", type=click.IntRange(min=1), default=200, show_default=True, help="Playouts per move.")
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Directory for the shards.")
@click.option("--lockstep", type=click.IntRange(min=1), default=16, show_default=True,
              help="Games played together (one network call per move across them); one shard each.")
@click.option("--leaves", type=click.IntRange(min=1), default=8, show_default=True,
              help="Leaves per tree per network call.")
@click.option("--temp-plies", type=click.IntRange(min=0), default=8, show_default=True,
              help="Plies with moves sampled from the visits (temperature 1).")
@click.option("--max-plies", type=click.IntRange(min=1), default=None, help="Draw after this many plies.")
@selfplay_knobs(resign=None, resign_playthrough=0.0, full_share=1.0, fast_nodes=None)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--ray", default=None, metavar="ADDRESS",
              help="Run the games as Ray tasks: auto | host:port | local (pip install 'plyzero[ray]').")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda", "mps"]), default="cpu", show_default=True)
@click.option("--backend", type=click.Choice(["auto", "torch", "onnx"]), default="auto", show_default=True)
def selfplay(game: str, board: str | None, rule: str, weights: str | None, games: int, nodes: int,
             out: str, lockstep: int, leaves: int, temp_plies: int, max_plies: int | None,
             resign: float | None, resign_playthrough: float, full_share: float, fast_nodes: int | None,
             forced_playouts: float, seed: int, workers: int, ray: str | None, threads: int, device: str,
             backend: str) -> None:
    """Self-play games with MCTS into npz sample shards (reruns skip finished shards)."""
    from engine.train.selfplay import SelfPlayConfig

    specs = board_specs(game, board, rule)
    settings = SelfPlayConfig(playouts=nodes, leaves_per_batch=leaves, temperature_plies=temp_plies,
                              max_plies=max_plies, resign_value=resign, device=device, backend=backend,
                              threads=threads, full_search_share=full_share, fast_playouts=fast_nodes,
                              resign_playthrough=resign_playthrough, forced_playouts=forced_playouts)
    generate_shards("selfplay", specs, games, lockstep, seed, out, settings, weights, workers, ray=ray)


@main.command("import")
@game_option
@click.argument("pgn", type=click.Path(dir_okay=False))
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Directory for the shards.")
@click.option("--games-per-shard", type=click.IntRange(min=1), default=500, show_default=True)
@click.option("--max-games", type=click.IntRange(min=1), default=None, help="Stop after this many games.")
def import_games(game: str, pgn: str, out: str, games_per_shard: int, max_games: int | None) -> None:
    """PGN games into sample shards: the played move as the policy target, the result as the
    value, [%eval] comments as the teacher's value (reruns skip finished shards)."""
    from engine.games import game_profile
    from engine.train.pgn_import import import_pgn

    if game_profile(game).records().suffix != ".pgn":
        raise click.BadParameter(f"PGN import is for games recorded as PGN (chess), not {game}", param_hint="--game")
    try:
        report = import_pgn(pgn, out, games_per_shard=games_per_shard, max_games=max_games, on_shard=click.echo)
    except (ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"import: {report.games} games ({report.skipped} skipped), {report.positions} positions in "
               f"{report.shards_written} shards written, {report.shards_skipped} already there")


@main.command()
@game_option
@click.option("--data", multiple=True, required=True, type=click.Path(exists=True),
              help="Shard file or directory of shards (repeatable).")
@click.option("--net", default=None, help="Architecture for a fresh run, res{blocks}x{channels} [res6x64], "
                   "'-lines' after it for gomoku's line planes; with --init, more blocks of the same width grow "
                   "that network deeper, and '-lines' makes it read the line planes too.")
@click.option("--steps", type=click.IntRange(min=1), required=True, help="Total updates (a resumed run counts on).")
@click.option("--run", "run_dir", type=click.Path(file_okay=False), required=True,
              help="Run directory: checkpoints, state.pt, log.jsonl.")
@click.option("--resume", is_flag=True, help="Continue the run saved in --run.")
@click.option("--init", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Start from these weights instead of random ones.")
@click.option("--batch-size", type=click.IntRange(min=1), default=256, show_default=True)
@click.option("--optimizer", type=click.Choice(["adamw", "sgd"]), default="adamw", show_default=True)
@click.option("--lr", type=click.FloatRange(min=0.0, min_open=True), default=1e-3, show_default=True)
@click.option("--weight-decay", type=click.FloatRange(min=0.0), default=1e-4, show_default=True)
@click.option("--warmup", type=click.IntRange(min=0), default=100, show_default=True)
@click.option("--decay-steps", type=click.IntRange(min=1), default=None,
              help="Cosine decay over this many steps after warmup (default: constant).")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--log-every", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--augment/--no-augment", default=True, show_default=True, help="Gomoku board symmetries.")
@click.option("--value-blend", type=click.FloatRange(0.0, 1.0), default=None,
              help="Weight of the teacher's evaluation in the value target, the rest the game result "
                   "[0.5, chosen by measurement; a resumed run keeps its own].")
@click.option("--val-fraction", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.05, show_default=True,
              help="Share of games held out for validation.")
@click.option("--val-samples", type=click.IntRange(min=1), default=4096, show_default=True,
              help="Held-out positions measured per checkpoint.")
@click.option("--plot/--no-plot", default=True, show_default=True,
              help="Redraw <run>/training.png at every checkpoint (needs matplotlib).")
@reply_weight_option
@click.option("--anchor", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A fixed network whose policy and value the run is also trained towards (with --anchor-weight).")
@click.option("--anchor-weight", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
              help="Weight of the anchor loss (0 = off); keeps a round close to --anchor where its data is gone.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda", "mps"]), default="auto", show_default=True)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Torch CPU threads.")
@click.option("--notes", default="", help="Added to the checkpoints' notes.")
def train(game: str, data: tuple[str, ...], net: str | None, steps: int, run_dir: str, resume: bool,
          init: str | None, batch_size: int, optimizer: str, lr: float, weight_decay: float, warmup: int,
          decay_steps: int | None, checkpoint_every: int, log_every: int, augment: bool,
          value_blend: float | None, val_fraction: float, val_samples: int, plot: bool, reply_weight: float,
          anchor: str | None, anchor_weight: float, progress: bool, seed: int, device: str, threads: int | None,
          notes: str) -> None:
    """Train a network on sample shards; checkpoints, log.jsonl (losses, validation metrics),
    training.png and a resumable state go to --run."""
    from engine.train.trainer import DEFAULT_VALUE_BLEND, TrainConfig
    from engine.train.trainer import train as run_training

    try:
        config = TrainConfig(batch_size=batch_size, optimizer=optimizer, lr=lr, weight_decay=weight_decay,
                             warmup_steps=warmup, decay_steps=decay_steps, augment=augment,
                             value_blend=DEFAULT_VALUE_BLEND if value_blend is None else value_blend,
                             val_fraction=val_fraction, val_samples=val_samples, plot=plot,
                             checkpoint_every=checkpoint_every, log_every=log_every, seed=seed,
                             device=device, threads=threads, reply_weight=reply_weight,
                             anchor_weight=anchor_weight)
        report = run_training(run_dir, data, net, steps, config, resume=resume, init=init,
                              expect_game=game, notes=notes, anchor=anchor, on_log=lambda e: click.echo(log_line(e)),
                              show_progress=progress)
    except ValueError as exc:  # RunError, ShardError, CheckpointError: one line each
        raise click.ClickException(str(exc)) from None
    click.echo(f"step {report.step}: wrote {report.checkpoint} ({report.data})")


def log_line(entry: dict) -> str:
    """One training log entry as a line for people."""
    if entry.get("kind") == "val":
        sign = "n/a" if entry["value_sign"] is None else f"{entry['value_sign']:.3f}"
        return (f"step {entry['step']}: validation on {entry['samples']} positions: policy top-1 "
                f"{entry['policy_top1']:.3f}, cross-entropy {entry['policy_ce']:.4f}; value MSE "
                f"{entry['value_mse']:.4f} (vs result {entry['value_mse_result']:.4f}), sign {sign}")
    if entry.get("kind") == "note":
        return f"step {entry['step']}: {entry['text']}"
    reply = f", reply {entry['reply']:.4f}" if "reply" in entry else ""
    return (f"step {entry['step']}: loss {entry['loss']:.4f} (policy {entry['policy']:.4f}, "
            f"value {entry['value']:.4f}{reply}) lr {entry['lr']:.2e}, {entry['steps_per_s']:.2f} steps/s")


@main.command()
@game_option
@click.option("--data", multiple=True, required=True, type=click.Path(exists=True),
              help="Shard file or directory of shards (repeatable).")
@click.option("--weights", "weights_list", multiple=True, required=True,
              help="Checkpoint(s) to measure (a path or a shipped name; repeatable).")
@click.option("--value-blend", type=click.FloatRange(0.0, 1.0), default=None,
              help="Value target blend for value_mse [the training default].")
@click.option("--val-fraction", type=click.FloatRange(0.0, 1.0), default=0.05, show_default=True,
              help="The held-out share, as given to `engine train` (1 = every sample).")
@click.option("--val-samples", type=click.IntRange(min=1), default=4096, show_default=True)
def validate(game: str, data: tuple[str, ...], weights_list: tuple[str, ...], value_blend: float | None,
             val_fraction: float, val_samples: int) -> None:
    """Measure networks on the validation split of shards (the same positions `engine train`
    holds out), one line each: compare a new network with the shipped one."""
    from engine.players.networks import find_weights
    from engine.nn.checkpoint import load_checkpoint
    from engine.train.samples import read_shards, split_validation
    from engine.train.trainer import DEFAULT_VALUE_BLEND
    from engine.train.validate import validate as measure

    try:
        everything = read_shards(data, game)
        held_out = everything if val_fraction >= 1.0 else split_validation(everything, val_fraction)[1]
        if held_out is None:
            raise ValueError("no game fell into the validation split; raise --val-fraction")
        for weights in weights_list:
            model, _ = load_checkpoint(find_weights(weights), expect_game=game)
            metrics = measure(model, held_out, max_samples=val_samples,
                              value_blend=DEFAULT_VALUE_BLEND if value_blend is None else value_blend)
            click.echo(f"{weights}: " + log_line({"step": "-", "kind": "val", **metrics}))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
