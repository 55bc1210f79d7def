"""The client's deck threads: the work beside the deck's chain has threads of its own."""

from __future__ import annotations

import threading

from client.session import deck_workers
from protocol.deck.public import shuffle_proof_failure
from tests.test_deck_shuffle_argument import GROUP, Case


def thread_names() -> set[str]:
    return {thread.name for thread in threading.enumerate()}


def test_proof_checks_run_on_threads_of_their_own_and_the_chain_on_its_own():
    """A check of a shuffle argument (tens of milliseconds each, six or more per deal) must
    not queue ahead of the chain's next multiplications: that would hold up every seat."""
    case = Case(20, "workers")
    with deck_workers() as workers:
        ran_on = workers.submit(lambda: threading.current_thread().name).result(timeout=10)
        assert ran_on.startswith("deck_") and not any(
            name.startswith("deck-proofs") for name in thread_names()
        )
        checked = workers.submit(shuffle_proof_failure, GROUP, case.statement, case.proof)
        assert checked.result(timeout=30) is None
        assert any(name.startswith("deck-proofs") for name in thread_names())
    assert not any(name.startswith("deck") for name in thread_names())  # both pools stopped
