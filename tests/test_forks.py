"""Fork resolution as a machine of its own (protocol/forks.py): what it offers, to whom, how
often, and whom it holds the step up for; it never names anybody."""

from __future__ import annotations

import itertools

from protocol.blame import ForkedState
from protocol.forks import FORK_PUSH_EVERY, ForkResolution

# Seat 1's message of step 7 was made from other versions of seats 2's and 3's step-6 messages.
FORK = ForkedState(1, 7, {2: bytes(32), 3: bytes(range(32))})


def test_no_fork_holds_nothing_up_and_offers_nothing():
    forks = ForkResolution()
    assert not forks.open and forks.holding_up == frozenset()
    assert not forks.offer_due(0.0) and forks.contested_for(0) == ()


def test_a_fork_holds_up_only_the_seat_whose_message_cannot_be_played():
    forks = ForkResolution()
    forks.suspect(FORK)
    assert forks.open and forks.holding_up == frozenset({1})


def test_the_contested_messages_go_to_every_seat_but_their_author():
    forks = ForkResolution()
    forks.suspect(FORK)
    assert forks.contested_for(0) == ((6, 2), (6, 3))
    assert forks.contested_for(1) == ((6, 2), (6, 3))  # the seat whose state differs, too
    assert forks.contested_for(2) == ((6, 3),)
    assert forks.contested_for(3) == ((6, 2),)


def test_offers_go_round_at_once_then_every_push_interval_never_more_often():
    forks = ForkResolution()
    forks.suspect(FORK)
    now, offers = 100.0, []
    while now < 100.0 + 6 * FORK_PUSH_EVERY:
        if forks.offer_due(now):
            offers.append(now)
        now += 0.25
    assert offers[0] == 100.0
    gaps = [later - earlier for earlier, later in itertools.pairwise(offers)]
    assert len(offers) == 6 and all(gap == FORK_PUSH_EVERY for gap in gaps), offers


def test_the_first_fork_is_the_one_looked_into():
    forks = ForkResolution()
    forks.suspect(FORK)
    forks.suspect(ForkedState(2, 7, {0: bytes(32)}))
    assert forks.holding_up == frozenset({1}) and forks.contested_for(0) == ((6, 2), (6, 3))
