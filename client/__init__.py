"""One player's machine: the lobby client, the peer mesh, the lockstep, the REPL and the bots
(and `fairness`, the bots' mirror games that check no seat is favoured: scripts/bench fairness).

Two of its modules are adapters the lobby shares: `identity_store` (key files) and `sealed` (TLS
links over Twisted); they import nothing else of client/, so the lobby never depends on a game.
"""
