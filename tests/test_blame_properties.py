"""Issue 26's laws over the verdict rules (protocol/blame.py) and the clocks they judge by
(protocol/step_watch.py), for any schedule of drops, one-way cuts, delays and link cycling,
and any choice of a hostile seat (withhold with honest, paced, lying or no holdings; sign two
versions of a message for some seats; lie in its inputs; cycle its links), on the simulated
table of tests/blame_sim.py:

- no verdict of an honest seat ever names an honest seat;
- every step an honest seat started is played, or that seat has named someone or voted
  someone out, within the step deadline plus the abandon time (and two ticks); and a seat
  whose links come and go faster than they settle is voted out within the abandon time, even
  where no step has started (a person thinking on a steady link is waited for);
- an equivocation whose two versions both reached an honest seat is named by it;
- with no hostile seat and every cut healed before the deadline, nobody is voted out.
"""

from __future__ import annotations

import itertools

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.blame_sim import (
    ABANDON,
    DEADLINE,
    HOLDINGS,
    TICK,
    Cut,
    Hostile,
    StepKind,
    Table,
)

STEPS = 8
HORIZON = 80.0
SLACK = 2 * TICK


@st.composite
def tables(
    draw: st.DrawFn, hostile_allowed: bool = True, heal_before: float | None = None
) -> Table:
    players = draw(st.integers(3, 5))
    kinds = draw(
        st.lists(
            st.builds(StepKind, st.booleans(), st.integers(0, players - 1), st.floats(0, 3)),
            min_size=STEPS,
            max_size=STEPS,
        )
    )
    pairs = [(a, b) for a, b in itertools.permutations(range(players), 2)]
    once = heal_before is not None  # each link cut at most once (either way)
    cut_length = (
        st.floats(0.5, 2 * (DEADLINE + ABANDON))
        if heal_before is None
        else st.floats(0.5, heal_before)
    )
    cuts = draw(
        st.lists(
            st.builds(
                lambda pair, start, length: Cut(pair[0], pair[1], start, start + length),
                st.sampled_from(pairs),
                st.floats(0, 60),
                cut_length,
            ),
            max_size=6,
            unique_by=(lambda cut: frozenset((cut.source, cut.target))) if once else None,
        )
    )
    delays = {pair: draw(st.floats(0.0, 0.5)) for pair in pairs}
    compose = {
        (seat, step): draw(st.floats(0.0, 2.0)) for seat in range(players) for step in range(STEPS)
    }
    hostile = None
    if hostile_allowed and draw(st.booleans()):
        seat = draw(st.integers(0, players - 1))
        others = frozenset(range(players)) - {seat}
        hostile = Hostile(
            seat,
            withhold_at=draw(st.none() | st.integers(0, STEPS - 1)),
            holdings=draw(st.sampled_from(HOLDINGS)),
            equivocate_at=draw(st.none() | st.integers(0, STEPS - 2)),
            equivocate_to=draw(st.frozensets(st.sampled_from(sorted(others)))),
            lie_inputs_at=draw(st.none() | st.integers(1, STEPS - 1)),
            cycle=draw(
                st.none() | st.tuples(st.floats(0, 40), st.floats(0.2, 8), st.floats(0.2, 8))
            ),
        )
    return Table(players, kinds, cuts, delays, compose, hostile)


def one_way_fork(cut_until: float) -> Table:
    """Problem 1: the hostile seat 2 gives seat 0 one version of its step-1 message and seat 1
    another, while what seat 0 says to seat 1 is cut."""
    return Table(
        3,
        [StepKind(False, 2, 0.5)] * STEPS,
        [Cut(0, 1, 0.0, cut_until)],
        {pair: 0.05 for pair in itertools.permutations(range(3), 2)},
        {(s, t): 0.1 for s in range(3) for t in range(STEPS)},
        Hostile(2, equivocate_at=1, equivocate_to=frozenset({1})),
    )


def honest_seats(table: Table) -> list[int]:
    hostile = table.hostile.seat if table.hostile is not None else None
    return [seat for seat in range(table.players) if seat != hostile]


