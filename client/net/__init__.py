"""A player's machine's links: everything that reaches another machine, and nothing of the game.

What it offers (callers outside the package import these from `client.net`):

- `sealed`: TLS 1.3 links over Twisted, pinned to the peers' Ed25519 keys (`dial`, `accept`,
  `peer_key`, `channel_binding`); the lobby listens with it too;
- `identity_store`: the key files of this machine (a player's identity, the lobby's key);
- `remembered`: the keys this machine saw before (lobbies by address, players by name), for
  the warnings when one changes;
- `lobby_client`: the lobby's protocol as a client (`LobbyClient`, `parse_lobby_address`);
- `mesh`: the links between the seats of a game (`Mesh`, `PeerListener`, `LinkLoss`);
- `relayed`: the ways a link may travel: directly, or through the lobby's relay;
- `discovery`: finding a lobby on this LAN (`find_lobbies`; `python -m client.net.discovery`);
- `lan_checks`: the LAN mistakes (a loopback address, a busy port, a firewall) told in words;
- `faults`: frames dropped, duplicated, held back or delayed on purpose, for the tests;
- `version`: what `--version` says (the release and the protocol version spoken).

It must never import the game (the driver, its file, the rules' adapters at the top of
client/), the bots (client.bots) or the screen (client.screen): the lobby takes its key files
and sealed links from here, and a link must not care what game its bytes carry. Of protocol/
it uses only the pure parts that define the wire.
"""

from client.net.discovery import FoundLobby, find_lobbies
from client.net.faults import FrameFaults
from client.net.identity_store import (
    APP_DIR,
    config_home,
    find_identity,
    find_profile,
    key_path,
    load_or_create,
    load_or_create_file,
    lobby_key_path,
)
from client.net.lan_checks import (
    LanProblem,
    PeerRefused,
    check_listen_address,
    check_roster,
    explain_bind_error,
    explain_lobby_error,
    explain_no_incoming_links,
    explain_peer_link_failure,
)
from client.net.lobby_client import (
    DEFAULT_LOBBY_PORT,
    LobbyClient,
    LobbyDisconnected,
    LobbyError,
    LobbyKeyChanged,
    LobbyListener,
    parse_lobby_address,
)
from client.net.mesh import LinkLoss, Mesh, MeshHandler, PeerListener
from client.net.relayed import relay_answers
from client.net.remembered import RememberedKeys, changed_player_keys
from client.net.sealed import accept, channel_binding, dial, peer_key
from client.net.version import version_line

__all__ = [
    "APP_DIR",
    "DEFAULT_LOBBY_PORT",
    "FoundLobby",
    "FrameFaults",
    "LanProblem",
    "LinkLoss",
    "LobbyClient",
    "LobbyDisconnected",
    "LobbyError",
    "LobbyKeyChanged",
    "LobbyListener",
    "Mesh",
    "MeshHandler",
    "PeerListener",
    "PeerRefused",
    "RememberedKeys",
    "accept",
    "changed_player_keys",
    "channel_binding",
    "check_listen_address",
    "check_roster",
    "config_home",
    "dial",
    "explain_bind_error",
    "explain_lobby_error",
    "explain_no_incoming_links",
    "explain_peer_link_failure",
    "find_identity",
    "find_lobbies",
    "find_profile",
    "key_path",
    "load_or_create",
    "load_or_create_file",
    "lobby_key_path",
    "parse_lobby_address",
    "peer_key",
    "relay_answers",
    "version_line",
]
