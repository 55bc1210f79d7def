"""Cost of dealing one deck epoch with 3, 5 and 7 players (scripts/bench deck [--json]).

Every player is a separate DeckPlayer; they exchange msgpack-encoded messages on the epoch's
round schedule, as the lockstep will. The critical path models k machines working in parallel:
a seat produces its round-r message once it has processed round r-1, and processes round r once
every seat's round-r message is in. Each seat gets the same executor (the two cores of this
machine), since on a LAN every seat has its own machine. Beside the deck's chain a seat proves
its own shuffle and checks the other seats' proofs (`BACKGROUND_WORK`, on threads of their own
in the client): here each such job is timed on its own and put on the seat's two cores in the
model (`SeatCores`), where it runs only while the seat's main line does not; the seat sends
its argument no earlier than it is proved, and its last round ends no earlier than its last
check. Figures per player count, with proofs off and on: the
critical path of the whole epoch (shuffle + relock, with the proofs it carries),
the CPU seconds of all players together, the time each player spends receiving and checking
(mean over players), and the bytes each player sends (mean and max). Without proofs the
critical path is also compared with the raw cost of the scalar multiplications it needs
(k·n locks, k·n relocks, k·n base-point locks), timed in the same run; the ratio is reported on
one core (the overhead of validation, hashing and Python) and with the pool.

Then the audit one seat runs at the end of a game, in full (every public check re-run, every
seat's messages regenerated from its seed) and in its quick form (`checked_live`: the seat's own
checks already passed this transcript on receipt), for one epoch dealt with proofs whose every
slot is drawn to a hand and every other one then played to all: CPU seconds on one core, no pool
(the lockstep audits without one). A game audits one such epoch per deal (the first deck, then
each smaller discard pile). `--audit-only` measures just that.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import secrets
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import msgpack

from protocol.deck import (
    BACKGROUND_WORK,
    RISTRETTO255,
    DeckConfig,
    DeckMessage,
    DeckPlayer,
    EpochMessage,
    audit,
    decode_message,
    multiply_all,
    parts_due,
    soundness_bits,
)

DECK_SIZE = {3: 150, 4: 130, 5: 130, 6: 144, 7: 144}
WORKERS = 2


@dataclass
class Epoch:
    critical_s: float
    cpu_s: float
    receive_s: list[float]
    bytes_sent: list[int]


def cpu_seconds() -> float:
    """CPU of this process and of its reaped children (process-pool workers once shut down)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def make_pool(kind: str) -> Executor | None:
    if kind == "thread":
        return ThreadPoolExecutor(WORKERS)
    if kind == "process":
        return ProcessPoolExecutor(WORKERS)
    return None


@contextmanager
def pool(kind: str) -> Iterator[Executor | None]:
    """A fresh, warmed-up pool, shut down (workers reaped) on exit."""
    executor = make_pool(kind)
    if executor is not None:
        points = [RISTRETTO255.generator()] * 16
        scalar = RISTRETTO255.scalar_from_wide(secrets.token_bytes(64))
        multiply_all(executor, RISTRETTO255, [(scalar, p) for p in points])
    try:
        yield executor
    finally:
        if executor is not None:
            executor.shutdown(wait=True)


def pool_overhead_cpu(kind: str) -> float:
    """CPU a pool costs just to start, warm up and stop (subtracted from the measurements)."""
    before = cpu_seconds()
    with pool(kind):
        pass
    return cpu_seconds() - before


class CheckCore(Executor):
    """One seat's executor: its bulk work goes to the shared pool, while its background work
    runs here at once, timed, so that the model can put it on the seat's cores beside its main
    line (`SeatCores`)."""

    def __init__(self, inner: Executor | None) -> None:
        self.inner = inner
        self.spent: list[float] = []  # seconds, one per background job

    def submit(self, fn: Callable[..., object], /, *args: object, **kwargs: object) -> Future:  # type: ignore[override]
        background = fn in BACKGROUND_WORK
        if not background and self.inner is not None:
            return self.inner.submit(fn, *args, **kwargs)
        started = time.perf_counter()
        done: Future = Future()
        done.set_result(fn(*args, **kwargs))
        if background:
            self.spent.append(time.perf_counter() - started)
        return done

    def take(self) -> list[float]:
        """The seconds of each background job run since the last call."""
        spent, self.spent = self.spent, []
        return spent


