"""Console-script target for `engine`: the engine CLI plus the protocol servers."""
from __future__ import annotations

import sys

import click

from engine.cli import main, player_options
from engine.factory import PlayerOptions

__all__ = ["main"]


@main.command()
@player_options(default_player="alphabeta")
def uci(options: PlayerOptions) -> None:
    """Speak UCI (chess) on stdin/stdout."""
    from protocols.uci import serve
    sys.exit(serve(options, sys.stdin, sys.stdout))


@main.command()
@player_options(default_player="auto")
def gomocup(options: PlayerOptions) -> None:
    """Speak the Gomocup (piskvork) protocol on stdin/stdout."""
    from protocols.gomocup import serve_stdio
    sys.exit(serve_stdio(options))   # stderr silenced, one malloc arena (see protocols/gomocup.py)


if __name__ == "__main__":  # `python -m protocols.cli uci …`: how the arena launches built-in players
    main()
