"""The `engine` command line, every `engine …` subcommand and `pbrain-plyzero`, thin over library
calls: the composition root, and the only part of engine/ that imports protocols/ and arena/ (it
starts external engines and runs the loop's gate).  `arena …` keeps arena/cli.py.

commands.py: the group, the shared options and the engine's own commands (bench, init-net,
quantize, selfplay, import, train, validate); serve.py: uci, gomocup, teacher, play and the
Gomocup brain's launcher; loop.py: the AlphaZero loop with the arena's gate.
`python -m engine.cli uci …` is how the arena starts a built-in player.
"""
from __future__ import annotations

from engine.cli import loop as _loop
from engine.cli import serve as _serve
from engine.cli.commands import board_specs, main, player_options

main.add_command(_loop.loop)
pbrain_main = _serve.pbrain_main

__all__ = ["main", "pbrain_main", "board_specs", "player_options"]
