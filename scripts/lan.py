"""`scripts/lan`: a LAN of network namespaces on this machine, to try the game as on a real
network (needs root and iproute2). The same LAN the tests build (tests/netns.py).

    scripts/lan up 4                      a lobby host and players p1..p4 on 10.213.0.0/24
    scripts/lan status                    hosts, addresses, what runs on them
    scripts/lan exec lobby bean-lobby     run a command on a host (default: a shell)
    scripts/lan exec p1 bean-client connect
                                          each host has its own identity keys and game files
                                          (~/.local/state/bohnanza-p2p/lan/NAME/HOST)
    scripts/lan up 4 --isolated           players reach the lobby's host, not each other (as
                                          on a guest Wi-Fi): their links go through the
                                          lobby's relay
    scripts/lan cut p1 p2                 only p1 and p2 cannot reach each other
    scripts/lan add relay                 one more host (a relay, a second lobby)
    scripts/lan relay relay --port 4000 --to 10.213.0.13:4000 --delay 0.2 --reset-chance 0.001
                                          a slow/lossy link on a host (tests/relay.py)
    scripts/lan behind p3 --delay 0.2 --reset-chance 0.001
                                          until Ctrl-C, every link of p3 crosses such a relay
                                          (host `relay`; the lobby on port 7777, peers on 4000)
    scripts/lan down                      stop everything on it and remove it
    scripts/lan clean                     remove what crashed test runs left behind

`--name NAME` (before the command) keeps several LANs apart; the default is `lan`. A LAN made
here is kept until `down`: the test runs' clean-up never removes it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.netns import (  # noqa: E402  (after the path is set)
    VENV_BIN,
    LanError,
    NamespaceLan,
    clean_stale,
    lan_keys,
    namespaces_unavailable,
    netns_pids,
)


def key_of(name: str) -> str:
    return hashlib.sha256(f"scripts/lan {name}".encode()).hexdigest()[:4]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def host_files(lan_name: str, host: str | None = None) -> Path:
    """Where a host keeps its files (a LAN's hosts, when `host` is None): hosts share this
    machine's disk, so each gets XDG directories of its own, as on a machine of its own."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    lan_files = Path(state) / "bohnanza-p2p" / "lan" / lan_name
    return lan_files if host is None else lan_files / host


def up(args: argparse.Namespace) -> int:
    key = key_of(args.name)
    if key in lan_keys():
        print(f"LAN {args.name!r} is up already:\n{NamespaceLan.find(key).describe()}")
        return 1
    lan = NamespaceLan.create(args.players, subnet=args.subnet, keep=True, key=key)
    if args.isolated:
        lan.isolate(lan.players)
    me = "scripts/lan" if args.name == "lan" else f"scripts/lan --name {args.name}"
    print(f"LAN {args.name!r} is up. {lan.describe()}")
    print(
        "\nTry:\n"
        f"  {me} exec lobby bean-lobby --listen tcp:7777\n"
        f"  {me} exec p1 bean-client connect          # finds the lobby by LAN discovery\n"
        f"  {me} exec p2 bean-client connect {lan.lobby.address}\n"
        f"  {me} down"
    )
    return 0


def status(args: argparse.Namespace) -> int:
    lan = NamespaceLan.find(key_of(args.name))
    print(lan.describe())
    for host in lan.hosts.values():
        for pid in netns_pids(host.netns):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            print(f"  {host.name:<8} pid {pid}: {command.strip()}")
    return 0


def exec_on(args: argparse.Namespace) -> int:
    lan = NamespaceLan.find(key_of(args.name))
    host = lan.host(args.host)
    argv = lan.exec_argv(host, args.argv or [os.environ.get("SHELL", "/bin/sh")])
    files = host_files(args.name, host.name)
    env = environment()
    env.update(XDG_CONFIG_HOME=str(files / "config"), XDG_DATA_HOME=str(files / "data"))
    os.execvpe(argv[0], argv, env)
    return 0  # not reached


def cut(args: argparse.Namespace) -> int:
    lan = NamespaceLan.find(key_of(args.name))
    one, other = lan.host(args.host), lan.host(args.other)
    lan.cut_pair(one, other)
    print(f"{one} and {other} cannot reach each other now (until `down`)")
    return 0


def add(args: argparse.Namespace) -> int:
    lan = NamespaceLan.find(key_of(args.name))
    print(lan.add_host(args.host))
    return 0


def relay(args: argparse.Namespace, extra: list[str]) -> int:
    lan = NamespaceLan.find(key_of(args.name))
    host = lan.host(args.host)
    command = [
        sys.executable,
        "-m",
        "tests.relay",
        *("--listen", f"{host.address}:{args.port}", "--to", args.to),
        *extra,
    ]
    argv = lan.exec_argv(host, command)
    os.execvpe(argv[0], argv, environment())
    return 0  # not reached


def behind(args: argparse.Namespace, extra: list[str]) -> int:
    """Put a player host behind the relay host until interrupted: every link between it and
    the others crosses the relay, with the profile given in `extra` (its lobby link clean)."""
    lan = NamespaceLan.find(key_of(args.name))
    player = lan.host(args.host)
    relay_host = lan.hosts.get("relay") or lan.add_host("relay")
    forwards = lan.relay_plan(player, lan.lobby, args.lobby_port, args.peer_port, relay_host)
    lan.divert(player, relay_host, forwards)
    relays = []
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` puts the player back too
    try:
        for forward in forwards:
            command = [
                sys.executable,
                *("-m", "tests.relay"),
                *("--listen", f"{forward.listen_host}:{forward.port}"),
                *("--to", f"{forward.target_host}:{forward.port}"),
                *(extra if forward.lossy else []),
            ]
            argv = lan.exec_argv(relay_host, command)
            relays.append(subprocess.Popen(argv, env=environment()))
        print(
            f"{player} is behind {relay_host}: the lobby sees it at {relay_host.address}, and "
            f"its links to and from the others cross the relay. Ctrl-C puts it back.",
            flush=True,
        )
        for relay in relays:
            relay.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for relay in relays:
            relay.terminate()
        for relay in relays:
            relay.wait(10)
        lan.undivert(player, relay_host, forwards)
    print(f"{player} reaches everyone directly again")
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def down(args: argparse.Namespace) -> int:
    key = key_of(args.name)
    if key not in lan_keys():
        print(f"no LAN {args.name!r} is up")
        return 1
    lan = NamespaceLan.find(key)
    lan.destroy(grace=3.0)
    shutil.rmtree(host_files(args.name), ignore_errors=True)
    print(f"LAN {args.name!r} removed, and its hosts' files")
    return 0


def clean(args: argparse.Namespace) -> int:
    removed = clean_stale()
    print("removed: " + ", ".join(removed) if removed else "nothing to remove")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/lan",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--name", default="lan", help="which LAN (default: lan)")
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("up", help="build the LAN")
    made.add_argument("players", type=int, nargs="?", default=3, help="player hosts (3)")
    made.add_argument("--subnet", default=None, help="private IPv4 /24 or larger")
    made.add_argument(
        "--isolated", action="store_true", help="players reach the lobby's host, not each other"
    )
    parted = commands.add_parser("cut", help="two hosts that cannot reach each other")
    parted.add_argument("host")
    parted.add_argument("other")
    commands.add_parser("status", help="hosts and what runs on them")
    run = commands.add_parser("exec", help="run a command on a host")
    run.add_argument("host")
    run.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND")
    added = commands.add_parser("add", help="one more host")
    added.add_argument("host")
    relayed = commands.add_parser(
        "relay", help="a slow/lossy relay on a host; more options: python -m tests.relay -h"
    )
    relayed.add_argument("host")
    relayed.add_argument("--port", type=int, required=True, help="port to listen on")
    relayed.add_argument("--to", required=True, help="HOST:PORT to relay to")
    moved = commands.add_parser(
        "behind",
        help="put a player host behind a slow/lossy relay host until Ctrl-C; relay options "
        "(--delay, --reset-chance, ...): python -m tests.relay -h",
    )
    moved.add_argument("host")
    moved.add_argument("--lobby-port", type=int, default=7777)
    moved.add_argument("--peer-port", type=int, default=4000, help="every player's peer port")
    commands.add_parser("down", help="stop everything on the LAN and remove it")
    commands.add_parser("clean", help="remove what crashed test runs left behind")
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if extra and args.command not in ("relay", "behind"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    reason = namespaces_unavailable()
    if reason is not None:
        print(f"scripts/lan: {reason}", file=sys.stderr)
        return 1
    try:
        if args.command == "relay":
            return relay(args, extra)
        if args.command == "behind":
            return behind(args, extra)
        handler = {
            "up": up,
            "status": status,
            "exec": exec_on,
            "add": add,
            "cut": cut,
            "down": down,
            "clean": clean,
        }[args.command]
        return handler(args)
    except LanError as error:
        print(f"scripts/lan: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
