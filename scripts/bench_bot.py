"""One bot of `scripts/bench game`, for the benchmark only (no command line of bean-client
reaches what it changes): `plain` turns the peer links into unsealed TCP
(client.sealed.UNSEALED_LINKS_FOR_BENCHMARKS_ONLY), and every run plays the same game: each
bot's seed comes from the bench's seed and its name, the game identity (which labels every
secret of the deck) from the bench's seed alone, instead of from the lobby's random id, the
ports and fresh contributions; and the bots sit in the same order (each says `bench: seated`
on stderr once the lobby has seated it, and the bench starts the next bot then).

    python scripts/bench_bot.py sealed|plain SEED bean-client-bot-arguments...
"""

from __future__ import annotations

import hashlib
import sys
import types

import client.lobby_client
import client.sealed
import client.session
import client.table_setup
import protocol.table


def same_secrets_every_run(seed: str, name: str) -> types.SimpleNamespace:
    """A `secrets` module whose token_bytes repeats from run to run (benchmark only)."""
    drawn = [0]

    def token_bytes(count: int) -> bytes:
        drawn[0] += 1
        label = f"{seed}/{name}/{drawn[0]}".encode()
        return hashlib.shake_256(label).digest(count)

    return types.SimpleNamespace(token_bytes=token_bytes)


def main() -> None:
    links, seed, arguments = sys.argv[1], sys.argv[2], sys.argv[3:]
    client.sealed.UNSEALED_LINKS_FOR_BENCHMARKS_ONLY = links == "plain"
    name = arguments[arguments.index("--name") + 1]
    fixed = same_secrets_every_run(seed, name)
    client.session.secrets = fixed  # type: ignore[assignment]
    client.table_setup.secrets = fixed  # type: ignore[assignment]
    same_identity = hashlib.shake_256(f"{seed}/identity".encode()).digest(16)
    protocol.table.game_identity = lambda roster, contributions: same_identity
    client.table_setup.game_identity = protocol.table.game_identity
    quick_match = client.lobby_client.LobbyClient.quick_match

    def quick_match_and_say(self: object, *args: object) -> object:
        def seated(room: object) -> object:
            print("bench: seated", file=sys.stderr, flush=True)
            return room

        return quick_match(self, *args).addCallback(seated)  # type: ignore[arg-type]

    client.lobby_client.LobbyClient.quick_match = quick_match_and_say  # type: ignore[method-assign]
    from client.cli import main as bean_client

    bean_client(["bot", *arguments])


if __name__ == "__main__":
    main()
