"""One player's machine: a seat's game on the network, and the `bean-client` commands.

At the top: the game driver (`game`: a seat's lockstep over the mesh, with `presence`,
`ending` and `turn_clock`, and the verdicts and clocks of `protocol.blame` and
`protocol.step_watch`), its game file (`gamefile`), going back into a game
(`resume`), joining through the lobby (`session`, `table_setup`), the end of a game (`story`,
`summary`), the offline audit and replay (`offline`), and the entry points (`cli`, with
`local_table` for `play` and `runtime`).

Its packages: `client.net`, the links (sealed TLS, the mesh, the lobby client, LAN discovery
and checks, key files); `client.bots`, the strategies and the bots that play them; and
`client.screen`, the person's terminal. Each package's `__init__` says what it must never
import; the lobby takes only `client.net` from here (tests/test_layers.py keeps these rules).
"""
