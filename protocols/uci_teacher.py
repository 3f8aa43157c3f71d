"""An external UCI engine as a training teacher (engine/ starts no processes; this does).

`uci_teacher` is a `engine.train.teacher.TeacherFactory`: hand it to `teacher_batch` or a
teacher Job, e.g. for Debian's /usr/games/stockfish.  With multipv > 1 the target is a
softmax over the engine's line scores (centipawns mapped to values, mates as +-1).
"""
from __future__ import annotations

from typing import Any, Callable

import chess.engine
import numpy as np

from engine.train.teacher import Teach, TeacherConfig, soft_target
from engine.types import Move, value_from_cp

__all__ = ["uci_teacher"]


def uci_teacher(config: TeacherConfig) -> tuple[Teach, Callable[[], None]]:
    """A TeacherFactory driving the external chess engine `config.uci` (argv) through
    python-chess; pass it as teacher_batch(..., make_teacher=uci_teacher)."""
    assert config.uci is not None
    engine = chess.engine.SimpleEngine.popen_uci(list(config.uci))
    try:
        if config.uci_options:
            engine.configure(dict(config.uci_options))
    except BaseException:
        engine.quit()
        raise
    limit = chess.engine.Limit(depth=config.depth, time=config.movetime)

    def teach(state: Any, game_index: int) -> tuple[Move, np.ndarray]:
        legal = list(state.legal_moves())
        if config.multipv == 1:
            move = engine.play(state.board, limit, game=game_index).move
            return move, soft_target(legal, [(move, 0.0)], 1.0)
        infos = engine.analyse(state.board, limit, multipv=config.multipv, game=game_index)
        lines = [(info["pv"][0], value_from_cp(info["score"].relative.score(mate_score=10**6)))
                 for info in infos if info.get("pv") and "score" in info]
        target = soft_target(legal, lines, config.soft_tau)
        return lines[0][0], target

    return teach, engine.quit
