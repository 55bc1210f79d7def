"""Benchmark the lobby: `scripts/bench lobby [--json] [--clients N] [--rooms-per-s R] ...`

Starts `bean-lobby` in its own process and N clients spread over worker processes (the real
LobbyClient on Twisted's epoll reactor). Every client connects and says hello (signed), and all
stay connected; then, for --seconds, the workers send quick_match requests at the rate that
starts R rooms of --seats players per second (open loop: arrivals do not wait for answers, as
real players would not). A client whose game started is free to be matched again.

Reported: rooms started per second, p50/p99 latency (a quick_match until its reply, and, for
the request that fills a room, until the roster arrives), the lobby's peak memory (VmHWM) and
the connections it held (its open sockets at the end of the run). --rooms-per-s 0 is a closed
loop instead: every free client asks again at once, which measures capacity, not latency.
With --json, the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGETS = {"connections_held": 2000, "rooms_per_s": 200, "p99_ms": 50}


def raise_descriptor_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def percentile(samples: list[float], fraction: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


# -- the master -------------------------------------------------------------------------------


def start_lobby(clients: int) -> tuple[subprocess.Popen[bytes], int]:
    script = Path(sys.executable).parent / "bean-lobby"
    command = [str(script)]
    if not script.exists():
        command = [sys.executable, "-c", "from lobby.cli import main; main()"]
    capacity = str(max(5000, clients + 100))
    lobby = subprocess.Popen(
        [
            *command,
            "--listen",
            "tcp:0:interface=127.0.0.1:backlog=4096",
            "--quiet",
            "--max-connections",
            capacity,
            "--max-players",
            capacity,
            "--max-rooms",
            capacity,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert lobby.stdout is not None
    first = lobby.stdout.readline().decode()
    found = re.search(r":(\d+)\s*$", first)
    if not found:
        lobby.kill()
        raise SystemExit(f"bean-lobby did not start: {first!r}")
    return lobby, int(found.group(1))


def lobby_memory_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(found.group(1)) / 1024 if found else float("nan")


def lobby_sockets(pid: int) -> int:
    """Connected TCP sockets of the lobby process (its listening socket excluded)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd)
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    established = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes and fields[3] == "01":  # 01: ESTABLISHED
                established += 1
    return established


