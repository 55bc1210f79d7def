"""Ending a game before its last card: the signed vote to end without seats gone for good,
and what every seat must hold before it may reveal its seed (docs/peer-protocol.md, "Ending
early").

A seed opens every card of its seat for the rest of the game, so a seat reveals it only once
the game is over for it for good, written so to its game file: from then on it never signs
a step message again, and since every step needs every seat's message, nobody can play on.
Ending without a player takes a signed vote, naming the game, the step and the seats gone,
from every seat present: a seat ends when it holds such a vote from each of them, its own
included, while it is still at that step. Each seat relays a vote it gets from its author,
so each seat can show the whole vote to anyone, a seat that comes back among them.

A vote lapses when its author plays the step it named: a full vote put together later, out of
votes signed at a step that was played after all, ends nothing. The one race this leaves (a
seat that ended by the vote while another, which had voted too, got the missing message and
played the step) is settled by the `Ended` the first sends: a seat that hears that another has
ended at a step it has reached follows it; no one is named for it.

An ending by a vote carries the votes it rests on, and another seat follows it (reveals its
own seed) only if they prove it (`ending_problem`): its own vote is among them, or, voted out
itself, the votes of most of the table are. Any other ending by a vote only says that its
author has left for good: one seat's word never ends the game for the others, nor takes a
seed from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from protocol.identity import SignatureError, Verifier
from protocol.messages import MessageError, encode, unpack
from protocol.peer_messages import Ended, EndVote


def seats_in(mask: int) -> tuple[int, ...]:
    return tuple(seat for seat in range(mask.bit_length()) if mask >> seat & 1)


def mask_of(seats: set[int] | frozenset[int] | tuple[int, ...]) -> int:
    return sum(1 << seat for seat in set(seats))


@dataclass
class EndVotes:
    """The verified votes of the step being played: each seat's latest, and every vote seen
    (a seat that keeps changing its vote gets each one relayed once, never again)."""

    players: int
    step: int = -1
    votes: dict[int, EndVote] = field(default_factory=dict)
    seen: set[tuple[int, int]] = field(default_factory=set)  # (seat, gone) of this step

    def at(self, step: int) -> None:
        """The step being played is `step`: votes for another step lapse."""
        if step != self.step:
            self.step, self.votes, self.seen = step, {}, set()

    def add(self, vote: EndVote) -> bool:
        """Keep a verified vote of the current step as its seat's latest; True the first
        time this vote is seen (to be relayed), False after."""
        if vote.step != self.step:
            return False
        self.votes[vote.seat] = vote
        new = (vote.seat, vote.gone) not in self.seen
        self.seen.add((vote.seat, vote.gone))
        return new

    def unanimous(self, gone: int) -> tuple[EndVote, ...] | None:
        """Every present seat's vote to end without `gone`, if all are held."""
        present = [seat for seat in range(self.players) if not gone >> seat & 1]
        held = [self.votes.get(seat) for seat in present]
        if all(vote is not None and vote.gone == gone for vote in held):
            return tuple(vote for vote in held if vote is not None)
        return None

    def not_agreeing(self, gone: int) -> frozenset[int]:
        """Present seats whose latest vote is not to end without `gone` (or who have none)."""
        return frozenset(
            seat
            for seat in range(self.players)
            if not gone >> seat & 1 and (seat not in self.votes or self.votes[seat].gone != gone)
        )


def ending_problem(ended: Ended, verifiers: Sequence[Verifier], me: int) -> str | None:
    """Why this seat (`me`) may not follow another seat's ending (already verified as its
    author's) as it stands, in words; None if it may. Only an ending by a vote carries votes.
    Those must all be good (decode, verify against their seat's key, name the ending's game,
    step and seats gone), come from exactly the seats outside `gone`, its author among them,
    and include this seat's own vote, or, if the vote put this seat out, be most of the table.
    """
    if ended.why != "vote":
        return "it carries votes, but it is no vote" if ended.votes else None
    if not ended.votes:
        return "no vote is shown for it"
    voters = set()
    for wire in ended.votes:
        vote = _read_vote(wire, ended, verifiers)
        if isinstance(vote, str):
            return vote
        if vote.seat in voters:
            return "a seat votes twice"
        voters.add(vote.seat)
    present = {seat for seat in range(len(verifiers)) if not ended.gone >> seat & 1}
    if voters != present:
        return "the voters are not exactly the seats it does not leave out"
    if ended.seat not in voters:
        return "its author is not among the voters"
    if me in voters or 2 * len(voters) > len(verifiers):
        return None
    return "it leaves this seat out, and less than most of the table voted for it"


def _read_vote(wire: bytes, ended: Ended, verifiers: Sequence[Verifier]) -> EndVote | str:
    """One vote shown with a vote ending, if it holds; else what is wrong with it, in words."""
    try:
        vote = EndVote.from_wire(unpack(wire))
    except MessageError as error:
        return f"a vote is unreadable ({error})"
    if encode(vote) != wire:
        return "a vote is not in its one canonical form"
    if vote.seat >= len(verifiers):
        return "a vote names a seat the table does not have"
    try:
        vote.verify(verifiers[vote.seat])
    except SignatureError:
        return "a vote is not signed by the seat it names"
    if (vote.game, vote.step, vote.gone) != (ended.game, ended.step, ended.gone):
        return "a vote is for another game, step or seats gone"
    return vote
