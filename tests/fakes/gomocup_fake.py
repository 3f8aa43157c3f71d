"""A fake Gomocup brain for arena fault tests: plays the empty cell nearest the centre, and
misbehaves on its N-th move request (1-based) as told:  gomocup_fake.py MODE [N] [SLEEP_MS]

MODE: ok | crash (exit) | hang (never answer) | illegal (an occupied cell) |
      garbage (noise, then an answer that is not x,y) | bigboard (refuses sizes over 10)
"""
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
when = int(sys.argv[2]) if len(sys.argv) > 2 else 1
sleep = int(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.0


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


size = 15
stones: dict[tuple[int, int], int] = {}
requests = 0
in_board = False


def answer() -> None:
    global requests
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
    c = size // 2
    empty = [(x, y) for x in range(size) for y in range(size) if (x, y) not in stones]
    x, y = min(empty, key=lambda p: (abs(p[0] - c) + abs(p[1] - c), p))
    stones[(x, y)] = 1
    say(f"MESSAGE depth 1 value +0.000 nodes {len(empty)}")
    say(f"{x},{y}")


for raw in sys.stdin:
    line = raw.strip()
    if not line:
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
        size = int(arg)
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
    elif cmd == "INFO":
        pass
    elif cmd == "ABOUT":
        say('name="fake", version="1"')
    elif cmd == "END":
        break
    else:
        say(f"UNKNOWN {cmd}")
