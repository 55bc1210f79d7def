"""A client whose game driver fails in the middle of a step, for the tests of the offline
audit: an ordinary bot whose step at `--fail-at` raises instead of being applied, as a bug
would. Its game file records the failure (a `stopped` record naming no seat and no step).

    python -m tests.failing_client STEP HOST:PORT --seats N --name NAME [bot options...]
"""

from __future__ import annotations

import sys
from typing import Any

from twisted.internet.defer import Deferred, fail

from client.game import PeerGame


class FailingGame(PeerGame):
    fail_at = 0

    def _in_thread(self, function: Any, *args: Any, heavy: bool = False) -> Deferred[Any]:
        if function == self.lockstep.play and self.step >= self.fail_at:
            return fail(RuntimeError(f"a fault put in at step {self.step} by the test"))
        return super()._in_thread(function, *args, heavy=heavy)


def main() -> None:
    from client.cli import build_parser, run_bot
    from client.runtime import run

    game_class = type("Failing", (FailingGame,), {"fail_at": int(sys.argv[1])})
    args = build_parser().parse_args(["bot", *sys.argv[2:]])
    run(lambda reactor: run_bot(reactor, args, game_class))


if __name__ == "__main__":
    main()
