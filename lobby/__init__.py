"""bean-lobby: the matchmaker that introduces players and then steps aside.

What it offers: `bean-lobby` (`cli`), the lobby as a Twisted service (`service`: the sealed
listener, its key, the periodic sweeps), the protocol it speaks (`server`), its rooms
(`rooms`), its blind relay for seats that cannot reach each other (`relay`), the bounds on
what a client can make it hold (`limits`), and its answer to LAN discovery (`discovery`).

It depends on protocol/ (the wire formats) and takes from client/ only `client.net`, the
adapters both sides of a link share: the key files and the sealed TLS links.
It must never import the game, the bots or the screen: it never sees a card or plays a game.
"""
