"""The player options, declared once.

Each field of `PlayerOptions` carries its `OptionSpec` (kind, range, help, command-line
key, UCI name) in its metadata; the click flags (engine/cli.py), the UCI `option`
lines and `setoption` (protocols/uci_options.py) and the arena's built-in player
settings (arena/config.py) are all generated from `PLAYER_OPTIONS`.  A new option is
one field here; each player reads what it needs (engine/players/build.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from engine.nn.spec import BACKENDS, DEVICES, ONNX_PRECISIONS

__all__ = ["OptionSpec", "PlayerOptions", "PLAYER_OPTIONS", "PLAYER_NAMES", "option_by_key"]

# The searchers a player option may name; engine/players/build.py has one builder each.
PLAYER_NAMES: tuple[str, ...] = ("alphabeta", "mcts", "uct", "random")


@dataclass(frozen=True)
class OptionSpec:
    """How one player option is set from outside.

    kind: "choice" | "int" | "float" | "path" | "seed".  key: the command-line flag
    (`--key`) and arena setting (`key=value`).  uci: the UCI option name, None when the
    option is not offered over UCI.  minimum/maximum: the accepted range (an int option
    whose default is None also takes 0 over UCI, meaning "unset").
    """
    kind: str
    help: str
    key: str = ""
    uci: str | None = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    name: str = ""            # the PlayerOptions field; filled in from the dataclass
    default: Any = None       # the field's default; filled in from the dataclass

    def parse(self, text: str | None) -> Any:
        """Text (a UCI value, an arena setting) -> the option's value; ValueError says why."""
        text = (text or "").strip()
        if self.kind == "choice":
            value = text.lower()
            if value not in self.choices:
                raise ValueError(f"unknown {self.key} {text!r} (expected one of {', '.join(self.choices)})")
            return value
        if self.kind == "path":
            return None if text in ("", "<empty>") else text
        if self.kind == "float":
            if self.default is None and text.lower() in ("", "<empty>", "auto"):
                return None   # unset: the game's tuned value
            try:
                number = float(text)
            except ValueError:
                raise ValueError(f"expected a number, got {text!r}") from None
            if not math.isfinite(number) or (self.minimum is not None and number < self.minimum):
                raise ValueError(f"expected a number >= {self.minimum}, got {text!r}")
            return number
        try:
            integer = int(text)
        except ValueError:
            raise ValueError(f"expected an integer, got {text!r}") from None
        if self.kind == "seed":
            return integer
        if self.default is None and integer == 0:
            return None       # UCI spin 0: unset
        low, high = self.minimum, self.maximum
        if (low is not None and integer < low) or (high is not None and integer > high):
            raise ValueError(f"expected an integer >= {low:g}"
                             + (f" and <= {high:g}" if high is not None else "") + f", got {text!r}")
        return integer


def _option(default: Any, spec: OptionSpec) -> Any:
    return field(default=default, metadata={"option": spec})


@dataclass(frozen=True)
class PlayerOptions:
    """Everything a player may be configured with; each player reads what it needs."""
    player: str = _option("alphabeta", OptionSpec(
        "choice", "Which searcher plays (auto: mcts with the shipped network, else alphabeta).",
        uci="Player", choices=(*PLAYER_NAMES, "auto")))
    weights: str | None = _option(None, OptionSpec(
        "path", "Network: a checkpoint file or a shipped network's name (mcts); "
        "default: the shipped one for the game.", uci="WeightsFile"))
    nodes: int | None = _option(None, OptionSpec(
        "int", "Per-move node budget when no clock is given.", uci="Nodes", minimum=1, maximum=10**9))
    batch: int | None = _option(None, OptionSpec(
        "int", "MCTS leaves per network call [auto: the game's tuned value, by board and clock].", uci="MinibatchSize",
        minimum=1, maximum=4096))
    cpuct: float | None = _option(None, OptionSpec(
        "float", "MCTS exploration constant c_init of PUCT [auto: the game's tuned value].",
        uci="CPuct", minimum=0.0))
    fpu: float | None = _option(None, OptionSpec(
        "float", "MCTS first-play urgency: an unvisited move counts as the parent's Q minus this "
        "[auto: the game's tuned value].", uci="FpuReduction", minimum=0.0))
    policy_temp: float | None = _option(None, OptionSpec(
        "float", "MCTS policy softmax temperature: priors become p^(1/T), renormalised; above 1 "
        "widens the search [auto: the game's tuned value].", key="policy-temp", uci="PolicyTemperature", minimum=0.05))
    vct_share: float | None = _option(None, OptionSpec(
        "float", "Gomoku MCTS: the most of the time left the root's VCT checks may take (its own "
        "VCT, moves that walk into the opponent's); 0 turns them off [auto: the game's tuned value].",
        key="vct-share", minimum=0.0))
    check_share: float | None = _option(None, OptionSpec(
        "float", "Chess MCTS with a clock: the share of each move's planned time kept back for an "
        "alpha-beta check of the chosen move, which vetoes a move it sees lose material; 0 turns "
        "it off [auto: the game's tuned value].", key="check-share", uci="AlphaBetaCheckShare", minimum=0.0))
    threat_solver: str = _option("on", OptionSpec(
        "choice", "Gomoku: the threat solver (VCF/VCT proofs before and inside the search) on or "
        "off; off plays as the searchers did before it existed.", key="threat-solver", choices=("on", "off")))
    threads: int = _option(1, OptionSpec(
        "int", "Network inference threads.", uci="Threads", minimum=1, maximum=256))
    hash_mb: int = _option(64, OptionSpec(
        "int", "Memory for the player's tables, MB: the alpha-beta transposition table; for "
        "mcts the tree, plus half as much again for the network cache.",
        key="hash", uci="Hash", minimum=1, maximum=65536))
    seed: int | None = _option(None, OptionSpec("seed", "Random seed (random/uct/mcts noise)."))
    device: str = _option("auto", OptionSpec("choice", "Where the network runs.", choices=DEVICES))
    backend: str = _option("auto", OptionSpec(
        "choice", "CPU inference runtime for mcts.", choices=BACKENDS))
    precision: str = _option("auto", OptionSpec(
        "choice", "Network arithmetic on the CPU (onnx backend): auto runs a network's int8 export "
        "(`<weights>.int8.onnx`, about 2.4x faster) when it has one, fp32 never does, int8 insists.",
        uci="Precision", choices=ONNX_PRECISIONS))

    def with_changes(self, **changes: Any) -> "PlayerOptions":
        return replace(self, **changes)

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


def _schema() -> tuple[OptionSpec, ...]:
    specs = []
    for f in fields(PlayerOptions):
        spec: OptionSpec = f.metadata["option"]
        specs.append(replace(spec, name=f.name, default=f.default, key=spec.key or f.name))
    return tuple(specs)


PLAYER_OPTIONS: tuple[OptionSpec, ...] = _schema()


def option_by_key(key: str) -> OptionSpec:
    """The spec behind a command-line key / arena setting (`hash`), KeyError if none."""
    for spec in PLAYER_OPTIONS:
        if spec.key == key:
            return spec
    raise KeyError(key)
