"""Alpha-beta: one generic searcher over the SearchBoard contract (engine/search/ab_board.py).

Negamax with principal-variation search, iterative deepening, a transposition
table, move ordering (TT move, the board's noisy moves by MVV-LVA, two killers per
ply, history, then the board's static order), check extension, late-move
reductions and quiescence on `noisy_moves()` with stand-pat.

Optional SearchBoard hooks (see ab_board.py): history_keys() (earlier game positions
that count as repetitions), rule_terminal() (a cheaper terminal()), push_null() and
null_move_safe() (null-move pruning), root_plan() (a proven win played at once, or the
root restricted to the moves that avoid a proven loss: gomoku's threat solver),
native_tree(memory, hash_mb) (a compiled search of the same tree below the root moves, with
its pv(); chess: engine/games/chess/native_search.py).

Stopping: a stop, a node limit or the hard deadline unwinds the current iteration
at once; the answer is the best move of the last *completed* depth (the first
ordered legal move if depth 1 never completed, reported with a static value), or with
a compiled tree and one line, a root move of the stopped depth that beat it in full
(reported at that depth), so it equals the last reported pv[0].  No iteration starts
after the soft deadline, nor one that would likely end past the hard one (its
predecessor's time times the last growth factor; half that with a compiled tree,
whose stopped iterations still answer).  Iterative deepening also ends when deeper passes cannot change
the answer: one legal move, every root move ending the game at once (repetition,
mate, a rule draw), or every line's forced mate settled.  MultiPV (`Limits.multipv` = k): each depth searches the root k times,
each time without the moves already found, and reports k lines best first; a depth
stopped part-way reports nothing, as with one line.  Unlimited `Limits()` (not infinite) means depth `max_depth`
(64) within `default_time` (1 s); `Limits(infinite=True)` searches until stopped.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Any, Callable, Hashable, Sequence

from engine.search.ab_board import MATE_BOUND, MATE_SCORE, TERMINAL_DRAW, TERMINAL_WIN, SearchBoard
from engine.search.limits import Stopper
from engine.types import Limits, Move, SearchInfo, SearchResult, value_from_cp

__all__ = ["AlphaBeta", "AlphaBetaConfig", "TranspositionTable"]

INF = MATE_SCORE + 1
EXACT, LOWER, UPPER = 0, 1, 2
_TT_BONUS = 1 << 40       # ordering keys: TT move > noisy (board scores >= 2**31 for chess)
_KILLER_BONUS = 1 << 30   # > killers > history (capped below) + the board's quiet order
_HISTORY_CAP = 1 << 28
_SECOND = itemgetter(1)


@dataclass(frozen=True)
class AlphaBetaConfig:
    """hash_mb: TT budget (entries sized at `entry_bytes`, rounded down to a power of two).
    max_depth / default_time: the default when Limits() names no limit at all.
    poll_nodes: how often the Stopper is asked (nodes; ~2 ms of Python chess search,
    the overshoot past a deadline); lmr: late-move reductions;
    null_move: null-move pruning (R = 2), used only when the board offers push_null();
    native: below the root, the board's compiled tree when it has one (native_tree())."""
    hash_mb: int = 64
    max_depth: int = 64
    default_time: float = 1.0
    poll_nodes: int = 16
    max_ply: int = 96
    lmr: bool = True
    null_move: bool = True
    entry_bytes: int = 256  # measured: ~256 B per filled chess entry
    native: bool = True


