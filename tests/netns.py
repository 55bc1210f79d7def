"""A small LAN made of Linux network namespaces: for tests (the `make_lan` fixture) and for
people (`scripts/lan`, which imports this module).

    lan = make_lan(players=3)                  # a test; elsewhere NamespaceLan.create(...)
    lan.lobby.address, lan.players[0].address  # '10.213.0.10', '10.213.0.11'
    lobby = await lan.start_lobby()            # the real bean-lobby, in the lobby's namespace
    bot = lan.spawn(lan.players[0], [...])     # any command on a host, output captured
    route = await lan.put_behind_relay(lan.players[2], lobby, 4000, LinkProfile(delay=0.2))
                                               # every link of p3 now crosses a slow relay host
    lan.isolate(lan.players)                   # they reach the lobby's host, not each other
    lan.cut_pair(lan.players[0], lan.players[1])   # only those two cannot reach each other

Topology: one bridge in the root namespace with no address of its own; one namespace per host
(`lobby`, `p1` … `pN`, and any host added later), each joined to the bridge by a veth pair
whose inner end is called `eth0`. Hosts get addresses in a private subnet (default
10.213.0.0/24, or $BNZ_LAN_SUBNET): the lobby .10, player i .(10+i), added hosts .100 up. Each
namespace has its loopback up and only the route to its subnet: no default route, so nothing in
it can reach (or be reached from) anything outside the LAN, and the addresses exist only there.
IPv6 is off on the bridge and the veths, and the hosts' interfaces make no IPv6 addresses, so
the traffic on the LAN is what the tests make (and the kernel's IGMP reports).

Names: everything starts with the family prefix `bnz`. A LAN has a key (4 hex digits); its
namespaces are `bnz-KEY-OWNER-HOST`, where OWNER is `p<pid>` of the process that made it (a
test run) or `keep` (a LAN made by `scripts/lan up`, removed only by `scripts/lan down`). Its
bridge is `bnzKEY` and its host-side veths `bnzKEYHOST` (15 characters at most). Concurrent runs
pick different keys; `clean_stale()` removes the LANs whose owner process is gone (a crashed or
killed run) and links whose LAN is gone, and never touches a live run's LAN.

Processes started on a host (`spawn`) run under `ip netns exec NS setsid CMD`: each leads its
own process group, which `stop_processes` signals (TERM, then KILL); `destroy` then kills
whatever is still inside the namespaces before deleting them.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.defer import Deferred, gatherResults
from twisted.internet.error import ProcessDone
from twisted.internet.protocol import ProcessProtocol
from twisted.python.failure import Failure

from tests.waiting import Watched, within

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
FAMILY = "bnz"
DEFAULT_SUBNET = "10.213.0.0/24"
SUBNET_VARIABLE = "BNZ_LAN_SUBNET"
LOBBY = "lobby"
LOBBY_INDEX = 10
PLAYER_BASE = 10
EXTRA_BASE = 100
MAX_PLAYERS = 20
IP_TIMEOUT = 15.0
STOP_SECONDS = 5.0

_HOST_NAME = re.compile(r"[a-z][a-z0-9]{0,7}")
_NETNS_NAME = re.compile(rf"{FAMILY}-([0-9a-f]{{4}})-(p\d+|keep)-([a-z][a-z0-9]{{0,7}})")
_LINK_NAME = re.compile(rf"{FAMILY}([0-9a-f]{{4}})[a-z0-9]{{0,8}}")


class LanError(Exception):
    """Building, using or removing the namespace LAN failed; the sentence says which step."""


# -- availability ----------------------------------------------------------------------------


def namespaces_unavailable(ip_command: str = "ip", euid: int | None = None) -> str | None:
    """Why this machine cannot build the LAN (a sentence), or None when it can: it needs root
    and iproute2's `ip`, and the kernel must allow new network namespaces."""
    if shutil.which(ip_command) is None:
        return (
            f"the LAN tests need iproute2's `{ip_command}` command, which is not installed "
            "(Debian: apt-get install iproute2)"
        )
    if shutil.which("setsid") is None:
        return "the LAN tests need util-linux's `setsid`, which is not installed"
    if (os.geteuid() if euid is None else euid) != 0:
        return "the LAN tests build network namespaces, which needs root (run them as root)"
    probe = f"{FAMILY}-{secrets.token_hex(2)}-p{os.getpid()}-probe"  # clean_stale knows it
    made = subprocess.run(
        [ip_command, "netns", "add", probe], capture_output=True, text=True, timeout=IP_TIMEOUT
    )
    if made.returncode != 0:
        return f"cannot create a network namespace here: {made.stderr.strip() or 'ip failed'}"
    subprocess.run([ip_command, "netns", "delete", probe], capture_output=True, timeout=IP_TIMEOUT)
    return None


