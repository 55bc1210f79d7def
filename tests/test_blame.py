"""The verdict rules (protocol/blame.py): a seat is named for withholding only on its own
signed holding, and voted out, with no finding, only on the bounds of time."""

from __future__ import annotations

import secrets

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.blame import gone_for_good, withheld
from protocol.identity import Identity, SignatureError, Verifier
from protocol.peer_messages import Holding, sign

GAME = secrets.token_bytes(16)
DEADLINE, ABANDON = 60.0, 300.0
AUTHOR = Identity.generate()
KEY = Verifier(AUTHOR.public_key)


def a_holding(
    step: int = 7, have: int = 0b101, owed: float = DEADLINE, game: bytes = GAME
) -> Holding:
    return sign(AUTHOR, Holding(game, step, 1, have, round(owed * 10)))


def test_a_holding_that_owed_the_deadline_without_its_own_message_convicts_its_author():
    cheat = withheld(a_holding(), KEY, GAME, 7, DEADLINE)
    assert cheat is not None and cheat.seats == (1,) and cheat.step == 7
    assert "its own signed heartbeat says it held what it needed for 60 seconds" in cheat.reason


@pytest.mark.parametrize(
    "holding, why",
    [
        (a_holding(owed=DEADLINE - 0.1), "short of the deadline"),
        (a_holding(have=0b111), "its own message is made: it may be lost on the way"),
        (a_holding(step=6), "another step than the one judged"),
        (a_holding(game=secrets.token_bytes(16)), "another game"),
    ],
)
def test_a_holding_convicts_nobody_otherwise(holding, why):
    assert withheld(holding, KEY, GAME, 7, DEADLINE) is None, why


def test_a_convicting_holding_whose_signature_fails_is_a_link_fault_not_a_verdict():
    forged = sign(Identity.generate(), Holding(GAME, 7, 1, 0b101, round(DEADLINE * 10)))
    with pytest.raises(SignatureError):
        withheld(forged, KEY, GAME, 7, DEADLINE)


times = st.floats(0, 10 * ABANDON)
seats = st.integers(1, 6)


@settings(max_examples=300)
@given(times, st.none() | times, st.frozensets(seats), st.dictionaries(seats, times),
       st.dictionaries(seats, times))  # fmt: skip
def test_a_seat_is_voted_out_only_past_its_bound(now, started, missing, away, left):
    gone = gone_for_good(
        now=now, started=started, missing=missing, away=away, left=left,
        deadline=DEADLINE, abandon=ABANDON,
    )  # fmt: skip
    for seat in gone:
        overdue = started is not None and seat in missing and now >= started + DEADLINE + ABANDON
        assert overdue or away.get(seat, 0) >= ABANDON or now - left.get(seat, now) >= ABANDON
    for seat in missing:
        if started is not None and now >= started + DEADLINE + ABANDON:
            assert seat in gone
    assert {seat for seat, seconds in away.items() if seconds >= ABANDON} <= gone


def test_nobody_is_ever_voted_out_without_an_abandon_time():
    gone = gone_for_good(now=1e9, started=0.0, missing={1}, away={2: 1e9}, left={3: 0.0},
                         deadline=DEADLINE, abandon=0)  # fmt: skip
    assert gone == frozenset()
