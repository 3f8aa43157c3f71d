"""`python -m engine.cli uci …`: how the arena launches a built-in player."""
from engine.cli import main

main()
