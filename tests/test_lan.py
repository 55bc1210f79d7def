"""The namespace LAN is a real LAN: the lobby on its own host sees each player at the player's
own address, players on different hosts reach each other at the roster's addresses, nothing
gets out, and nothing is left behind."""

from __future__ import annotations

import ipaddress
import json
import os
import select
import signal
import subprocess
from typing import Any

import pytest_twisted
from twisted.internet.defer import gatherResults

from tests.netns import (  # lan_fixture: the make_lan fixture
    NamespaceLan,
    clean_stale,
    lan_fixture,  # noqa: F401
    link_names,
    namespaces_unavailable,
    netns_names,
    netns_pids,
    require_namespaces,
)
from tests.waiting import within


def events(process: Any, kind: str) -> list[dict[str, Any]]:
    return [event for event in process.json_lines() if event["event"] == kind]


def spawn_player(lan: Any, host: Any, lobby: str, name: str, *extra: str, seats: int = 3) -> Any:
    return lan.spawn_python(
        host,
        "tests.lan_agent",
        "player",
        *("--lobby", lobby, "--name", name, "--seats", str(seats), "--peer-port", "4000"),
        *extra,
    )


@pytest_twisted.ensureDeferred
async def test_players_on_their_own_hosts_are_seen_at_their_own_addresses(make_lan) -> None:
    lan = make_lan(players=4)
    lobby = await lan.start_lobby()
    assert lobby.address == lan.lobby.address
    players = {
        f"P{i}": spawn_player(lan, host, lobby.endpoint, f"P{i}", seats=4)
        for i, host in enumerate(lan.players, 1)
    }
    codes = await within(gatherResults([p.finished() for p in players.values()]), 60)
    assert codes == [0] * 4, "\n".join(p.describe() for p in players.values())
    addresses = {f"P{i}": host.address for i, host in enumerate(lan.players, 1)}
    for name, process in players.items():
        assert events(process, "welcome")[0]["host"] == addresses[name]
        (roster,) = events(process, "roster")
        # Every player listens on port 4000: only different machines can do that.
        assert {s["name"]: (s["host"], s["port"]) for s in roster["seats"]} == {
            other: (address, 4000) for other, address in addresses.items()
        }
        assert roster["problems"] == []
        reached = {event["seat"]: event["said"] for event in events(process, "reached")}
        assert reached == {other: other for other in addresses if other != name}
        assert events(process, "served")[0]["reached_by"] == sorted(set(addresses) - {name})
    hosts = [seat["host"] for seat in events(players["P1"], "roster")[0]["seats"]]
    assert len(set(hosts)) == 4
    assert not any(ipaddress.ip_address(host).is_loopback for host in hosts)


@pytest_twisted.ensureDeferred
async def test_a_host_reaches_nothing_outside_the_lan(make_lan) -> None:
    lan = make_lan(players=1)
    player = lan.players[0]
    routes = json.loads(lan.run(player, ["ip", "-j", "route", "show", "table", "all"]).stdout)
    ipv4 = [route for route in routes if ":" not in route["dst"] and route.get("type") != "local"]
    assert {route["dst"] for route in ipv4 if route.get("type") != "broadcast"} == {str(lan.subnet)}
    assert not any(route["dst"] == "default" for route in routes)
    dial = lan.spawn_python(player, "tests.lan_agent", "dial", "1.1.1.1:443", "--timeout", "5")
    assert await dial.finished() == 0, dial.describe()
    (failed,) = events(dial, "failed")
    assert failed["seconds"] < 1.0  # no route: refused by this host's own stack at once
    assert failed["kind"] == "PeerUnreachable"
    # The bridge in the root namespace has no address: the host machine is not on the LAN.
    bridge = json.loads(subprocess.check_output(["ip", "-j", "addr", "show", "dev", lan.bridge]))
    assert [a for a in bridge[0]["addr_info"] if a["family"] == "inet"] == []


@pytest_twisted.ensureDeferred
async def test_teardown_kills_every_process_and_leaves_no_namespace_or_link() -> None:
    require_namespaces()
    lan = NamespaceLan.create(players=2)
    try:
        names = lan.names()
        assert set(names) <= set(netns_names()) | set(link_names())
        # A process group with a child: the whole group goes.
        sleeper = lan.spawn(lan.players[0], ["sh", "-c", "sleep 600 & echo started $!; wait"])
        found = await sleeper.first_line(rb"started (\d+)")
        pids = netns_pids(lan.players[0].netns)
        assert set(pids) == {sleeper.pid, int(found.group(1))}
        assert os.getpgid(sleeper.pid) == sleeper.pid
        assert os.getpgid(int(found.group(1))) == sleeper.pid
        await lan.stop_processes()
        assert sleeper.ended.called
    finally:
        lan.destroy()
    assert not set(names) & (set(netns_names()) | set(link_names()))
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}/ns/net")
    assert not any(name.startswith(f"bnz{lan.key}") for name in link_names())


def test_leftovers_of_a_dead_run_are_removed_and_live_lans_are_kept(make_lan) -> None:
    live = make_lan(players=1)
    dead_pid = _a_dead_pid()
    stale = NamespaceLan.create(players=1, owner_pid=dead_pid)
    left_running = subprocess.Popen(
        stale.exec_argv(stale.players[0], ["sh", "-c", "echo inside; exec sleep 600"]),
        stdout=subprocess.PIPE,
    )
    try:
        assert left_running.stdout is not None
        assert select.select([left_running.stdout], [], [], 10)[0], "the process did not start"
        assert left_running.stdout.readline() == b"inside\n"
        removed = clean_stale()  # (a concurrent run may have removed them first)
        assert all(name.startswith("bnz") for name in removed)
        present = set(netns_names()) | set(link_names())
        assert not set(stale.names()) & present
        assert set(live.names()) <= present
        assert left_running.wait(10) == -signal.SIGKILL
    finally:
        stale.destroy()
        if left_running.poll() is None:
            left_running.kill()
            left_running.wait(10)
        left_running.stdout.close()


def _a_dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_without_root_or_ip_the_lan_tests_say_why_they_skip() -> None:
    missing = namespaces_unavailable(ip_command="/nonexistent/ip")
    assert missing is not None and "iproute2" in missing
    if namespaces_unavailable() is None:
        not_root = namespaces_unavailable(euid=1000)
        assert not_root is not None and "root" in not_root
