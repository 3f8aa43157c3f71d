"""A fake UCI engine for arena fault tests: plays the first legal move, and misbehaves on its
N-th `go` (1-based) as told:  uci_fake.py MODE [N] [SLEEP_MS]

MODE: ok | crash (exit) | hang (never answer) | illegal (a legal-looking illegal move) |
      garbage (noise lines, then a bestmove that is not a move) |
      slownew (SLEEP_MS on every `ucinewgame` instead of on `go`: a new game's housekeeping)
With `setoption name MultiPV value k` it prints k lines (the first k legal moves, line i
scored 100 - 60 * i centipawns), each with `wdl` once UCI_ShowWDL is on (win 500 - 100 * i,
draw 300, the rest loss, per mille).
"""
import sys
import time

import chess

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
when = int(sys.argv[2]) if len(sys.argv) > 2 else 1
sleep = int(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.0


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


board = chess.Board()
goes = 0
multipv = 1
show_wdl = False
chess960 = False
for raw in sys.stdin:
    tokens = raw.split()
    if not tokens:
        continue
    cmd = tokens[0]
    if cmd == "uci":
        say("id name fake")
        say("option name Hash type spin default 16 min 1 max 64")
        say("option name MultiPV type spin default 1 min 1 max 64")
        say("option name UCI_ShowWDL type check default false")
        say("option name UCI_Chess960 type check default false")
        say("uciok")
    elif cmd == "setoption" and len(tokens) >= 5:
        name, value = tokens[2], tokens[4]
        if name == "MultiPV":
            multipv = int(value)
        elif name == "UCI_ShowWDL":
            show_wdl = value == "true"
        elif name == "UCI_Chess960":
            chess960 = value == "true"
    elif cmd == "isready":
        say("readyok")
    elif cmd == "ucinewgame" and mode == "slownew":
        time.sleep(sleep)
    elif cmd == "position":
        if tokens[1] == "startpos":
            board = chess.Board(chess960=chess960)
            rest = tokens[2:]
        else:
            board = chess.Board(" ".join(tokens[2:8]), chess960=chess960)
            rest = tokens[8:]
        for move in rest[1:] if rest and rest[0] == "moves" else []:
            board.push_uci(move)
    elif cmd == "go":
        goes += 1
        if sleep and mode != "slownew":
            time.sleep(sleep)
        if goes >= when and mode == "crash":
            sys.exit(3)
        if goes >= when and mode == "hang":
            continue
        if goes >= when and mode == "illegal":
            for move in (chess.Move.from_uci(u) for u in ("a1a8", "h1h8", "a8a1", "h8h1", "e1e8", "e8e1")):
                if move not in board.legal_moves:
                    say(f"bestmove {move.uci()}")
                    break
            continue
        if goes >= when and mode == "garbage":
            say("this is not uci at all")
            say("info depth banana")
            say("bestmove hello")
            continue
        legal = list(board.legal_moves)
        for i, move in enumerate(legal[:multipv]):
            wdl = f" wdl {500 - 100 * i} 300 {200 + 100 * i}" if show_wdl else ""
            say(f"info depth 1 multipv {i + 1} score cp {100 - 60 * i}{wdl} nodes 1 pv {move.uci()}")
        say(f"bestmove {legal[0].uci()}")
    elif cmd == "quit":
        break
