"""One seat's game on the network: the lockstep over the mesh, its game file, and its player.

The driver runs each step: it sends this seat's signed message when the step is due (someone
owes something, someone else started the step, or its player acts), collects every seat's
message, has the lockstep apply them, writes the step to the game file, and tells the player.
Every step message is signed by its author and sent to every seat; nobody relays it. Each
message hashes every message of the step before, so a seat given another version of a message
than the others finds out at the next step and looks into the fork (protocol/forks.py): two
different signed messages for one seat and step are equivocation, and the pair is the proof. A
seat that lacks a message asks for it (`_ask`, `_ask_all_later`), and a peer passes on what
comes after it was asked (`_pass_on`): an author that sends to some seats only holds nobody
up for long.

Every peer is bounded (docs/peer-protocol.md, "Limits"): a frame's header is checked against
this game and its step window (the step being played and the next) before its signature or
body is looked at, and nothing outside the window is passed on, checked or kept; a holding (a
seat's signed heartbeat) is answered at most so often, with each missing message once per
link, never the whole history, and all a seat is sent to catch up, over however many links,
within a budget per time window (protocol/catch_up.py); what waits for a peer that does not
read is bounded by the mesh. Verdicts rest on signed messages only (docs/peer-protocol.md,
"Blame"; protocol.blame): what a link does closes the link, blaming nobody; a seat is named
for withholding only on its own signed holding, and a seat that holds the game up otherwise
is voted out as gone by the clocks of protocol.step_watch; the game ends early only by a
signed, unanimous vote, recorded before any seed is revealed (protocol/ending.py). The pure
machines of protocol/ decide (the verdicts, the step watch, fork resolution, the end of a
game); this module adapts them to the mesh, the game file and the clock.

Heavy work (shuffles and their proofs) runs off the reactor thread, one step at a time, so a
person's screen never freezes; the screen and bots read `view`, a snapshot taken between steps.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.failure import Failure

from client.gamefile import Frame, GameFile, GameFileWriter
from client.net import FrameFaults, LinkLoss, Mesh, MeshHandler, PeerListener
from client.presence import Presence, PresenceNews
from client.turn_clock import Situation, TurnClock
from protocol.blame import (
    Cheat,
    ForkedState,
    InputContradicted,
    equivocation,
    gone_for_good,
    played_after_ending,
    withheld,
)
from protocol.cards import Card
from protocol.catch_up import CatchUp
from protocol.ending import EndOfGame, seats_in
from protocol.forks import ForkResolution
from protocol.identity import Identity, SignatureError, Verifier
from protocol.lockstep import Final, GameConfig, Lockstep, StepReport
from protocol.messages import Message, MessageError
from protocol.messages import encode as encode_message
from protocol.peer_messages import (
    MAX_OWED,
    Ended,
    EndVote,
    Holding,
    PeerChat,
    Signed,
    StepBody,
    StepFrame,
    sign,
)
from protocol.rules import Action, Phase, RuleError, Slot, State, state_hash
from protocol.step_watch import AwayClock, Obligation, StepWatch
from protocol.steps import ForbiddenAction, check_own_actions
from protocol.table import AgreedTable

log = Logger()

STEP_DEADLINE = 60.0
HEARTBEAT_WAITING = 1.0  # seconds between holdings while a step waits, or a peer is behind
HEARTBEAT_IDLE = 5.0  # ... and otherwise
LINK_SILENCE = 15.0  # a link that says nothing this long is dead (TCP may not notice)
ABANDON_AFTER = 300.0  # seconds a seat may be away before the others vote to end without it
ANSWER_INTERVAL = 0.5  # a peer's holdings about one step are answered at most this often
WANT_AFTER = 0.05  # seconds a step waits on another seat's message before asking every peer
CHAT_BURST = 10  # chat lines a peer may send at once, then CHAT_PER_SECOND
CHAT_PER_SECOND = 2.0


@dataclass(frozen=True)
class View:
    """What this seat knows between steps: for the screen and for bots."""

    seat: int
    names: tuple[str, ...]
    step: int
    rules: State | None
    hand: dict[Slot, Card]
    connected: frozenset[int]
    missing: frozenset[int]  # seats whose message for the current step has not come
    dealing: tuple[int, int, int] | None  # (epoch, round, rounds) while a deck is dealt
    away: frozenset[int] = frozenset()  # seats whose link dropped and has not come back
    relayed: frozenset[int] = frozenset()  # seats whose link goes through the lobby's relay


class StepKind(Enum):
    """What a step carried: a move of the game, a round of a deck epoch (shuffles, proofs,
    relocks), or the last step, after the end (final reports, seeds, the audit)."""

    GAME = "game"
    DECK_ROUND = "deck round"
    AUDIT = "audit"


@dataclass(frozen=True)
class StepTiming:
    """How long a step took here: from the first message this seat saw or made for it, or
    from the step before applied here if that came later, to the step applied. So no time
    counts twice: a seat still busy with one step when the next one's first message comes
    has not begun the next one yet."""

    step: int
    seconds: float
    kind: StepKind


@dataclass(frozen=True)
class Outcome:
    """How a game ended for this seat: played to the end (`final`), stopped by a cheat
    (`cheat`, with the signed `evidence`; a cheat with no seat is a broken deal, and the
    audit of the seeds revealed for it names who broke it), ended by a vote without seats gone
    for good (`gone`), or ended because another seat's client ended it (`ended_by`). The audit
    of what was played is in `audit_findings` (for a game played to the end, in `final`)."""

    final: Final | None = None
    cheat: Cheat | None = None
    evidence: tuple[Frame, ...] = ()
    gone: tuple[int, ...] = ()
    audit_findings: tuple[str, ...] = ()
    ended_by: int | None = None

    @property
    def left(self) -> bool:
        """This seat left a game that goes on without it (`resume` takes it back)."""
        ended = self.final, self.cheat, self.ended_by
        return ended == (None, None, None) and not self.gone


class Player:
    """Who plays this seat (a bot, or a person at the REPL); every method is optional."""

    def may_act(self, game: PeerGame) -> None:
        """The game may wait for this seat, which has nothing on its way: at the start, back
        from a crash, or when its queued moves were refused."""

    def step_played(self, game: PeerGame, report: StepReport) -> None: ...

    def notice(self, game: PeerGame, text: str) -> None: ...

    def chat(self, game: PeerGame, seat: int, text: str) -> None: ...

    def presence_changed(self, game: PeerGame, news: PresenceNews) -> None:
        """A player's link dropped, or came back after a drop (client.presence)."""

    def finished(self, game: PeerGame, outcome: Outcome) -> None: ...