def run(args: argparse.Namespace) -> dict[str, Any]:
    raise_descriptor_limit(args.clients + 1000)
    lobby, port = start_lobby(args.clients)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        shares = [
            args.clients // args.workers + (i < args.clients % args.workers)
            for i in range(args.workers)
        ]
        rate_share = args.rooms_per_s * args.seats / args.workers
        for index, share in enumerate(shares):
            workers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        __file__,
                        "--worker",
                        str(index),
                        str(port),
                        str(share),
                        str(rate_share),
                        str(args.seats),
                        str(args.seconds),
                    ],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
            )
        ready = [read_report(worker) for worker in workers]
        connected = sum(report["connected"] for report in ready)
        for worker in workers:
            tell(worker, "go")
        done = [read_report(worker) for worker in workers]
        held = lobby_sockets(lobby.pid)
        peak_mb = lobby_memory_mb(lobby.pid)
        for worker in workers:
            tell(worker, "stop")
        for worker in workers:
            worker.wait(timeout=60)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
        lobby.terminate()
        lobby.wait(timeout=30)
    latencies = [ms for report in done for ms in report["latency_ms"]]
    hellos = [ms for report in ready for ms in report["hello_ms"]]
    members_started = sum(report["members_started"] for report in done)
    return {
        "clients": args.clients,
        "connected": connected,
        "connections_held": held,
        "seats": args.seats,
        "target_rooms_per_s": args.rooms_per_s,
        "seconds": args.seconds,
        "rooms_started": members_started / args.seats,
        "rooms_per_s": round(members_started / args.seats / args.seconds, 1),
        "p50_ms": round(percentile(latencies, 0.50), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "max_ms": round(max(latencies, default=float("nan")), 2),
        "requests": len(latencies),
        "hello_p50_ms": round(percentile(hellos, 0.50), 2),
        "hello_p99_ms": round(percentile(hellos, 0.99), 2),
        "failures": sum(report["failures"] for report in done),
        "peak_rss_mb": round(peak_mb, 1),
    }


def tell(worker: subprocess.Popen[bytes], line: str) -> None:
    assert worker.stdin is not None
    worker.stdin.write(f"{line}\n".encode())
    worker.stdin.flush()


def read_report(worker: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert worker.stdout is not None
    line = worker.stdout.readline()
    if not line:
        raise SystemExit(f"a benchmark worker died (exit {worker.wait()})")
    report: dict[str, Any] = json.loads(line)
    return report


# -- a worker process -------------------------------------------------------------------------


def worker_main(index: int, port: int, count: int, rate: float, seats: int, seconds: float) -> None:
    raise_descriptor_limit(count + 200)
    from twisted.internet import epollreactor

    epollreactor.install()
    from twisted.internet import task

    task.react(lambda reactor: _work(reactor, index, port, count, rate, seats, seconds))


def _work(
    reactor: Any, index: int, port: int, count: int, rate: float, seats: int, seconds: float
) -> Any:
    from twisted.internet.defer import Deferred

    return Deferred.fromCoroutine(_load(reactor, index, port, count, rate, seats, seconds))


async def _load(
    reactor: Any, index: int, port: int, count: int, rate: float, seats: int, seconds: float
) -> None:
    from twisted.internet.defer import Deferred, DeferredSemaphore, gatherResults
    from twisted.internet.task import LoopingCall

    from client.net import LobbyClient
    from protocol.identity import Identity

    lines = _stdin_lines(reactor)
    hello_ms: list[float] = []
    gate = DeferredSemaphore(100)  # connections being set up at once, per worker

    async def arrive(number: int) -> LobbyClient:
        client = LobbyClient(reactor, Identity.generate(), request_timeout=120)
        await client.connect("127.0.0.1", port, timeout=60)
        started = time.perf_counter()
        await client.hello(f"bench{index}-{number}", 4000)
        hello_ms.append((time.perf_counter() - started) * 1000)
        return client

    clients = await gatherResults(
        [gate.run(lambda n=n: Deferred.fromCoroutine(arrive(n))) for n in range(count)]
    )
    lines.report({"connected": sum(c.connected for c in clients), "hello_ms": hello_ms})
    await lines.next()  # "go"

    idle = list(clients)
    latency_ms: list[float] = []
    counters = {"members_started": 0, "failures": 0, "issued": 0}
    measuring = {"until": time.perf_counter() + seconds}
    begun = time.perf_counter()

    def play(client: LobbyClient) -> None:
        asked = time.perf_counter()
        counters["issued"] += 1
        game = client.next_game()

        def joined(room: Any) -> None:
            now = time.perf_counter()
            if now <= measuring["until"]:
                latency_ms.append((now - asked) * 1000)
            if len(room.members) == room.seats:  # this request fills the room

                def started(_: Any) -> None:
                    if time.perf_counter() <= measuring["until"]:
                        latency_ms.append((time.perf_counter() - asked) * 1000)

                game.addCallback(started)

        def finished(start: Any) -> None:
            if time.perf_counter() <= measuring["until"]:
                counters["members_started"] += 1
            idle.append(client)
            if rate == 0:
                play(idle.pop())

        def failed(reason: Any) -> None:
            counters["failures"] += 1

        client.quick_match(seats).addCallbacks(joined, failed)
        game.addCallbacks(finished, failed)

    def issue() -> None:
        due = int(rate * (time.perf_counter() - begun)) - counters["issued"]
        for _ in range(min(due, len(idle))):
            play(idle.pop(0))

    if rate == 0:
        for _ in range(len(idle)):
            play(idle.pop())
        pacer = None
    else:
        pacer = LoopingCall(issue)
        pacer.clock = reactor
        pacer.start(0.005)
    await _sleep(reactor, seconds)
    if pacer is not None:
        pacer.stop()
    lines.report(
        {
            "latency_ms": latency_ms,
            "members_started": counters["members_started"],
            "failures": counters["failures"],
        }
    )
    await lines.next()  # "stop": the master has counted the connections
    await gatherResults([client.close() for client in clients])


def _sleep(reactor: Any, seconds: float) -> Any:
    from twisted.internet.task import deferLater

    return deferLater(reactor, seconds, lambda: None)


class _Lines:
    """The master's commands on stdin, one Deferred per line; reports go back on stdout.

    (StandardIO makes stdout non-blocking, so reports must go through its transport.)
    """

    def __init__(self) -> None:
        self.waiting: list[Any] = []
        self.buffered: list[str] = []
        self.transport: Any = None

    def report(self, data: dict[str, Any]) -> None:
        self.transport.write(json.dumps(data).encode() + b"\n")

    def next(self) -> Any:
        from twisted.internet.defer import Deferred, succeed

        if self.buffered:
            return succeed(self.buffered.pop(0))
        waiter: Any = Deferred()
        self.waiting.append(waiter)
        return waiter

    def line(self, text: str) -> None:
        if self.waiting:
            self.waiting.pop(0).callback(text)
        else:
            self.buffered.append(text)


def _stdin_lines(reactor: Any) -> _Lines:
    from twisted.internet import stdio
    from twisted.protocols.basic import LineReceiver

    lines = _Lines()

    class Commands(LineReceiver):
        delimiter = b"\n"

        def lineReceived(self, line: bytes) -> None:
            lines.line(line.decode())

    lines.transport = stdio.StandardIO(Commands(), reactor=reactor)
    return lines


# -- the command line -------------------------------------------------------------------------


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        index, port, count, rate, seats, seconds = sys.argv[2:8]
        worker_main(int(index), int(port), int(count), float(rate), int(seats), float(seconds))
        return
    parser = argparse.ArgumentParser(prog="scripts/bench lobby", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--clients", type=int, default=2000, help="connections held (2000)")
    parser.add_argument("--rooms-per-s", type=float, default=250, help="offered load (250)")
    parser.add_argument("--seats", type=int, default=5, help="players per room (5)")
    parser.add_argument("--seconds", type=float, default=10, help="length of the load (10)")
    parser.add_argument("--workers", type=int, default=2, help="client processes (2)")
    args = parser.parse_args()
    result = run(args)
    print(f"lobby benchmark: {result['clients']} clients, rooms of {result['seats']}")
    print(
        f"  connections held  {result['connections_held']} (target ≥ {TARGETS['connections_held']})"
    )
    print(
        f"  rooms started/s   {result['rooms_per_s']} "
        f"(offered {args.rooms_per_s or 'closed loop'}; target ≥ {TARGETS['rooms_per_s']})"
    )
    print(
        f"  latency p50/p99   {result['p50_ms']} / {result['p99_ms']} ms "
        f"(target p99 < {TARGETS['p99_ms']}; max {result['max_ms']})"
    )
    print(
        f"  hello p50/p99     {result['hello_p50_ms']} / {result['hello_p99_ms']} ms "
        "(while every client connects at once)"
    )
    print(f"  lobby peak memory {result['peak_rss_mb']} MB")
    print(f"  failed requests   {result['failures']}")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
