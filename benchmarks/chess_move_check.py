"""How often does the alpha-beta check of MCTS's chosen move (engine/games/chess/move_check.py)
change a played move, and is the change better by Stockfish's judgement?

    arena report match.sqlite --pgn match.pgn
    python benchmarks/chess_move_check.py rate match.pgn plyzero rated.json      # Stockfish rates our moves
    python benchmarks/chess_move_check.py replay rated.json --seconds 0.3        # the checker on them

`rate`: for every move of PLAYER, Stockfish's score (our side, centipawns, mates as +-10000)
of the position's best move and of the move played, at --nodes each.  `replay`: for each
position within 400 cp of balance, the checker with --seconds of time on the played move;
a vetoed move is replaced by alpha-beta's best (what MCTS plays when that is its next choice),
which Stockfish rates; the table sums what Stockfish says the changes gained, over every
position and over the blunders (moves that lost >= 100 cp).  Needs /usr/games/stockfish.
"""
from __future__ import annotations

import argparse
import json

import chess
import chess.engine
import chess.pgn

STOCKFISH = ["/usr/games/stockfish"]
MATE = 10000
BALANCED = 400


def _stockfish(nodes: int):
    engine = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
    engine.configure({"Threads": 1, "Hash": 64})
    return engine, chess.engine.Limit(nodes=nodes)


def _after(engine, limit, board: chess.Board, move: chess.Move, me: chess.Color) -> int:
    """Stockfish's score of `move`, for `me`."""
    board.push(move)
    try:
        if board.is_game_over():
            return MATE if board.is_checkmate() else 0
        return engine.analyse(board, limit)["score"].pov(me).score(mate_score=MATE)
    finally:
        board.pop()


def rate(pgn: str, player: str, out: str, nodes: int) -> None:
    engine, limit = _stockfish(nodes)
    rows = []
    with open(pgn, encoding="utf-8", errors="replace") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            me = chess.WHITE if game.headers.get("White") == player else chess.BLACK
            board = game.board()
            for move in game.mainline_moves():
                if board.turn == me:
                    info = engine.analyse(board, limit)
                    best = info["score"].pov(me).score(mate_score=MATE)
                    after = best if info["pv"][0] == move else _after(engine, limit, board, move, me)
                    rows.append({"fen": board.fen(), "move": move.uci(), "before": best, "after": after})
                board.push(move)
    engine.quit()
    with open(out, "w") as handle:
        json.dump(rows, handle)
    lost = [_clip(r["before"]) - _clip(r["after"]) for r in rows if abs(r["before"]) < BALANCED]
    print(f"{len(rows)} moves; from within {BALANCED} cp of balance: "
          + ", ".join(f">= {t} cp lost {sum(x >= t for x in lost)}" for t in (50, 100, 200, 300)))


def replay(rated: str, seconds: float, nodes: int, every: int) -> None:
    from engine.games import get_game
    from engine.games.chess.move_check import CHECK_SHARE, AlphaBetaCheck
    from engine.search.limits import Stopper
    from engine.types import Limits
    with open(rated) as handle:
        rows = [r for r in json.load(handle) if abs(r["before"]) < BALANCED][::every]
    game = get_game("chess")
    engine, limit = _stockfish(nodes)
    checker = AlphaBetaCheck()
    changed = []
    for row in rows:
        state = game.state_from_fen(row["fen"])
        root = _Root(state)
        played = chess.Move.from_uci(row["move"])
        vetoed: list[int] = []
        stopper = Stopper(Limits(time=seconds / CHECK_SHARE))
        stopper.hold_back(checker.verify_reserve([root], stopper))
        stopper.give_back()
        checker.verify_choice(root, lambda: root.moves.index(played), stopper, vetoed.append)
        if vetoed and checker.last_best is not None:
            board = chess.Board(row["fen"])
            score = _after(engine, limit, board, checker.last_best, board.turn)
            changed.append((row, _clip(score) - _clip(row["after"])))
    engine.quit()
    blunders = [r for r in rows if _clip(r["before"]) - _clip(r["after"]) >= 100]
    for name, subset in (("every position", rows), ("blunders (lost >= 100 cp)", blunders)):
        keys = {id(r) for r in subset}
        gains = [g for r, g in changed if id(r) in keys]
        print(f"{name}: {len(subset)} positions, changed {len(gains)}, better (> 50 cp) "
              f"{sum(g > 50 for g in gains)}, worse (< -50 cp) {sum(g < -50 for g in gains)}, "
              f"Stockfish gain {sum(gains)} cp")


class _Root:
    """What the checker reads of an MCTS root."""

    def __init__(self, state):
        self.state, self.moves = state, list(state.legal_moves())
        self.solved, self.proven = None, None


def _clip(cp: int) -> int:
    return max(-1000, min(1000, cp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("rate")
    r.add_argument("pgn")
    r.add_argument("player")
    r.add_argument("out")
    r.add_argument("--nodes", type=int, default=150000)
    p = sub.add_parser("replay")
    p.add_argument("rated")
    p.add_argument("--seconds", type=float, default=0.3, help="the check's time per move")
    p.add_argument("--nodes", type=int, default=150000)
    p.add_argument("--every", type=int, default=1, help="every n-th position only")
    args = parser.parse_args()
    if args.command == "rate":
        rate(args.pgn, args.player, args.out, args.nodes)
    else:
        replay(args.rated, args.seconds, args.nodes, args.every)


if __name__ == "__main__":
    main()
