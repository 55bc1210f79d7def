"""Whole games across the namespace LAN (tests/netns.py): the real bean-lobby on its host,
`bean-client bot`s on theirs and a person's REPL (typed by tests/lan_repl_player.py) on its
own, each with its own files as on its own machine. Every link between hosts is real TCP to
the address the lobby saw (inside a namespace 127.0.0.1 reaches only that host itself). Also
with one player behind a slow and lossy relay, and the loopback mistakes, which fail early
with the fix."""

from __future__ import annotations

import ipaddress
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.defer import DeferredList, gatherResults

from client.gamefile import GameFile
from tests.netns import (  # lan_fixture: the make_lan fixture
    FAMILY,
    VENV_BIN,
    HostProcess,
    LobbyOnLan,
    lan_fixture,  # noqa: F401
    lan_keys,
    link_names,
    netns_names,
)
from tests.relay import LinkProfile
from tests.waiting import within

pytestmark = pytest.mark.slow

PEER_PORT = 4000  # every client listens on this port on all interfaces (as only separate hosts can)
TABLE = 4  # players in a game
GAME_SECONDS = 90.0
RELAYED_GAME_SECONDS = 150.0  # the links wait up to 3 s for a direct dial first
EARLY_SECONDS = 10.0  # a set-up mistake is reported within this
# Each way: 20-40 ms, and a reset before any 1 KiB segment with chance 1/200. A link between
# two of 4 players carries about 300 KB each way in a game; with this seed (relay.LinkSchedule)
# one of the relayed player's first three links is reset within its first 170 KiB however the
# seats fall, and in all a game loses about four links.
LOSSY = LinkProfile(delay=0.02, jitter=0.02, reset_chance=0.005, seed=b"lan game")


@pytest.fixture(scope="module", autouse=True)
def nothing_left_behind() -> Iterator[None]:
    """After the module: no namespace of this run and no link of a LAN that is gone."""
    yield
    ours = [name for name in netns_names() if f"-p{os.getpid()}-" in name]
    live = set(lan_keys())
    stray = [name for name in link_names() if name.startswith(FAMILY) and name[3:7] not in live]
    assert ours == [] and stray == []


def client_env(tmp_path: Path, name: str) -> dict[str, str]:
    """A client's own identity and game files, as on its own machine."""
    home = tmp_path / name
    return dict(
        os.environ,
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        NO_COLOR="1",
    )


def game_arguments(lobby: str, name: str, seats: int, listen: str) -> list[str]:
    return [
        lobby, "--seats", str(seats), "--name", name, "--listen", listen,
    ]  # fmt: skip


def start_bot(
    lan: Any,
    host: Any,
    lobby: str,
    name: str,
    tmp_path: Path,
    seats: int = TABLE,
    listen: str = f"tcp:{PEER_PORT}",
) -> HostProcess:
    """`bean-client bot` on a host (`lobby`: HOST:PORT)."""
    argv = [str(VENV_BIN / "bean-client"), "bot", *game_arguments(lobby, name, seats, listen)]
    return lan.spawn(host, [*argv, "--json"], env=client_env(tmp_path, name))


def start_person(lan: Any, host: Any, lobby: LobbyOnLan, name: str, tmp_path: Path) -> HostProcess:
    """A person's seat in the REPL, typed (tests/lan_repl_player.py)."""
    arguments = game_arguments(lobby.endpoint, name, TABLE, f"tcp:{PEER_PORT}")
    return lan.spawn_python(
        host, "tests.lan_repl_player", *arguments, env=client_env(tmp_path, name)
    )


async def game_results(clients: dict[str, HostProcess], seconds: float) -> dict[str, Any]:
    """Each client's exit code and last JSON line (its summary), once all have ended; fails
    as soon as one fails, or when they have not all ended within `seconds`."""

    def succeeded(code: int | None) -> None:
        if code != 0:
            raise AssertionError(f"a client failed (exit {code})")

    ended = [client.finished(seconds).addCallback(succeeded) for client in clients.values()]
    try:
        await within(DeferredList(ended, fireOnOneErrback=True, consumeErrors=True), seconds)
    except Exception as error:
        logs = "\n".join(client.describe()[-3000:] for client in clients.values())
        raise AssertionError(f"the game did not end well ({error!r}):\n{logs}") from None
    results = {}
    for name, client in clients.items():
        lines = client.json_lines()
        assert lines, client.describe()
        results[name] = lines[-1] | {"exit": client.exit_code}
    return results


def assert_one_agreed_game(results: dict[str, Any]) -> None:
    assert all(r["exit"] == 0 and r["ok"] for r in results.values()), results
    assert all(r["cheat"] is None and r["audit"] == [] and r["agreed"] for r in results.values())
    assert len({r["game"] for r in results.values()}) == 1
    assert len({(r["final_state"], tuple(r["scores"])) for r in results.values()}) == 1
    assert sorted(r["seat"] for r in results.values()) == list(range(len(results)))


