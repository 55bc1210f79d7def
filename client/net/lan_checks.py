"""The network mistakes people make on a LAN, named, with the fix (pure functions).

On 127.0.0.1 every address works; on a LAN the lobby sees each player at its own address, and
a player's peers reach it only at the address the lobby saw and the port it announced. Each
function takes what the client knows (addresses, the roster, the error a socket raised) and
returns a `LanProblem` whose text is the sentence to show: what is wrong, then what to do.

- `check_listen_address`: listening for peers on loopback while the lobby is elsewhere.
- `check_roster`: at game start, a seat the others cannot reach (loopback listener, a seat
  advertised as 127.0.0.1 because it reached the lobby through loopback, two seats at one
  address).
- `explain_bind_error`: the peer port is taken, not this machine's, or privileged.
- `explain_lobby_error`: the lobby refused the connection, stayed silent, is unreachable, or
  the program at its address does not speak the lobby's sealed protocol.
- `explain_peer_link_failure` / `explain_no_incoming_links`: a firewall on one player's
  machine: the others' links to it time out while its lobby connection works.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from collections.abc import Sequence
from typing import Protocol

from OpenSSL import SSL
from twisted.internet import defer
from twisted.internet import error as twisted_error


class LanProblem(Exception):
    """A network set-up problem; `str(problem)` says what is wrong and how to fix it."""


class LoopbackListener(LanProblem):
    """Listening for peers on 127.0.0.1 / ::1 while the peers are on other machines."""


class LoopbackAdvertised(LanProblem):
    """A seat's address in the roster is a loopback address the others cannot use."""


class SharedAddress(LanProblem):
    """Two seats announced the same address and port."""


class PortInUse(LanProblem):
    """The port to listen on is taken by another program."""


class AddressNotHere(LanProblem):
    """The address to listen on belongs to no interface of this machine."""


class PortNeedsPrivilege(LanProblem):
    """Ports below 1024 need special rights."""


class CannotListen(LanProblem):
    """Listening failed for another reason."""


class LobbyRefused(LanProblem):
    """The lobby's machine answered, but nothing listens on that port."""


class LobbySilent(LanProblem):
    """No answer at all from the lobby's address (timeout)."""


class NotALobby(LanProblem):
    """Something answered at the lobby's address, but not with the lobby's sealed protocol."""


class LobbyUnreachable(LanProblem):
    """No route to the lobby's address, or no machine answers there."""


class UnknownHost(LanProblem):
    """The lobby's host name does not resolve."""


class PeerPortBlocked(LanProblem):
    """Links to a seat time out while it is in the lobby: a firewall drops them."""


class PeerRefused(LanProblem):
    """A seat's machine refuses links on its port: nothing listens there (or a firewall
    rejects them)."""


class PeerUnreachable(LanProblem):
    """No route to a seat's address."""


class NoIncomingLinks(LanProblem):
    """Nobody reached this client's peer port although everyone is in the lobby."""


