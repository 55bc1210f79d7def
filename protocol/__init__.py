"""The rules, the deck and the wire formats every machine shares. Pure: no I/O of any kind."""