def roster_seen(tmp_path: Path, name: str) -> dict[str, tuple[str, int]]:
    """The roster in a client's game file: each seat's name -> (host, port)."""
    (path,) = (tmp_path / name / "data" / "bohnanza-p2p" / "games").glob("*.game")
    return {seat.name: (seat.host, seat.port) for seat in GameFile.read(path).roster.seats}


@pytest_twisted.ensureDeferred
async def test_bots_and_a_person_at_the_repl_play_a_game_across_the_lan(make_lan, tmp_path):
    lan = make_lan(players=TABLE)
    lobby = await lan.start_lobby()
    *bot_hosts, person_host = lan.players
    clients = {
        f"bot{i}": start_bot(lan, host, lobby.endpoint, f"bot{i}", tmp_path)
        for i, host in enumerate(bot_hosts, 1)
    }
    clients["person"] = start_person(lan, person_host, lobby, "person", tmp_path)
    results = await game_results(clients, GAME_SECONDS)
    assert_one_agreed_game(results)
    repl = clients["person"].json_lines()[-2]
    assert repl["typed"] >= 10  # the person's moves went through the REPL's command line
    trades = {"bot offer accepted", "offer accepted by a bot", "gift accepted by a bot"}
    assert trades & set(repl["seen"]), repl  # and it traded with bots on other hosts
    (shown,) = [" ".join(line.split()) for line in repl["outcome"]]  # as the REPL wrapped it
    assert "machine agrees; the audit passed" in shown, shown
    # Every client was told to reach every seat at that seat's own host, not at 127.0.0.1.
    expected = {
        name: (host.address, PEER_PORT) for name, host in zip(clients, lan.players, strict=True)
    }
    assert len({host for host, _ in expected.values()}) == TABLE
    assert not any(ipaddress.ip_address(host).is_loopback for host, _ in expected.values())
    for name in clients:
        assert roster_seen(tmp_path, name) == expected


@pytest_twisted.ensureDeferred
async def test_a_game_completes_with_one_player_behind_a_slow_and_lossy_link(make_lan, tmp_path):
    lan = make_lan(players=TABLE)
    lobby = await lan.start_lobby()
    behind = lan.players[-1]
    route = await lan.put_behind_relay(behind, lobby, PEER_PORT, LOSSY)
    clients = {
        f"bot{i}": start_bot(lan, host, lobby.endpoint, f"bot{i}", tmp_path)
        for i, host in enumerate(lan.players, 1)
    }
    results = await game_results(clients, GAME_SECONDS)
    assert_one_agreed_game(results)
    # The others reach bot4 at the relay host, where the lobby saw it.
    assert roster_seen(tmp_path, "bot1")["bot4"] == (route.address, PEER_PORT)
    lobby_link = f"{lobby.host.name}:{lobby.port}"
    peer_relays = [route.inbound, *(r for n, r in route.outbound.items() if n != lobby_link)]
    resets = sum(relay.count("reset") for relay in peer_relays)
    links = sum(relay.opened() for relay in peer_relays)
    relayed = {relay.address: relay.events() for relay in peer_relays}
    print(json.dumps({"resets": resets, "links": links, "seconds": results["bot1"].get("game_s")}))
    assert resets >= 1, relayed  # the link really was lost during the game...
    assert links > len(lan.players) - 1, relayed  # ...and bot4's links were opened again


def answers(lan: Any, host: Any, address: str) -> bool:
    """Whether a machine at `address` answers `host` (a closed port's refusal is an answer)."""
    probe = (
        "import socket, sys\n"
        "try:\n"
        f"    socket.create_connection(({address!r}, 9), timeout=2)\n"
        "except ConnectionRefusedError:\n"
        "    sys.exit(0)\n"
        "except OSError:\n"
        "    sys.exit(1)\n"
    )
    return lan.run(host, [sys.executable, "-c", probe], check=False).returncode == 0


@pytest_twisted.ensureDeferred
async def test_players_who_reach_the_lobby_but_not_each_other_play_through_its_relay(
    make_lan, tmp_path
):
    """Client isolation: every player host reaches the lobby's host and no other player's.
    Every link goes through the lobby's relay and the game ends agreed, the audit passing."""
    lan = make_lan(players=TABLE)
    lan.isolate(lan.players)
    lobby = await lan.start_lobby()
    assert not answers(lan, lan.players[0], lan.players[1].address)  # isolated indeed
    assert answers(lan, lan.players[0], lan.lobby.address)
    clients = {
        f"bot{i}": start_bot(lan, host, lobby.endpoint, f"bot{i}", tmp_path)
        for i, host in enumerate(lan.players, 1)
    }
    results = await game_results(clients, RELAYED_GAME_SECONDS)
    assert_one_agreed_game(results)


