"""An external UCI engine as a training teacher (engine/ starts no processes; this does).

`uci_teacher` is a `engine.train.teacher.TeacherFactory`: hand it to `teacher_batch` or a
teacher Job, e.g. for Debian's /usr/games/stockfish.  Every position is analysed with
`multipv` lines (python-chess's `analyse`): the policy target is one-hot on the best
line's move for multipv 1, else a softmax over the lines' values with temperature
`soft_tau` (values from centipawns, value_from_cp, not from `wdl`: a WDL model saturates
at a few pawns and would make a won position's lines all equal); the value the teacher gives the position is the best line's `wdl` when the
engine reports one (`UCI_ShowWDL` is switched on where offered), else its centipawns
mapped to an expected score (mates as a certain win or loss).
"""
from __future__ import annotations

from typing import Any, Callable

import chess.engine
import numpy as np

from engine.train.samples import expected_score, wdl_from_value
from engine.train.teacher import Advice, Teach, TeacherConfig, soft_target
from engine.types import value_from_cp

__all__ = ["uci_teacher", "line_wdl", "line_value"]

_MATE_CP = 100_000   # a mate's centipawns: value_from_cp maps it to +-1


def line_wdl(info: chess.engine.InfoDict) -> np.ndarray | None:
    """(win, draw, loss) for the side to move of one analysis line: its `wdl` when present,
    else its score mapped through value_from_cp; None when the line has neither."""
    if "wdl" in info:
        wdl = info["wdl"].relative
        return np.array([wdl.wins, wdl.draws, wdl.losses], dtype=np.float64) / max(1, wdl.total())
    if "score" in info:
        return wdl_from_value(value_from_cp(info["score"].relative.score(mate_score=_MATE_CP)))
    return None


def line_value(info: chess.engine.InfoDict) -> float | None:
    """A line's score as a value in [-1, 1] for the side to move (mates +-1), or None."""
    if "score" in info:
        return value_from_cp(info["score"].relative.score(mate_score=_MATE_CP))
    if "wdl" in info:
        return expected_score(line_wdl(info))   # type: ignore[arg-type]
    return None


def uci_teacher(config: TeacherConfig) -> tuple[Teach, Callable[[], None]]:
    """A TeacherFactory driving the external chess engine `config.uci` (argv) through
    python-chess; pass it as teacher_batch(..., make_teacher=uci_teacher)."""
    assert config.uci is not None
    engine = chess.engine.SimpleEngine.popen_uci(list(config.uci))
    try:
        options = dict(config.uci_options)
        if "UCI_ShowWDL" in engine.options and "UCI_ShowWDL" not in options:
            options["UCI_ShowWDL"] = True
        if options:
            engine.configure(options)
    except BaseException:
        engine.quit()
        raise
    limit = chess.engine.Limit(depth=config.depth, nodes=config.nodes, time=config.movetime)

    def teach(state: Any, game_index: int) -> Advice:
        legal = list(state.legal_moves())
        infos = engine.analyse(state.board, limit, multipv=config.multipv, game=game_index)
        lines = [info for info in infos if info.get("pv")]
        if not lines:   # an engine that printed no pv: fall back to its bestmove
            move = engine.play(state.board, limit, game=game_index).move
            return Advice(move, soft_target(legal, [(move, 0.0)], 1.0), None)
        best, wdl = lines[0]["pv"][0], line_wdl(lines[0])
        if config.multipv == 1:
            return Advice(best, soft_target(legal, [(best, 0.0)], 1.0), wdl)
        scored = [(info["pv"][0], value) for info in lines if (value := line_value(info)) is not None]
        return Advice(best, soft_target(legal, scored or [(best, 0.0)], config.soft_tau), wdl)

    return teach, engine.quit
