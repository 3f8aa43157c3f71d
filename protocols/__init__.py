"""Protocol adapters: UCI and Gomocup servers (text <-> Engine calls) and the Gomocup client."""
