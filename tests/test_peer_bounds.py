"""What one peer can make a client spend, message by message (client/game.py), with a fake
mesh that records what the client would send and a clock the test moves: holding answers,
chat, and step messages outside the window, of another game or with a bad signature."""

from __future__ import annotations

import secrets
from typing import Any

from twisted.internet.defer import Deferred, maybeDeferred, succeed
from twisted.internet.task import Clock

from client.game import (
    ANSWER_INTERVAL,
    CHAT_BURST,
    CHAT_PER_SECOND,
    WANT_AFTER,
    PeerGame,
    Player,
)
from client.gamefile import GameFileWriter
from client.net import LinkLoss
from protocol.blame import ForkedState
from protocol.catch_up import RESEND_AFTER
from protocol.identity import Identity
from protocol.messages import GameStart, Message, RoomOptions, Seat, encode
from protocol.peer_messages import (
    MAX_STEP,
    PEER_LINK,
    Ended,
    EndVote,
    Holding,
    PeerChat,
    StepBody,
    StepFrame,
    sign,
)
from protocol.table import AgreedTable

PLAYERS = 4


class RecordingMesh:
    """Stands in for client.net.mesh.Mesh: every seat connected, everything sent recorded."""

    def __init__(self) -> None:
        self.connected = set(range(1, PLAYERS))
        self.relayed: set[int] = set()
        self.sent: list[tuple[int, Message]] = []
        self.dropped: list[tuple[int, str]] = []
        self.closed = False

    def send(self, seat: int, message: Message | bytes) -> bool:
        if isinstance(message, bytes):
            message = PEER_LINK.decode(message)
        self.sent.append((seat, message))
        return True

    def broadcast(self, message: Message | bytes, skip: Any = ()) -> None:
        for seat in sorted(self.connected - set(skip)):
            self.send(seat, message)

    def drop(self, seat: int, reason: str) -> None:
        self.dropped.append((seat, reason))

    def close(self) -> Deferred[None]:
        self.closed = True
        return succeed(None)


class Heard(Player):
    def __init__(self) -> None:
        self.chats: list[str] = []
        self.notices: list[str] = []

    def chat(self, game: PeerGame, seat: int, text: str) -> None:
        self.chats.append(text)

    def notice(self, game: PeerGame, text: str) -> None:
        self.notices.append(text)


def a_game(tmp_path: Any) -> tuple[PeerGame, RecordingMesh, Clock, list[Identity]]:
    identities = [Identity.generate() for _ in range(PLAYERS)]
    roster = GameStart(
        room_id=1,
        game_id=secrets.token_bytes(16),
        seats=tuple(
            Seat(f"p{n}", identities[n].public_key, "127.0.0.1", 4000 + n) for n in range(PLAYERS)
        ),
        options=RoomOptions(),
    )
    table = AgreedTable(roster, 0, tuple(secrets.token_bytes(32) for _ in range(PLAYERS)))
    clock, mesh = Clock(), RecordingMesh()
    writer = GameFileWriter.create(tmp_path / "game", table, bytes(32), "127.0.0.1")
    game = PeerGame(
        clock,
        identities[0],
        table,
        bytes(32),
        None,
        writer,
        Heard(),
        mesh=mesh,  # type: ignore[arg-type]
    )
    return game, mesh, clock, identities


def played_steps(game: PeerGame, steps: int) -> None:
    """As if `steps` steps had been played: their signed-looking frames held in the history."""
    for step in range(steps):
        game.history[step] = [(f"{step}/{seat}".encode(), bytes(64)) for seat in range(PLAYERS)]
    game.step = steps


def signed_step(
    game: PeerGame, identities: list[Identity], step: int, seat: int, state: bytes = bytes(32)
) -> StepFrame:
    """Seat `seat`'s signed message for `step` of the game, without moves, made against
    `state`."""
    body = StepBody(game=game.game_id, step=step, seat=seat, state=state)
    return sign(identities[seat], StepFrame(game.game_id, step, seat, body.encode()))


def holding(game: PeerGame, seat: int, step: int, have: int) -> Holding:
    """Seat `seat`'s holding (unsigned: it is read for routing only, unless it convicts)."""
    return Holding(game.game_id, step, seat, have)