class SeatLike(Protocol):
    name: str
    host: str
    port: int


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 (also as ::ffff:127.x) and the name localhost."""
    if host.strip().lower().rstrip(".") in ("localhost", "localhost.localdomain"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def is_wildcard(host: str) -> bool:
    return host in ("", "0.0.0.0", "::", "[::]")


def _fix_listen(listen_host: str) -> str:
    return (
        f"{listen_host} is a loopback address; listen on all interfaces (0.0.0.0) or on this "
        "machine's LAN address instead, e.g. --listen tcp:4000 (or leave --listen out)"
    )


def check_listen_address(listen_host: str, lobby_host: str) -> LanProblem | None:
    """Before hello: a peer listener on loopback is only fine when the lobby (and so, every
    player) is on this machine too."""
    if is_loopback(listen_host) and not is_loopback(lobby_host):
        return LoopbackListener(
            f"you listen for other players on {listen_host} only, which no other machine can "
            f"reach, but the lobby is at {lobby_host}, so the players are on other machines: "
            f"{_fix_listen(listen_host)}."
        )
    return None


def check_roster(
    seats: Sequence[SeatLike], own_name: str, listen_host: str = "0.0.0.0"
) -> list[LanProblem]:
    """At game start: the problems that will break links in this roster, as seen by
    `own_name`, who listens on `listen_host`. Empty when everyone can reach everyone."""
    problems: list[LanProblem] = []
    me = next((seat for seat in seats if seat.name == own_name), None)
    others = [seat for seat in seats if seat.name != own_name]
    remote = [seat for seat in others if not is_loopback(seat.host)]
    if me is not None and is_loopback(listen_host) and remote:
        hosts = ", ".join(f"{seat.name} at {seat.host}" for seat in remote)
        problems.append(
            LoopbackListener(
                f"you listen for other players on {listen_host} only, but {hosts} "
                f"{'is' if len(remote) == 1 else 'are'} on another machine and cannot reach "
                f"you there: {_fix_listen(listen_host)} (same port, {me.port})."
            )
        )
    if me is not None and is_loopback(me.host) and remote:
        problems.append(
            LoopbackAdvertised(
                f"the lobby saw you at {me.host} because you reached it through loopback (it "
                f"runs on this machine), so the other players were told to reach you at "
                f"{me.host}:{me.port}, which for them is their own machine: connect to the "
                f"lobby at this machine's LAN address instead of {me.host} or localhost."
            )
        )
    if me is not None and not is_loopback(me.host):
        for seat in others:
            if is_loopback(seat.host):
                problems.append(
                    LoopbackAdvertised(
                        f"{seat.name} is listed at {seat.host}:{seat.port}, a loopback address, "
                        f"so nobody on another machine can reach {seat.name}: {seat.name} "
                        "reached the lobby through loopback (it runs on their machine) and "
                        "should connect to the lobby at its LAN address instead."
                    )
                )
    seen: dict[tuple[str, int], str] = {}
    for seat in seats:
        key = (seat.host, seat.port)
        if key in seen:
            problems.append(
                SharedAddress(
                    f"{seen[key]} and {seat.name} both announced {seat.host}:{seat.port}; only "
                    "one program can listen there, so the other cannot be reached: give each "
                    "client on one machine its own peer port."
                )
            )
        seen.setdefault(key, seat.name)
    return problems


def _errno_of(error: BaseException) -> int | None:
    """The OS error number behind a socket, Twisted or Deferred error, if there is one."""
    for candidate in (
        getattr(error, "socketError", None),
        getattr(error, "osError", None),
        error,
    ):
        if isinstance(candidate, int):
            return candidate
        number = getattr(candidate, "errno", None)
        if isinstance(number, int):
            return number
        args = getattr(candidate, "args", ())
        if args and isinstance(args[0], int):
            return args[0]
    return None


def explain_bind_error(error: BaseException, host: str, port: int) -> LanProblem:
    """Listening on host:port failed (a Twisted CannotListenError or an OSError)."""
    where = f"{host or '0.0.0.0'}:{port}"
    number = _errno_of(error)
    if number == errno.EADDRINUSE:
        return PortInUse(
            f"cannot listen for other players on {where}: port {port} is already in use (another "
            "bean-client, or another program, listens there). Close that program, or choose "
            f"another peer port (e.g. {port + 1 if port < 65535 else 49152}, or 0 to let the "
            "system pick a free one)."
        )
    if number == errno.EADDRNOTAVAIL:
        return AddressNotHere(
            f"cannot listen on {where}: {host} is not an address of this machine. Listen on "
            "0.0.0.0 (all interfaces) or on one of this machine's own LAN addresses."
        )
    if number == errno.EACCES:
        return PortNeedsPrivilege(
            f"cannot listen on {where}: ports below 1024 need administrator rights. Choose a "
            "port from 1024 to 65535 (or 0 to let the system pick one)."
        )
    return CannotListen(f"cannot listen on {where}: {_reason(error)}.")


def _reason(error: BaseException) -> str:
    number = _errno_of(error)
    if number is not None:
        return f"{errno.errorcode.get(number, number)} ({_strerror(number)})"
    return str(error) or type(error).__name__


def _strerror(number: int) -> str:
    return os.strerror(number).lower()


def _kind(error: BaseException) -> str:
    """refused, timeout, unreachable, network, dns, tls (the other end does not speak TLS; the
    TLS error may be the cause of the error given) or other."""
    if isinstance(error, SSL.Error) or isinstance(error.__cause__, SSL.Error):
        return "tls"
    if isinstance(error, twisted_error.ConnectionRefusedError | ConnectionRefusedError):
        return "refused"
    if isinstance(
        error,
        twisted_error.TimeoutError
        | twisted_error.TCPTimedOutError
        | defer.TimeoutError
        | TimeoutError,
    ):
        return "timeout"
    if isinstance(error, twisted_error.DNSLookupError | socket.gaierror):
        return "dns"
    number = _errno_of(error)
    if number == errno.ECONNREFUSED:
        return "refused"
    if number == errno.ETIMEDOUT:
        return "timeout"
    if number == errno.EHOSTUNREACH:
        return "unreachable"
    if number == errno.ENETUNREACH or isinstance(error, twisted_error.NoRouteError):
        return "network"
    return "other"


def explain_lobby_error(error: BaseException, host: str, port: int) -> LanProblem:
    """Connecting to the lobby at host:port failed with `error`."""
    where = f"{host}:{port}"
    kind = _kind(error)
    if kind == "refused" and is_loopback(host):
        return LobbyRefused(
            f"this machine ({host}) refused the connection to port {port}: no lobby listens "
            "there. Check that bean-lobby is running on this machine, and on which port: its "
            "first line says `bean-lobby listening on HOST:PORT`."
        )
    if kind == "refused":
        return LobbyRefused(
            f"the machine at {host} refused the connection to port {port}: no lobby listens "
            f"there. Check that bean-lobby is running on {host} and on which port (its first "
            "line says `bean-lobby listening on HOST:PORT`), and that it does not listen on "
            "127.0.0.1 only."
        )
    if kind == "tls":
        return NotALobby(
            f"the program at {where} answered, but it does not speak the lobby's sealed "
            "protocol: is that the lobby's port? Another program (a web server, say) may listen "
            "there; bean-lobby's first line says where it listens (`bean-lobby listening on "
            "HOST:PORT`)."
        )
    if kind == "timeout":
        return LobbySilent(
            f"no answer from {where}: nothing came back, not even a refusal. Check the "
            f"address, that this machine is on the same network as {host}, and that no "
            f"firewall on the lobby's machine drops TCP port {port} (allow it, e.g. "
            f"`sudo ufw allow {port}/tcp`)."
        )
    if kind == "unreachable":
        return LobbyUnreachable(
            f"no machine answers at {host} (no route to host): check the address (bean-lobby "
            "prints it), that the lobby's machine is on, and that it is on your network."
        )
    if kind == "network":
        return LobbyUnreachable(
            f"this machine has no route to {host}: it is not on a network this machine is "
            "connected to. Check the address and this machine's network connection."
        )
    if kind == "dns":
        return UnknownHost(
            f"cannot find a machine called {host}: check the name, or use the lobby's address "
            "(bean-lobby prints it), or leave the address out to search this LAN."
        )
    return LobbyUnreachable(f"cannot connect to the lobby at {where}: {_reason(error)}.")


def explain_peer_link_failure(
    name: str, host: str, port: int, error: BaseException, in_lobby: bool = True
) -> LanProblem:
    """A link to seat `name` at host:port (from the roster) failed with `error`; `in_lobby`:
    that player's lobby connection works (they are in the roster and not gone)."""
    where = f"{host}:{port}"
    kind = _kind(error)
    if kind == "timeout" and in_lobby:
        return PeerPortBlocked(
            f"cannot open a link to {name} at {where}: the connection times out, although "
            f"{name} is connected to the lobby. A firewall on {name}'s machine probably drops "
            f"incoming connections to port {port}: {name} should allow TCP port {port} in "
            f"(e.g. `sudo ufw allow {port}/tcp`) or choose a peer port the firewall allows."
        )
    if kind == "timeout":
        return PeerPortBlocked(
            f"cannot open a link to {name} at {where}: the connection times out. {name}'s "
            f"machine may be off the network, or a firewall there drops port {port}."
        )
    if kind == "refused":
        return PeerRefused(
            f"{name}'s machine at {host} refuses links on port {port}: nothing listens there "
            f"for other machines. {name}'s client may listen on 127.0.0.1 only (it must "
            "listen on 0.0.0.0 or its LAN address), may have stopped, or a firewall rejects "
            "the port."
        )
    if kind in ("unreachable", "network"):
        return PeerUnreachable(
            f"there is no route to {name} at {host}: the lobby saw {name} at an address this "
            f"machine cannot reach (another network, or behind NAT). Everyone must be on one "
            "LAN, and reach the lobby by its LAN address."
        )
    return PeerUnreachable(f"cannot open a link to {name} at {where}: {_reason(error)}.")


def explain_no_incoming_links(port: int, waiting_for: Sequence[str], seconds: float) -> LanProblem:
    """Nobody of `waiting_for` reached this client's peer port within `seconds`, while the
    lobby connection works: what the player behind a firewall sees."""
    names = ", ".join(waiting_for) or "the other players"
    return NoIncomingLinks(
        f"{names} could not open a link to you in {seconds:g} s, although your connection to "
        f"the lobby works: a firewall on this machine probably blocks incoming TCP port {port}. "
        f"Allow it (e.g. `sudo ufw allow {port}/tcp`), or choose a peer port that is allowed."
    )
