"""The player layer: options declared once, network resolution, and building a searcher.

Above engine/search and engine/nn (which import nothing from here); used by the
protocol servers, `engine bench`, the teacher and the arena.
"""
from engine.players.build import (FALLBACK_PLAYERS, BuiltPlayer, PlayerBuildError, UnknownPlayerError,
                                  build_player, make_searcher, network_evaluator, resolve_player)
from engine.players.networks import find_weights, resolve_network, shipped_weights
from engine.players.options import PLAYER_NAMES, PLAYER_OPTIONS, OptionSpec, PlayerOptions, option_by_key

__all__ = ["PlayerOptions", "OptionSpec", "PLAYER_OPTIONS", "PLAYER_NAMES", "option_by_key",
           "build_player", "make_searcher", "resolve_player", "BuiltPlayer", "PlayerBuildError",
           "UnknownPlayerError", "FALLBACK_PLAYERS", "network_evaluator",
           "resolve_network", "find_weights", "shipped_weights"]
