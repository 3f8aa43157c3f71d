"""Make docs/play-gomoku.png and docs/play-chess.png: the web board in headless Chromium while
MCTS thinks (gomoku: the visit heat map; chess: arrows of the top moves).

    python docs/screenshots.py        (needs chromium + chromium-driver, like the browser tests)
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from board_client import RunningBoard  # noqa: E402
from browser import start_driver  # noqa: E402

from engine.web import GameSettings, Opponent  # noqa: E402


def shoot(settings: GameSettings, clicks: list[str], out: Path, think: float = 3.0) -> None:
    board = RunningBoard(settings)
    driver = start_driver(Path(tempfile.mkdtemp(prefix="plyzero-shot-")) / "profile")
    try:
        driver.get(board.url)
        time.sleep(2.0)
        for selector in clicks:
            driver.find_element("css selector", selector).click()
            time.sleep(0.3)
        time.sleep(think)                       # MCTS reports every 0.5 s; let the picture fill in
        driver.save_screenshot(str(out))
        print(f"wrote {out}")
    finally:
        driver.quit()
        board.close()


def main() -> None:
    gomoku = GameSettings(width=15, height=15, movetime=8.0, opponent=Opponent(
        options=(("player", "mcts"), ("weights", "gomoku"), ("batch", 8))),
        position="7,7 8,8 8,7 6,7 7,8 7,6 9,6 6,9")
    shoot(gomoku, ['.cell[data-xy="6,6"]'], HERE / "play-gomoku.png")
    chess = GameSettings(game="chess", movetime=8.0, opponent=Opponent(options=(("player", "mcts"), ("batch", 8))),
                         position="r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    shoot(chess, ['.sq[data-square="f1"]', '.sq[data-square="c4"]'], HERE / "play-chess.png")


if __name__ == "__main__":
    main()
