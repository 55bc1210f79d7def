"""Withholding judged on signed words only (client/game.py with protocol/blame.py), message by
message with the fake mesh and clock of tests/test_peer_bounds.py: a seat is named only on its
own signed holding; a seat that links leave silent, cut one way or cycled is never named, only
voted out as gone once the step deadline plus the abandon time (or the abandon time of
absence, added up across reconnects) have passed; this seat signs no time owed while it makes
its message."""

from __future__ import annotations

from typing import Any

from client.game import ANSWER_INTERVAL, PeerGame
from client.gamefile import GameFile
from client.net import LinkLoss
from protocol.identity import Identity
from protocol.peer_messages import PEER_LINK, EndVote, Holding, sign
from tests.test_peer_bounds import RecordingMesh, a_game, holding, played_steps, signed_step

STEP = 5


def at_a_started_step(tmp_path: Any) -> tuple[PeerGame, RecordingMesh, Any, list[Identity]]:
    """Seat 0 (this one) and seat 1 have sent their messages for step 5; seats 2 and 3 owe
    theirs."""
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, STEP)
    game.inbox[STEP] = {0: signed_step(game, identities, STEP, 0).frame}
    game.received(1, signed_step(game, identities, STEP, 1))
    return game, mesh, clock, identities


def owing(game: PeerGame, identity: Identity, seat: int, seconds: float) -> Holding:
    """Seat `seat`'s signed holding: at step 5, holding seats 0 and 1's messages and not its
    own, owed for `seconds`."""
    return sign(identity, Holding(game.game_id, STEP, seat, 0b0011, round(seconds * 10)))


def votes_sent(mesh: RecordingMesh) -> set[int]:
    return {message.gone for _, message in mesh.sent if isinstance(message, EndVote)}


def tick_for(game: PeerGame, clock: Any, seconds: float, each: Any = None) -> None:
    """Run the driver's tick every second for `seconds`, as its LoopingCall does, calling
    `each(now)` first each time; stops early once the game has ended here."""
    for _ in range(int(seconds)):
        clock.advance(1)
        if each is not None:
            each(clock.seconds())
        game._tick()
        if game.ending is not None:
            return


def test_a_seat_whose_own_signed_holding_says_it_owed_past_the_deadline_is_named_on_it(
    tmp_path,
):
    game, _, clock, identities = at_a_started_step(tmp_path)
    game.received(3, owing(game, identities[3], 3, game.step_deadline - 0.1))
    tick_for(game, clock, 3)
    assert game.ending is None  # short of the deadline, in its own words
    convicting = owing(game, identities[3], 3, game.step_deadline)
    game.received(3, convicting)
    game._tick()
    assert game.ending is not None and game.ending.cheat is not None
    assert game.ending.cheat.seats == (3,)
    assert game.ending.cheat.reason == (
        f"withheld its message for step {STEP}: its own signed heartbeat says it held what it "
        f"needed for {game.step_deadline:g} seconds"
    )
    end = GameFile.read(game.gamefile.path).end
    assert end is not None
    (kept,) = [PEER_LINK.decode(bytes(wire)) for wire in end["signed"]]
    assert kept == convicting  # the evidence, as signed: anyone can check it again
    kept.verify(game._verifiers[3])


def test_a_holding_that_would_convict_but_whose_signature_fails_names_nobody(tmp_path):
    game, mesh, _, identities = at_a_started_step(tmp_path)
    forged = owing(game, identities[2], 3, game.step_deadline)  # seat 2's key, seat 3's name
    game.received(3, forged)
    game._tick()
    assert game.ending is None
    assert [seat for seat, _ in mesh.dropped] == [3]


def test_a_holding_in_another_seats_name_is_not_taken_from_a_link(tmp_path):
    game, _, _, identities = at_a_started_step(tmp_path)
    game.received(2, owing(game, identities[3], 3, game.step_deadline))  # relayed by seat 2
    game._tick()
    assert game.ending is None


