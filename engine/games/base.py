"""Game and State protocols every searcher, protocol adapter and the arena rely on.

States are immutable values: `play` returns a new state.  `legal_moves()` has a
deterministic order, and index j means "move j" everywhere (priors, visit counts).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Protocol, Sequence, runtime_checkable

from engine.types import Move

__all__ = ["Outcome", "State", "Game", "IllegalMoveError", "GameSetupError"]


class IllegalMoveError(ValueError):
    """A move that is malformed or not legal in the given state."""


class GameSetupError(ValueError):
    """A position or board description that cannot be set up (bad FEN, bad size...)."""


@dataclass(frozen=True)
class Outcome:
    """How a game ended.  winner: 0 first player, 1 second player, None draw."""
    winner: int | None
    reason: str

    def value_for(self, player: int) -> float:
        """+1 win, -1 loss, 0 draw, from `player`'s point of view."""
        if self.winner is None:
            return 0.0
        return 1.0 if self.winner == player else -1.0


@runtime_checkable
class State(Protocol):
    @property
    def to_play(self) -> int: ...  # 0 = first player (White / black stones), 1 = second
    @property
    def ply(self) -> int: ...      # half-moves played since the game's initial position
    @property
    def game(self) -> Any: ...     # the Game it belongs to (its per-game facts)

    def legal_moves(self) -> Sequence[Move]: ...
    def play(self, move: Move) -> Any: ...          # a new State of the same game
    def outcome(self) -> Outcome | None: ...
    def key(self) -> Hashable: ...
    def repeated(self) -> bool: ...  # the position occurred before in this game (search scores it a draw)


class Game(Protocol):
    """Rules of one game (and board size/rule for gomoku).  States are typed Any here so each
    game can name its own State class; they satisfy the State protocol.

    Besides the rules, a game states the per-game facts the layers above ask for instead
    of testing its name (the network-side facts are on its codec, engine/nn/codecs.py).
    Strings name code above this layer as "module:attribute", imported by whoever uses it."""
    @property
    def name(self) -> str: ...  # "chess" | "gomoku"
    @property
    def sized(self) -> bool: ...    # takes width/height/rule settings (False: one fixed board)
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def rule(self) -> str: ...      # "" where the game has one rule set
    @property
    def label(self) -> str: ...     # for people: "chess", "gomoku 15x15"
    @property
    def protocol(self) -> str: ...  # the text protocol its engines speak: "uci" | "gomocup"
    @property
    def stones(self) -> bool: ...   # a move puts a stone on an empty cell of `state.cells`
    @property
    def max_plies(self) -> int | None: ...   # training games: a draw after this many plies (None: ends by itself)
    @property
    def bench_depth(self) -> int: ...  # `engine bench`'s alpha-beta depth (about 10 s on one core)

    def dirichlet_alpha(self, n_moves: int) -> float: ...   # self-play root noise for n legal moves
    def bench_positions(self) -> list[tuple[str, Any]]: ...  # `engine bench`'s fixed (label, state) pairs

    def initial_state(self) -> Any: ...
    def parse_move(self, state: Any, text: str) -> Move: ...   # raises IllegalMoveError
    def format_move(self, state: Any, move: Move) -> str: ...
