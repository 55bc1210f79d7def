"""The check of an ending by a vote before another seat follows it (protocol/ending.py,
`ending_problem`): each rule refuses on its own, and no set of votes that lacks this seat's
own vote, or the votes of most of the table, ever gets an ending followed."""

from __future__ import annotations

import dataclasses

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.ending import FOLLOW_GRACE, EndOfGame, ending_problem, mask_of
from protocol.identity import Identity, Verifier
from protocol.messages import encode
from protocol.peer_messages import Ended, EndVote, sign

PLAYERS = 5
KEYS = [Identity.generate() for _ in range(PLAYERS)]
VERIFIERS = [Verifier(key.public_key) for key in KEYS]
GAME = bytes(range(16))
STEP = 40


def vote(seat: int, gone: int, *, step: int = STEP, game: bytes = GAME, key: int = -1) -> bytes:
    """Seat `seat`'s encoded vote to end without `gone`, signed by its own key (or `key`'s)."""
    signer = KEYS[seat if key < 0 else key]
    return encode(sign(signer, EndVote(game, step, seat, gone)))


def ending(author: int, gone: int, votes: tuple[bytes, ...], why: str = "vote") -> Ended:
    return sign(KEYS[author], Ended(GAME, STEP, author, why, gone, bytes(32), votes=votes))


def every_vote(gone: int) -> tuple[bytes, ...]:
    return tuple(vote(seat, gone) for seat in range(PLAYERS) if not gone >> seat & 1)


GONE = mask_of({4})  # seat 4 voted out by seats 0 to 3; this seat is 0 unless said
FULL = every_vote(GONE)


def test_a_unanimous_vote_with_this_seats_own_vote_is_followed():
    assert ending_problem(ending(1, GONE, FULL), VERIFIERS, 0) is None


def test_a_vote_that_put_this_seat_out_is_followed_when_most_of_the_table_voted():
    assert ending_problem(ending(1, GONE, FULL), VERIFIERS, 4) is None  # 4 of 5


def test_endings_other_than_a_vote_carry_no_votes():
    assert ending_problem(ending(1, 0, (), "dispute"), VERIFIERS, 0) is None
    problem = ending_problem(ending(1, 0, FULL[:1], "dispute"), VERIFIERS, 0)
    assert problem == "it carries votes, but it is no vote"


def unreadable() -> bytes:
    return b"\xc1"


def not_canonical() -> bytes:
    wire = EndVote.from_wire(msgpack.unpackb(FULL[1])).to_wire()
    return msgpack.packb(dict(reversed(list(wire.items()))), use_bin_type=True)


def no_such_seat() -> bytes:
    wire = msgpack.unpackb(vote(3, GONE))
    return msgpack.packb(wire | {"seat": PLAYERS}, use_bin_type=True)


@pytest.mark.parametrize(
    ("votes", "author", "me", "words"),
    [
        ((), 1, 0, "no vote is shown"),
        ((*FULL[:1], unreadable(), *FULL[2:]), 1, 0, "a vote is unreadable"),
        ((*FULL[:1], not_canonical(), *FULL[2:]), 1, 0, "canonical form"),
        ((*FULL[:3], no_such_seat()), 1, 0, "a seat the table does not have"),
        ((*FULL[:3], vote(3, GONE, key=1)), 1, 0, "not signed by the seat it names"),
        ((*FULL[:3], vote(3, GONE, step=STEP - 1)), 1, 0, "another game, step or seats gone"),
        ((*FULL[:3], vote(3, GONE, game=bytes(16))), 1, 0, "another game, step or seats gone"),
        ((*FULL[:3], vote(3, mask_of({2, 4}))), 1, 0, "another game, step or seats gone"),
        ((*FULL, FULL[1]), 1, 0, "a seat votes twice"),
        (FULL[1:2], 1, 0, "not exactly the seats"),  # its author's own vote only
        ((*FULL[:3],), 1, 0, "not exactly the seats"),  # one present seat did not vote
        ((*FULL, vote(4, GONE)), 1, 0, "not exactly the seats"),  # a seat gone voted too
    ],
    ids=[
        "none", "unreadable", "not-canonical", "no-such-seat", "forged", "another-step",
        "another-game", "another-gone", "twice", "own-only", "one-missing", "gone-voted",
    ],
)  # fmt: skip
def test_each_rule_refuses_a_vote_ending_alone(votes, author, me, words):
    problem = ending_problem(ending(author, GONE, votes), VERIFIERS, me)
    assert problem is not None and words in problem, problem


