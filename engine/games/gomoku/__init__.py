"""Gomoku on any board from 5x5 to 26x26 under each Gomocup rule: everything that knows
the game lives in this package.

rules.py      boards, moves, wins, the rules (freestyle, standard, renju, caro)
renju.py      black's forbidden points under renju
codec.py      the network's input planes and policy cells
heuristic.py  hand-written evaluation and UCT's roll-out
patterns.py, alphabeta.py        alpha-beta's incremental board and line evaluation
threats.py, threat_kernel.py/.c  the threat solver (VCF / VCT) with its compiled core
openings.py   stone-list suites relative to the centre, seeded random openings, .psq teacher starts
psq.py, records.py               piskvork's .psq records (read and written), the report's grid
web.py        how the web board shows gomoku
profile.py    PROFILE: what the rest of the engine asks of gomoku, tuned settings included
"""
from engine.games.gomoku.rules import (BENCH_OPENINGS, MAX_SIZE, MIN_SIZE, RULE_CODES, RULES, GomokuGame,
                                       GomokuState, rule_from_code, symmetry_permutations, zobrist_code)
from engine.games.gomoku.profile import PROFILE

__all__ = ["GomokuGame", "GomokuState", "RULES", "RULE_CODES", "rule_from_code", "MIN_SIZE", "MAX_SIZE",
           "symmetry_permutations", "zobrist_code", "BENCH_OPENINGS", "PROFILE"]