# -- running ip ------------------------------------------------------------------------------


def ip(*args: str, netns: str | None = None, check: bool = True, stdin: str | None = None) -> str:
    """Run `ip [-n NETNS] ARGS`; returns stdout, raises LanError with ip's own sentence."""
    argv = ["ip", *(["-n", netns] if netns else []), *args]
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=IP_TIMEOUT)
    if check and done.returncode != 0:
        raise LanError(f"`{' '.join(argv)}` failed: {done.stderr.strip()}")
    return done.stdout


def netns_names() -> list[str]:
    """Every named network namespace (`ip netns list` prints `NAME (id: N)` lines)."""
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()]


def link_names() -> list[str]:
    """Every network interface of the root namespace (`veth@peer` names without the peer)."""
    links = json.loads(ip("-j", "link", "show") or "[]")
    return [link["ifname"] for link in links]


def netns_pids(netns: str) -> list[int]:
    return [int(pid) for pid in ip("netns", "pids", netns, check=False).split()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_all_in(netns: str) -> None:
    for pid in netns_pids(netns):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _terminate_all_in(namespaces: list[str], grace: float) -> None:
    """TERM everything in the namespaces, then wait (polling: they are not our children) at
    most `grace` seconds for them to end."""
    for netns in namespaces:
        for pid in netns_pids(netns):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(netns_pids(netns) for netns in namespaces):
        time.sleep(0.05)


def _no_ipv6(link: str) -> None:
    """The root namespace's IPv6 stays off the LAN's bridge and veths (and quiet)."""
    with contextlib.suppress(OSError):  # a kernel without IPv6 has nothing to turn off
        Path(f"/proc/sys/net/ipv6/conf/{link}/disable_ipv6").write_text("1")


def clean_stale() -> list[str]:
    """Remove what crashed runs left: namespaces of this family whose owner process is gone
    (after killing what still runs in them) and links of LANs that no longer exist. Links are
    listed before namespaces because a LAN makes its namespaces first: a link seen here belongs
    to a LAN whose namespaces are visible next, unless that LAN is being removed anyway."""
    links = [name for name in link_names() if _LINK_NAME.fullmatch(name)]
    live_keys: set[str] = set()
    removed: list[str] = []
    for name in netns_names():
        match = _NETNS_NAME.fullmatch(name)
        if match is None:
            continue
        key, owner = match.group(1), match.group(2)
        if owner == "keep" or _pid_alive(int(owner[1:])):
            live_keys.add(key)
            continue
        _kill_all_in(name)
        ip("netns", "delete", name, check=False)
        removed.append(name)
    for name in links:
        match = _LINK_NAME.fullmatch(name)
        if match is not None and match.group(1) not in live_keys:
            ip("link", "delete", name, check=False)
            removed.append(name)
    return removed


def lan_keys() -> dict[str, list[str]]:
    """The LANs of this family now present: key -> their namespace names."""
    found: dict[str, list[str]] = {}
    for name in netns_names():
        match = _NETNS_NAME.fullmatch(name)
        if match is not None:
            found.setdefault(match.group(1), []).append(name)
    return found


# -- hosts and the LAN -----------------------------------------------------------------------


@dataclass(frozen=True)
class Host:
    """One machine of the LAN: a namespace with one interface (`eth0`) on the bridge."""

    name: str
    netns: str
    address: str
    prefixlen: int
    veth: str

    def __str__(self) -> str:
        return f"{self.name} ({self.address})"


@dataclass
class NamespaceLan:
    """A bridge and its hosts. Make one with `create`; `destroy` removes all of it."""

    key: str
    owner: str
    subnet: ipaddress.IPv4Network
    hosts: dict[str, Host] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)  # root-namespace links it made
    processes: list[HostProcess] = field(default_factory=list)
    destroyed: bool = False

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        players: int = 3,
        *,
        subnet: str | None = None,
        keep: bool = False,
        key: str | None = None,
        owner_pid: int | None = None,
    ) -> NamespaceLan:
        """A LAN with a lobby host and `players` player hosts. `keep`: owned by nobody (for
        `scripts/lan`), else by process `owner_pid` (default: this one; the tests of stale
        clean-up name a dead one). `key`: the LAN's key (else a free random one)."""
        if not 1 <= players <= MAX_PLAYERS:
            raise LanError(f"a LAN has 1 to {MAX_PLAYERS} player hosts, not {players}")
        network = parse_subnet(subnet or os.environ.get(SUBNET_VARIABLE) or DEFAULT_SUBNET)
        owner = "keep" if keep else f"p{os.getpid() if owner_pid is None else owner_pid}"
        for _ in range(8):
            chosen = key or secrets.token_hex(2)
            if chosen in lan_keys() or any(
                _LINK_NAME.fullmatch(name) and name[3:7] == chosen for name in link_names()
            ):
                if key is not None:
                    raise LanError(f"a LAN with key {key} exists already")
                continue
            lan = cls(chosen, owner, network)
            try:
                lan._build(players)
            except LanError:
                lan.destroy()
                if key is not None:
                    raise
                continue  # another run took this key at the same moment: try another
            except BaseException:
                lan.destroy()
                raise
            return lan
        raise LanError("could not build a LAN under any free key")

    @property
    def bridge(self) -> str:
        return f"{FAMILY}{self.key}"

    def _netns_name(self, host: str) -> str:
        return f"{FAMILY}-{self.key}-{self.owner}-{host}"

    def _build(self, players: int) -> None:
        names = [LOBBY, *(f"p{i}" for i in range(1, players + 1))]
        indexes = [LOBBY_INDEX, *(PLAYER_BASE + i for i in range(1, players + 1))]
        for name in names:  # namespaces before links: see clean_stale
            ip("netns", "add", self._netns_name(name))
        ip("link", "add", self.bridge, "type", "bridge")
        self.links.append(self.bridge)
        _no_ipv6(self.bridge)
        ip("link", "set", self.bridge, "up")
        for name, index in zip(names, indexes, strict=True):
            self._attach(name, index)

    def add_host(self, name: str) -> Host:
        """One more host on the LAN (a relay, a second lobby, ...), at .100 and up."""
        if name in self.hosts:
            raise LanError(f"the LAN has a host {name} already")
        _check_host_name(name)
        extras = sum(1 for host in self.hosts.values() if self._index(host) >= EXTRA_BASE)
        ip("netns", "add", self._netns_name(name))
        return self._attach(name, EXTRA_BASE + extras)

    def _index(self, host: Host) -> int:
        return int(ipaddress.IPv4Address(host.address)) - int(self.subnet.network_address)

    def _attach(self, name: str, index: int) -> Host:
        _check_host_name(name)
        if index >= self.subnet.num_addresses - 1:
            raise LanError(f"subnet {self.subnet} is too small for host number {index}")
        netns = self._netns_name(name)
        veth = f"{self.bridge}{name}"
        address = str(self.subnet.network_address + index)
        host = Host(name, netns, address, self.subnet.prefixlen, veth)
        self.hosts[name] = host
        ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns)
        self.links.append(veth)
        _no_ipv6(veth)
        ip("link", "set", veth, "master", self.bridge, "up")
        commands = [
            "link set lo up",
            "link set eth0 addrgenmode none",
            f"addr add {address}/{self.subnet.prefixlen} brd + dev eth0",
            "link set eth0 up",
        ]
        ip("-batch", "-", netns=netns, stdin="\n".join(commands) + "\n")
        return host

    def isolate(self, hosts: Sequence[Host]) -> None:
        """`hosts` reach the others (the lobby's host) but not each other, as on a guest
        Wi-Fi with client isolation: their bridge ports are isolated (an isolated port
        forwards only to ports that are not)."""
        for host in hosts:
            ip("link", "set", "dev", host.veth, "type", "bridge_slave", "isolated", "on")

    def cut_pair(self, one: Host, other: Host) -> None:
        """`one` and `other` cannot reach each other (a firewall rejecting each for the
        other: no route to host); every other pair still can."""
        for host, far in ((one, other), (other, one)):
            ip("route", "add", "unreachable", f"{far.address}/32", netns=host.netns)

    # -- looking ----------------------------------------------------------------------------

    @property
    def lobby(self) -> Host:
        return self.hosts[LOBBY]

    @property
    def players(self) -> list[Host]:
        found = [h for h in self.hosts.values() if re.fullmatch(r"p\d+", h.name)]
        return sorted(found, key=lambda h: int(h.name[1:]))

    def host(self, name: str) -> Host:
        try:
            return self.hosts[name]
        except KeyError:
            known = ", ".join(self.hosts)
            raise LanError(f"the LAN has no host {name!r} (it has {known})") from None

    def describe(self) -> str:
        rows = [f"LAN {self.key} on {self.subnet}, bridge {self.bridge}:"]
        rows += [f"  {h.name:<8} {h.address:<15} namespace {h.netns}" for h in self.hosts.values()]
        return "\n".join(rows)

    @classmethod
    def find(cls, key: str) -> NamespaceLan:
        """The LAN with this key as it is now (for `scripts/lan` commands after `up`)."""
        names = lan_keys().get(key)
        if not names:
            raise LanError(f"no LAN with key {key} is up")
        lan: NamespaceLan | None = None
        for netns in sorted(names):
            match = _NETNS_NAME.fullmatch(netns)
            assert match is not None
            address = _eth0_address(netns)
            if address is None:
                continue
            interface = ipaddress.IPv4Interface(address)
            if lan is None:
                lan = cls(key, match.group(2), interface.network)
            name = match.group(3)
            veth = f"{FAMILY}{key}{name}"
            lan.hosts[name] = Host(
                name, netns, str(interface.ip), interface.network.prefixlen, veth
            )
        if lan is None:
            raise LanError(f"the LAN with key {key} has no host with an address")
        ours = [n for n in link_names() if _LINK_NAME.fullmatch(n) and n[3:7] == key]
        lan.links = sorted(ours, key=lambda n: n != lan.bridge)  # the bridge first, as made
        return lan

    # -- running things (synchronously) -----------------------------------------------------

    def exec_argv(self, host: Host, argv: Sequence[str]) -> list[str]:
        """The command line that runs `argv` on `host`."""
        return ["ip", "netns", "exec", host.netns, *argv]

    def run(
        self, host: Host, argv: Sequence[str], timeout: float = 30.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a command on a host to the end; its output is captured."""
        done = subprocess.run(
            self.exec_argv(host, argv), capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )
        if check and done.returncode != 0:
            raise LanError(f"{' '.join(argv)} on {host} failed: {done.stderr.strip()}")
        return done

    def names(self) -> list[str]:
        """Every namespace and root-namespace link this LAN made."""
        return [
            self.bridge,
            *(h.veth for h in self.hosts.values()),
            *(h.netns for h in self.hosts.values()),
        ]

    # -- removing ---------------------------------------------------------------------------

    def destroy(self, grace: float = 0.0) -> None:
        """Kill what runs on the hosts (TERM and up to `grace` seconds to end, then KILL),
        delete the veths, the bridge and the namespaces. Safe to call twice and on a half-built
        LAN."""
        self.destroyed = True
        ours = [n for n in netns_names() if n.startswith(f"{FAMILY}-{self.key}-{self.owner}-")]
        if grace > 0:
            _terminate_all_in(ours, grace)
        for netns in ours:
            _kill_all_in(netns)
        present = set(link_names())
        for link in reversed(self.links):  # the veths (each takes its namespace end), the bridge
            if link in present:
                ip("link", "delete", link, check=False)
        for netns in ours:
            ip("netns", "delete", netns, check=False)
        left = [n for n in self.names() if n in set(netns_names()) | set(link_names())]
        if left:
            raise LanError(f"could not remove {', '.join(left)}")

    def __enter__(self) -> NamespaceLan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    # -- running things under Twisted (tests) -----------------------------------------------

    def spawn(
        self,
        host: Host,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        reactor: Any = None,
    ) -> HostProcess:
        """Start `argv` on `host` in its own process group; output is collected in the
        returned HostProcess. `stop_processes` (the fixture calls it) ends it."""
        if reactor is None:
            from twisted.internet import reactor as global_reactor

            reactor = global_reactor
        process = HostProcess(host, list(argv))
        environment = dict(os.environ if env is None else env)
        environment["PATH"] = f"{VENV_BIN}{os.pathsep}{environment.get('PATH', '')}"
        environment.setdefault("PYTHONUNBUFFERED", "1")
        full = self.exec_argv(host, ["setsid", *argv])
        executable = shutil.which("ip") or "ip"
        process.transport = reactor.spawnProcess(
            process, executable, full, env=environment, path=str(ROOT)
        )
        self.processes.append(process)
        return process

    def spawn_python(self, host: Host, module: str, *args: str, **kw: Any) -> HostProcess:
        """`python -m MODULE ARGS` on a host, with this virtualenv's Python and the repository
        as the working directory (so `tests.*` modules run too)."""
        return self.spawn(host, [sys.executable, "-m", module, *args], **kw)

    async def start_lobby(
        self, host: Host | None = None, args: Sequence[str] = (), seconds: float = 20.0
    ) -> LobbyOnLan:
        """The real `bean-lobby` on a host (default: the lobby host), on a free port of the
        host's LAN address unless `args` has its own --listen; waits for its first line."""
        host = host or self.lobby
        listen = [] if "--listen" in args else ["--listen", f"tcp:0:interface={host.address}"]
        process = self.spawn(host, [str(VENV_BIN / "bean-lobby"), *listen, *args])
        found = await process.first_line(rb"bean-lobby listening on (\S+):(\d+)", seconds)
        return LobbyOnLan(host, found.group(1).decode(), int(found.group(2)), process)

    async def start_relay(
        self,
        host: Host,
        target_host: str,
        target_port: int,
        profile: Any = None,
        listen_port: int = 0,
        listen_host: str | None = None,
        seconds: float = 20.0,
    ) -> RelayOnLan:
        """The slow/lossy relay (tests/relay.py) on `host`, listening on its LAN address (or
        `listen_host`) and forwarding to target_host:target_port with `profile` (a
        relay.LinkProfile)."""
        from tests.relay import LinkProfile, profile_arguments

        arguments = profile_arguments(profile or LinkProfile())
        process = self.spawn_python(
            host,
            "tests.relay",
            "--listen",
            f"{listen_host or host.address}:{listen_port}",
            "--to",
            f"{target_host}:{target_port}",
            *arguments,
        )
        found = await process.first_line(rb"relay listening on (\S+):(\d+)", seconds)
        return RelayOnLan(host, found.group(1).decode(), int(found.group(2)), process)

    async def put_behind_relay(
        self,
        player: Host,
        lobby: LobbyOnLan,
        peer_port: int,
        profile: Any = None,
        *,
        lobby_profile: Any = None,
        relay_host: Host | None = None,
    ) -> RelayRoute:
        """Put `player` behind the slow/lossy relay: from then on every TCP link between it
        and the lobby or another player passes through `relay_host` (made as `relay` when not
        given), both the links it opens and those opened to it, with `profile` (its link to
        the lobby with `lobby_profile`, clean by default, so that matchmaking is not what a
        test exercises). Every player is taken to listen for peers on `peer_port`; start the
        player's client after this, with the lobby's usual address.

        No iptables: the relay host takes over the others' addresses for the player alone.
        The player routes each of them (/32) via the relay host; there each is a `local` route,
        so the relay listens on it and relays to the real host, while a policy rule sends the
        relay's own connections to those addresses out to the LAN (the `local` table is looked
        up after that rule), and arp_ignore keeps the relay from answering anyone else's ARP
        for them. The lobby sees the player at the relay host's address, so the roster sends
        the others to the relay, which relays to the player's `peer_port`."""
        from tests.relay import LinkProfile

        profile = profile or LinkProfile()
        lobby_profile = lobby_profile or LinkProfile()
        if relay_host is None:
            relay_host = self.hosts.get("relay") or self.add_host("relay")
        forwards = self.relay_plan(player, lobby.host, lobby.port, peer_port, relay_host)
        self.divert(player, relay_host, forwards)

        def started(forward: Forward) -> Deferred[RelayOnLan]:
            link = profile if forward.lossy else lobby_profile
            seeded = replace(link, seed=link.seed + f" {forward.name}".encode())  # its own draws
            return Deferred.fromCoroutine(
                self.start_relay(
                    relay_host,
                    forward.target_host,
                    forward.port,
                    seeded,
                    forward.port,
                    forward.listen_host,
                )
            )

        relays = await gatherResults([started(forward) for forward in forwards])
        named = {forward.name: relay for forward, relay in zip(forwards, relays, strict=True)}
        inbound = named.pop(INBOUND)
        return RelayRoute(relay_host, player, inbound, named)

    def relay_plan(
        self, player: Host, lobby_host: Host, lobby_port: int, peer_port: int, relay_host: Host
    ) -> list[Forward]:
        """The relays that put `player` behind `relay_host` (see put_behind_relay): one per
        address and port it reaches (the lobby's, every other player's peer port), listening
        on that address, and one on the relay host's address towards the player."""
        others = [host for host in self.players if host not in (player, relay_host)]
        forwards = [Forward(f"{lobby_host.name}:{lobby_port}", lobby_host.address,
                            lobby_host.address, lobby_port, lossy=False)]  # fmt: skip
        forwards += [
            Forward(f"{host.name}:{peer_port}", host.address, host.address, peer_port, True)
            for host in others
        ]
        forwards.append(Forward(INBOUND, relay_host.address, player.address, peer_port, True))
        return forwards

    def divert(self, player: Host, relay_host: Host, forwards: Sequence[Forward]) -> None:
        """Route `player`'s packets for the forwards' addresses to `relay_host`, which takes
        those addresses over (for the player only: see put_behind_relay)."""
        relay_ns = relay_host.netns
        self.run(relay_host, ["sh", "-c", _ARP_IGNORE])
        for address in _taken_over(relay_host, forwards):
            ip("route", "add", "table", "local", "local", f"{address}/32", "dev", "lo",
               netns=relay_ns)  # fmt: skip
            ip("rule", "add", "pref", "10", "to", address, "iif", "lo", "lookup", "main",
               netns=relay_ns)  # fmt: skip
            ip("route", "add", f"{address}/32", "via", relay_host.address, netns=player.netns)
        if "100:" not in ip("rule", "show", netns=relay_ns):
            ip("rule", "add", "pref", "100", "lookup", "local", netns=relay_ns)
            ip("rule", "del", "pref", "0", netns=relay_ns)

    def undivert(self, player: Host, relay_host: Host, forwards: Sequence[Forward]) -> None:
        """Undo `divert`: the player reaches everyone directly again."""
        relay_ns = relay_host.netns
        for address in _taken_over(relay_host, forwards):
            ip("route", "del", f"{address}/32", netns=player.netns, check=False)
            ip("rule", "del", "pref", "10", "to", address, "iif", "lo", "lookup", "main",
               netns=relay_ns, check=False)  # fmt: skip
            ip("route", "del", "table", "local", "local", f"{address}/32", "dev", "lo",
               netns=relay_ns, check=False)  # fmt: skip

    async def stop_processes(self, seconds: float = STOP_SECONDS) -> None:
        """TERM every process group started here, KILL those still running after `seconds`,
        and wait until all have ended (their pipes closed)."""
        running = [p for p in self.processes if not p.ended.called]
        for process in running:
            process.signal_group(signal.SIGTERM)
        try:
            await within(gatherResults([p.ended_quietly() for p in running]), seconds)
        except Exception:
            for process in running:
                process.signal_group(signal.SIGKILL)
            await within(gatherResults([p.ended_quietly() for p in running]), seconds)


def _check_host_name(name: str) -> None:
    if not _HOST_NAME.fullmatch(name):
        raise LanError(f"host names are 1-8 lowercase letters and digits, not {name!r}")


def parse_subnet(text: str) -> ipaddress.IPv4Network:
    try:
        network = ipaddress.IPv4Network(text, strict=True)
    except ValueError as error:
        raise LanError(f"cannot read subnet {text!r}: {error}") from None
    if not network.is_private or network.prefixlen > 24:
        raise LanError(f"the LAN needs a private IPv4 subnet of /24 or larger, not {text}")
    return network


def _eth0_address(netns: str) -> str | None:
    found = json.loads(ip("-j", "addr", "show", "dev", "eth0", netns=netns, check=False) or "[]")
    for link in found:
        for info in link.get("addr_info", []):
            if info.get("family") == "inet":
                return f"{info['local']}/{info['prefixlen']}"
    return None


# -- processes on hosts ----------------------------------------------------------------------


class HostProcess(ProcessProtocol, Watched):
    """A process on one host: collects stdout and stderr; `ended` fires with the exit code."""

    transport: Any

    def __init__(self, host: Host, argv: list[str]) -> None:
        Watched.__init__(self)
        self.host = host
        self.argv = argv
        self.stdout = b""
        self.stderr = b""
        self.exit_code: int | None = None
        self.ended: Deferred[int | None] = Deferred()

    @property
    def pid(self) -> int | None:
        return getattr(self.transport, "pid", None)

    def outReceived(self, data: bytes) -> None:
        self.stdout += data
        self.changed()

    def errReceived(self, data: bytes) -> None:
        self.stderr += data
        self.changed()

    def processEnded(self, reason: Failure) -> None:
        value = reason.value
        self.exit_code = 0 if isinstance(value, ProcessDone) else getattr(value, "exitCode", None)
        self.ended.callback(self.exit_code)
        self.changed()

    def ended_quietly(self) -> Deferred[Any]:
        """Fires when the process ended, without consuming `ended`'s result."""
        waiter: Deferred[Any] = Deferred()
        self.ended.addBoth(lambda result: (waiter.callback(None), result)[1])
        return waiter

    def lines(self) -> list[str]:
        return self.stdout.decode(errors="replace").splitlines()

    def json_lines(self) -> list[Any]:
        """Every stdout line that is a JSON object (the test agents speak JSON lines)."""
        found = []
        for line in self.lines():
            if line.startswith("{"):
                found.append(json.loads(line))
        return found

    def describe(self) -> str:
        return (
            f"{' '.join(self.argv)} on {self.host} (exit {self.exit_code}):\n"
            f"stdout: {self.stdout.decode(errors='replace')}\n"
            f"stderr: {self.stderr.decode(errors='replace')}"
        )

    async def first_line(self, pattern: bytes, seconds: float = 20.0) -> re.Match[bytes]:
        """The first stdout line must match `pattern`; fails if it does not, or if the
        process ends or stays silent for `seconds`."""
        await self.when(lambda p: b"\n" in p.stdout or p.ended.called, seconds)
        first = self.stdout.partition(b"\n")[0]
        found = re.fullmatch(pattern, first)
        if found is None:
            raise AssertionError(f"unexpected first line {first!r} from {self.describe()}")
        return found

    def finished(self, seconds: float = 30.0) -> Deferred[int | None]:
        """Fires with the exit code once the process ends by itself (within `seconds`)."""
        return self.when(lambda p: p.ended.called, seconds).addCallback(lambda p: p.exit_code)

    def signal_group(self, signum: int) -> None:
        if self.ended.called or self.pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signum)


