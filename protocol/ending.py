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

`EndOfGame` is one seat's side of all this as a machine of its own (votes, endings, what
binds), which client/game.py drives and tests/blame_sim.py checks beside the verdicts.
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


#: Seconds a step that lacks messages may still take to come in before this seat follows
#: another seat's ending of a broken deal (a step that completes is played first: the same
#: broken card may show here).
FOLLOW_GRACE = 2.0


@dataclass
class EndOfGame:
    """This seat's side of ending early: its vote and the others', and the endings of the
    other seats, with what follows from them. The driver signs, sends and records; this says
    what to sign and which ending binds.

    - `vote_wanted`: the seats to vote out now (protocol.blame.gone_for_good gives those gone
      for good; once our vote has stood `deadline` seconds, the seats that would not vote
      with us are added), if that differs from the vote we hold.
    - `unanimous`: the votes that end the game, once every present seat's is held.
    - `ended_received` / `to_follow`: another seat's ending, and whether it binds this seat
      (`ending_problem`; a broken deal once this seat cannot play on). Any other ending only
      says that its author left for good (`left`), which counts toward voting it out.
    """

    players: int
    me: int
    deadline: float
    follow_grace: float = FOLLOW_GRACE
    votes: EndVotes = field(init=False)
    mine: EndVote | None = None
    _mine_since: float = 0.0
    _not_agreeing: set[int] = field(default_factory=set)  # seats that would not vote with us
    endings: dict[int, tuple[Ended, float]] = field(default_factory=dict)  # and when it came
    _may_follow: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.votes = EndVotes(self.players)

    def step_played(self, step: int) -> None:
        """`step` is now the one being played: every vote lapses with the step it named."""
        self.votes.at(step)
        self.mine, self._not_agreeing = None, set()

    def vote_wanted(self, step: int, overdue: frozenset[int], now: float) -> int | None:
        """The mask of seats gone of a vote this seat is to sign now for `step` (None: no
        new vote), given the seats `overdue` (gone for good)."""
        self.votes.at(step)
        mine = self.mine
        if mine is not None and mine.step == step and now - self._mine_since >= self.deadline:
            self._not_agreeing |= self.votes.not_agreeing(mine.gone) - {self.me}
        gone = (set(overdue) | self._not_agreeing) - {self.me}
        if not gone or (mine is not None and mine.gone == mask_of(gone)):
            return None
        return mask_of(gone)

    def voted(self, vote: EndVote, now: float) -> None:
        """This seat signed `vote` (what `vote_wanted` asked for)."""
        self.votes.at(vote.step)
        self.mine, self._mine_since = vote, now
        self.votes.add(vote)

    def wants(self, vote: EndVote, step: int) -> bool:
        """Whether another seat's vote is for `step` and new here (worth checking its
        signature): a vote for another step lapsed, or is not due yet."""
        self.votes.at(step)
        return vote.step == step and self.votes.votes.get(vote.seat) != vote

    def vote_received(self, vote: EndVote, step: int) -> bool:
        """Keep another seat's vote for `step`, verified; True the first time it is seen (to
        relay), False after (or if it is for another step)."""
        self.votes.at(step)
        return self.votes.add(vote)

    def unanimous(self, step: int) -> tuple[EndVote, ...] | None:
        """The votes that end the game at `step` without the seats of our vote, once every
        present seat's vote for it is held."""
        mine = self.mine
        if mine is None or mine.step != step:
            return None
        return self.votes.unanimous(mine.gone)

    def heard_end_of(self, seat: int) -> bool:
        return seat in self.endings

    def ended_received(self, ended: Ended, now: float, verifiers: Sequence[Verifier]) -> str | None:
        """Another seat's ending, its signature checked (once per seat): why this seat may
        not follow it (`ending_problem`), or None if it may, when it binds (`to_follow`)."""
        self.endings[ended.seat] = (ended, now)
        problem = ending_problem(ended, verifiers, self.me)
        if problem is None:
            self._may_follow.add(ended.seat)
        return problem

    @property
    def left(self) -> dict[int, float]:
        """When each seat whose ending came said it left, for `gone_for_good`."""
        return {seat: heard for seat, (_, heard) in self.endings.items()}

    def to_follow(self, now: float, step: int, complete: bool) -> Ended | None:
        """The ending this seat is to follow now, at `step` (`complete`: every message of it
        is here), if one binds it:

        - a vote that `ending_problem` lets it follow (its own vote among its votes, or, if
          it left this seat out, those of most of the table: it was away);
        - a broken deal, once this seat cannot play on: it is past the step the other ended
          at, or that step still lacks messages `follow_grace` after the ending came.

        Any other ending binds nobody but its author."""
        for seat, (ended, heard) in sorted(self.endings.items()):
            if seat not in self._may_follow:
                continue
            if ended.why == "vote":
                return ended
            if ended.why == "dispute":
                stuck = not complete and now - heard >= self.follow_grace
                if ended.step < step or stuck:
                    return ended
        return None

    def all_ended(self, seats: Sequence[int]) -> bool:
        """Whether every one of `seats` has told this seat that it ended."""
        return all(seat in self.endings for seat in seats)