def check_laws(table: Table) -> None:
    table.run(HORIZON)
    honest = honest_seats(table)
    for number in honest:
        seat = table.seats[number]
        for verdict in seat.verdicts:
            assert set(verdict.seats) <= {table.hostile.seat} if table.hostile else False, (
                f"seat {number} named an honest seat: {verdict}"
            )
        for step, started in seat.started.items():
            bound = started + DEADLINE + ABANDON + SLACK
            if bound > HORIZON:
                continue
            in_time = step in seat.played and seat.played[step] <= bound
            concluded = seat.ended_at is not None and seat.ended_at <= bound
            assert in_time or concluded, (
                f"seat {number} started step {step} at {started:g} and neither played it nor "
                f"ended by {bound:g} (played at {seat.played.get(step)}, ended at {seat.ended_at})"
            )
        cycle = table.hostile.cycle if table.hostile is not None else None
        if cycle is not None and cycle[1] < DEADLINE and seat.step < STEPS:
            # Its absence adds up from its first drop after the last step played here.
            start, up, down = cycle
            last = max([start, *seat.played.values()])
            bound = last + up + down + ABANDON + SLACK
            if bound <= HORIZON:
                assert seat.ended_at is not None and seat.ended_at <= bound, (
                    f"seat {number} still waits at {bound:g} for a seat whose links cycle "
                    f"from {start:g} (ended at {seat.ended_at})"
                )
        if table.hostile is not None and not seat.verdicts and seat.ended_at is None:
            for (step, author), versions in seat.versions_seen.items():
                assert not (author == table.hostile.seat and len(versions) > 1), (
                    f"seat {number} held both versions of seat {author}'s step {step} unnamed"
                )


@settings(max_examples=300, deadline=None)
@given(tables())
@example(  # problem 2: every link into seat 3 cut one way past the deadline; nobody hostile
    Table(
        4,
        [StepKind(False, 0, 1.0)] * STEPS,
        [Cut(a, 3, 0.5, 0.5 + DEADLINE + 5) for a in range(3)],
        {pair: 0.05 for pair in itertools.permutations(range(4), 2)},
        {(s, t): 0.1 for s in range(4) for t in range(STEPS)},
        None,
    )
)
@example(  # problem 3: a withholder that says where it is only every 5 s
    Table(
        4,
        [StepKind(True, 0, 0.0)] * STEPS,
        [],
        {pair: 0.05 for pair in itertools.permutations(range(4), 2)},
        {(s, t): 0.1 for s in range(4) for t in range(STEPS)},
        Hostile(2, withhold_at=2, holdings="idle"),
    )
)
@example(one_way_fork(cut_until=40.0))
@example(  # problem 10: the seat to move cycles its links and never moves
    Table(
        3,
        [StepKind(False, 2, 0.5)] * STEPS,
        [],
        {pair: 0.05 for pair in itertools.permutations(range(3), 2)},
        {(s, t): 0.1 for s in range(3) for t in range(STEPS)},
        Hostile(2, withhold_at=0, holdings="honest", cycle=(0.0, 0.3, 0.2)),
    )
)
def test_no_honest_seat_is_ever_named_and_every_started_step_ends_in_time(table):
    check_laws(table)


@settings(max_examples=100, deadline=None)
@given(tables(hostile_allowed=False, heal_before=DEADLINE - 1))
def test_an_honest_table_whose_cuts_heal_before_the_deadline_votes_nobody_out(table):
    table.run(HORIZON)
    for seat in table.seats:
        assert not seat.verdicts and not seat.votes, (seat.number, seat.verdicts, seat.votes)
        assert seat.step == STEPS, (seat.number, seat.step)


def test_two_versions_kept_apart_by_a_one_way_cut_name_their_signer_once_it_heals():
    """The fork names nobody honest, and our versions keep going round: by the time the cut
    heals, before anyone is voted out, both honest seats have named the hostile."""
    table = one_way_fork(cut_until=DEADLINE + ABANDON / 2)
    table.run(HORIZON)
    for number in (0, 1):
        seat = table.seats[number]
        assert [v.seats for v in seat.verdicts] == [(2,)], (number, seat.verdicts, seat.votes)
        assert "equivocation" in seat.verdicts[0].reason