@dataclass
class LobbyOnLan:
    host: Host
    address: str
    port: int
    process: HostProcess

    @property
    def endpoint(self) -> str:
        """HOST:PORT for players (the host's LAN address when the lobby listens on all)."""
        wildcard = self.address in ("0.0.0.0", "::")
        return f"{self.host.address if wildcard else self.address}:{self.port}"


@dataclass
class RelayOnLan:
    host: Host
    address: str
    port: int
    process: HostProcess

    def events(self) -> list[str]:
        return [line for line in self.process.lines() if line.startswith("relay ")]

    def opened(self) -> int:
        return self.count("open")

    def count(self, event: str) -> int:
        """How many `relay EVENT ...` lines it printed so far (open, reset, closed, ...)."""
        return sum(1 for line in self.events() if line.startswith(f"relay {event} "))


@dataclass
class RelayRoute:
    """A player behind a relay host (see `NamespaceLan.put_behind_relay`): `inbound` relays
    the others' links to it; `outbound["HOST:PORT"]` its links to that host and port (the
    lobby's `lobby:PORT`, the players' `p1:4000`, ...)."""

    host: Host
    player: Host
    inbound: RelayOnLan
    outbound: dict[str, RelayOnLan]

    @property
    def address(self) -> str:
        """Where the lobby, and so the roster, sees the player."""
        return self.host.address

    def opened(self) -> dict[str, int]:
        """Connections each relay has accepted so far (`inbound`, and HOST:PORT as above)."""
        relays = {"inbound": self.inbound, **self.outbound}
        return {name: relay.opened() for name, relay in relays.items()}


