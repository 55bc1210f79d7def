"""The withholding rule (client/step_watch.py) for every pattern of links: a seat that owes a
started step is named, or voted out, within the deadline plus the abandon time of the step's
start, however its links come and go; an honest seat, which answers whenever it has been
present for a moment, never is."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from client.step_watch import Judgement, StepWatch

DEADLINE, GRACE, ABANDON = 60.0, 10.0, 300.0
TICK = 1.0  # the driver judges on every heartbeat tick
ANSWER = 2.0  # an honest seat present this long has caught up and answered
ANSWER_TICKS = int(ANSWER / TICK)
ME, STALLER = 0, 1
HORIZON = DEADLINE + ABANDON + 2 * TICK

# A seat's links: alternating up and down spells of these lengths, up first or down first.
spells = st.lists(st.floats(0.5, 120.0), min_size=1, max_size=12)
links = st.tuples(st.booleans(), spells)


def present_at(pattern: tuple[bool, list[float]], now: float) -> bool:
    up, lengths = pattern
    elapsed = 0.0
    for length in lengths:
        if now < elapsed + length:
            return up
        elapsed += length
        up = not up
    return up  # the last spell lasts


def run(
    patterns: dict[int, tuple[bool, list[float]]], start: float
) -> list[tuple[float, Judgement]]:
    """Tick a watch from `start` to the horizon: honest seats (all but the staller) answer once
    present ANSWER seconds running; the staller never does. Returns every judgement that
    named or voted out someone, with its time."""
    watch = StepWatch(4, ME, DEADLINE, GRACE, ABANDON)
    watch.begin(7, start)
    watch.arrive(ME)
    present_since: dict[int, float] = {}
    verdicts = []
    now = start
    while now <= start + HORIZON:
        present = {seat for seat, pattern in patterns.items() if present_at(pattern, now)}
        for seat in patterns:
            if seat not in present:
                present_since.pop(seat, None)
            else:
                since = present_since.setdefault(seat, now)
                if seat != STALLER and now - since >= ANSWER:
                    watch.arrive(seat)
        watch.presence(present, now)
        judgement = watch.judge(now)
        if judgement.named or judgement.gone:
            verdicts.append((now, judgement))
        now += TICK
    return verdicts


@settings(max_examples=400)
@given(st.dictionaries(st.sampled_from([1, 2, 3]), links, min_size=3, max_size=3),
       st.floats(0, 50))  # fmt: skip
def test_the_staller_is_named_or_voted_out_in_time_and_nobody_else_is_named(patterns, start):
    verdicts = run(patterns, start)
    assert verdicts, "the staller was never judged"
    first_time, first = verdicts[0]
    assert STALLER in first.named | first.gone
    assert first_time <= start + DEADLINE + ABANDON + TICK
    for _, judgement in verdicts:
        assert judgement.named <= {STALLER}, "an honest seat was named"


@settings(max_examples=200)
@given(st.dictionaries(st.sampled_from([2, 3]), links, min_size=2, max_size=2), st.floats(0, 50))
def test_a_seat_that_was_present_long_enough_to_answer_is_never_voted_out(patterns, start):
    patterns = patterns | {STALLER: (True, [1000.0])}
    for _, judgement in run(patterns, start):
        for seat in judgement.gone:
            # Present at every tick of ANSWER seconds running (as `run` sees presence), not
            # only at both ends of them: a seat down in between has not answered.
            assert not any(
                all(present_at(patterns[seat], s + k * TICK) for k in range(ANSWER_TICKS + 1))
                for s in [start + n * TICK for n in range(int(HORIZON))]
            ), f"seat {seat} was present long enough to answer, yet voted out"


def test_a_seat_connected_the_whole_time_is_named_at_the_deadline():
    watch = StepWatch(3, ME, DEADLINE, GRACE, ABANDON)
    watch.begin(3, 100.0)
    watch.arrive(ME)
    watch.arrive(2)
    for now in (100.0, 130.0, 159.0):
        watch.presence({1, 2}, now)
        assert watch.judge(now) == Judgement()
    watch.presence({1, 2}, 160.0)
    assert watch.judge(160.0) == Judgement(named=frozenset({1}))


def test_a_seat_back_after_the_deadline_gets_the_grace_then_is_named():
    watch = StepWatch(3, ME, DEADLINE, GRACE, ABANDON)
    watch.begin(3, 0.0)
    watch.arrive(ME)
    watch.arrive(2)
    watch.presence({2}, 61.0)
    assert watch.judge(61.0) == Judgement()
    watch.presence({1, 2}, 62.0)  # back
    assert watch.judge(62.0 + GRACE - 1).named == frozenset()
    watch.presence({1, 2}, 62.0 + GRACE)
    assert watch.judge(62.0 + GRACE).named == frozenset({1})


def test_a_step_not_started_here_judges_nobody():
    watch = StepWatch(3, ME, DEADLINE, GRACE, ABANDON)
    watch.waiting(5)
    watch.presence({1, 2}, 10_000.0)
    assert watch.judge(10_000.0) == Judgement()
