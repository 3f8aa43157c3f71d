"""Games that exist only to prove a game is a local change (see tests/test_toy_game.py)."""