def test_the_author_of_a_vote_ending_must_be_among_its_voters():
    """Seat 4 shows the good votes of everyone else to end without it, as its own ending."""
    problem = ending_problem(ending(4, GONE, FULL), VERIFIERS, 0)
    assert problem == "its author is not among the voters"


def test_a_vote_that_put_this_seat_out_is_not_followed_with_half_the_table_behind_it():
    gone = mask_of({0, 1, 4})  # seats 2 and 3 voted: 2 of 5
    problem = ending_problem(ending(2, gone, every_vote(gone)), VERIFIERS, 0)
    assert problem == "it leaves this seat out, and less than most of the table voted for it"


def test_an_ending_carries_at_most_one_vote_per_seat_of_a_table_and_each_one_small():
    too_many = (FULL[0],) * 8
    with pytest.raises(ValueError, match="0 to 7 items"):
        Ended(GAME, STEP, 1, "vote", GONE, votes=too_many)
    with pytest.raises(ValueError, match="1 to 256 bytes"):
        Ended(GAME, STEP, 1, "vote", GONE, votes=(bytes(257),))


def test_the_authors_signature_covers_the_votes_it_shows():
    """A seat relaying an ending cannot strip its votes, nor swap them, without breaking it."""
    signed = ending(1, GONE, FULL)
    for votes in ((), FULL[:3], (*FULL[:3], vote(3, GONE, key=0))):
        with pytest.raises(ValueError):
            dataclasses.replace(signed, votes=votes).verify(VERIFIERS[1])


SEATS = st.integers(0, PLAYERS - 1)


@st.composite
def vote_endings(draw: st.DrawFn) -> tuple[int, set[int], list[tuple[int, bytes, bool]]]:
    """An author, the seats it says are gone, and the votes it shows (seat, wire, whether
    that seat signed it): often every present seat's good vote, often any good votes, and
    sometimes votes it signed itself in others' names, in any order."""
    gone = draw(st.sets(SEATS, min_size=1, max_size=PLAYERS - 1))
    present = set(range(PLAYERS)) - gone
    author = draw(st.one_of(st.sampled_from(sorted(present)), SEATS))
    honest = draw(st.one_of(st.just(present), st.sets(SEATS)))
    forged = draw(st.one_of(st.just(set()), st.sets(SEATS, max_size=2))) - {author}
    mask = mask_of(gone)
    shown = [(seat, vote(seat, mask), True) for seat in honest]
    shown += [(seat, vote(seat, mask, key=author), False) for seat in forged]
    return author, gone, draw(st.permutations(shown))[:PLAYERS]


@given(vote_endings(), SEATS)
def test_no_vote_ending_is_followed_without_this_seats_vote_or_most_of_the_tables(shown, me):
    """Whatever votes a hostile author puts together, the ending is followed only if this
    seat signed one of them, or, left out, more than half of the table signed them; and
    then they are the good votes of exactly the seats it keeps, its author's among them."""
    author, gone, votes = shown
    problem = ending_problem(
        ending(author, mask_of(gone), tuple(wire for _, wire, _ in votes)), VERIFIERS, me
    )
    signed_by = {seat for seat, _, genuine in votes if genuine}
    if problem is None:
        assert me in signed_by or (me in gone and 2 * len(signed_by) > PLAYERS)
        assert signed_by == set(range(PLAYERS)) - gone and author in signed_by
        assert len(votes) == len(signed_by)


# --- EndOfGame: one seat's side of ending early ------------------------------------------------

DEADLINE = 60.0


def signed_vote(seat: int, gone: int, step: int = STEP) -> EndVote:
    return sign(KEYS[seat], EndVote(GAME, step, seat, gone))


