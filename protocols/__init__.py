"""Protocol adapters: UCI and Gomocup servers (text <-> SearchThread calls, plus the session state
each protocol needs), the Gomocup client, and cli.py (the console scripts, the only click code)."""
