"""An honest bot on a machine that loses its power (issue 26, problem 6): its game file keeps
what is written in memory until it is synced, as the operating system's page cache would, so
what a power cut loses is lost when the process is killed; and it cuts its own power (SIGKILL)
once it has sent its message for the first step from `--at N` that ends three steps in a row
it made no moves in (what it signed then is what an unsynced file would lose): it plays
nothing more, and is killed a moment later, once the message has left. It says on stderr, as
a JSON line, the step it cut the power at.

    python -m tests.power_cut_client --at N HOST:PORT --seats N --name NAME [bot options...]

`bean-client resume` then brings the seat back from what its file kept.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

from client.game import PeerGame
from client.gamefile import GameFileWriter

CUT_AFTER = 0.3  # seconds after the message went out (so that it reaches the others)


def hold_until_sync(writer: GameFileWriter) -> None:
    """Make `writer` keep what it writes in memory until `sync` (then write it all and sync)."""
    held: list[dict[str, Any]] = []
    write, sync = writer.write, writer.sync

    def sync_all() -> None:
        for record in held:
            write(record)
        held.clear()
        sync()

    writer.write = held.append  # type: ignore[method-assign]
    writer.sync = sync_all  # type: ignore[method-assign]


class PowerCutGame(PeerGame):
    at = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hold_until_sync(self.gamefile)
        self._without_moves: list[int] = []  # the steps in a row it sent no moves for
        self._moves_queued = False  # whether the message being made carries moves
        self._cut = False

    def _pump(self) -> None:
        if not self._cut:
            super()._pump()

    def _compose(self, step: int) -> None:
        self._moves_queued = bool(self.queued)
        super()._compose(step)

    def _send_own(self, step: int, frame: tuple[bytes, bytes]) -> None:
        super()._send_own(step, frame)
        if self._moves_queued or self.view.rules is None:
            self._without_moves = []
            return
        self._without_moves = [*self._without_moves[-2:], step]
        if step >= self.at and self._without_moves == [step - 2, step - 1, step]:
            print(json.dumps({"power_cut_at": step}), file=sys.stderr, flush=True)
            self._cut = True
            self.reactor.callLater(CUT_AFTER, os.kill, os.getpid(), signal.SIGKILL)


def main() -> None:
    from client.cli import build_parser, run_bot
    from client.runtime import run

    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--at", type=int, required=True)
    ours, rest = parser.parse_known_args()
    game_class = type("PowerCut", (PowerCutGame,), {"at": ours.at})
    args = build_parser().parse_args(["bot", *rest])
    run(lambda reactor: run_bot(reactor, args, game_class))


if __name__ == "__main__":
    main()
