"""The catch-up budget of one peer seat (protocol/catch_up.py): bounded in every window,
across reconnects, and never in the way of an honest catch-up for long."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.net import LinkLoss
from protocol.catch_up import CATCHUP_BYTES, CATCHUP_WINDOW, RESEND_AFTER, CatchUp
from protocol.messages import encode
from protocol.peer_messages import PEER_MAX_FRAME, Holding, StepFrame
from tests.test_peer_bounds import PLAYERS, a_game, holding, step_frames_sent

#: The two largest deck rounds of a 7-player game, its messages in bytes, measured (the first
#: epoch's last two: a relock and the argument of the seat before it, then the last relock with
#: the last argument): what a seat back from a short cut may lack at once.
TWO_DECK_ROUNDS_OF_SEVEN = ((18_642, 19_362), (18_642, 37_973))

sizes = st.integers(1, PEER_MAX_FRAME)
requests = st.lists(
    st.tuples(st.floats(0, 3 * CATCHUP_WINDOW), sizes, st.integers(0, 20)), max_size=200
)


@given(requests)
def test_no_window_ever_holds_more_than_the_budget(asked):
    """However a peer times its requests (and whatever it asks for again), the bytes granted
    in any window of CATCHUP_WINDOW seconds, wherever it starts, are within the budget."""
    catch_up, granted, now = CatchUp(), [], 0.0
    for pause, size, what in asked:
        now += pause
        if not catch_up.sent_already(what, now) and catch_up.spend(size, now, what):
            granted.append((now, size))
    for start, _ in granted:  # a heaviest window starts at a grant
        held = sum(size for when, size in granted if start <= when < start + CATCHUP_WINDOW)
        assert held <= CATCHUP_BYTES


@given(st.lists(sizes, min_size=1, max_size=60), st.floats(0, 100))
def test_an_honest_catch_up_completes_asking_again_when_it_fits(lacking, start):
    """A peer asking again whenever the budget says its next message fits gets everything,
    at least a budget less one frame per window."""
    catch_up, now = CatchUp(), start
    for size in lacking:
        if not catch_up.spend(size, now):
            now = catch_up.fits_at(size, now)
            assert catch_up.spend(size, now)
    windows = math.ceil(sum(lacking) / (CATCHUP_BYTES - PEER_MAX_FRAME))
    assert now - start <= windows * CATCHUP_WINDOW


def test_two_deck_rounds_of_seven_players_go_at_once():
    catch_up = CatchUp()
    messages = [size for deck_round in TWO_DECK_ROUNDS_OF_SEVEN for size in deck_round]
    assert all(catch_up.spend(size, 1.0) for size in messages)


def test_what_was_sent_goes_again_only_on_a_new_link_and_after_a_while():
    """The memory is the seat's, not its link's: a link that comes back at once is no
    reason to send everything again."""
    catch_up = CatchUp()
    assert catch_up.spend(100, 0.0, (3, 1))
    assert catch_up.sent_already((3, 1), 1.0) and not catch_up.sent_already((3, 2), 1.0)
    catch_up.new_link()
    assert catch_up.sent_already((3, 1), RESEND_AFTER - 0.1)
    assert not catch_up.sent_already((3, 1), RESEND_AFTER)
    assert catch_up.spend(100, RESEND_AFTER, (3, 1))
    assert catch_up.sent_already((3, 1), 10 * RESEND_AFTER)  # this link carried it


def test_past_the_budget_a_request_waits_for_the_oldest_bytes_to_leave_the_window():
    catch_up = CatchUp()
    assert catch_up.spend(PEER_MAX_FRAME, 1.0)
    assert catch_up.spend(PEER_MAX_FRAME, 2.0)
    assert not catch_up.spend(1, 3.0)
    assert catch_up.fits_at(1, 3.0) == 1.0 + CATCHUP_WINDOW
    assert catch_up.fits_at(PEER_MAX_FRAME + 1, 3.0) == 2.0 + CATCHUP_WINDOW
    assert catch_up.spend(1, 1.0 + CATCHUP_WINDOW)


def test_a_clock_set_back_counts_as_no_time_passing():
    """Nothing held back is held back longer for it (nor let go sooner)."""
    catch_up = CatchUp()
    assert catch_up.spend(CATCHUP_BYTES, 1000.0, "all")
    assert not catch_up.spend(1, 5.0)  # the clock went back by 995 s: still the same window
    assert catch_up.sent_already("all", 5.0)
    assert catch_up.fits_at(1, 5.0) == 5.0 + CATCHUP_WINDOW
    assert catch_up.spend(1, 5.0 + CATCHUP_WINDOW)
    catch_up.new_link()
    assert not catch_up.sent_already("all", 5.0 + CATCHUP_WINDOW)


def test_what_cannot_fit_any_window_is_refused():
    with pytest.raises(ValueError):
        CatchUp().spend(CATCHUP_BYTES + 1, 0.0)
    with pytest.raises(ValueError):
        CatchUp(budget=PEER_MAX_FRAME - 1)


# --- the driver's catch-up (client/game.py), with a fake mesh and clock --------------------


def heavy_steps(game, steps: int, size: int) -> None:
    """As if `steps` steps had been played, each seat's message `size` bytes (deck rounds)."""
    for step in range(steps):
        game.history[step] = [(bytes([seat]) * size, bytes(64)) for seat in range(PLAYERS)]
    game.step = steps


def test_a_seat_that_relinks_and_asks_for_the_whole_game_is_sent_a_budget_a_window(tmp_path):
    """Problem 7 of issue 26 in the driver: seat 2 drops its link and comes back every half
    second for 40 s, each time asking about every step of a game of 60 deck-round steps
    (4 MB of messages). In any window, it is sent at most the budget."""
    game, mesh, clock, _ = a_game(tmp_path)
    heavy_steps(game, 60, 20_000)
    sent: list[tuple[float, int]] = []
    for _ in range(80):
        game.link_down(2, "cut", LinkLoss.BROKEN)
        game.link_up(2)
        for step in range(game.step + 1):
            game.received(2, holding(game, 2, step, 0))
        # This seat's own holdings (one a link, one an ask: a few hundred bytes a second
        # at this pace) are where it stands, not catch-up.
        sent += [
            (clock.seconds(), len(encode(m)))
            for to, m in mesh.sent
            if to == 2 and not isinstance(m, Holding)
        ]
        mesh.sent.clear()
        clock.advance(0.5)
    for start, _ in sent:
        held = sum(size for when, size in sent if start <= when < start + CATCHUP_WINDOW)
        assert held <= CATCHUP_BYTES
    assert sum(size for _, size in sent) <= 5 * CATCHUP_BYTES


def test_an_answer_held_back_by_the_budget_goes_once_the_window_has_room(tmp_path):
    """Seat 2, back after a cut, lacks two steps of large messages, more than a window's
    budget: it asks once; what the budget held back goes by itself a window later."""
    game, mesh, clock, _ = a_game(tmp_path)
    heavy_steps(game, 10, PEER_MAX_FRAME // 2)
    game.received(2, holding(game, 2, 8, 0))
    lacking = {(2, step, seat) for step in (8, 9) for seat in (0, 1, 3)}
    first = set(step_frames_sent(mesh))
    assert first < lacking
    clock.advance(CATCHUP_WINDOW)
    assert set(step_frames_sent(mesh)) == lacking
    assert len(step_frames_sent(mesh)) == len(lacking)
    assert all(isinstance(m, StepFrame) for _, m in mesh.sent)