def said(step: int, have: int) -> tuple[int, int]:
    """How a holding this seat sent is compared: its step and what it holds."""
    return step, have


def sent_as_said(mesh: RecordingMesh) -> list[tuple[int, Message | tuple[int, int]]]:
    """What the mesh sent, holdings shown as `said`."""
    return [(to, said(m.step, m.have) if isinstance(m, Holding) else m) for to, m in mesh.sent]


def step_frames_sent(mesh: RecordingMesh) -> list[tuple[int, int, int]]:
    return [(to, m.step, m.seat) for to, m in mesh.sent if isinstance(m, StepFrame)]


def test_a_holding_flood_gets_each_missing_message_once_and_never_the_whole_game(tmp_path):
    """The flood of issue 12: a peer asking for the whole game (step 0, holding nothing)
    hundreds of times a second. Each message of its step and the next goes to it once."""
    game, mesh, clock, _ = a_game(tmp_path)
    played_steps(game, 300)
    for _ in range(3000):
        game.received(2, holding(game, 2, 0, 0))
        clock.advance(1 / 300)
    sent = step_frames_sent(mesh)
    assert sorted(sent) == sorted({(2, step, seat) for step in (0, 1) for seat in (0, 1, 3)})
    # Asking about later steps, one after another, still gets each message at most once.
    for step in range(300):
        game.received(2, holding(game, 2, step, 0))
    sent = step_frames_sent(mesh)
    assert len(sent) == len(set(sent)) == 300 * 3


def test_holdings_about_one_step_are_answered_at_most_every_interval(tmp_path):
    game, mesh, clock, _ = a_game(tmp_path)
    played_steps(game, 10)
    game.inbox[10] = {1: (b"pending", bytes(64))}
    game.received(2, holding(game, 2, 10, 0))
    first = step_frames_sent(mesh)
    assert first == [(2, 10, 1)]
    game.received(2, holding(game, 2, 10, 0))
    assert step_frames_sent(mesh) == first  # nothing new, and too soon anyway
    clock.advance(ANSWER_INTERVAL)
    game.inbox[10][3] = (b"later", bytes(64))
    game.received(2, holding(game, 2, 10, 0))
    assert step_frames_sent(mesh) == [*first, (2, 10, 3)]


def test_an_answer_that_had_nothing_to_send_does_not_hold_up_the_next(tmp_path):
    """Seat 2 asked about step 10 before this seat held any message of it; once one is here,
    seat 2 asking again is answered at once, not an ANSWER_INTERVAL later."""
    game, mesh, _, _ = a_game(tmp_path)
    played_steps(game, 10)
    game.received(2, holding(game, 2, 10, 0))
    assert mesh.sent == []
    game.inbox[10] = {1: (b"pending", bytes(64))}
    game.received(2, holding(game, 2, 10, 0))
    assert step_frames_sent(mesh) == [(2, 10, 1)]


def test_a_seat_told_that_a_peer_holds_a_message_of_its_step_it_lacks_asks_it_once(tmp_path):
    """Seat 1's message for step 5 was lost on its way here, and this seat has nothing to
    send (nothing else would start the step here): seat 1's holding says it holds its
    message, so this seat asks seat 1 for it, once a step. A peer holding nothing this seat
    lacks is not asked."""
    game, mesh, _, _ = a_game(tmp_path)
    played_steps(game, 5)
    game.received(2, holding(game, 2, 5, 0))
    game.received(1, holding(game, 1, 5, 0b0010))
    game.received(1, holding(game, 1, 5, 0b0010))
    assert sent_as_said(mesh) == [(1, said(5, 0))]


def test_a_chat_flood_reaches_the_screen_at_a_bounded_rate(tmp_path):
    game, _, clock, _ = a_game(tmp_path)
    for n in range(1000):
        game.received(1, PeerChat(f"spam {n}"))
        clock.advance(0.01)  # 100 lines a second for 10 s
    shown = game.player.chats  # type: ignore[attr-defined]
    assert len(shown) <= CHAT_BURST + 10 * CHAT_PER_SECOND + 1
    assert shown[0] == "spam 0"