class SeatCores:
    """One seat's two cores in the model. Its main line (making its messages, taking in each
    round's) is given both while it runs, since its bulk work is spread over the pool; in
    between, the background jobs share them, each on at most one core."""

    CORES = 2

    def __init__(self) -> None:
        self.now = 0.0
        self.jobs: dict[int, float] = {}  # job -> seconds of work left
        self.finished_at: dict[int, float] = {}

    def add(self, job: int, seconds: float, at: float) -> None:
        self.idle_until(at)
        self.jobs[job] = seconds

    def busy(self, start: float, seconds: float) -> float:
        """The main line runs from `start` for `seconds`: the jobs wait. When it ends."""
        self.idle_until(start)
        self.now = max(self.now, start) + seconds
        return self.now

    def idle_until(self, until: float) -> None:
        """The jobs run, sharing the cores, until `until`."""
        while self.jobs and self.now < until:
            rate = min(1.0, self.CORES / len(self.jobs))
            step = min(min(self.jobs.values()) / rate, until - self.now)
            self.now += step
            for job in list(self.jobs):
                self.jobs[job] -= step * rate
                if self.jobs[job] <= 1e-12:
                    del self.jobs[job]
                    self.finished_at[job] = self.now
        self.now = max(self.now, until)

    def done(self, job: int) -> float:
        """When `job` is finished (the seat waits for it, idle)."""
        while job in self.jobs:
            self._next_finish()
        return self.finished_at[job]

    def drained(self) -> float:
        """When every job is finished (the seat waits for them, idle)."""
        while self.jobs:
            self._next_finish()
        return self.now

    def _next_finish(self) -> None:
        rate = min(1.0, self.CORES / len(self.jobs))
        self.idle_until(self.now + min(self.jobs.values()) / rate)