class TranspositionTable:
    """Slots indexed by hash(key); each holds (hash, depth, flag, score, move).

    Mate scores are stored relative to the node (distance from it), not the root,
    so they stay right when the position is reached at another ply.
    """
    __slots__ = ("_slots", "_mask")

    def __init__(self, hash_mb: int, entry_bytes: int = 256):
        wanted = max(1024, hash_mb * (1 << 20) // entry_bytes)
        size = 1 << (wanted.bit_length() - 1)
        self._slots: list[tuple[int, int, int, int, Any] | None] = [None] * size
        self._mask = size - 1

    def __len__(self) -> int:
        return len(self._slots)

    def probe(self, h: int) -> tuple[int, int, int, int, Any] | None:
        entry = self._slots[h & self._mask]
        return entry if entry is not None and entry[0] == h else None

    def store(self, h: int, depth: int, flag: int, score: int, move: Any) -> None:
        index = h & self._mask
        old = self._slots[index]
        if old is not None and old[0] == h:
            if depth < old[1] and flag != EXACT:
                return  # keep the deeper result for this very position
            if move is None:
                move = old[4]
        self._slots[index] = (h, depth, flag, score, move)

    def clear(self) -> None:
        self._slots = [None] * len(self._slots)

    def hashfull(self) -> int:
        """Per mille of the first 1000 slots in use (the UCI convention)."""
        sample = self._slots[:1000]
        return sum(1 for entry in sample if entry is not None) * 1000 // len(sample)


class _Stopped(Exception):
    """Raised from inside the tree when the Stopper says stop; caught at the root."""


def _to_tt(score: int, ply: int) -> int:
    if score > MATE_BOUND:
        return score + ply
    if score < -MATE_BOUND:
        return score - ply
    return score


def _from_tt(score: int, ply: int) -> int:
    if score > MATE_BOUND:
        return score - ply
    if score < -MATE_BOUND:
        return score + ply
    return score


def _terminal_score(result: int, ply: int) -> int:
    if result == TERMINAL_DRAW:
        return 0
    return MATE_SCORE - ply if result == TERMINAL_WIN else ply - MATE_SCORE


class AlphaBeta:
    """The alpha-beta Searcher.  `make_board(state) -> SearchBoard` adapts a game."""

    def __init__(self, make_board: Callable[[Any], SearchBoard], config: AlphaBetaConfig | None = None):
        self.make_board = make_board
        self.config = config or AlphaBetaConfig()
        self.tt = TranspositionTable(self.config.hash_mb, self.config.entry_bytes)
        self.history: dict[Move, int] = {}
        self.native_memory: dict[str, Any] = {}   # a compiled tree's table and history (native_tree)

    def new_game(self) -> None:
        self.tt.clear()
        self.history.clear()
        self.native_memory.clear()

    def search(self, state, limits: Limits, *, stop: threading.Event | None = None,
               on_info: Callable[[SearchInfo], None] | None = None) -> SearchResult:
        # Age the history so the last search guides ordering without dominating it.
        self.history = {move: value >> 2 for move, value in self.history.items() if value >= 4}
        return _Run(self, state, limits, stop, on_info).run()


class _Run:
    """One search: the board, counters and killers live here, the TT and history in AlphaBeta."""

    __slots__ = ("owner", "config", "state", "limits", "board", "terminal", "stopper", "on_info", "tt",
                 "history", "killers", "path", "nodes", "seldepth", "next_poll", "node_limit",
                 "max_ply", "lmr", "null_move", "native", "partial")

    def __init__(self, owner: AlphaBeta, state, limits: Limits, stop: threading.Event | None,
                 on_info: Callable[[SearchInfo], None] | None):
        self.owner, self.config, self.state, self.limits = owner, owner.config, state, limits
        self.on_info = on_info
        self.stopper = Stopper(limits, stop, default_time=owner.config.default_time)
        self.board: SearchBoard = owner.make_board(state)
        # Optional board hook: terminal() minus the no-legal-move test; the tree scores an
        # empty move list itself (in check: mated, else stalemate; quiescence skips stalemate).
        self.terminal: Callable[[], int | None] = getattr(self.board, "rule_terminal", self.board.terminal)
        self.tt, self.history = owner.tt, owner.history
        self.max_ply = self.config.max_ply
        self.lmr = self.config.lmr
        # Optional board hooks: push_null() (pass; undone by pop()) and null_move_safe()
        # (zugzwang is unlikely, e.g. chess: the side to move has a piece).
        self.null_move = self.config.null_move and hasattr(self.board, "push_null")
        self.killers: list[list[Move | None]] = [[None, None] for _ in range(self.max_ply + 2)]
        history_keys = getattr(self.board, "history_keys", None)
        self.path: set[Hashable] = set(history_keys() if history_keys is not None else ())
        self.nodes = 0
        self.seldepth = 0
        self.node_limit = None if limits.infinite else limits.nodes
        self.next_poll = 0
        native_tree = getattr(self.board, "native_tree", None) if self.config.native else None
        self.native = native_tree(owner.native_memory, self.config.hash_mb) if native_tree is not None else None
        self.partial: tuple[int, Move] | None = None   # a stopped iteration's better move (_root)

    # -- limits -------------------------------------------------------------------
    def _poll(self) -> None:
        if self.stopper.should_stop(self.nodes):
            raise _Stopped
        step = self.nodes + self.config.poll_nodes
        self.next_poll = step if self.node_limit is None else min(step, self.node_limit)

    def _native_search(self, depth: int, alpha: int, beta: int, ply: int) -> int:
        """_search() by the board's compiled tree, which asks the Stopper as _poll() does."""
        native = self.native
        assert native is not None   # _root calls this only with a compiled tree
        score, self.nodes, seldepth = native.search(depth, alpha, beta, ply, self.stopper.should_stop,
                                                     self.nodes, self.node_limit)
        self.seldepth = max(self.seldepth, seldepth)
        if score is None:
            raise _Stopped
        return score

    # -- the driver ---------------------------------------------------------------
    def run(self) -> SearchResult:
        legal = list(self.state.legal_moves())
        if not legal:
            return SearchResult(best_move=None, value=0.0)
        plan = getattr(self.board, "root_plan", None)
        if plan is not None and not self.limits.searchmoves:
            win, allowed = plan(self.stopper)
            if win:
                return self._proven_win(tuple(win))
            if allowed:
                self.limits = replace(self.limits, searchmoves=tuple(allowed))
        root_moves = self._root_moves(legal)
        limits, stopper = self.limits, self.stopper
        max_depth = limits.depth if limits.depth is not None and not limits.infinite else self.config.max_depth
        wanted = max(1, min(limits.multipv, len(root_moves)))
        best_move: Move = root_moves[0]
        info: SearchInfo | None = None
        root_key = self.board.key()
        self.path.add(root_key)
        depth = 1
        iteration_time = growth = 0.0
        # With the compiled tree a stopped iteration still answers (below), so one is started
        # when about half of it fits; the Python tree's is wasted, so it must fit whole.
        keeps_partial = self.native is not None and wanted == 1
        fits = 0.5 if keeps_partial else 1.0
        while depth <= max(1, min(max_depth, self.max_ply)) and stopper.may_start_iteration(
                depth, self.nodes, iteration_time * growth * fits):
            started = stopper.elapsed()
            self.partial = None
            try:
                lines, settled = self._lines(root_moves, depth, wanted)
            except _Stopped:
                if keeps_partial and self.partial is not None:
                    score, best_move = self.partial
                    info = self._info(depth, score, self._pv(best_move, depth))
                    if self.on_info is not None:
                        self.on_info(info)
                break
            took = stopper.elapsed() - started
            growth = min(max(took / iteration_time, 2.0), 8.0) if iteration_time > 0 else 6.0
            iteration_time = took
            score, best_move, _ = lines[0]
            self.tt.store(hash(root_key), depth, EXACT, score, best_move)
            infos = [self._info(depth, line_score, pv, rank) for rank, (line_score, _, pv) in enumerate(lines, 1)]
            info = infos[0]
            if self.on_info is not None:
                for line_info in infos:
                    self.on_info(line_info)
            if self._resolved(lines, depth, settled, len(root_moves)):
                break
            depth += 1
        if limits.infinite and not stopper.event.is_set():
            stopper.event.wait()  # `go infinite`: the answer waits for stop
        if info is None:  # stopped inside depth 1: the first ordered move, a static value
            static = self.board.evaluate()
            info = SearchInfo(depth=0, seldepth=self.seldepth, value=value_from_cp(static),
                              nodes=self.nodes, time=stopper.elapsed(), pv=(best_move,), wdl=self._wdl(static))
            if self.on_info is not None:
                self.on_info(info)
        else:  # the last completed depth's answer, with the whole search's effort
            info = replace(info, nodes=self.nodes, time=stopper.elapsed(), hashfull=self._hashfull())
        ponder = info.pv[1] if len(info.pv) > 1 else None
        return SearchResult(best_move=best_move, value=info.value, info=info, ponder_move=ponder)

    def _resolved(self, lines: list[tuple[int, Move, tuple[Move, ...]]], depth: int, settled: bool,
                  n_moves: int) -> bool:
        """May iterative deepening end after `depth`?  Only when the limits let the search
        choose (not infinite, no fixed depth) and deeper passes cannot change the answer:
        one root move (legal or allowed), every root move's result known without search
        (`settled`), or every line's forced mate found with 4 plies to spare."""
        if self.limits.infinite or self.limits.depth is not None:
            return False
        if n_moves == 1 or settled:
            return True
        return all(abs(score) > MATE_BOUND and depth > MATE_SCORE - abs(score) + 4 for score, _, _ in lines)

    def _proven_win(self, line: tuple[Move, ...]) -> SearchResult:
        """The board proved a win before searching (root_plan): play its line at once."""
        info = SearchInfo(depth=1, seldepth=len(line), value=1.0, nodes=self.nodes,
                          time=self.stopper.elapsed(), pv=line, mate_plies=len(line))
        if self.on_info is not None:
            self.on_info(info)
        return SearchResult(best_move=line[0], value=1.0, info=info,
                            ponder_move=line[1] if len(line) > 1 else None)

    def _root_moves(self, legal: Sequence[Move]) -> list[Move]:
        """Root candidates in search order: searchmoves if given, else the board's moves."""
        board = self.board
        if self.limits.searchmoves:
            wanted = set(self.limits.searchmoves)
            chosen = [move for move in legal if move in wanted]
            if chosen:
                scores = dict(board.ordered_moves())
                return sorted(chosen, key=lambda move: scores.get(move, 0), reverse=True)
        scored = list(board.ordered_moves()) or [(move, 0) for move in legal]
        entry = self.tt.probe(hash(board.key()))
        tt_move = entry[4] if entry is not None else None
        scored.sort(key=lambda ms: (ms[0] == tt_move, ms[1]), reverse=True)
        return [move for move, _ in scored]

    def _lines(self, root_moves: list[Move], depth: int,
               count: int) -> tuple[list[tuple[int, Move, tuple[Move, ...]]], bool]:
        """One iteration: `count` (MultiPV) root searches at `depth`, each without the root
        moves found by the earlier ones.  Returns ((score, move, pv) best first, settled:
        every root move ended the game at once, so deeper passes change nothing), and
        leaves those moves, in that order, at the front of root_moves to lead the next
        iteration.  Each pv is read from the TT before the next search can overwrite it."""
        lines: list[tuple[int, Move, tuple[Move, ...]]] = []
        settled = True
        for index in range(count):
            score, move, exact = self._root(root_moves[index:], depth)
            settled = settled and exact
            root_moves.remove(move)
            root_moves.insert(index, move)
            lines.append((score, move, self._pv(move, depth)))
        if count > 1:
            lines.sort(key=itemgetter(0), reverse=True)  # stable: a tie keeps the search order
            root_moves[:count] = [move for _, move, _ in lines]
        return lines, settled

    def _hashfull(self) -> int:
        return self.tt.hashfull() if self.native is None else self.native.hashfull()

    def _info(self, depth: int, score: int, pv: tuple[Move, ...], multipv: int = 1) -> SearchInfo:
        mate_plies = None
        if abs(score) > MATE_BOUND:
            mate_plies = MATE_SCORE - score if score > 0 else -(MATE_SCORE + score)
            value = 1.0 if score > 0 else -1.0
        else:
            value = value_from_cp(score)
        return SearchInfo(depth=depth, seldepth=max(depth, self.seldepth), value=value,
                          nodes=self.nodes, time=self.stopper.elapsed(), pv=pv,
                          mate_plies=mate_plies, wdl=self._wdl(score), multipv=multipv, hashfull=self._hashfull())

    def _wdl(self, score: int) -> tuple[int, int, int] | None:
        """Win/draw/loss per mille: certain for a forced result, else the board's model of
        what its scores mean (optional hook wdl(score); None without one)."""
        if abs(score) > MATE_BOUND:
            return (1000, 0, 0) if score > 0 else (0, 0, 1000)
        model = getattr(self.board, "wdl", None)
        return model(score) if model is not None else None

    def _pv(self, move: Move, depth: int) -> tuple[Move, ...]:
        """The root move, then TT moves while each is among the board's moves (so legal)."""
        board, tt = self.board, self.tt
        pv = [move]
        board.push(move)
        seen = set(self.path)  # the game's positions: a return to one ends the line (a draw to the search)
        if board.key() in seen:
            board.pop()
            return tuple(pv)
        seen.add(board.key())
        if self.native is not None:
            pv += self.native.pv(depth + 7)
            board.pop()
            return tuple(pv)
        while len(pv) < depth + 8 and board.terminal() is None:
            entry = tt.probe(hash(board.key()))
            if entry is None or entry[4] is None or entry[4] not in [m for m, _ in board.ordered_moves()]:
                break
            pv.append(entry[4])
            board.push(entry[4])
            if board.key() in seen:
                break
            seen.add(board.key())
        for _ in pv:
            board.pop()
        return tuple(pv)

    # -- the tree -----------------------------------------------------------------
    def _root(self, root_moves: list[Move], depth: int) -> tuple[int, Move, bool]:
        """(score, best move, exact): exact when every root move ended the game at once."""
        board = self.board
        search = self._search if self.native is None else self._native_search
        self.nodes += 1
        alpha, beta = -INF, INF
        best, best_move = -INF, root_moves[0]
        path = self.path
        exact = True
        for index, move in enumerate(root_moves):
            board.push(move)
            try:
                if board.key() in path:
                    score = 0  # back to a position of the game (quiescence would not see it)
                elif exact and (result := board.terminal()) is not None:
                    score = -_terminal_score(result, 1)  # mate, stalemate or a rule draw at once
                else:
                    exact = False  # a move into a live position: deeper passes may see more
                    if index == 0:
                        score = -search(depth - 1, -beta, -alpha, 1)
                    else:
                        score = -search(depth - 1, -alpha - 1, -alpha, 1)
                        if score > alpha:
                            score = -search(depth - 1, -beta, -alpha, 1)
            finally:
                board.pop()   # the Python tree may leave deeper pushes behind when stopped
            if score > best:
                if index > 0:
                    self.partial = (score, move)   # searched in full: better than the last best
                best, best_move = score, move
                if score > alpha:
                    alpha = score
        return best, best_move, exact

    def _search(self, depth: int, alpha: int, beta: int, ply: int, null_ok: bool = True) -> int:
        if depth <= 0:
            return self._qsearch(alpha, beta, ply)
        board = self.board
        self.nodes += 1
        if self.nodes >= self.next_poll:
            self._poll()
        key = board.key()
        if key in self.path:
            return 0  # a repetition: the side that repeats could have, so it is a draw
        result = self.terminal()
        if result is not None:
            return _terminal_score(result, ply)
        if ply >= self.max_ply:
            return board.evaluate()
        mate = MATE_SCORE - ply  # mate-distance pruning: no line here beats a mate found nearer the root
        if alpha < -mate:
            alpha = -mate
        if beta > mate - 1:
            beta = mate - 1
        if alpha >= beta:
            return alpha

        h = hash(key)
        entry = self.tt.probe(h)
        tt_move = None
        if entry is not None:
            tt_move = entry[4]
            if entry[1] >= depth and beta - alpha == 1:
                score = _from_tt(entry[3], ply)
                flag = entry[2]
                if flag == EXACT or (flag == LOWER and score >= beta) or (flag == UPPER and score <= alpha):
                    return score

        in_check = board.in_check()
        if in_check:
            depth += 1
        elif (null_ok and depth >= 3 and beta - alpha == 1 and self.null_move
              and board.null_move_safe() and board.evaluate() >= beta):  # type: ignore[attr-defined]
            # Passing still fails high: a real move would too (R = 2, no null twice in a row).
            board.push_null()  # type: ignore[attr-defined]
            score = -self._search(depth - 3, -beta, 1 - beta, ply + 1, False)
            board.pop()
            if score >= beta:
                return beta if score > MATE_BOUND else score
        moves = board.ordered_moves()
        if not moves:
            return ply - MATE_SCORE if in_check else 0
        killers = self.killers[ply]
        ordered = self._order(moves, tt_move, killers)

        self.path.add(key)
        search = self._search
        alpha0 = alpha
        best, best_move = -INF, None
        reduce_ok = self.lmr and depth >= 3 and not in_check and beta - alpha == 1
        for index, (move, order_key) in enumerate(ordered):
            board.push(move)
            if index == 0:
                score = -search(depth - 1, -beta, -alpha, ply + 1)
            else:
                reduction = 0
                if reduce_ok and index >= 3 and order_key < _KILLER_BONUS and not board.in_check():
                    reduction = 1 if index < 8 else 2
                score = -search(depth - 1 - reduction, -alpha - 1, -alpha, ply + 1)
                if score > alpha and (reduction or score < beta):
                    score = -search(depth - 1, -beta, -alpha, ply + 1)
            board.pop()
            if score > best:
                best, best_move = score, move
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        if board.is_quiet(move):
                            if killers[0] != move:
                                killers[1] = killers[0]
                                killers[0] = move
                            history = self.history
                            history[move] = min(_HISTORY_CAP, history.get(move, 0) + depth * depth)
                        break
        self.path.discard(key)
        flag = LOWER if best >= beta else (EXACT if best > alpha0 else UPPER)
        self.tt.store(h, depth, flag, _to_tt(best, ply), best_move)
        return best

    def _order(self, moves: Sequence[tuple[Move, int]], tt_move: Move | None,
               killers: list[Move | None]) -> list[tuple[Move, int]]:
        """(move, key) best first: TT move, noisy moves, killers, history + the board's order.

        The TT and killer bonuses ride on the history table for the time of one lookup
        per move: a chess.Move compares in Python, so three comparisons per move would
        cost more than the hash the history lookup pays anyway.
        """
        history = self.history
        bonuses: dict[Move, int] = {}
        for bonus, move in ((_KILLER_BONUS, killers[1]), (_KILLER_BONUS + 1, killers[0]), (_TT_BONUS, tt_move)):
            if move is not None:
                bonuses[move] = bonus
        saved = [(move, history.get(move)) for move in bonuses]
        for move, bonus in bonuses.items():
            history[move] = history.get(move, 0) + bonus
        history_get = history.get
        keyed = [(move, score + history_get(move, 0)) for move, score in moves]
        for move, old in saved:
            if old is None:
                del history[move]
            else:
                history[move] = old
        keyed.sort(key=_SECOND, reverse=True)
        return keyed

    def _qsearch(self, alpha: int, beta: int, ply: int) -> int:
        board = self.board
        self.nodes += 1
        if self.nodes >= self.next_poll:
            self._poll()
        if ply > self.seldepth:
            self.seldepth = ply
        result = self.terminal()
        if result is not None:
            return _terminal_score(result, ply)
        if ply >= self.max_ply:
            return board.evaluate()
        if board.in_check():
            best = -INF  # no stand-pat: every evasion is searched
            moves = list(board.ordered_moves())
            if not moves:
                return ply - MATE_SCORE
        else:
            best = board.evaluate()
            if best >= beta:
                return best
            if best > alpha:
                alpha = best
            moves = list(board.noisy_moves())
            if not moves:
                return best
        moves.sort(key=_SECOND, reverse=True)
        qsearch = self._qsearch
        for move, _ in moves:
            board.push(move)
            score = -qsearch(-beta, -alpha, ply + 1)
            board.pop()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best