def test_step_messages_ahead_of_the_window_or_of_another_game_are_dropped_unread(tmp_path):
    """Neither checked (a bad signature goes unnoticed), nor passed on, nor kept. Copies of
    messages of steps played already are dropped unread too; any other message of such a
    step is checked (it could only be the other half of an equivocation): one whose
    signature fails closes the link that brought it, and blames nobody."""
    game, mesh, _, identities = a_game(tmp_path)
    played_steps(game, 5)
    unsigned = bytes(64)
    for step in (7, MAX_STEP):
        game.received(1, StepFrame(game.game_id, step, 1, secrets.token_bytes(50), unsigned))
    another = sign(identities[1], StepFrame(secrets.token_bytes(16), 5, 1, b"\x80"))
    game.received(1, another)
    for step in (0, 3):
        game.received(2, StepFrame(game.game_id, step, 1, *game.history[step][1]))
    assert mesh.sent == [] and mesh.dropped == []
    assert game.inbox.get(7) is None and 1 not in game.inbox.get(5, {})
    assert game.dropped == {"played already": 2, "ahead of the window": 2, "another game": 1}
    game.received(2, StepFrame(game.game_id, 3, 1, secrets.token_bytes(50), unsigned))
    assert [seat for seat, _ in mesh.dropped] == [2] and mesh.sent == []
    assert game.outcome is None and game.ending is None


def test_a_bad_signature_closes_the_link_that_carried_it_and_blames_nobody(tmp_path):
    game, mesh, _, identities = a_game(tmp_path)
    played_steps(game, 5)
    forged = sign(identities[2], StepFrame(game.game_id, 5, 1, b"\x80"))  # seat 2 signs as 1
    game.received(2, forged)
    assert [seat for seat, _ in mesh.dropped] == [2]
    assert game.outcome is None and game.ending is None
    assert 1 not in game.inbox.get(5, {})


def test_a_malformed_message_its_author_signed_names_its_author(tmp_path):
    game, mesh, _, identities = a_game(tmp_path)
    played_steps(game, 5)
    malformed = sign(identities[3], StepFrame(game.game_id, 5, 3, b"\x80"))
    game.received(1, malformed)  # from another seat: the signature is what counts
    assert game.ending is not None and game.ending.cheat is not None
    assert game.ending.cheat.seat == 3 and "malformed" in game.ending.cheat.reason
    assert mesh.dropped == []


def test_another_version_of_the_step_just_played_is_equivocation(tmp_path):
    """A seat that played a step with one version of a message hears of the other from a
    seat that got that one: it is the other half of the proof."""
    game, _, _, identities = a_game(tmp_path)
    played_steps(game, 5)
    one = signed_step(game, identities, 4, 3)
    game.history[4][3] = one.frame
    game.received(1, one)  # a late copy of what was played
    assert game.ending is None
    other = signed_step(game, identities, 4, 3, state=bytes(range(32)))
    game.received(1, other)
    assert game.ending is not None and game.ending.cheat is not None
    assert game.ending.cheat.seat == 3 and "equivocation" in game.ending.cheat.reason
    assert {frame for frame in game.ending.evidence} == {one.frame, other.frame}


def test_a_copy_of_a_held_message_is_dropped_unread_and_another_version_is_not(
    tmp_path,
):
    """A seat behind asks every peer, and a suspected fork sends every message of a step to
    every seat: copies come. The mesh asks `is_copy` before it decodes a frame: a
    byte-for-byte copy of a message held is dropped there (its sender still counts as
    heard), while another version is read, and caught."""
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, 5)
    game._busy = True  # this seat's own message for the step is on its way
    one = signed_step(game, identities, 5, 3)
    assert not game.is_copy(3, encode(one))
    game.received(3, one)
    assert game.inbox[5][3] == one.frame
    clock.advance(5)
    assert game.is_copy(1, encode(one)) and game.is_copy(2, encode(one))
    assert game.dropped["copies"] == 2 and step_frames_sent(mesh) == []
    assert game._peers[1].heard == game._peers[2].heard == clock.seconds()
    other = signed_step(game, identities, 5, 3, state=bytes(range(32)))
    assert not game.is_copy(1, encode(other))
    game.received(1, other)
    assert game.ending is not None and game.ending.cheat is not None
    assert game.ending.cheat.seat == 3 and "equivocation" in game.ending.cheat.reason


