"""One bot of `scripts/bench game`, for the benchmark only (no command line of bean-client
reaches what it changes): `plain` turns the peer links into unsealed TCP
(client.net.sealed.UNSEALED_LINKS_FOR_BENCHMARKS_ONLY), and every run plays the same game: each
bot's seed comes from the bench's seed and its name, the game identity (which labels every
secret of the deck) from the bench's seed alone, instead of from the lobby's random id, the
ports and fresh contributions; and the bots sit in the same order (each says `bench: seated`
on stderr once the lobby has seated it, and the bench starts the next bot then).

    python scripts/bench_bot.py sealed|plain SEED bean-client-bot-arguments...

tests/test_plain_golden.py seeds its own seat (in the test process) with `same_game_patches`
too, and runs its bots with this script.
"""

from __future__ import annotations

import hashlib
import sys
import types
from typing import Any

import client.bots.strategies
import client.net.lobby_client
import client.net.sealed
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


def same_game_patches(seed: str, name: str) -> list[tuple[Any, str, Any]]:
    """(module, attribute, value): what to set so that the seat `name` draws the same secrets
    and the game has the same identity every run (benchmarks and tests only)."""
    fixed = same_secrets_every_run(seed, name)
    same_identity = hashlib.shake_256(f"{seed}/identity".encode()).digest(16)

    def game_identity(roster: object, contributions: object) -> bytes:
        return same_identity

    return [
        (client.bots.strategies, "secrets", fixed),  # the lots a greedy or random bot draws
        (client.session, "secrets", fixed),
        (client.table_setup, "secrets", fixed),
        (protocol.table, "game_identity", game_identity),
        (client.table_setup, "game_identity", game_identity),
    ]


def main() -> None:
    links, seed, arguments = sys.argv[1], sys.argv[2], sys.argv[3:]
    client.net.sealed.UNSEALED_LINKS_FOR_BENCHMARKS_ONLY = links == "plain"
    name = arguments[arguments.index("--name") + 1]
    for module, attribute, value in same_game_patches(seed, name):
        setattr(module, attribute, value)
    quick_match = client.net.lobby_client.LobbyClient.quick_match

    def quick_match_and_say(self: object, *args: object) -> object:
        def seated(room: object) -> object:
            print("bench: seated", file=sys.stderr, flush=True)
            return room

        return quick_match(self, *args).addCallback(seated)  # type: ignore[arg-type]

    client.net.lobby_client.LobbyClient.quick_match = quick_match_and_say  # type: ignore[method-assign]
    from client.cli import main as bean_client

    bean_client(["bot", *arguments])


if __name__ == "__main__":
    main()
