"""Standard chess through python-chess: everything that knows the game lives in this package.

rules.py      positions, moves, results (python-chess underneath)
perft.py      move-generation counts (the rules' test and benchmark)
codec.py      the network's input planes and factored from/to policy
heuristic.py  hand-written material evaluation and UCT's capped roll-out
pst.py, alphabeta.py  alpha-beta's board and PeSTO evaluation
endgames.py   mop-up: the leaf-value wrapper that finishes won endgames
openings.py   EPD / PGN opening suites and the built-in one (openings.epd) for the arena and teachers
records.py    PGN records and the arena report's board frames
web.py        how the web board shows chess
profile.py    PROFILE: what the rest of the engine asks of chess, tuned settings included
"""
from engine.games.chess.rules import BENCH_FENS, CHESS960, ChessGame, ChessState, board_from_fen_or_epd, legal_move_list
from engine.games.chess.profile import PROFILE

__all__ = ["ChessGame", "ChessState", "CHESS960", "BENCH_FENS", "legal_move_list", "board_from_fen_or_epd", "PROFILE"]