def test_a_seat_lacking_a_message_asks_a_seat_past_the_step_at_once_and_soon_every_seat(
    tmp_path,
):
    """Nobody relays step messages (each author sends its own to every seat), so a seat
    that lacks one asks for it: at once the author of a message of the next step (it has
    played this one, so it holds them all), and every peer once the step has waited
    WANT_AFTER after this seat's own message went out (an author may send to some seats
    only). Each peer is asked once a step."""
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, 5)

    def signed(step: int, seat: int) -> StepFrame:
        return signed_step(game, identities, step, seat)

    game.inbox[5] = {0: signed(5, 0).frame}  # this seat's own went out
    game.received(1, signed(5, 1))
    game.received(2, signed(6, 2))  # seat 2 is past step 5: it holds seat 3's message
    game.received(1, signed(6, 1))
    assert sent_as_said(mesh) == [(2, said(5, 0b11)), (1, said(5, 0b11))]
    clock.advance(WANT_AFTER)
    assert sent_as_said(mesh)[2:] == [(3, said(5, 0b11))]  # seats 1 and 2 were asked already
    clock.advance(10 * WANT_AFTER)
    game.received(3, signed(6, 3))
    assert len(mesh.sent) == 3 and step_frames_sent(mesh) == []  # and nothing is relayed


def test_a_message_that_comes_after_a_peer_asked_for_it_is_passed_on_to_it_once(tmp_path):
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, 5)
    game._busy = True  # this seat's own message for the step is on its way
    game.received(2, holding(game, 2, 5, 0b0111))  # seat 2 plays step 5 and lacks seat 3's message
    # Nothing to answer with yet; seat 2 holds messages this seat lacks, so it is asked.
    assert sent_as_said(mesh) == [(2, said(5, 0))]
    three = signed_step(game, identities, 5, 3)
    game.received(3, three)
    game.received(1, three)
    game.received(1, signed_step(game, identities, 5, 1))  # seat 2 holds seat 1's already
    assert step_frames_sent(mesh) == [(2, 5, 3)]
    clock.advance(5)  # past the answers' rate limit: seat 2 asks again as if it had not come
    game.received(2, holding(game, 2, 5, 0b0111))
    assert step_frames_sent(mesh) == [(2, 5, 3)]  # what was passed on is not sent again


def test_the_other_half_of_an_equivocation_names_its_author_however_late_it_comes(tmp_path):
    """Every seat played one version of seat 3's message for step 2; the one seat that got
    the other version played it, and learnt of the first (a fork sent it round) only as this
    seat was steps further on. That seat sends both halves round: they name seat 3
    here too, and this seat sends them on to every seat that may lack one."""
    game, mesh, _, identities = a_game(tmp_path)
    played_steps(game, 5)
    one = signed_step(game, identities, 2, 3)
    other = signed_step(game, identities, 2, 3, state=bytes(range(32)))
    game.history[2][3] = one.frame
    game.received(2, one)  # a late copy of what was played: nothing to see
    assert game.ending is None and mesh.sent == []
    game.received(2, other)
    assert game.ending is not None and game.ending.cheat is not None
    assert game.ending.cheat.seat == 3 and "equivocation" in game.ending.cheat.reason
    assert set(game.ending.evidence) == {one.frame, other.frame}
    sent = {(to, m.frame) for to, m in mesh.sent if isinstance(m, StepFrame) and m.step == 2}
    assert sent == {(to, f) for to in (1, 2) for f in (one.frame, other.frame)}


def test_a_seat_that_keeps_changing_its_vote_gets_each_vote_relayed_once(tmp_path):
    game, mesh, _, identities = a_game(tmp_path)
    played_steps(game, 5)
    votes = [sign(identities[1], EndVote(game.game_id, 5, 1, gone)) for gone in (0b100, 0b1000)]
    for _ in range(500):
        for vote in votes:
            game.received(1, vote)
    relayed = [message for _, message in mesh.sent if isinstance(message, EndVote)]
    assert sorted(vote.gone for vote in relayed) == [0b100, 0b100, 0b1000, 0b1000]  # 2 others
    assert game.ending is None


