"""bean-lobby: the matchmaker that introduces players and then steps aside."""
