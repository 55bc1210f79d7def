"""The clocks a stalled game is judged by (protocol/step_watch.py), for every pattern of links
and work: absence adds up across reconnects; a step's missing seats are the ones whose message
has not come; an honest seat, which starts its message as soon as it owes it, signs no time
owed, whatever the pattern of its work."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from protocol.step_watch import OBLIGATION_STEP, AwayClock, Obligation, StepWatch

SETTLE = 60.0
ME = 0


def test_a_started_step_lacks_every_seat_whose_message_has_not_come():
    watch = StepWatch(4, ME)
    watch.waiting(3)
    assert watch.missing == frozenset()  # nothing of it seen: nobody owes anything yet
    watch.begin(3, 10.0)
    watch.arrive(2)
    assert watch.missing == {1, 3}
    watch.begin(3, 20.0)
    assert watch.started == 10.0  # the step started once
    watch.waiting(4)
    assert watch.started is None and watch.missing == frozenset()


def test_a_link_that_comes_back_does_not_end_an_absence_until_it_stays_up():
    clock = AwayClock(SETTLE)
    clock.link_down(1, 100.0)
    for second in range(101, 400, 2):  # back for a second, gone for a second, for 300 s
        clock.link_up(1, float(second))
        clock.link_down(1, second + 1.0)
    assert clock.reading(1, 400.0) == 300.0
    clock.link_up(1, 400.0)
    assert clock.reading(1, 400.0 + SETTLE - 1) == 300.0 + SETTLE - 1
    assert clock.reading(1, 400.0 + SETTLE) == 0.0  # up long enough: it is back


def test_a_step_played_ends_the_absence_of_a_seat_whose_link_is_up_and_restarts_the_others():
    clock = AwayClock(SETTLE)
    clock.link_down(1, 0.0)
    clock.link_down(2, 0.0)
    clock.link_up(1, 5.0)
    clock.progress(50.0)  # both took part in the step (through other seats, for seat 2)
    assert clock.reading(1, 60.0) == 0.0
    assert clock.reading(2, 60.0) == 10.0
    assert clock.reading(3, 60.0) == 0.0  # never away


# One link's life: alternating down and up spells of these lengths, from a drop.
spells = st.lists(st.floats(0.1, 2 * SETTLE), min_size=1, max_size=20)


@settings(max_examples=300)
@given(spells)
@example([4.409398223994351, 60.0])  # found by CI: up for 60 s by length, 59.999... by the clock
def test_absence_only_ends_with_a_link_up_for_the_settling_time(lengths):
    """Whatever the pattern of drops, the clock reads the time since the first drop until the
    link has stayed up `settle` seconds once; never more, never less."""
    clock = AwayClock(SETTLE)
    now, up, first_down, settled = 0.0, False, 0.0, False
    clock.link_down(1, now)
    for length in lengths:
        # The clock sees times, not lengths: a spell up lasts (now + length) - now, which in
        # floating point may be a hair under `length` (4.409... + 60.0 - 4.409... < 60.0).
        if up and (now + length) - now >= SETTLE:
            settled = True
            assert clock.reading(1, now + length) == 0.0
            break
        assert clock.reading(1, now + length) == now + length - first_down
        now += length
        up = not up
        (clock.link_up if up else clock.link_down)(1, now)
    if not settled:
        assert clock.reading(1, now) == now - first_down


# A seat's work at one step: readings at these intervals, each saying what the seat did then.
work = st.lists(
    st.tuples(st.floats(0.0, 10.0), st.booleans(), st.booleans()), min_size=1, max_size=40
)


@settings(max_examples=300)
@given(work)
def test_a_seat_that_composes_whenever_it_owes_never_signs_time_owed(readings):
    obligation, now = Obligation(), 0.0
    for gap, owes, _ in readings:
        now += gap
        assert obligation.reading(now, 5, owes, composing=owes) == 0.0


@settings(max_examples=300)
@given(work)
def test_time_owed_counts_only_spells_owing_and_idle_and_each_reading_adds_at_most_a_cap(
    readings,
):
    obligation, now, expected, idle = Obligation(), 0.0, 0.0, False
    for gap, owes, composing in readings:
        now += gap
        if idle:
            expected += min(gap, OBLIGATION_STEP)
        assert abs(obligation.reading(now, 5, owes, composing) - expected) < 1e-9
        idle = owes and not composing
    assert obligation.reading(now, 6, False, False) == 0.0  # a new step owes nothing yet