def test_a_seat_back_one_step_past_a_vote_that_ended_the_game_without_it_follows_the_vote(
    tmp_path,
):
    """It played the step the others ended at alone, as it went down (its own message for that
    step lost on the way): the vote's authors will never sign the step it is at, and their
    endings show the votes of most of the table, so it ends as they did rather than wait for
    them and vote them out."""
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, 31)
    votes = signed_votes(game, identities, 30, gone=0b1)
    for seat in (1, 2, 3):
        ended = sign(identities[seat], Ended(game.game_id, 30, seat, "vote", 0b1, votes=votes))
        game.received(seat, ended)
    clock.advance(60)
    assert game.ending is not None and game.ending.why == "followed" and game.ending.by == 1
    assert game.outcome is not None and game.outcome.ended_by == 1 and mesh.closed
    assert not any(isinstance(message, EndVote) for _, message in mesh.sent)


def signed_votes(
    game: PeerGame, identities: list[Identity], step: int, gone: int
) -> tuple[bytes, ...]:
    """The encoded votes of every seat outside `gone` to end at `step` without it."""
    present = [seat for seat in range(PLAYERS) if not gone >> seat & 1]
    return tuple(
        encode(sign(identities[seat], EndVote(game.game_id, step, seat, gone))) for seat in present
    )


def test_a_vote_ending_without_the_votes_behind_it_is_not_followed_and_takes_no_seed(tmp_path):
    """Issue 26, problem 4: one seat's ending by a vote without seat 1, with none of the
    votes, or with its own only, or with too few of the table behind it where this seat is
    left out, only says that its author left for good: this seat plays on, reveals no seed,
    and says so in words."""
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, 31)
    own_only = encode(sign(identities[3], EndVote(game.game_id, 31, 3, 0b10)))
    lone = [
        (2, 0b10, ()),
        (3, 0b10, (own_only,)),
        (1, 0b101, signed_votes(game, identities, 31, 0b101)),  # seats 1 and 3: half the table
    ]
    for author, gone, votes in lone:
        ended = sign(identities[author], Ended(game.game_id, 31, author, "vote", gone, votes=votes))
        game.received(author, ended)
    clock.advance(60)
    assert game.ending is None and game.outcome is None
    assert not [m for _, m in mesh.sent if isinstance(m, Ended) and m.seat == game.seat]
    notices = game.player.notices  # type: ignore[attr-defined]
    assert any("p2's client says the game ended by a vote, but no vote" in n for n in notices)
    assert any("p3's client" in n and "not exactly the seats" in n for n in notices), notices
    assert any("p1's client" in n and "less than most of the table" in n for n in notices)


def a_fork_at_step_5(tmp_path: Any) -> tuple[PeerGame, RecordingMesh, Clock, list[Identity]]:
    """Seat 0 holds every message of step 5, and seat 1's was made from another version of
    seat 3's message of step 4 (as the lockstep finds it: the driver is what is tested here)."""
    game, mesh, clock, identities = a_game(tmp_path)
    played_steps(game, 5)
    game.history[4] = [signed_step(game, identities, 4, seat).frame for seat in range(PLAYERS)]

    def forked(payloads: Any) -> Any:
        raise ForkedState(1, 5, {3: secrets.token_bytes(32)})

    game.lockstep.play = forked  # type: ignore[method-assign]
    # No deal was played, so the driver would hand the step to a worker thread: run it here.
    game._in_thread = lambda work, *args, heavy=False: maybeDeferred(work, *args)  # type: ignore[method-assign]
    game.inbox[5] = {0: (b"mine", bytes(64))}
    for seat in (1, 2, 3):
        game.received(seat, signed_step(game, identities, 5, seat))
    return game, mesh, clock, identities


def contested_sent(mesh: RecordingMesh) -> list[tuple[int, int]]:
    """(to, author) of every step-4 message sent: our versions of the contested ones."""
    return [(to, m.seat) for to, m in mesh.sent if isinstance(m, StepFrame) and m.step == 4]