INBOUND = "inbound"


@dataclass(frozen=True)
class Forward:
    """One relay of a player behind a relay host: on the relay host, listen on
    listen_host:port and relay to target_host:port; `lossy`: with the test's profile."""

    name: str  # "lobby:7777", "p1:4000", or INBOUND (the others' links to the player)
    listen_host: str
    target_host: str
    port: int
    lossy: bool


def _taken_over(relay_host: Host, forwards: Sequence[Forward]) -> list[str]:
    """The addresses the relay host answers for, for the player behind it."""
    found = [f.listen_host for f in forwards if f.listen_host != relay_host.address]
    return list(dict.fromkeys(found))


_ARP_IGNORE = (
    "echo 1 > /proc/sys/net/ipv4/conf/all/arp_ignore; "
    "echo 1 > /proc/sys/net/ipv4/conf/eth0/arp_ignore"
)


# -- the fixture -----------------------------------------------------------------------------


_availability: list[str | None] = []


def require_namespaces() -> None:
    """Skip the calling test, saying why, when this machine cannot build the LAN."""
    if not _availability:
        _availability.append(namespaces_unavailable())
    if _availability[0] is not None:
        pytest.skip(_availability[0])


@pytest.fixture(name="make_lan")
def lan_fixture() -> Iterator[Any]:
    """The `make_lan` fixture (a test module imports `lan_fixture` to use it).

    Builds namespace LANs for one test: `lan = make_lan(players=3, subnet=None)`. Skips
    when namespaces cannot be made here; at the end stops every process started on the LANs
    and removes them, also when the test failed. Stale LANs of dead runs are removed first."""
    require_namespaces()
    clean_stale()
    made: list[NamespaceLan] = []

    def make(players: int = 3, *, subnet: str | None = None) -> NamespaceLan:
        lan = NamespaceLan.create(players, subnet=subnet)
        made.append(lan)
        return lan

    try:
        yield make
    finally:
        for lan in made:
            try:
                if any(not p.ended.called for p in lan.processes):
                    pytest_twisted.blockon(Deferred.fromCoroutine(lan.stop_processes()))
            finally:
                lan.destroy()
