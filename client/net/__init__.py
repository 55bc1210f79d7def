"""A player's machine's links: everything that reaches another machine, and nothing of the game.

What it offers (callers outside the package import these from `client.net`):

- `sealed`: TLS 1.3 links over Twisted, pinned to the peers' Ed25519 keys (`dial`, `accept`,
  `peer_key`, `channel_binding`); the lobby listens with it too;
- `identity_store`: the key files of this machine (a player's identity, the lobby's key);
- `remembered`: the keys this machine saw before (lobbies by address, players by name), for
  the warnings when one changes;
- `lobby_client`: the lobby's protocol as a client (`LobbyClient`, `parse_lobby_address`);
- `mesh`: the links between the seats of a game (`Mesh`, `PeerListener`, `LinkLoss`);
- `discovery`: finding a lobby on this LAN (`find_lobbies`; `python -m client.net.discovery`);
- `lan_checks`: the LAN mistakes (a loopback address, a busy port, a firewall) told in words;
- `faults`: frames dropped, duplicated, held back or delayed on purpose, for the tests.

It must never import the game (the driver, its file, the rules' adapters at the top of
client/), the bots (client.bots) or the screen (client.screen): the lobby takes its key files
and sealed links from here, and a link must not care what game its bytes carry. Of protocol/
it uses only the pure parts that define the wire.
"""