@dataclass
class _Peer:
    """What this seat knows of one other seat's link, and what it has spent on it."""

    heard: float = 0.0  # when it last said anything on its own link
    step: int = 0  # the step its last holding said it plays
    have: int = 0  # ... and whose messages of that step it holds
    holding: Holding | None = None  # that holding, as it signed it (checked if it convicts)
    told: float = 0.0  # when it was last sent our holding in answer to one of its own
    answered: tuple[int, float] = (-1, 0.0)  # (its step, when) of the last answer to it
    asked: int = -1  # our step when we last asked it (it is ahead) for what we lack
    chat_tokens: float = CHAT_BURST
    chat_at: float = 0.0


@dataclass
class _Ending:
    """How this seat ended the game early, recorded before any seed left it."""

    why: str  # "vote", "dispute", "stopped", "followed" (protocol.peer_messages.ENDINGS)
    step: int
    gone: int = 0  # seats voted out, as a mask
    by: int | None = None  # the seat whose ending this one followed
    reveal: bool = False  # whether this seat reveals its seed, for an audit
    followed: Ended | None = None  # the ending this one followed
    votes: tuple[EndVote, ...] = ()  # the unanimous vote this one rests on
    cheat: Cheat | None = None
    evidence: tuple[Frame, ...] = ()
    # The signed messages of an equivocation this seat named (its two versions, or one and
    # the message that says it played another): sent to every seat that comes back, so that
    # a seat on the other side of the fork sees it for itself.
    halves: tuple[StepFrame, ...] = ()