def test_a_connected_seat_that_never_got_what_obliges_it_is_never_named_only_voted_out(
    tmp_path,
):
    """Issue 26, problem 2: a path drops everything that comes to seat 3. Its link is up, it
    says every second that it plays the step (holding nothing of it: it owes nothing), and
    it stays silent. The old rule named it ('withheld its message ... while connected') at
    the deadline; it is waited for, and voted out as gone (no finding) at the step deadline
    plus the abandon time."""
    game, mesh, clock, _ = at_a_started_step(tmp_path)
    started = clock.seconds()

    def cut_off(now: float) -> None:
        game.received(3, holding(game, 3, STEP, 0))

    limit = game.step_deadline + game.abandon_after
    tick_for(game, clock, limit - 1, cut_off)
    assert game.ending is None and votes_sent(mesh) == set()
    tick_for(game, clock, 2, cut_off)
    assert clock.seconds() - started >= limit
    assert 0b1100 in votes_sent(mesh)  # seats 2 and 3 both missing: gone, no finding
    assert game.ending is None or game.ending.cheat is None


def test_a_seat_whose_links_come_and_go_on_its_own_turn_is_voted_out_once_away_long_enough(
    tmp_path,
):
    """Issue 26, problem 10: no step has started (seat 3 is to move, and thinks), and its
    link drops every second and comes back at once. Each return used to reset its absence,
    so it held the game for ever; now its absence adds up and it is voted out as gone."""
    game, mesh, clock, _ = a_game(tmp_path)
    played_steps(game, STEP)
    game.inbox[STEP] = {}

    def cycling(now: float) -> None:
        game.link_down(3, "cut", LinkLoss.BROKEN)
        game.link_up(3)
        game.received(3, holding(game, 3, STEP, 0))

    tick_for(game, clock, game.abandon_after - 1, cycling)
    assert votes_sent(mesh) == set()
    tick_for(game, clock, 2, cycling)
    assert votes_sent(mesh) == {0b1000}
    assert game.ending is None or game.ending.cheat is None


def test_a_seat_thinking_on_a_steady_link_is_waited_for(tmp_path):
    game, mesh, clock, _ = a_game(tmp_path)
    played_steps(game, STEP)
    game.link_down(3, "cut", LinkLoss.BROKEN)
    game.link_up(3)
    tick_for(
        game, clock, 3 * game.abandon_after, lambda now: game.received(3, holding(game, 3, STEP, 0))
    )
    assert votes_sent(mesh) == set() and game.ending is None


def test_this_seat_signs_no_time_owed_while_it_makes_its_message(tmp_path):
    """Seat 1's message is here, so this seat owes its own; it is making it (a deck round's
    proof may take seconds), so its holdings say it owed nothing."""
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, STEP)
    game._busy = True  # composing
    game.received(1, signed_step(game, identities, STEP, 1))
    tick_for(game, clock, 2 * game.step_deadline)
    holdings = [m for _, m in mesh.sent if isinstance(m, Holding)]
    assert holdings and all(h.owed == 0 and h.step == STEP for h in holdings)


def test_a_seat_that_owes_and_does_not_make_its_message_says_so_in_its_holdings(tmp_path):
    """What a withholder built on this client signs: the time it owed counts by its own
    clock, at most a couple of seconds per tick (a machine asleep does not sign its sleep)."""
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, STEP)
    game._compose = lambda step: None  # type: ignore[method-assign]  # never makes it
    game.received(1, signed_step(game, identities, STEP, 1))
    tick_for(game, clock, 10)
    clock.advance(3600)  # asleep for an hour
    game._tick()
    owed = [m.owed for _, m in mesh.sent if isinstance(m, Holding) and m.seat == 0]
    # Counted from the first tick that found it owing: 9 s over 10 ticks, then the cap of 2 s.
    assert owed == sorted(owed) and owed[-1] == 110
    assert owed[-1] == game._holding().owed


def test_a_peer_waiting_on_our_message_gets_our_holding_at_most_every_interval(tmp_path):
    game, mesh, clock, _ = a_game(tmp_path)
    played_steps(game, STEP)
    game._busy = True
    for _ in range(50):
        game.received(2, holding(game, 2, STEP, 0b0100))  # it has made its own, lacks ours
    told = [to for to, m in mesh.sent if isinstance(m, Holding)]
    assert told == [2]
    clock.advance(ANSWER_INTERVAL)
    game.received(2, holding(game, 2, STEP, 0b0100))
    assert [to for to, m in mesh.sent if isinstance(m, Holding)] == [2, 2]
