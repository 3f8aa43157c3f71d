"""The player options as UCI `option` lines and `setoption` values, generated from the
one declaration in engine/players/options.py (an option without a UCI name is not offered)."""
from __future__ import annotations

from engine.players import PLAYER_OPTIONS, OptionSpec, PlayerOptions

__all__ = ["player_option_lines", "set_player_option", "UCI_PLAYER_OPTIONS"]

UCI_PLAYER_OPTIONS: dict[str, OptionSpec] = {spec.uci.lower(): spec for spec in PLAYER_OPTIONS
                                             if spec.uci is not None}


def _line(spec: OptionSpec, value: object) -> str:
    head = f"option name {spec.uci} type"
    if spec.kind == "choice":
        return f"{head} combo default {value} " + " ".join(f"var {c}" for c in spec.choices)
    if spec.kind == "int":
        low = 0 if spec.default is None else int(spec.minimum or 0)   # 0: unset
        high = f" max {int(spec.maximum)}" if spec.maximum is not None else ""
        return f"{head} spin default {value or 0} min {low}{high}"
    # UCI has no float type: numbers and paths are strings; an unset number is the game's own
    if value is None:
        value = "auto" if spec.kind == "float" else "<empty>"
    return f"{head} string default {value}"


def player_option_lines(options: PlayerOptions) -> list[str]:
    """One `option` line per UCI player option, its default the current value."""
    return [_line(spec, getattr(options, spec.name)) for spec in UCI_PLAYER_OPTIONS.values()]


def set_player_option(options: PlayerOptions, name: str, value: str | None) -> PlayerOptions | None:
    """`setoption name <name> value <value>` applied to `options`; None when `name` is not a
    player option.  Raises ValueError (one line) for a bad value."""
    spec = UCI_PLAYER_OPTIONS.get(name.lower())
    if spec is None:
        return None
    return options.with_changes(**{spec.name: spec.parse(value)})
