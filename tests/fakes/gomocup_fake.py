"""A fake Gomocup brain for arena fault tests: plays the empty cell nearest the centre, and
misbehaves on its N-th move request (1-based) as told:  gomocup_fake.py MODE [N] [SLEEP_MS]

MODE: ok | crash (exit) | hang (never answer) | illegal (an occupied cell) |
      garbage (noise, then an answer that is not x,y) | bigboard (refuses sizes over 10) |
      eval (as Rapfi: `MESSAGE ... | Eval v | ...` before each move, v = 40 * (own stones -
      opponent stones), and, like Rapfi just after a move, ignores the next command) |
      plain (no MESSAGE line at all) |
      swap2-stay / swap2-swap / swap2-place / swap2-bad: SWAP2BOARD answers (every other mode
      answers it too: three stones by the centre, then stays with one stone); given three stones
      -stay plays one, -swap answers SWAP (and given five too), -place places two (and given
      five stays with one); -bad proposes two stones instead of three
LOG, when given (4th argument), gets every command line received, for tests.
"""
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
when = int(sys.argv[2]) if len(sys.argv) > 2 else 1
sleep = int(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.0
log = open(sys.argv[4], "a") if len(sys.argv) > 4 else None


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


size = 15
height = 15
busy = False   # eval mode: the command right after a move is ignored (Rapfi's "still thinking")
stones: dict[tuple[int, int], int] = {}
requests = 0
in_board = False
swap2: list[tuple[int, int]] | None = None   # SWAP2BOARD's stones until DONE


def nearest_empty(count: int) -> list[tuple[int, int]]:
    c, cy = size // 2, height // 2
    empty = [(x, y) for x in range(size) for y in range(height) if (x, y) not in stones]
    return sorted(empty, key=lambda p: (abs(p[0] - c) + abs(p[1] - cy), p))[:count]


def answer_swap2(given: list[tuple[int, int]]) -> None:
    global stones
    stones = {cell: 1 for cell in given}
    if not given:
        c, cy = size // 2, height // 2
        proposal = [(c, cy), (c, cy - 1), (c + 1, cy + 1)][:2 if mode == "swap2-bad" else 3]
        say(" ".join(f"{x},{y}" for x, y in proposal))
    elif mode == "swap2-swap":
        say("SWAP")
    else:
        count = 2 if mode == "swap2-place" and len(given) == 3 else 1
        say(" ".join(f"{x},{y}" for x, y in nearest_empty(count)))


def answer() -> None:
    global requests, busy
    requests += 1
    if sleep:
        time.sleep(sleep)
    if requests >= when:
        if mode == "crash":
            sys.exit(3)
        if mode == "hang":
            return
        if mode == "illegal" and stones:
            x, y = next(iter(stones))
            say(f"{x},{y}")
            return
        if mode == "garbage":
            say("MESSAGE about to answer")
            say("hello world")
            return
    c, cy = size // 2, height // 2
    empty = [(x, y) for x in range(size) for y in range(height) if (x, y) not in stones]
    x, y = min(empty, key=lambda p: (abs(p[0] - c) + abs(p[1] - cy), p))
    if mode == "eval":
        own = sum(1 for f in stones.values() if f == 1)
        say(f"MESSAGE Speed 1K | Depth 3-5 | Eval {40 * (own - (len(stones) - own))} | Node 10 | Time 1ms")
        say("MESSAGE Bestline H8")
        busy = True
    elif mode != "plain":
        say(f"MESSAGE depth 1 value +0.000 nodes {len(empty)}")
    stones[(x, y)] = 1
    say(f"{x},{y}")


for raw in sys.stdin:
    line = raw.strip()
    if not line:
        continue
    if log is not None:
        log.write(line + "\n")
        log.flush()
    if busy and not in_board:
        busy = False
        continue
    if swap2 is not None:
        if line == "DONE":
            given, swap2 = swap2, None
            answer_swap2(given)
        else:
            x, y = (int(v) for v in line.split(",")[:2])   # x,y,field: the field is not needed
            swap2.append((x, y))
        continue
    if in_board:
        if line == "DONE":
            in_board = False
            answer()
        else:
            x, y, f = (int(v) for v in line.split(","))
            stones[(x, y)] = f
        continue
    cmd, _, arg = line.partition(" ")
    if cmd == "START":
        if mode == "bigboard" and int(arg) > 10:
            say("ERROR size not supported")
            continue
        size = height = int(arg)
        stones = {}
        say("OK")
    elif cmd == "RECTSTART":
        size, height = (int(v) for v in arg.split(","))
        stones = {}
        say("OK")
    elif cmd == "RESTART":
        stones = {}
        say("OK")
    elif cmd == "BEGIN":
        answer()
    elif cmd == "TURN":
        x, y = (int(v) for v in arg.split(","))
        stones[(x, y)] = 2
        answer()
    elif cmd == "BOARD":
        stones = {}
        in_board = True
    elif cmd == "SWAP2BOARD":
        swap2 = []
    elif cmd == "INFO":
        pass
    elif cmd == "ABOUT":
        say('name="fake", version="1"')
    elif cmd == "END":
        break
    else:
        say(f"UNKNOWN {cmd}")
