"""One player's machine: the lobby client, the peer mesh, the lockstep, the REPL and the bots."""
