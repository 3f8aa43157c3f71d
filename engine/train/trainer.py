"""The training loop (torch): shards in, self-describing checkpoints out, resumable exactly.

Loss per sample = policy cross-entropy + value_weight * WDL cross-entropy.
  Policy: -sum_a pi(a) log p(a) over the legal moves, where p is what the player will
  use: gomoku a softmax over the legal cells; chess the factored
  p(a) = p(from) * p(to | from), each softmax taken over the legal from-squares and the
  legal slots of that from-square (exactly codec_chess.priors_from_logits), so
  log p(a) = log_softmax(from)[f] + log_softmax(to[f])[t].  Summed against pi this is the
  loss on the factored targets pi(from), pi(to | from) of codec_chess.factored_targets.
  Value: cross-entropy of the WDL head against the value target: the game's result
  (0 win, 1 draw, 2 loss) blended with the teacher's own (win, draw, loss) for the
  position where the shard has one, weight `value_blend` (samples.value_targets).
  Learning the teacher's evaluation instead of a +-1 result alone is what lets the
  value loss fall: a single result is a very noisy label for a position 40 plies
  before the end.
Optimiser: AdamW (default) or SGD with Nesterov momentum, weight decay; learning rate
warmed up linearly over `warmup_steps`, then constant, or cosine-decayed to
lr * min_lr_ratio over `decay_steps`: a function of the step alone, so a run resumed
with more steps follows the same curve as one started with them.

run_dir holds ckpt-<step>.pt every `checkpoint_every` steps and at the end (written by
engine.nn.checkpoint: step and data in the metadata), latest.pt (the newest of them),
state.pt (model, optimiser, step, batch RNG, config: `resume=True` continues exactly
where the last save left off; a run killed between saves redoes those steps and gets
the same numbers on the same machine), log.jsonl (a "train" line per log interval and a
"val" line per checkpoint) and training.png (engine.train.plot, when matplotlib is
installed).  Everything is read back with torch.load(weights_only=True).

Validation: whole games are held out (samples.split_validation, `val_fraction`), and at
every checkpoint engine.train.validate measures policy cross-entropy and top-1
agreement with the target, value MSE against the trained target and against the plain
game result, and value sign accuracy on decisive games.  On CUDA the forward pass runs
under bf16 autocast (losses in float32).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import torch
from torch import nn

from engine.nn.checkpoint import load_checkpoint, save_checkpoint
from engine.nn.codecs import get_codec
from engine.nn.files import atomic_write
from engine.nn.model import build_model, deepen, widen_input, with_line_features, with_reply_head
from engine.nn.spec import NetConfig, parse_net
from engine.train.plot import plot_run
from engine.train.progress import Progress
from engine.train.samples import Batch, Dataset, read_shards, sample_batch, split_validation, value_targets
from engine.train.validate import validate

__all__ = ["TrainConfig", "TrainReport", "train", "lr_at", "policy_loss", "policy_log_probs",
           "batch_losses", "reply_loss", "autocast", "STATE_FILE", "LOG_FILE", "RunError", "DEFAULT_VALUE_BLEND"]

STATE_FILE = "state.pt"
LOG_FILE = "log.jsonl"
_MASKED = -1e9  # a logit no legal move can lose to (finite: an all-illegal row stays finite)
# Settings that change the numbers; the rest (device, threads, intervals) may change on resume.
_OPERATIONAL = ("checkpoint_every", "log_every", "device", "threads", "val_samples", "plot")
DEFAULT_VALUE_BLEND = 0.5   # chosen by measurement: see docs/measurements/weights-history.md, "value blend"


class RunError(ValueError):
    """A run directory that cannot be started or resumed as asked (one line)."""


@dataclass(frozen=True)
class TrainConfig:
    """batch_size: samples per step.  optimizer: "adamw" | "sgd" (Nesterov, `momentum`).
    lr / warmup_steps / decay_steps / min_lr_ratio: the schedule (see lr_at).
    value_weight: weight of the WDL loss.  value_blend: weight of the teacher's own
    evaluation in the value target (0 = the game result alone; samples without one
    always use the result).  augment: random gomoku board symmetries.
    val_fraction: share of games held out for validation (0 = none); val_samples: at
    most this many of them measured per checkpoint.  plot: redraw training.png.
    seed: batch sampling and initial weights.  device: "auto" | "cpu" | "cuda" | "mps";
    threads: torch CPU threads (None = torch's default).  reply_weight: weight of the
    opponent-reply auxiliary loss (KataGo uses 0.15; 0 = off); above 0 the network gets a
    reply head (NetConfig.reply_head) if it has none (gomoku).  anchor_weight: weight of the
    anchor loss, the cross-entropy of the network's policy and value against a fixed anchor
    network's on the same batch (0 = off): what keeps a round from forgetting what its
    starting network knew when the data it learned from is gone (issue 25, tenth round)."""
    batch_size: int = 256
    optimizer: str = "adamw"
    lr: float = 1e-3
    momentum: float = 0.9
    weight_decay: float = 1e-4
    warmup_steps: int = 100
    decay_steps: int | None = None
    min_lr_ratio: float = 0.05
    value_weight: float = 1.0
    value_blend: float = DEFAULT_VALUE_BLEND
    augment: bool = True
    val_fraction: float = 0.05
    val_samples: int = 4096
    plot: bool = True
    checkpoint_every: int = 1000
    log_every: int = 100
    seed: int = 0
    device: str = "cpu"
    threads: int | None = None
    reply_weight: float = 0.0
    anchor_weight: float = 0.0

    def __post_init__(self) -> None:
        if self.optimizer not in ("adamw", "sgd"):
            raise ValueError(f"unknown optimizer {self.optimizer!r} (expected adamw or sgd)")
        if self.batch_size < 1 or self.lr <= 0 or self.checkpoint_every < 1 or self.log_every < 1:
            raise ValueError("batch_size, lr, checkpoint_every and log_every must be positive")
        if not 0.0 <= self.value_blend <= 1.0 or not 0.0 <= self.val_fraction < 1.0:
            raise ValueError("value_blend must be within [0, 1] and val_fraction within [0, 1)")
        if self.val_samples < 1:
            raise ValueError("val_samples must be positive")
        if not self.reply_weight >= 0.0 or not self.anchor_weight >= 0.0:
            raise ValueError("reply_weight and anchor_weight must be >= 0")


@dataclass(frozen=True)
class TrainReport:
    step: int
    checkpoint: Path
    loss: float
    policy_loss: float
    value_loss: float
    steps_per_second: float
    data: str


def lr_at(config: TrainConfig, step: int) -> float:
    """Learning rate for the update that makes step `step + 1` (step counts finished updates)."""
    if step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    if config.decay_steps is None:
        return config.lr
    progress = min(1.0, (step - config.warmup_steps) / max(1, config.decay_steps))
    floor = config.lr * config.min_lr_ratio
    return floor + (config.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def policy_loss(game: str, policy_outputs: tuple[torch.Tensor, ...], target: torch.Tensor,
                legal: torch.Tensor) -> torch.Tensor:
    """Cross-entropy [B] of the targets against the masked policy (see the module docstring).
    One logit per index (gomoku): policy_outputs = (logits [B, H, W],); factored (the codec
    says `factored`; chess): (from [B, 64], to [B, 64, 73]).
    target float [B, P] and legal bool [B, P] in the codec's flat index space."""
    log_p = policy_log_probs(game, policy_outputs, legal)
    return -(target * log_p.masked_fill(~legal, 0.0)).sum(dim=1)


def policy_log_probs(game: str, policy_outputs: tuple[torch.Tensor, ...], legal: torch.Tensor) -> torch.Tensor:
    """log p(a) [B, P] of the player's policy over the legal moves (illegal entries are
    very negative, not -inf).  Shapes as in policy_loss."""
    policy_outputs = tuple(o.float() for o in policy_outputs)
    if get_codec(game).factored:
        from_logits, to_logits = policy_outputs
        b, squares = from_logits.shape
        legal_to = legal.view(b, squares, -1)
        from_lp = from_logits.masked_fill(~legal_to.any(dim=2), _MASKED).log_softmax(dim=1)
        to_lp = to_logits.masked_fill(~legal_to, _MASKED).log_softmax(dim=2)
        log_p = (from_lp[:, :, None] + to_lp).reshape(b, -1)
    else:
        (logits,) = policy_outputs
        log_p = logits.reshape(logits.shape[0], -1).masked_fill(~legal, _MASKED).log_softmax(dim=1)
    return log_p


def autocast(device: str) -> Any:
    """bf16 autocast on CUDA (tensor cores, half the activation memory; BatchNorm and the
    losses stay float32), a no-op elsewhere: CPU bf16 is slower than float32 here."""
    if device.startswith("cuda"):
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def batch_losses(model: nn.Module, game: str, batch: Batch, device: str = "cpu",
                 value_weight: float = 1.0, value_blend: float = 0.0, reply_weight: float = 0.0,
                 anchor: nn.Module | None = None, anchor_weight: float = 0.0
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(total, policy, value, reply) mean losses of `model` on a batch; value_blend,
    reply_weight and anchor_weight as in TrainConfig (reply is 0 when its weight is; the
    anchor's term is in the total only); on CUDA the forward passes run under bf16 autocast,
    the losses are taken in float32."""
    planes = torch.from_numpy(batch.planes).to(device)
    with autocast(device):
        outputs = [out.float() for out in (model(planes, reply=True) if reply_weight > 0 else model(planes))]
    reply = torch.zeros((), device=device)
    if reply_weight > 0:
        reply = reply_loss(outputs.pop(), batch, device)
    target = torch.from_numpy(batch.target).to(device)
    legal = torch.from_numpy(batch.legal).to(device)
    policy = policy_loss(game, tuple(outputs[:-1]), target, legal).mean()
    wdl_target = torch.from_numpy(value_targets(batch, value_blend)).to(device)
    value = -(wdl_target * outputs[-1].float().log_softmax(dim=1)).sum(dim=1).mean()
    total = policy + value_weight * value + reply_weight * reply
    if anchor is not None and anchor_weight > 0:
        total = total + anchor_weight * _anchor_loss(anchor, game, planes, outputs, legal, device, value_weight)
    return total, policy, value, reply


def _anchor_loss(anchor: nn.Module, game: str, planes: torch.Tensor, outputs: list[torch.Tensor],
                 legal: torch.Tensor, device: str, value_weight: float) -> torch.Tensor:
    """Cross-entropy of the model's outputs (policy logits..., WDL logits) against the frozen
    anchor's on the same planes: its legal-move policy and its WDL as soft targets."""
    with torch.no_grad(), autocast(device):
        fixed = [out.float() for out in anchor(planes)]
    anchor_policy = policy_log_probs(game, tuple(fixed[:-1]), legal).exp().masked_fill(~legal, 0.0)
    policy = policy_loss(game, tuple(outputs[:-1]), anchor_policy, legal).mean()
    value = -(fixed[-1].softmax(dim=1) * outputs[-1].log_softmax(dim=1)).sum(dim=1).mean()
    return policy + value_weight * value


def reply_loss(logits: torch.Tensor, batch: Batch, device: str = "cpu") -> torch.Tensor:
    """Cross-entropy of the reply head (logits [B, H, W]) against the opponent's answer, over
    the samples that have one (0 when none does).  No legal mask: the answer is the
    opponent's move, which the side to move's rules (renju's forbidden points) do not bind."""
    if batch.reply is None:
        return torch.zeros((), device=device)
    answer = torch.from_numpy(batch.reply).to(device)
    known = answer >= 0
    if not bool(known.any()):
        return torch.zeros((), device=device)
    log_p = logits.reshape(logits.shape[0], -1).log_softmax(dim=1)[known]
    return -log_p.gather(1, answer[known][:, None]).mean()


def _optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    # No weight decay on BatchNorm and biases: decaying them only fights the normalisation.
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    rest = [p for n, p in model.named_parameters() if p.ndim <= 1]
    groups = [{"params": decay, "weight_decay": config.weight_decay},
              {"params": rest, "weight_decay": 0.0}]
    if config.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=config.lr, momentum=config.momentum, nesterov=True)
    return torch.optim.AdamW(groups, lr=config.lr)


class _Run:
    """Model, optimiser, step and batch RNG of one run directory."""

    def __init__(self, run_dir: Path, model: nn.Module, config: TrainConfig, game: str,
                 step: int = 0, rng: np.random.Generator | None = None):
        self.run_dir, self.model, self.config, self.game, self.step = run_dir, model, config, game, step
        self.optimizer = _optimizer(model, config)
        self.rng = rng or np.random.default_rng(config.seed)

    def save(self, data: str, notes: str) -> Path:
        """Checkpoint (ckpt-<step>.pt, latest.pt), then the state: a kill in between only
        means the resumed run writes the same checkpoint again."""
        meta = {"step": self.step, "notes": f"{data}; {self.config.optimizer} lr {self.config.lr}"
                + (f"; {notes}" if notes else "")}
        path = self.run_dir / f"ckpt-{self.step:07d}.pt"
        save_checkpoint(path, self.model, meta)
        save_checkpoint(self.run_dir / "latest.pt", self.model, meta)
        config: NetConfig = self.model.config  # type: ignore[assignment]
        state = {"step": self.step, "game": self.game, "net": config.to_dict(),
                 "config": dataclasses.asdict(self.config),
                 "model": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
                 "optimizer": _to_cpu(self.optimizer.state_dict()),
                 "rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state()}
        atomic_write(self.run_dir / STATE_FILE, lambda handle: torch.save(state, handle))
        return path


def _to_cpu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_cpu(v) for v in value]
    return value


def _resume(run_dir: Path, config: TrainConfig, game: str, device: str) -> _Run:
    try:
        state = torch.load(run_dir / STATE_FILE, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise RunError(f"{run_dir / STATE_FILE}: unreadable training state ({type(exc).__name__})") from None
    if state["game"] != game:
        raise RunError(f"{run_dir} trains a {state['game']} network, the data is {game}")
    saved = TrainConfig(**state["config"])
    config = dataclasses.replace(saved, **{k: getattr(config, k) for k in _OPERATIONAL})
    model = build_model(NetConfig.from_dict(state["net"]))
    model.load_state_dict(state["model"])
    model.to(device)
    rng = np.random.default_rng()
    rng.bit_generator.state = state["rng"]
    run = _Run(run_dir, model, config, game, int(state["step"]), rng)
    run.optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])
    return run


def _fresh(run_dir: Path, config: TrainConfig, game: str, net: str | None, init: str | Path | None,
           device: str) -> _Run:
    if init is not None:
        model, meta = load_checkpoint(init, expect_game=game)
        model = widen_input(model, get_codec(game).planes)   # an older codec version's network
        wanted = parse_net(net, game) if net is not None else None
        if wanted is not None and wanted.name != meta["net"]:
            model = _deepened(model, wanted, init)
    else:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            model = build_model(parse_net(net or "res6x64", game))
    if config.reply_weight > 0:     # a network without the head gets one (chess's refuses: ValueError)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            model = with_reply_head(model)
    torch.manual_seed(config.seed)
    return _Run(run_dir, model.to(device), config, game)


def _deepened(model: nn.Module, wanted: NetConfig, init: str | Path) -> nn.Module:
    """The --init network grown to the `wanted` shape (same width; engine/nn/model.py deepen,
    and with_line_features for a "-lines" name): the only changes of shape a trained network
    can start from."""
    have: NetConfig = model.config  # type: ignore[assignment]
    if wanted.channels != have.channels or wanted.blocks < have.blocks or (have.line_features and not wanted.line_features):
        raise RunError(f"--init {init} is a {have.name} network: it can start a run of {have.name} "
                       f"or of more blocks of {have.channels} channels, with line planes or not, not {wanted.name}")
    model = with_line_features(model) if wanted.line_features else model
    return deepen(model, wanted.blocks)


def _anchor(path: str | Path | None, config: TrainConfig, game: str, device: str) -> nn.Module | None:
    """The anchor loss's network, frozen in eval mode (None when its weight is 0).  Checked
    against the run's own config, so a resumed anchored run cannot go on without its anchor."""
    if config.anchor_weight <= 0:
        return None
    if path is None:
        raise RunError("this run trains with an anchor loss: give its anchor network (--anchor WEIGHTS)")
    model, _ = load_checkpoint(path, expect_game=game)
    model = widen_input(model, get_codec(game).planes).to(device).eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def _trim_log(path: Path, step: int) -> None:
    """Drop log lines past `step` (written after the last save of a killed run)."""
    if not path.is_file():
        return
    kept = [line for line in path.read_text().splitlines()
            if line.strip() and json.loads(line).get("step", 0) <= step]
    atomic_write(path, lambda handle: handle.write("".join(f"{line}\n" for line in kept).encode()))


def train(run_dir: str | Path, shards: Iterable[str | Path], net: str | None = None, steps: int = 1000,
          config: TrainConfig = TrainConfig(), *, resume: bool = False, init: str | Path | None = None,
          expect_game: str | None = None, notes: str = "", anchor: str | Path | None = None,
          on_log: Callable[[dict], None] | None = None, show_progress: bool = False) -> TrainReport:
    """Train until `steps` updates in total, checkpointing into run_dir; returns the last.

    net: architecture name for a fresh run ("res6x64"; ignored on resume).  init: start a
    fresh run from these weights.  resume: continue run_dir's saved state (its optimiser
    settings win over `config`, except device, threads and the intervals).  A fresh run
    refuses a run_dir that already holds a state.  RunError / ShardError / CheckpointError
    on bad input, each one line.  anchor: the fixed network of the anchor loss (needed, and
    only used, when config.anchor_weight > 0; give it again on resume).  on_log gets every
    log entry ("train", "val", "note"); show_progress: a progress bar on stderr.
    """
    from engine.nn.evaluator import resolve_device

    run_dir = Path(run_dir)
    if config.anchor_weight > 0 and anchor is None:
        raise RunError("an anchor weight above 0 needs the anchor network (--anchor WEIGHTS)")
    everything: Dataset = read_shards(shards, expect_game)
    data = f"trained on {everything.describe()}: {_sources(everything.sources)}"
    device = resolve_device(config.device)
    if config.threads is not None:
        torch.set_num_threads(config.threads)
    has_state = (run_dir / STATE_FILE).is_file()
    if resume:
        if init is not None:
            raise RunError("--init starts a fresh run; it cannot be combined with --resume")
        if not has_state:
            raise RunError(f"{run_dir}: nothing to resume (no {STATE_FILE})")
        run = _resume(run_dir, config, everything.game, device)
    else:
        if has_state:
            raise RunError(f"{run_dir} already holds a run; pass --resume to continue it")
        run_dir.mkdir(parents=True, exist_ok=True)
        run = _fresh(run_dir, config, everything.game, net, init, device)
    config = run.config
    anchor_model = _anchor(anchor, config, everything.game, device)
    dataset, held_out = split_validation(everything, config.val_fraction)
    log_path = run_dir / LOG_FILE
    _trim_log(log_path, run.step)
    model, optimizer = run.model, run.optimizer
    model.train()
    sums = np.zeros(4)
    count = 0
    last = (math.nan, math.nan, math.nan)
    clock = time.perf_counter()
    start_step, start_clock = run.step, clock
    checkpoint = run_dir / "latest.pt"
    progress = Progress(steps - run.step, f"train {run_dir.name}", unit="steps") if show_progress else None
    plotted = [config.plot]

    def log(entry: dict) -> None:
        with open(log_path, "a") as handle:
            handle.write(json.dumps(entry) + "\n")
        if on_log is not None:
            on_log(entry)

    def checkpoint_now() -> Path:
        model.eval()
        path = run.save(data, notes)
        if held_out is not None:
            metrics = validate(model, held_out, value_blend=config.value_blend, device=device,
                               max_samples=config.val_samples)
            log({"step": run.step, "kind": "val", **metrics})
        if plotted[0] and plot_run(run_dir) is None and log_path.is_file():
            plotted[0] = False   # no matplotlib: say so once, keep training
            if on_log is not None:
                on_log({"step": run.step, "kind": "note",
                        "text": "no training.png: pip install 'plyzero[plot]' for matplotlib"})
        model.train()
        return path

    while run.step < steps:
        batch = sample_batch(dataset, config.batch_size, run.rng, augment=config.augment)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(config, run.step)
        total, policy, value, reply = batch_losses(model, dataset.game, batch, device, config.value_weight,
                                                   config.value_blend, config.reply_weight,
                                                   anchor_model, config.anchor_weight)
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        optimizer.step()
        run.step += 1
        sums += (total.item(), policy.item(), value.item(), reply.item())
        count += 1
        if progress is not None:
            progress.update(1, note=f"loss {total.item():.3f}")
        if run.step % config.log_every == 0 or run.step == steps:
            now = time.perf_counter()
            last = (float(sums[0] / count), float(sums[1] / count), float(sums[2] / count))
            log({"step": run.step, "kind": "train", "loss": round(last[0], 5), "policy": round(last[1], 5),
                 "value": round(last[2], 5), "lr": lr_at(config, run.step - 1),
                 "steps_per_s": round(count / max(now - clock, 1e-9), 3)}
                | ({"reply": round(float(sums[3] / count), 5)} if config.reply_weight > 0 else {}))
            sums[:] = 0.0
            count = 0
            clock = now
        if run.step % config.checkpoint_every == 0 or run.step == steps:
            checkpoint = checkpoint_now()
    if progress is not None:
        progress.close()
    model.eval()
    if not (run_dir / "latest.pt").is_file():   # resumed at or past `steps`: nothing trained
        checkpoint = checkpoint_now()
        model.eval()
    elapsed = time.perf_counter() - start_clock
    rate = (run.step - start_step) / elapsed if run.step > start_step and elapsed > 0 else 0.0
    return TrainReport(step=run.step, checkpoint=checkpoint, loss=last[0], policy_loss=last[1],
                       value_loss=last[2], steps_per_second=rate, data=data)


def _sources(sources: list[str], shown: int = 3) -> str:
    """Where the data came from, short: the shards' directories (or the first few files)."""
    folders = sorted({str(Path(s).parent) for s in sources})
    names = folders if len(folders) <= shown else folders[:shown] + [f"+{len(folders) - shown} more"]
    return ", ".join(names)