def test_a_fork_sends_our_version_of_the_contested_message_round_and_the_other_names_its_signer(
    tmp_path,
):
    """Seat 1 may be honest: seat 3 signed two versions of its step-4 message, gave seat 1
    the other one, and gave this seat the first. Our version goes to everyone but seat 3
    (which holds what it signed); the other version comes back, and seat 3 is named, not
    seat 1."""
    game, mesh, clock, identities = a_fork_at_step_5(tmp_path)
    assert game.ending is None
    assert sorted(contested_sent(mesh)) == [(to, 3) for to in (1, 2)]
    other = signed_step(game, identities, 4, 3, state=bytes(range(32)))
    clock.advance(1)
    game.received(1, other)
    assert game.ending is not None and game.ending.cheat is not None
    assert game.ending.cheat.seat == 3 and "equivocation" in game.ending.cheat.reason
    # A seat that comes back is given both versions, to see it for itself.
    mesh.sent.clear()
    game.link_up(2)
    assert sorted(contested_sent(mesh)) == [(2, 3), (2, 3)]


def test_a_fork_names_nobody_and_keeps_offering_until_the_step_is_settled_or_voted_out(tmp_path):
    """Issue 26, problem 1: the old driver named seat 1 ("made its message against another
    state") once the deadline passed, though it may only have been given the other half of
    an equivocation that a cut link kept from this seat. Now nobody is named; our version
    goes to every seat on every link that comes up (within its catch-up budget: on a link
    that cycles, again only once RESEND_AFTER has passed), never twice on one link; and the
    seat whose message cannot be played is voted out as gone, with no finding, at the step
    deadline plus the abandon time."""
    game, mesh, clock, _ = a_fork_at_step_5(tmp_path)
    assert contested_sent(mesh).count((2, 3)) == 1
    mesh.sent.clear()
    game.link_down(2, "cut", LinkLoss.BROKEN)
    game.link_up(2)
    assert contested_sent(mesh) == []  # it went to seat 2 less than RESEND_AFTER ago
    limit = game.step_deadline + game.abandon_after
    cycles = 0
    for second in range(int(limit) - 2):
        clock.advance(1)
        if second % 2 and second < 60:  # seat 2's link comes back every other second
            game.link_down(2, "cut", LinkLoss.BROKEN)
            game.link_up(2)
            cycles += 1
        game._tick()
    assert game.ending is None
    to_2 = contested_sent(mesh).count((2, 3))
    assert 0 < to_2 <= 60 // RESEND_AFTER + 1, (to_2, cycles)
    assert contested_sent(mesh).count((1, 3)) == 0  # its link stayed up: it has ours
    assert not any(isinstance(m, EndVote) for _, m in mesh.sent)
    for _ in range(3):
        clock.advance(1)
        game._tick()
    votes = {m.gone for _, m in mesh.sent if isinstance(m, EndVote)}
    assert votes == {0b0010}
    assert game.ending is None or game.ending.cheat is None


def test_seats_that_stop_playing_together_are_voted_out_by_the_one_seat_left(tmp_path):
    """Three colluding seats stop at once, links up, saying nothing: the one honest seat
    names nobody (nothing signed says anything against them), and at the step deadline plus
    the abandon time votes all three out; its vote is the whole vote of the seats left, so
    the game ends there, by a vote, with no finding."""
    game, mesh, clock, _ = a_game(tmp_path)
    played_steps(game, 5)
    game._in_thread = lambda work, *args, heavy=False: maybeDeferred(work, *args)  # type: ignore[method-assign]
    game._send_own(5, (b"mine", bytes(64)))
    for _ in range(int(game.step_deadline + game.abandon_after) + 2):
        clock.advance(1)
        game._tick()
        if game.ending is not None:
            break
    ending = game.ending
    assert ending is not None and ending.why == "vote" and ending.cheat is None
    assert ending.gone == 0b1110 and [vote.seat for vote in ending.votes] == [0]
    assert clock.seconds() >= game.step_deadline + game.abandon_after
    told = {(to, type(m).__name__) for to, m in mesh.sent if isinstance(m, EndVote | Ended)}
    assert told == {(seat, kind) for seat in (1, 2, 3) for kind in ("EndVote", "Ended")}