class PeerGame(MeshHandler):
    def __init__(
        self,
        reactor: Any,
        identity: Identity,
        table: AgreedTable,
        seed: bytes,
        listener: PeerListener,
        gamefile: GameFileWriter,
        player: Player,
        *,
        executor: Executor | None = None,
        step_deadline: float = STEP_DEADLINE,
        heartbeat: float = HEARTBEAT_WAITING,
        faults: FrameFaults | None = None,
        abandon_after: float = ABANDON_AFTER,
        mesh: Mesh | None = None,
    ) -> None:
        """`table`: the roster the seats agreed on (client/table_setup.py), whose identity
        names this game; `mesh`: the links the table was agreed over (None: links of its own,
        for tests that agree on the table without a network)."""
        roster, seat = table.roster, table.seat
        self.reactor = reactor
        self.identity = identity
        self.table = table
        self.roster = roster
        self.seat = seat
        self.players = len(roster.seats)
        self.names = tuple(s.name for s in roster.seats)
        self.lockstep = Lockstep(
            GameConfig.from_roster(roster, table.identity), seat, seed, executor
        )
        self.game_id = table.identity
        self._verifiers = [Verifier(member.public_key) for member in roster.seats]
        self.mesh = mesh or Mesh(reactor, identity, roster, seat, self, listener, faults=faults)
        self.gamefile = gamefile
        self.player = player
        self.step_deadline = step_deadline
        self.heartbeat = heartbeat
        self.abandon_after = abandon_after
        self.turn_seconds = roster.options.turn_seconds
        self.turn_clock = TurnClock(
            reactor, self.turn_seconds, seat, self._clock_situation, self._time_is_up
        )
        self.watch = StepWatch(self.players, seat)
        self.away = AwayClock(settle=step_deadline)
        self.obligation = Obligation()
        self._holding_signed: Holding | None = None  # the last holding signed, kept for reuse
        self._peers = {other: _Peer() for other in range(self.players) if other != seat}
        # What each seat was sent to catch up, across its links (protocol/catch_up.py), and
        # when it is answered again if its budget held an answer back.
        self._catch_up = {other: CatchUp() for other in self._peers}
        self._answer_again: dict[int, Any] = {}
        self.presence = Presence(self.names)
        self.end = EndOfGame(self.players, seat, step_deadline)
        self.ending: _Ending | None = None
        self._seeds: dict[int, bytes] = {}  # revealed for the audit of an early ending
        self._seed_wait: Any = None
        self.step = 0  # the step being played; the lockstep's own counter moves in a worker thread
        self.inbox: dict[int, dict[int, Frame]] = {}
        self.history: dict[int, list[Frame]] = {}
        # The wire bytes of every step message held for the step just played, the current
        # one and the next, and their steps: a copy (answers from several peers, a fork's
        # messages sent round) is dropped before it is decoded.
        self._held_wire: dict[bytes, int] = {}
        self.queued: list[Action] = []
        self.done: Deferred[Outcome] = Deferred()
        self.outcome: Outcome | None = None
        self._own_frames: dict[int, Frame] = {}  # signed before a crash, to be sent again
        self._lingering: Any = None  # after the end, until every peer has the last step
        self._last_beat = 0.0
        self._asked_all_at = -1  # the last step `_ask_all_later` was set up for
        self._ask_all_call: Any = None
        self._ticker = LoopingCall(self._tick)
        self._ticker.clock = reactor
        self.timings: list[StepTiming] = []
        self.dropped: Counter[str] = Counter()  # step messages dropped unread, by why
        self.started_at = self.ended_at = 0.0
        self._step_started: dict[int, float] = {}
        self._busy = False  # composing or playing a step
        # A message made from another version of a message of the step before: the step
        # waits until the equivocation behind it comes to light (`_suspect_fork`).
        self.forks = ForkResolution()
        self._working = False  # a worker thread is using the lockstep
        self.view: View = self._snapshot()

    # --- starting, acting, stopping -----------------------------------------------------------

    def start(self) -> None:
        self.started_at = self.reactor.seconds()
        self.mesh.start()
        self._ticker.start(self.heartbeat, now=False)
        self.turn_clock.check()
        signed_before_a_crash = bool(self._own_frames)  # its moves are on their way
        self._pump()
        if not signed_before_a_crash:
            self.player.may_act(self)

    def restore(
        self, saved: GameFile, each_step: Callable[[StepReport], None] = lambda report: None
    ) -> None:
        """Pick up a game from this seat's file after a crash: replay every recorded step
        (checking its signatures and everything the lockstep checks), and keep the messages
        this seat had signed for later steps to send them again, never different ones.
        `each_step` sees what each replayed step did (the game's story so far)."""
        for step, frames in enumerate(saved.steps):
            for author, frame in enumerate(frames):
                self._verified(StepFrame(self.game_id, step, author, *frame))
            each_step(self.lockstep.play({seat: frame[0] for seat, frame in enumerate(frames)}))
            self.history[step] = list(frames)
            self.step = step + 1
        self._own_frames = {step: f for step, f in saved.own.items() if step >= self.step}
        self._refresh()

    def submit(self, actions: Sequence[Action]) -> None:
        """Queue this seat's actions for its next message; RuleError at once if the rules do
        not allow them now (after what is already queued)."""
        rules = self.view.rules
        if self.outcome is not None or self.ending is not None:
            raise RuleError("the game has ended")
        if rules is None:
            raise RuleError("the cards are still being dealt")
        try:
            check_own_actions(rules, self.seat, [*self.queued, *actions])
        except ForbiddenAction as refused:
            raise RuleError(refused.reason) from None
        self.queued += actions
        self._pump()

    def chat(self, text: str) -> None:
        self.mesh.broadcast(PeerChat(text))

    def stop(self, reason: str) -> None:
        """Leave the game (the player quit); the others will see this seat disconnect, and
        it may come back with `bean-client resume`."""
        self._end(Outcome(), {"kind": "left", "reason": reason})

    # --- the mesh -----------------------------------------------------------------------------

    def link_up(self, seat: int) -> None:
        """A peer (re)joined: tell it where we are, so that each sends what the other lacks,
        and how the game ended, if it has."""
        now, peer = self.reactor.seconds(), self._peers[seat]
        self._peers[seat] = replace(peer, heard=now, answered=(-1, 0.0), asked=-1)
        self._catch_up[seat].new_link()
        self.away.link_up(seat, now)
        news = self.presence.link_up(seat)
        self._refresh()
        if self.ending is not None:
            self._tell_the_ending(seat)
            return
        self.mesh.send(seat, self._holding())
        self._offer_contested((seat,))
        for vote in self.end.votes.votes.values():
            self._send_catching_up(seat, vote)
        if news is not None and self.outcome is None:
            self.player.presence_changed(self, news)

    def link_down(self, seat: int, reason: str, loss: LinkLoss) -> None:
        self.away.link_down(seat, self.reactor.seconds())
        news = self.presence.link_down(seat, reason, loss)
        self._refresh()
        if news is not None and self.outcome is None:
            self.player.presence_changed(self, news)

    def misbehaved(self, seat: int, reason: str) -> None:
        """The mesh cut a link whose peer broke the link protocol or stopped reading: no
        signature proves it, so nobody is blamed; the link is dialled again."""
        if self.outcome is None:
            self.player.notice(
                self, f"closed the link to {self.names[seat]} ({reason}); nobody is blamed"
            )

    def is_copy(self, seat: int, payload: bytes) -> bool:
        if payload not in self._held_wire:
            return False
        self._peers[seat].heard = self.reactor.seconds()
        self.dropped["copies"] += 1
        return True

    def received(self, seat: int, message: Message) -> None:
        peer = self._peers[seat]
        peer.heard = self.reactor.seconds()
        if isinstance(message, StepFrame):
            self._step_frame(seat, message)
        elif isinstance(message, Holding):
            if message.seat != seat:
                return  # holdings are not relayed: one in another seat's name proves nothing
            peer.step, peer.have, peer.holding = message.step, message.have, message
            self._answer(seat)
            if self._lingering is not None:
                self._leave_once_all_have_ended()
        elif isinstance(message, EndVote):
            self._vote_received(seat, message)
        elif isinstance(message, Ended):
            self._ended_received(seat, message)
        elif isinstance(message, PeerChat) and self._chat_allowed(peer):
            self.player.chat(self, seat, message.text)

    def _chat_allowed(self, peer: _Peer) -> bool:
        """A peer's chat lines reach the screen at CHAT_PER_SECOND after a burst; the rest
        are dropped (a flood must not bury the game)."""
        now = self.reactor.seconds()
        peer.chat_tokens = min(
            CHAT_BURST, peer.chat_tokens + (now - peer.chat_at) * CHAT_PER_SECOND
        )
        peer.chat_at = now
        if peer.chat_tokens < 1:
            return False
        peer.chat_tokens -= 1
        return True

    def _holding(self) -> Holding:
        """This seat's signed holding as it stands (signed again only when it changed)."""
        step, have = self.step, self._have()
        owed = self.obligation.reading(self.reactor.seconds(), step, self._owes(), self._busy)
        tenths = min(int(owed * 10), MAX_OWED)
        held = self._holding_signed
        if held is None or (held.step, held.have, held.owed) != (step, have, tenths):
            unsigned = Holding(self.game_id, step, self.seat, have, tenths)
            self._holding_signed = held = sign(self.identity, unsigned)
        return held

    def _owes(self) -> bool:
        """Whether this seat holds what the current step needs of it and its message is not
        made: the step is urgent, or another seat's message of it is here. (While it is
        busy making it, or playing the step before, it does not count as owing.)"""
        if self._busy or self._working or self.outcome is not None or self.ending is not None:
            return False
        frames = self.inbox.get(self.step, {})
        if self.seat in frames:
            return False
        return bool(frames) or self.lockstep.urgent()

    def _have(self) -> int:
        """Whose messages for the step being played this seat holds, a bit per seat."""
        return sum(1 << seat for seat in self.inbox.get(self.step, {}))

    def _answer(self, seat: int) -> None:
        """A peer said where it is: send it the signed step messages it lacks, of its step
        and the next (its window), within its seat's catch-up budget (`_send_catching_up`);
        and ask it, if it is ahead, or holds a message of this step that this seat lacks
        (lost on its way here: nothing else would bring it while this seat has nothing to
        send). Its holdings about one step are answered at most every ANSWER_INTERVAL; one
        that found nothing to send does not count, for the peer may ask again as soon as it
        knows there is more."""
        peer, now = self._peers[seat], self.reactor.seconds()
        if self.ending is not None:
            return  # it was told how the game ended when its link came up
        if peer.step > self.step:
            self._ask(seat)
            return
        if peer.step == self.step and peer.have & ~self._have():
            self._ask(seat)
        if peer.step == self.step and peer.have and not self._have() >> self.seat & 1:
            self._tell_holding(seat)
        step, when = peer.answered
        if peer.step <= step and now - when < ANSWER_INTERVAL:
            return
        for wanted in (peer.step, peer.step + 1):
            for author, frame in sorted(self._frames_held(wanted).items()):
                if author == seat or (wanted == peer.step and peer.have >> author & 1):
                    continue
                message = StepFrame(self.game_id, wanted, author, *frame)
                if self._send_catching_up(seat, message, (wanted, author)):
                    peer.answered = (peer.step, now)

    def _send_catching_up(
        self, seat: int, message: Message, what: tuple[int, int] | None = None
    ) -> bool:
        """Send a peer something it lacks, within its seat's catch-up budget, which its
        links share (protocol/catch_up.py): a step message `what` (step, author) goes to it
        once on a link, and on a new one only RESEND_AFTER after it last went; past the
        budget, the peer is answered again once the window has room (an honest catch-up
        slows down, never stops). Whether the message went."""
        catch_up, now = self._catch_up[seat], self.reactor.seconds()
        if self.mesh.closed or seat not in self.mesh.connected:
            return False
        if what is not None and catch_up.sent_already(what, now):
            return False
        wire = encode_message(message)
        if catch_up.spend(len(wire), now, what):
            return self.mesh.send(seat, wire)
        timer = self._answer_again.get(seat)
        if timer is None or not timer.active():
            delay = catch_up.fits_at(len(wire), now) - now
            self._answer_again[seat] = self.reactor.callLater(delay, self._answer, seat)
        return False

    def _ask(self, seat: int) -> None:
        """Tell a peer that is ahead where we are (once per step of ours), so that it
        answers with what we lack: a seat behind catches up a step per round trip."""
        peer = self._peers[seat]
        if peer.asked != self.step:
            peer.asked, peer.told = self.step, self.reactor.seconds()
            self.mesh.send(seat, self._holding())

    def _tell_holding(self, seat: int) -> None:
        """A peer waits at our step for a message of ours not yet made: tell it where we
        stand (at most every ANSWER_INTERVAL), so that the step's deadline there judges a
        fresh signed word of ours, not one a heartbeat old."""
        peer, now = self._peers[seat], self.reactor.seconds()
        if now - peer.told >= ANSWER_INTERVAL:
            peer.told = now
            self.mesh.send(seat, self._holding())

    def _frames_held(self, step: int) -> dict[int, Frame]:
        if step in self.history:
            return dict(enumerate(self.history[step]))
        return dict(self.inbox.get(step, {}))

    def _tick(self) -> None:
        """Holdings (every second while a step waits or a peer is behind, so that the others
        hear where this seat stands; else every few seconds); links that have been silent too
        long are dropped, to be dialled again; a seat whose own signed holding convicts it of
        withholding is named; seats holding the game up too long are voted out."""
        if self.outcome is not None or self.ending is not None:
            return
        now = self.reactor.seconds()
        if self.forks.offer_due(now):
            self._offer_contested(sorted(self.mesh.connected))
        for seat in sorted(self.mesh.connected):
            if now - self._peers[seat].heard > LINK_SILENCE:
                self.mesh.drop(seat, f"no word from {self.names[seat]} for {LINK_SILENCE:g} s")
        self._beat(now)
        if self._withholder_named():
            return
        self._consider_voting(now)
        self._follow_if_stuck()

    def _beat(self, now: float) -> None:
        """Send this seat's holding round when it is due (it is signed on every tick all the
        same, so that the time owed counts)."""
        holding = self._holding()
        waiting = 0 < len(self.inbox.get(self.step, {})) < self.players
        behind = any(self._peers[seat].step < self.step for seat in self.mesh.connected)
        if waiting or behind or now - self._last_beat >= HEARTBEAT_IDLE:
            self._last_beat = now
            self.mesh.broadcast(holding)

    def _withholder_named(self) -> bool:
        """Stop the game naming the seats whose latest holding, signed at this step without
        their message here, says they owed it longer than the step deadline (protocol.blame).
        A holding whose signature fails closes its link and names nobody."""
        held = self.inbox.get(self.step, {})
        convicted: list[tuple[Cheat, Holding]] = []
        for seat, peer in sorted(self._peers.items()):
            holding = peer.holding
            if seat in held or holding is None:
                continue
            try:
                cheat = withheld(
                    holding, self._verifiers[seat], self.game_id, self.step, self.step_deadline
                )
            except SignatureError as error:
                peer.holding = None
                self._signature_failed(seat, holding, error)
                continue
            if cheat is not None:
                convicted.append((cheat, holding))
        if not convicted:
            return False
        first = convicted[0][0]
        also = tuple(cheat.seat for cheat, _ in convicted[1:] if cheat.seat is not None)
        reason = first.reason
        if also:
            reason += f" (so did {', '.join(self.names[seat] for seat in also)})"
        cheat = Cheat(first.seat, first.step, reason, also)
        signed = tuple(holding for _, holding in convicted)
        self._stop(cheat, tuple(held.values()), signed=signed)
        return True

    # --- ending early: the vote, the ending, the seeds ------------------------------------------

    def _consider_voting(self, now: float) -> None:
        """Vote to end without the seats gone for good (protocol.blame.gone_for_good: away
        longer than `abandon_after` in all, however often their links came back, or holding up
        a started step past its deadline plus that time); and, once our vote has stood a
        deadline long, the seats that would not vote with us. Each vote is signed for this
        step; a new one only when the seats change."""
        if self.abandon_after <= 0:
            return
        overdue = gone_for_good(
            now=now,
            started=self.watch.started,
            missing=self.watch.missing | self.forks.holding_up,
            away={seat: self.away.reading(seat, now) for seat in self._peers},
            left=self.end.left,
            deadline=self.step_deadline,
            abandon=self.abandon_after,
        )
        mask = self.end.vote_wanted(self.step, overdue, now)
        if mask is not None:
            vote = sign(self.identity, EndVote(self.game_id, self.step, self.seat, mask))
            self.end.voted(vote, now)
            names = ", ".join(self.names[seat] for seat in seats_in(mask))
            self.player.notice(self, f"{names} gone for good: asking the others to end the game")
            self.mesh.broadcast(vote)
        self._end_if_unanimous()

    def _vote_received(self, link: int, vote: EndVote) -> None:
        if self.ending is not None or not self._ours(vote) or not self.end.wants(vote, self.step):
            return
        if not self._verified_or_cut(link, vote):
            return
        if self.end.vote_received(vote, self.step) and link == vote.seat:
            self.mesh.broadcast(vote, skip=(vote.seat,))
        self._end_if_unanimous()

    def _end_if_unanimous(self) -> None:
        votes = self.end.unanimous(self.step)
        if votes is None or self.ending is not None:
            return
        mine = self.end.mine
        assert mine is not None
        record = {
            "kind": "abandoned",
            "step": self.step,
            "gone": list(seats_in(mine.gone)),
            "votes": [vote.to_wire() for vote in votes],
        }
        self._conclude(_Ending("vote", self.step, mine.gone, reveal=True, votes=votes), record)

    def _conclude(self, ending: _Ending, record: dict[str, Any]) -> None:
        """End the game here for good: write so to the game file and make it durable, and
        only then tell the others, with this seat's seed if the ending calls for an audit.
        From now on this seat signs no step message and applies no step, even after a
        restart (the game file is finished)."""
        if self.ending is not None or self.outcome is not None:
            return
        self.ending = ending
        self.gamefile.write(record)
        self.gamefile.sync()
        self._stop_clocks()
        seed = self.lockstep.deck.reveal_seed().seed if ending.reveal else None
        if seed is not None:
            self._seeds[self.seat] = seed
        self._ended = sign(
            self.identity,
            Ended(
                self.game_id,
                ending.step,
                self.seat,
                ending.why,
                ending.gone,
                seed,
                votes=tuple(encode_message(vote) for vote in ending.votes),
            ),
        )
        self._refresh()
        self.mesh.broadcast(self._ended)
        if not ending.reveal:
            self._audited(())
            return
        self._seed_wait = self.reactor.callLater(self.step_deadline, self._audit_what_was_played)
        self._audit_when_every_seed_is_in()

    def _tell_the_ending(self, seat: int) -> None:
        """A peer (back) with us after we ended: the signed ending (a vote's with the votes
        behind it), the two halves of an equivocation we named, and the endings of the others
        we hold (with their seeds). It can learn them from no one else, so they go whatever
        its catch-up budget, and count against it."""
        assert self.ending is not None
        told: list[Message] = [self._ended, *self.ending.halves]
        told += [other for other, _ in self.end.endings.values() if other.seat != seat]
        for message in told:
            wire = encode_message(message)
            self._catch_up[seat].charge(len(wire), self.reactor.seconds())
            self.mesh.send(seat, wire)

    def _ended_received(self, link: int, ended: Ended) -> None:
        """Another seat ended the game: it will never sign a step message again, so nobody
        can play past the step it ended at. A seat that declares an ending at a step it has
        already signed its way past contradicts itself (the two signed messages prove it)."""
        if not self._ours(ended) or ended.seat == self.seat or self.end.heard_end_of(ended.seat):
            return
        if not self._verified_or_cut(link, ended):
            return
        problem = self.end.ended_received(ended, self.reactor.seconds(), self._verifiers)
        if link == ended.seat:
            self.mesh.broadcast(ended, skip=(ended.seat,))
        if ended.seed is not None:
            self._seeds[ended.seat] = ended.seed
        if self.ending is not None:
            self._audit_when_every_seed_is_in()
            if self._lingering is not None:
                self._leave_once_all_have_ended()
            return
        for step, frames in self._held_steps():
            cheat = played_after_ending(ended.seat, ended.step, step)
            if cheat is not None and ended.seat in frames:
                self._stop(cheat, (frames[ended.seat],), ended)
                return
        if problem is not None:
            name, how = self.names[ended.seat], " by a vote" if ended.why == "vote" else ""
            self.player.notice(
                self,
                f"{name}'s client says the game ended{how}, but {problem}: {name} has left "
                "for good, and this seat does not follow it",
            )
        self._follow_if_stuck()

    def _held_steps(self) -> list[tuple[int, dict[int, Frame]]]:
        played = [(step, dict(enumerate(frames))) for step, frames in self.history.items()]
        return played + sorted(self.inbox.items())

    def _follow_if_stuck(self) -> None:
        """Follow another seat's ending where it binds this seat too (EndOfGame.to_follow:
        a vote it may follow, or a broken deal once this seat cannot play on). Any other
        ending only says that its author will never play again: it has left for good, and is
        voted out once the abandon time has passed (`_consider_voting`). It never makes this
        seat reveal its seed."""
        if self.ending is not None or self.outcome is not None or self._busy:
            return
        complete = len(self.inbox.get(self.step, {})) == self.players
        ended = self.end.to_follow(self.reactor.seconds(), self.step, complete)
        if ended is None:
            return
        record = {
            "kind": "ended_by",
            "seat": ended.seat,
            "step": ended.step,
            "why": ended.why,
            "ended": ended.to_wire(),
        }
        following = _Ending(
            "followed",
            self.step,
            ended.gone,  # seats the vote excused from the audit
            by=ended.seat,
            reveal=ended.seed is not None,
            followed=ended,
        )
        self._conclude(following, record)

    def _audit_when_every_seed_is_in(self) -> None:
        ending = self.ending
        if ending is None or not ending.reveal or self._seed_wait is None:
            return
        owed = [s for s in range(self.players) if not ending.gone >> s & 1]
        if all(seat in self._seeds for seat in owed):
            self._audit_what_was_played()

    def _audit_what_was_played(self) -> None:
        """The audit of an early ending, from every seed revealed: a seat that owed its seed
        and withheld it is a finding against it; a seat voted out owed none."""
        if self._seed_wait is None:
            return
        if self._seed_wait.active():
            self._seed_wait.cancel()
        self._seed_wait = None
        ending = self.ending
        assert ending is not None
        seeds = {seat: self._seeds.get(seat) for seat in range(self.players)}
        excused = seats_in(ending.gone)
        work = self._in_thread(self.lockstep.audit_unfinished, seeds, excused, heavy=True)
        work.addCallback(self._audited)
        work.addErrback(self._crashed)

    def _audited(self, findings: tuple[str, ...]) -> None:
        ending = self.ending
        assert ending is not None
        claimed = ending.followed
        if claimed is not None and claimed.why == "dispute" and not findings:
            findings = (
                f"seat {claimed.seat}: said the deal broke at step {claimed.step}, but every "
                "seat's messages follow from its seed (its signed ending is the evidence)",
            )
        outcome = Outcome(
            cheat=ending.cheat,
            evidence=ending.evidence,
            gone=seats_in(ending.gone) if ending.why == "vote" else (),
            audit_findings=findings,
            ended_by=ending.by,
        )
        self._end(outcome, {"kind": "audit", "findings": list(findings)})

    def _ours(self, message: Signed) -> bool:
        """A signed message for this game and a seat at its table (another game's, such as
        an old game's replayed after a rematch with the same seats, is ignored: nobody is
        blamed)."""
        return message.game == self.game_id and message.seat < self.players

    def _verified_or_cut(self, link: int, message: Signed) -> bool:
        """Whether the message's signature is its author's; if not, the link that carried it
        broke the protocol: it is closed, and nobody is blamed (no signature proves who made
        it; the sealed link only says who sent it, to this seat alone)."""
        try:
            message.verify(self._verifiers[message.seat])
        except SignatureError as error:
            self._signature_failed(link, message, error)
            return False
        return True

    def _signature_failed(self, link: int, message: Signed, error: SignatureError) -> None:
        who = "its own" if link == message.seat else f"{self.names[message.seat]}'s"
        self.mesh.drop(link, f"it sent a message in {who} name whose signature fails: {error}")
        self.player.notice(
            self,
            f"{self.names[link]}'s client sent a message whose signature fails; its link "
            "is closed and nobody is blamed",
        )

    # --- the turn clock ------------------------------------------------------------------------

    def turn_seconds_left(self) -> float | None:
        """Seconds before this seat's turn clock makes its default moves; None while no clock
        runs for it (no turn clock, or nothing of this seat holds up the game)."""
        return self.turn_clock.seconds_left()

    def _clock_situation(self) -> Situation:
        rules = self.view.rules if self.outcome is None and self.ending is None else None
        return rules, self.view.hand, bool(self.queued)

    def _time_is_up(self, actions: list[Action]) -> None:
        self.player.notice(self, "your time is up: the default moves are made for you")
        self.submit(actions)

    # --- step messages -------------------------------------------------------------------------

    def _step_frame(self, link: int, frame: StepFrame) -> None:
        """A signed step message, from its author or a peer that holds it. Its header is
        checked first: this game, a seat of it, a step played already, the one being played
        or the next; anything further on is dropped unread. A copy of a message held is
        dropped; the message of a step played already is otherwise the other half of an
        equivocation, however late it comes (a seat that played one version hears of the
        other from the seat that got it, which may be steps further on by then), and is
        checked against the one played. The signature is checked (a bad one closes the link),
        the body is read (a malformed body its author signed is a cheat), and only then is it
        kept and passed on to peers that asked for it."""
        if self.outcome is not None or self.ending is not None:
            return
        if not self._ours(frame):
            self.dropped["another game"] += 1
            return
        if frame.step > self.step + 1:
            self.dropped["ahead of the window"] += 1
            return  # not reachable yet: holdings bring it when it is due
        played = frame.step < self.step
        held = self._frame_of(frame.step, frame.seat)
        if held == frame.frame:
            self.dropped["played already" if played else "copies"] += 1
            return
        if not self._verified_or_cut(link, frame):
            return
        try:
            frame.read()
        except MessageError as error:
            reason = f"signed a malformed step message: {error}"
            self._stop(Cheat(frame.seat, frame.step, reason), (frame.frame,))
            return
        author, step = frame.seat, frame.step
        if held is not None:
            cheat = equivocation(author, step, held, frame.frame)
            assert cheat is not None  # a copy of the one held was dropped above
            halves = tuple(StepFrame(self.game_id, step, author, *v) for v in (held, frame.frame))
            for half in halves:  # each seat may lack one half or the other
                self.mesh.broadcast(half, skip=(author,))
            self._stop(cheat, (held, frame.frame), halves=halves)
            return
        self.inbox.setdefault(step, {})[author] = frame.frame
        self._held_wire[encode_message(frame)] = step
        self._pass_on(frame)
        if link == author and step == self.step + 1 and self._lacking():
            self._ask(link)  # its author has played the step this seat lacks messages of
        self._started(step)
        self._pump()

    def _pass_on(self, frame: StepFrame) -> None:
        """A message new here goes to each peer whose last holding said it plays that step
        without it (within its catch-up budget): it asked, and may never get it from its
        author."""
        for seat, peer in self._peers.items():
            lacks = peer.step == frame.step and not peer.have >> frame.seat & 1
            if lacks and seat != frame.seat:
                self._send_catching_up(seat, frame, (frame.step, frame.seat))

    def _lacking(self) -> bool:
        """Whether another seat's message for the current step is still to come."""
        return len(self.inbox.get(self.step, {}).keys() - {self.seat}) < self.players - 1

    def _ask_all_later(self, step: int) -> None:
        """Once per step: if another seat's message has not come WANT_AFTER after this
        seat's went out, ask every peer for what it holds (its author may have sent it to
        some seats only)."""
        if self._asked_all_at < step:
            self._asked_all_at = step
            self._ask_all_call = self.reactor.callLater(WANT_AFTER, self._ask_all, step)

    def _ask_all(self, step: int) -> None:
        if step == self.step and self.outcome is None and self.ending is None and self._lacking():
            for seat in sorted(self.mesh.connected):
                self._ask(seat)

    def _verified(self, frame: StepFrame) -> StepBody:
        """The body of a recorded frame whose signature is its author's (SignatureError or
        MessageError otherwise)."""
        frame.verify(self._verifiers[frame.seat])
        return frame.read()

    def _frame_of(self, step: int, seat: int) -> Frame | None:
        if step in self.history:
            return self.history[step][seat]
        return self.inbox.get(step, {}).get(seat)

    def _started(self, step: int) -> None:
        """A message for `step` is here. The step's clock starts once this seat is at it: a
        message for the next step that comes while this seat still applies the current one
        waits for it, and that wait is the current step's (`played` starts the clock)."""
        if step == self.step:
            now = self.reactor.seconds()
            self._step_started.setdefault(step, now)
            self.watch.begin(step, now)
            self.watch.arrived = set(self.inbox.get(step, {}))

    # --- the steps ----------------------------------------------------------------------------

    def _pump(self) -> None:
        """Do whatever the current step needs next."""
        if self._busy or self.forks.open:
            return  # a step on its way, or a fork being looked into
        if self.outcome is not None or self.ending is not None:
            return
        step = self.step
        frames = self.inbox.setdefault(step, {})
        if self.seat not in frames and step in self._own_frames:
            self._send_own(step, self._own_frames.pop(step))  # signed before a crash
        if self.seat not in frames:
            if self.lockstep.urgent() or frames or self.queued:
                self._compose(step)
            else:
                self._follow_if_stuck()
            return
        if len(frames) == self.players:
            self._play(step)
        else:
            self._ask_all_later(step)
            self._follow_if_stuck()
        self._refresh()

    def _compose(self, step: int) -> None:
        """This seat's message for the step, with the queued moves."""
        self._step_started.setdefault(step, self.reactor.seconds())
        actions, self.queued = self.queued, []
        self._busy = True
        work = self._in_thread(self.lockstep.compose, actions)

        def refused(failure: Failure) -> None:
            failure.trap(RuleError)
            self.player.notice(self, f"your move could not be made: {failure.getErrorMessage()}")
            self.turn_clock.check()  # a clock spent while these moves were on their way
            self.player.may_act(self)

        work.addCallbacks(lambda payload: self._publish(step, payload), refused)
        work.addErrback(self._crashed)
        work.addBoth(self._idle)

    def _publish(self, step: int, payload: bytes) -> None:
        """Sign this seat's message for the step and send it to every peer, never another
        for the step, even after a crash: it is on disk, synced, before it leaves, with or
        without moves (that sync makes the steps recorded before it durable too), and a
        seat resumed from the file sends it again. A message without moves is not rebuilt
        after a crash from the steps before it: those may be lost with the crash, and be
        fetched again from a seat that signed another version of its message for one
        (equivocation), and the same seat would then sign a second message for the step."""
        if self.outcome is not None or self.ending is not None:
            return
        frame = sign(self.identity, StepFrame(self.game_id, step, self.seat, payload)).frame
        self.gamefile.own(step, frame)
        self._send_own(step, frame)

    def _send_own(self, step: int, frame: Frame) -> None:
        self.inbox.setdefault(step, {})[self.seat] = frame
        self._started(step)
        wire = encode_message(StepFrame(self.game_id, step, self.seat, *frame))
        self._held_wire[wire] = step
        self.mesh.broadcast(wire)

    def _play(self, step: int) -> None:
        frames = [self.inbox[step][seat] for seat in range(self.players)]
        payloads = {seat: frame[0] for seat, frame in enumerate(frames)}
        self._busy = True
        work = self._in_thread(self.lockstep.play, payloads)

        def played(report: StepReport) -> None:
            if self.outcome is not None or self.ending is not None:
                return  # the game ended (a cheat seen meanwhile) while the step was applied
            self.gamefile.step(step, frames)
            rules = self.lockstep.rules
            if self.lockstep.final is None and rules is not None and rules.phase is Phase.OVER:
                # The game is over: the next message reveals this seat's seed, so the final
                # state goes to disk first.
                self.gamefile.write({"kind": "over", "step": step, "state": state_hash(rules)})
                self.gamefile.sync()
            self.history[step] = frames
            del self.inbox[step]
            self._held_wire = {w: held for w, held in self._held_wire.items() if held >= step}
            self.step = step + 1
            self.end.step_played(self.step)  # a vote lapses with its step
            self.watch.waiting(self.step)
            self.away.progress(self.reactor.seconds())
            if self.inbox.get(self.step):
                self._started(self.step)
            started = self._step_started.pop(step, self.reactor.seconds())
            if self.view.dealing is not None:  # the view as the step began
                kind = StepKind.DECK_ROUND
                _settle_heap()
            else:
                kind = StepKind.GAME if self.lockstep.final is None else StepKind.AUDIT
            self.timings.append(StepTiming(step, self.reactor.seconds() - started, kind))
            self._refresh()
            for seat, peer in self._peers.items():
                if peer.step > self.step:
                    self._ask(seat)
            self.turn_clock.check()
            self.player.step_played(self, report)
            if self.lockstep.final is not None:
                self._end(Outcome(final=self.lockstep.final), _end_record(self.lockstep.final))

        def cheated(failure: Failure) -> None:
            failure.trap(Cheat)
            if self.outcome is not None or self.ending is not None:
                return
            cheat = failure.value
            if isinstance(cheat, ForkedState):
                self._suspect_fork(cheat)
            elif isinstance(cheat, InputContradicted) and cheat.seat is not None:
                # Its message of the step before as we hold it, and the one that says it
                # played another: a seat that played the other sees both versions.
                before, author = step - 1, cheat.seat
                played = StepFrame(self.game_id, before, author, *self.history[before][author])
                later = StepFrame(self.game_id, step, author, *frames[author])
                for half in (played, later):
                    self.mesh.broadcast(half, skip=(author,))
                self._stop(cheat, tuple(frames), halves=(played, later))
            else:
                self._stop(cheat, tuple(frames))

        work.addCallbacks(played, cheated)
        work.addErrback(self._crashed)
        work.addBoth(self._idle)

    def _suspect_fork(self, fork: ForkedState) -> None:
        """A seat's message was made from another version of some seat's message of the step
        before than ours. Nobody is named on that: either that seat was given the other half
        of an equivocation, or it lies about what it played. So our versions of the contested
        messages go to every seat, now, on every link that comes up, and every few seconds,
        until the step is settled or the game ends: a seat that played another version finds
        the equivocation, names its author and sends both halves round (`_step_frame`). If
        none ever comes, the step stalls, and the seats it waits on are voted out as gone
        (`_consider_voting`)."""
        self.forks.suspect(fork)
        before = self.step - 1
        authors = ", ".join(self.names[author] for author in sorted(fork.contested))
        self.player.notice(
            self,
            f"{self.names[fork.seat]} played another version of {authors}'s message for step "
            f"{before} than this seat did: someone signed two. The game waits for the other "
            "version to name who",
        )
        if self.forks.offer_due(self.reactor.seconds()):
            self._offer_contested(sorted(self.mesh.connected))

    def _offer_contested(self, seats: Sequence[int]) -> None:
        """Our versions of a fork's contested messages, to each of `seats` that lacks them,
        within its catch-up budget (once on a link; on a new one, after a while)."""
        for seat in seats:
            for step, author in self.forks.contested_for(seat):
                frame = StepFrame(self.game_id, step, author, *self.history[step][author])
                self._send_catching_up(seat, frame, (step, author))

    def _in_thread(self, function: Any, *args: Any, heavy: bool = False) -> Deferred[Any]:
        """Run heavy lockstep work (a deck round's shuffle or proofs, the set-up, the audit)
        in a worker thread, so the screen never freezes; while it runs, the view stays as it
        was. An ordinary step takes about a millisecond and runs here at once: handing it to
        a thread would only add latency."""
        rules = self.lockstep.rules
        heavy = (
            heavy or self.lockstep.dealing is not None or rules is None or rules.phase is Phase.OVER
        )
        if not heavy:
            return maybeDeferred(function, *args)
        self._working = True
        pool = self.reactor.getThreadPool()
        result: Deferred[Any] = deferToThreadPool(self.reactor, pool, function, *args)
        return result.addBoth(self._worker_done)

    def _worker_done(self, result: object) -> object:
        self._working = False
        return result

    def _idle(self, _: object) -> None:
        self._busy = False
        self._pump()

    def _crashed(self, failure: Failure) -> None:
        log.failure("the game driver failed", failure)
        self._end(Outcome(), {"kind": "stopped", "seat": None, "reason": failure.getErrorMessage()})

    # --- stopping, the end --------------------------------------------------------------------

    def _stop(
        self,
        cheat: Cheat,
        evidence: Sequence[Frame] = (),
        ended: Ended | None = None,
        signed: Sequence[Signed] = (),
        halves: tuple[StepFrame, ...] = (),
    ) -> None:
        """A cheat: the game stops here, naming the seat on the signed evidence (`evidence`:
        step messages; `signed`: other signed messages, such as the holding that convicts a
        withholder, kept in the game file as they went over the wire). A broken deal (a cheat
        with no seat) is a dispute: every seat reveals its seed once it has recorded the end,
        and the audit of what was played names who broke it."""
        if self.outcome is not None or self.ending is not None:
            return
        record: dict[str, Any] = {
            "kind": "stopped",
            "seat": cheat.seat,
            "also": list(cheat.also),
            "step": cheat.step,
            "reason": cheat.reason,
            "evidence": [list(frame) for frame in evidence],
        }
        if ended is not None:
            record["ended"] = ended.to_wire()
        if signed:
            record["signed"] = [encode_message(message) for message in signed]
        why = "dispute" if cheat.seat is None else "stopped"
        ending = _Ending(
            why,
            self.step,
            reveal=cheat.seat is None,
            cheat=cheat,
            evidence=tuple(evidence),
            halves=halves,
        )
        self._conclude(ending, record)

    def _stop_clocks(self) -> None:
        """The game is over here: no holding, turn clock or asking is due any more."""
        self.turn_clock.stop()
        if self._ticker.running:
            self._ticker.stop()
        if self._ask_all_call is not None and self._ask_all_call.active():
            self._ask_all_call.cancel()

    def _end(self, outcome: Outcome, record: dict[str, Any]) -> None:
        if self.outcome is not None:
            return
        self.outcome = outcome
        self.ended_at = self.reactor.seconds()
        self._stop_clocks()
        self.gamefile.write(record)
        self.gamefile.sync()
        self.gamefile.close()
        self._refresh()
        self.player.finished(self, outcome)
        if outcome.final is None and self.ending is None:
            self._leave()  # this seat left (it may come back): nothing to tell anyone
            return
        # A peer behind (back from a crash, or its link down as the last step went round)
        # can only learn the end from us: stay, answering it, until every peer says it has
        # ended too, or a step deadline has passed.
        if outcome.final is not None:
            self.mesh.broadcast(self._holding())
        self._lingering = self.reactor.callLater(self.step_deadline, self._leave)
        self._leave_once_all_have_ended()

    def _leave_once_all_have_ended(self) -> None:
        others = [seat for seat in range(self.players) if seat != self.seat]
        if self.ending is not None:
            done = self.end.all_ended(others)
        else:
            done = all(self._peers[seat].step >= self.step for seat in others)
        if done:
            self._leave()

    def _leave(self) -> None:
        """Close the mesh; `done` fires once every link has sent what it holds (a relayed
        proof of a cheat may be the last thing the others need) and closed."""
        if self.mesh.closed:
            return
        if self._lingering is not None and self._lingering.active():
            self._lingering.cancel()
        for timer in self._answer_again.values():
            if timer.active():
                timer.cancel()
        outcome = self.outcome
        assert outcome is not None
        gc.unfreeze()  # what `_settle_heap` froze may be garbage once the game is gone
        self.mesh.close().addBoth(lambda _: self.done.callback(outcome))

    def _refresh(self) -> None:
        self.view = self._snapshot()

    def _snapshot(self) -> View:
        """The game as of the last step; while a step is being worked on in a thread, only
        the links and the arrivals are new."""
        received = self.inbox.get(self.step, {})
        connected = frozenset(self.mesh.connected)
        missing = frozenset(s for s in range(self.players) if s not in received)
        away = self.presence.away
        relayed = frozenset(self.mesh.relayed)
        if self._working:
            return replace(
                self.view, connected=connected, missing=missing, away=away, relayed=relayed
            )
        lockstep = self.lockstep
        return View(
            seat=self.seat,
            names=self.names,
            step=self.step,
            rules=lockstep.rules,
            hand=lockstep.hand,
            connected=connected,
            missing=missing,
            dealing=lockstep.dealing,
            away=away,
            relayed=relayed,
        )


def _settle_heap() -> None:
    """After a deck round, collect the garbage its proofs left and freeze what survives, so
    that no later collection walks it: full collections in the middle of ordinary steps were
    most of their latency tail (`scripts/bench game`: step p99 42 ms with them)."""
    gc.collect()
    gc.freeze()


def _end_record(final: Final) -> dict[str, Any]:
    return {
        "kind": "end",
        "scores": list(final.result.scores),
        "winners": list(final.result.winners),
        "agreed": final.agreed,
        "audit": list(final.audit_findings),
    }