def test_a_seat_votes_only_once_someone_is_gone_and_once_per_set_of_seats():
    end = EndOfGame(PLAYERS, 0, DEADLINE)
    assert end.vote_wanted(STEP, frozenset(), 0.0) is None
    assert end.vote_wanted(STEP, frozenset({4}), 1.0) == GONE
    end.voted(signed_vote(0, GONE), 1.0)
    assert end.vote_wanted(STEP, frozenset({4}), 2.0) is None  # it stands
    assert end.vote_wanted(STEP, frozenset({3, 4}), 3.0) == mask_of({3, 4})  # the seats changed


def test_seats_that_do_not_vote_with_us_a_deadline_long_are_voted_out_too():
    end = EndOfGame(PLAYERS, 0, DEADLINE)
    end.voted(signed_vote(0, GONE), 0.0)
    for seat in (1, 2):
        assert end.wants(signed_vote(seat, GONE), STEP)
        end.vote_received(signed_vote(seat, GONE), STEP)
    assert end.vote_wanted(STEP, frozenset({4}), DEADLINE - 1) is None
    assert end.vote_wanted(STEP, frozenset({4}), DEADLINE) == mask_of({3, 4})


def test_a_unanimous_vote_ends_and_a_vote_lapses_with_its_step():
    end = EndOfGame(PLAYERS, 0, DEADLINE)
    end.voted(signed_vote(0, GONE), 0.0)
    for seat in (1, 2):
        end.vote_received(signed_vote(seat, GONE), STEP)
    assert end.unanimous(STEP) is None  # seat 3's is missing
    assert not end.wants(signed_vote(3, GONE, STEP + 1), STEP)  # not due yet
    end.vote_received(signed_vote(3, GONE), STEP)
    votes = end.unanimous(STEP)
    assert votes is not None and sorted(v.seat for v in votes) == [0, 1, 2, 3]
    end.step_played(STEP + 1)
    assert end.unanimous(STEP + 1) is None and end.mine is None
    assert end.vote_wanted(STEP + 1, frozenset({4}), 1.0) == GONE  # a new vote for the new step


def test_a_relayed_vote_is_kept_once():
    end = EndOfGame(PLAYERS, 0, DEADLINE)
    assert end.vote_received(signed_vote(1, GONE), STEP)
    assert not end.wants(signed_vote(1, GONE), STEP)
    assert not end.vote_received(signed_vote(1, GONE), STEP)


def test_only_an_ending_this_seat_may_follow_binds_it_and_any_other_says_its_author_left():
    end = EndOfGame(PLAYERS, 0, DEADLINE)
    assert end.ended_received(ending(2, GONE, ()), 10.0, VERIFIERS) == "no vote is shown for it"
    assert end.to_follow(100.0, STEP, complete=False) is None
    assert end.left == {2: 10.0} and end.heard_end_of(2) and not end.heard_end_of(1)
    assert end.ended_received(ending(1, GONE, FULL), 11.0, VERIFIERS) is None
    followed = end.to_follow(11.0, STEP, complete=True)
    assert followed is not None and followed.seat == 1


def test_a_broken_deal_binds_once_this_seat_cannot_play_on():
    end = EndOfGame(PLAYERS, 0, DEADLINE)
    stopped = sign(KEYS[3], Ended(GAME, STEP, 3, "stopped", 0, None))
    assert end.ended_received(stopped, 0.0, VERIFIERS) is None
    dispute = sign(KEYS[1], Ended(GAME, STEP, 1, "dispute", 0, bytes(32)))
    assert end.ended_received(dispute, 0.0, VERIFIERS) is None
    assert end.to_follow(0.5, STEP, complete=False) is None  # its messages may still come
    assert end.to_follow(100.0, STEP, complete=True) is None  # complete: played first
    assert end.to_follow(FOLLOW_GRACE, STEP, complete=False) is dispute
    assert end.to_follow(0.5, STEP + 1, complete=True) is dispute  # past it
    assert not end.all_ended([1, 2, 3]) and end.all_ended([1, 3])