@pytest_twisted.ensureDeferred
async def test_one_pair_that_cannot_reach_each_other_is_relayed_and_the_game_ends_agreed(
    make_lan, tmp_path
):
    """Players p1 and p2 reject each other; every other pair links directly. Their one link
    goes through the lobby's relay and the game ends agreed, the audit passing."""
    lan = make_lan(players=TABLE)
    lan.cut_pair(lan.players[0], lan.players[1])
    lobby = await lan.start_lobby()
    assert not answers(lan, lan.players[0], lan.players[1].address)
    assert answers(lan, lan.players[0], lan.players[2].address)
    clients = {
        f"bot{i}": start_bot(lan, host, lobby.endpoint, f"bot{i}", tmp_path)
        for i, host in enumerate(lan.players, 1)
    }
    results = await game_results(clients, RELAYED_GAME_SECONDS)
    assert_one_agreed_game(results)


@pytest_twisted.ensureDeferred
async def test_a_hostile_relay_on_an_isolated_lan_names_nobody(make_lan, tmp_path):
    """Isolated players, and the lobby's relay cuts the first three links it splices some
    way in and drops bytes of none: every link is made again through it, and the game ends
    agreed with the audit passing, nobody named."""
    lan = make_lan(players=TABLE)
    lan.isolate(lan.players)
    relay = lan.spawn_python(
        lan.lobby, "tests.hostile_relay", "--unreachable", "none", "--misbehave", "cut",
        "--listen", lan.lobby.address,
    )  # fmt: skip
    found = await relay.first_line(rb"bean-lobby listening on (\S+):(\d+)", 20)
    endpoint = f"{found.group(1).decode()}:{found.group(2).decode()}"
    clients = {
        f"bot{i}": start_bot(lan, host, endpoint, f"bot{i}", tmp_path)
        for i, host in enumerate(lan.players, 1)
    }
    results = await game_results(clients, RELAYED_GAME_SECONDS)
    assert_one_agreed_game(results)
    assert relay.lines().count("misbehaved cut") == 3, relay.describe()


@pytest_twisted.ensureDeferred
async def test_loopback_mistakes_fail_early_and_name_the_fix(make_lan, tmp_path):
    """A client listening on 127.0.0.1 only stops before it joins (the others wait on for a
    third player, told nothing: it never reached the lobby). A client that reaches the lobby
    through 127.0.0.1 on the lobby's host is listed at 127.0.0.1: at the roster every client
    stops, naming it."""
    lan = make_lan(players=3)
    lobby = await lan.start_lobby(args=["--listen", "tcp:0"])  # also on the lobby host's loopback
    one, two, three = lan.players
    waiting = {
        name: start_bot(lan, host, lobby.endpoint, name, tmp_path, seats=3)
        for name, host in (("bot1", one), ("bot2", two))
    }
    on_loopback = f"tcp:{PEER_PORT}:interface=127.0.0.1"
    mistaken = start_bot(lan, three, lobby.endpoint, "bot3", tmp_path, 3, on_loopback)
    assert await mistaken.finished(EARLY_SECONDS) == 1, mistaken.describe()
    told = mistaken.stderr.decode()
    assert "you listen for other players on 127.0.0.1 only" in told, told
    assert "is a loopback address" in told and "--listen tcp:" in told, told
    assert mistaken.stdout == b""
    for bot in waiting.values():
        assert not bot.ended.called and bot.stdout == b"", bot.describe()
    # Now the third player joins from the lobby's own host, through 127.0.0.1.
    local_lobby = f"127.0.0.1:{lobby.port}"
    advertised = start_bot(lan, lan.lobby, local_lobby, "host", tmp_path, seats=3)
    everyone = {**waiting, "host": advertised}
    codes = await within(
        gatherResults([bot.finished(EARLY_SECONDS) for bot in everyone.values()]), EARLY_SECONDS
    )
    assert codes == [1, 1, 1], "\n".join(bot.describe() for bot in everyone.values())
    for name in waiting:
        told = everyone[name].stderr.decode()
        assert f"host is listed at 127.0.0.1:{PEER_PORT}, a loopback address" in told, told
        assert "should connect to the lobby at its LAN address" in told, told
    told = advertised.stderr.decode()
    assert "the lobby saw you at 127.0.0.1 because you reached it through loopback" in told, told
    assert "connect to the lobby at this machine's LAN address" in told, told
    assert not (tmp_path / "bot1" / "data" / "bohnanza-p2p" / "games").exists()  # no game began
