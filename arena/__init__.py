"""Arena: tournaments between engine processes, SQLite results, Elo ratings and reports."""