def timed(action: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def receive(player: DeckPlayer, round_: int, sent: dict[int, bytes]) -> float:
    """Decode every seat's round message and let `player` check it; the seconds it took."""
    started = time.perf_counter()
    decoded: dict[int, EpochMessage | None] = {}
    for seat, data in sent.items():
        message = decode_message(msgpack.unpackb(data, strict_map_key=True), seat)
        assert isinstance(message, EpochMessage)
        decoded[seat] = message
    player.receive_round(round_, decoded)
    return time.perf_counter() - started


def run_epoch(players: int, proofs: bool, kind: str) -> Epoch:
    size = DECK_SIZE[players]
    config = DeckConfig(secrets.token_bytes(16), players, proofs)
    overhead = pool_overhead_cpu(kind) if kind == "process" else 0.0
    cpu_before = cpu_seconds()
    with pool(kind) as executor:
        cores = [CheckCore(executor) for _ in range(players)]
        seats = [
            DeckPlayer(config, seat, secrets.token_bytes(32), executor=cores[seat])
            for seat in range(players)
        ]
        model = [SeatCores() for _ in range(players)]
        proving: dict[int, int] = {}  # seat -> its shuffle argument's job in the model
        jobs = itertools.count()
        ready = []
        for player in seats:
            started = time.perf_counter()
            player.begin_epoch(0, range(size))
            ready.append(model[player.seat].busy(0.0, time.perf_counter() - started))
        receive_s = [0.0] * players
        bytes_sent = [0] * players
        for round_ in range(config.rounds):
            sent: dict[int, bytes] = {}
            finished = []
            for player in seats:
                seat, cores_of = player.seat, model[player.seat]
                start = ready[seat]
                if "argument" in parts_due(config, round_, seat):
                    start = max(start, cores_of.done(proving.pop(seat)))
                spent, message = timed(lambda: player.epoch_message(round_))  # noqa: B023
                background = cores[seat].take()
                made = cores_of.busy(start, spent - sum(background))
                for seconds in background:  # its shuffle argument, started with its shuffle
                    proving[seat] = next(jobs)
                    cores_of.add(proving[seat], seconds, made)
                finished.append(made)
                if message is not None:
                    sent[seat] = msgpack.packb(message.to_wire())
                    bytes_sent[seat] += len(sent[seat])
            arrived = max(finished)
            for player in seats:
                seat, cores_of = player.seat, model[player.seat]
                spent = receive(player, round_, sent)
                background = cores[seat].take()
                spent -= sum(background)
                ready[seat] = cores_of.busy(arrived, spent)
                for seconds in background:
                    cores_of.add(next(jobs), seconds, ready[seat])
                receive_s[seat] += spent
        ends = [max(main, cores_of.drained()) for main, cores_of in zip(ready, model, strict=True)]
    cpu = cpu_seconds() - cpu_before - overhead
    return Epoch(max(ends), cpu, receive_s, bytes_sent)


def audit_times(players: int) -> tuple[float, float]:
    """CPU seconds of one seat's audit of one dealt epoch, in full and checked_live.

    Seat 0 receives and checks everything live, as in a game; the others only send. Every slot
    is drawn to a hand (slot j to seat j mod k), then every other slot is played to all.
    """
    size = DECK_SIZE[players]
    config = DeckConfig(secrets.token_bytes(16), players, True)
    seeds = [secrets.token_bytes(32) for _ in range(players)]
    seats = [DeckPlayer(config, seat, seeds[seat]) for seat in range(players)]
    transcript: list[tuple[int, DeckMessage]] = []
    for player in seats:
        player.begin_epoch(0, range(size))
    for round_ in range(config.rounds):
        sent = {}
        for player in seats:
            message = player.epoch_message(round_)
            if message is not None:
                sent[player.seat] = message
        for player in seats:
            player.receive_round(round_, sent)
        transcript += sorted(sent.items())

    def publish(sender: int, slot: int, to: int | None) -> None:
        message = seats[sender].keys_for(0, [slot], to, check_routes=False)
        seats[0].receive_keys(sender, message)
        transcript.append((sender, message))

    for slot in range(size):
        for sender in range(players):
            if sender != slot % players:
                publish(sender, slot, slot % players)
    for slot in range(0, size, 2):
        publish(slot % players, slot, None)
    revealed: dict[int, bytes | None] = dict(enumerate(seeds))
    times = []
    for checked_live in (False, True):
        started = time.process_time()
        audit(config, [range(size)], transcript, revealed, checked_live=checked_live)
        times.append(time.process_time() - started)
    return times[0], times[1]


def report_audits(summary: dict[str, object]) -> None:
    print("audit of one dealt epoch with proofs, one seat, CPU s on one core")
    print("{:>2} {:>5} {:>8} {:>8} {:>7}".format("k", "cards", "full s", "live s", "ratio"))
    for players in (3, 5, 7):
        full, live = audit_times(players)
        summary[f"k{players}_audit_s_full"] = round(full, 3)
        summary[f"k{players}_audit_s_live"] = round(live, 3)
        print(
            f"{players:>2} {DECK_SIZE[players]:>5} {full:>8.3f} {live:>8.3f} {full / live:>6.1f}x"
        )


def raw_costs(samples: int = 7, batch: int = 400) -> tuple[float, float]:
    """Median seconds per variable-base and per base-point multiplication, on one core."""
    group = RISTRETTO255
    point = group.generator()
    scalar = group.scalar_from_wide(secrets.token_bytes(64))
    var, base = [], []
    for _ in range(samples):
        spent, _ = timed(lambda: [group.mul(scalar, point) for _ in range(batch)])
        var.append(spent / batch)
        spent, _ = timed(lambda: [group.mul_base(scalar) for _ in range(batch)])
        base.append(spent / batch)
    return statistics.median(var), statistics.median(base)


def choose_pool(trials: int = 3) -> tuple[str, dict[str, float]]:
    """Thread or process pool: whichever gives the shorter 5-player critical path with proofs
    (median of `trials` runs each, alternating, since this machine is noisy)."""
    runs: dict[str, list[float]] = {"thread": [], "process": []}
    for _ in range(trials):
        for kind, paths in runs.items():
            paths.append(run_epoch(5, True, kind).critical_s)
    medians = {kind: statistics.median(paths) for kind, paths in runs.items()}
    return min(medians, key=lambda kind: medians[kind]), medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pool", choices=("auto", "thread", "process", "none"), default="auto")
    parser.add_argument("--audit-only", action="store_true", help="only the audit figures")
    args = parser.parse_args()
    bits = min(soundness_bits(RISTRETTO255, size) for size in DECK_SIZE.values())
    summary: dict[str, object] = {"cores": os.cpu_count(), "soundness_bits": bits}
    print(f"shuffle proofs: a false shuffle passes with probability at most 2^-{bits}")
    if args.audit_only:
        report_audits(summary)
        if args.json:
            print(json.dumps(summary))
        return
    if args.pool == "auto":
        kind, paths = choose_pool()
        print(
            "pool for 5 players with proofs (median of 3): "
            + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in paths.items())
            + f" -> {kind}"
        )
        summary.update(
            {f"k5_critical_s_proofs_{name}_pool": round(s, 3) for name, s in paths.items()}
        )
    else:
        kind = args.pool
    summary["pool"] = kind
    var_s, base_s = raw_costs()
    summary["raw_mul_ms"] = round(var_s * 1e3, 4)
    summary["raw_mul_base_ms"] = round(base_s * 1e3, 4)
    print(f"raw scalar multiplication {var_s * 1e3:.3f} ms, base point {base_s * 1e3:.3f} ms")
    header = ("k", "cards", "proofs", "critical s", "cpu s", "receive s/pl", "KB/pl", "KB max")
    print("{:>2} {:>5} {:>6} {:>10} {:>7} {:>12} {:>6} {:>6}".format(*header))
    for players in (3, 5, 7):
        size = DECK_SIZE[players]
        raw = players * size * (2 * var_s + base_s)
        for proofs in (False, True):
            epoch = run_epoch(players, proofs, kind)
            label = "proofs" if proofs else "plain"
            summary[f"k{players}_critical_s_{label}"] = round(epoch.critical_s, 3)
            summary[f"k{players}_cpu_s_{label}"] = round(epoch.cpu_s, 3)
            summary[f"k{players}_receive_s_per_player_{label}"] = round(
                statistics.mean(epoch.receive_s), 3
            )
            summary[f"k{players}_bytes_per_player_{label}"] = round(
                statistics.mean(epoch.bytes_sent)
            )
            summary[f"k{players}_bytes_max_{label}"] = max(epoch.bytes_sent)
            print(
                f"{players:>2} {size:>5} {'on' if proofs else 'off':>6} {epoch.critical_s:>10.3f}"
                f" {epoch.cpu_s:>7.2f} {statistics.mean(epoch.receive_s):>12.3f}"
                f" {statistics.mean(epoch.bytes_sent) / 1024:>6.1f}"
                f" {max(epoch.bytes_sent) / 1024:>6.1f}"
            )
            if not proofs:
                one_core = run_epoch(players, False, "none").critical_s
                summary[f"k{players}_plain_vs_raw_ratio"] = round(one_core / raw, 3)
                summary[f"k{players}_plain_vs_raw_ratio_pooled"] = round(epoch.critical_s / raw, 3)
                print(
                    f"   raw multiplications {raw:.3f} s; plain critical path on one core "
                    f"{one_core:.3f} s = {one_core / raw:.2f}x raw, with the pool "
                    f"{epoch.critical_s / raw:.2f}x"
                )
    report_audits(summary)
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
