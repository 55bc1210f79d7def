"""One seat's game on the network: the lockstep over the mesh, its game file, and its player.

The driver runs each step: it sends this seat's signed message when the step is due (someone
owes something, someone else started the step, or its player acts), collects every seat's
message, has the lockstep apply them, writes the step to the game file, and tells the player.
Every step message is signed by its author and relayed by whoever receives it from its author,
so every seat sees the same messages: two different signed messages for one seat and step are
equivocation, and the pair is the proof. A seat that is connected but does not send its step
message before the deadline is withholding it. Any of these stops the game and names the seat.

Heavy work (shuffles and their proofs) runs off the reactor thread, one step at a time, so a
person's screen never freezes; the screen and bots read `view`, a snapshot taken between steps.
"""

from __future__ import annotations

import gc
import hashlib
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

from client.faults import FrameFaults
from client.gamefile import Frame, GameFile, GameFileWriter
from client.mesh import LinkLoss, Mesh, MeshHandler, PeerListener
from client.presence import Presence, PresenceNews
from client.turn_clock import Situation, TurnClock
from protocol.cards import Card
from protocol.identity import Identity, SignatureError, SignedEnvelope, Verifier
from protocol.lockstep import Cheat, Final, GameConfig, Lockstep, StepReport
from protocol.messages import Message, MessageError
from protocol.peer_messages import (
    STEP_DOMAIN,
    EndSeed,
    EndVote,
    Heartbeat,
    PeerChat,
    StepBody,
    StepFrame,
)
from protocol.rules import Action, Phase, RuleError, Slot, State
from protocol.steps import ForbiddenAction, check_own_actions
from protocol.table import AgreedTable

log = Logger()

STEP_DEADLINE = 60.0
HEARTBEAT_WAITING = 1.0  # seconds between heartbeats while a step waits for messages
HEARTBEAT_IDLE = 5.0  # ... and otherwise
LINK_SILENCE = 15.0  # a link that says nothing this long is dead (TCP may not notice)
AHEAD_WINDOW = 64  # later steps whose messages are kept until their turn (a resumed seat)
ABANDON_AFTER = 300.0  # seconds a seat may be away before the others vote to end without it


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


class StepKind(Enum):
    """What a step carried: a move of the game, a round of a deck epoch (shuffles, proofs,
    relocks), or the last step, after the end (final reports, seeds, the audit)."""

    GAME = "game"
    DECK_ROUND = "deck round"
    AUDIT = "audit"


@dataclass(frozen=True)
class StepTiming:
    """How long a step took here: from the first message this seat saw or made for it to
    the step applied."""

    step: int
    seconds: float
    kind: StepKind


@dataclass(frozen=True)
class Outcome:
    """How a game ended for this seat: played to the end, stopped by a cheat, or ended by a
    vote without seats gone for good (`gone`, with the audit of what was played)."""

    final: Final | None = None
    cheat: Cheat | None = None
    evidence: tuple[Frame, ...] = ()
    gone: tuple[int, ...] = ()
    audit_findings: tuple[str, ...] = ()


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
        self._away_since: dict[int, float] = {}
        self.presence = Presence(self.names)
        self._votes: dict[int, tuple[int, int]] = {}  # seat: (step, gone mask)
        self._end_seeds: dict[int, bytes] = {}
        self.step = 0  # the step being played; the lockstep's own counter moves in a worker thread
        self.inbox: dict[int, dict[int, Frame]] = {}
        self.history: dict[int, list[Frame]] = {}
        self.queued: list[Action] = []
        self.done: Deferred[Outcome] = Deferred()
        self.outcome: Outcome | None = None
        self._accepted: dict[bytes, bytes] = {}  # hash of each step payload taken in: signature
        self._own_frames: dict[int, Frame] = {}  # signed before a crash, to be sent again
        self._heard: dict[int, float] = {}  # when each peer last said anything
        self._peer_steps: dict[int, int] = {}  # the step each peer last said it was at
        self._lingering: Any = None  # after the end, until every peer has the last step
        self._last_beat = 0.0
        self._ticker = LoopingCall(self._tick)
        self._ticker.clock = reactor
        self.timings: list[StepTiming] = []
        self.started_at = self.ended_at = 0.0
        self._step_started: dict[int, float] = {}
        self._busy = False  # composing or playing a step
        self._working = False  # a worker thread is using the lockstep
        self._deadline: Any = None
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
            for frame in frames:
                self._checked(frame)
            each_step(self.lockstep.play({seat: frame[0] for seat, frame in enumerate(frames)}))
            self.history[step] = list(frames)
            self._accepted.update(
                (hashlib.sha256(p).digest(), signature) for p, signature in frames
            )
            self.step = step + 1
        self._own_frames = {step: f for step, f in saved.own.items() if step >= self.step}
        self._refresh()

    def submit(self, actions: Sequence[Action]) -> None:
        """Queue this seat's actions for its next message; RuleError at once if the rules do
        not allow them now (after what is already queued)."""
        rules = self.view.rules
        if self.outcome is not None:
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
        """Leave the game (the player quit); the others will see this seat disconnect."""
        self._end(Outcome(), {"kind": "left", "reason": reason})

    # --- the mesh -----------------------------------------------------------------------------

    def link_up(self, seat: int) -> None:
        """A peer (re)joined: tell it where we are, so that each sends what the other lacks."""
        self._heard[seat] = self.reactor.seconds()
        self._away_since.pop(seat, None)
        news = self.presence.link_up(seat)
        self._refresh()
        self.mesh.send(seat, self._heartbeat())
        if news is not None and self.outcome is None:
            self.player.presence_changed(self, news)

    def link_down(self, seat: int, reason: str, loss: LinkLoss) -> None:
        self._away_since.setdefault(seat, self.reactor.seconds())
        news = self.presence.link_down(seat, reason, loss)
        self._refresh()
        if news is not None and self.outcome is None:
            self.player.presence_changed(self, news)

    def misbehaved(self, seat: int, reason: str) -> None:
        self._stop(Cheat(seat, self.step, f"broke the link protocol: {reason}"))

    def received(self, seat: int, message: Message) -> None:
        self._heard[seat] = self.reactor.seconds()
        if isinstance(message, StepFrame):
            self._step_frame(seat, message)
        elif isinstance(message, Heartbeat):
            self._peer_steps[seat] = max(message.step, self._peer_steps.get(seat, 0))
            self._catch_up(seat, message)
            if self._lingering is not None:
                self._leave_once_all_have_ended()
        elif isinstance(message, EndVote):
            self._votes[seat] = (message.step, message.gone)
            self._count_votes()
        elif isinstance(message, EndSeed):
            self._end_seeds[seat] = message.seed
            self._count_votes()
        elif isinstance(message, PeerChat):
            self.player.chat(self, seat, message.text)

    def _heartbeat(self) -> Heartbeat:
        have = sum(1 << seat for seat in self.inbox.get(self.step, {}))
        return Heartbeat(self.step, have)

    def _catch_up(self, seat: int, beat: Heartbeat) -> None:
        """Send a peer the signed step messages it lacks: of its step, and of every later
        step this seat has played. If the peer is ahead, ask it the same way."""
        if beat.step > self.step:
            self.mesh.send(seat, self._heartbeat())
            return
        for step in range(beat.step, self.step + 1):
            held = self._frames_held(step)
            for author, frame in sorted(held.items()):
                if step > beat.step or not beat.have & (1 << author):
                    self.mesh.send(seat, StepFrame(*frame))

    def _frames_held(self, step: int) -> dict[int, Frame]:
        if step in self.history:
            return dict(enumerate(self.history[step]))
        return dict(self.inbox.get(step, {}))

    def _tick(self) -> None:
        """Heartbeats (every second while a step waits, else every few seconds), and links
        that have been silent too long are dropped, to be dialled again."""
        if self.outcome is not None:
            return
        now = self.reactor.seconds()
        for seat in sorted(self.mesh.connected):
            if now - self._heard.get(seat, now) > LINK_SILENCE:
                self.mesh.drop(seat, f"no word from {self.names[seat]} for {LINK_SILENCE:g} s")
        waiting = 0 < len(self.inbox.get(self.step, {})) < self.players
        if waiting or now - self._last_beat >= HEARTBEAT_IDLE:
            self._last_beat = now
            self.mesh.broadcast(self._heartbeat())
        self._vote_if_someone_is_gone(now)

    # --- a player gone for good: the others vote to end the game -------------------------------

    def _vote_if_someone_is_gone(self, now: float) -> None:
        """Seats away longer than `abandon_after` are gone for good: vote to end without them
        (again, on each tick, so that seats that come back in between hear the vote)."""
        gone = [
            seat
            for seat, since in self._away_since.items()
            if seat not in self.mesh.connected and now - since >= self.abandon_after
        ]
        if not gone or self.abandon_after <= 0:
            return
        vote = EndVote(self.step, sum(1 << seat for seat in gone))
        if self._votes.get(self.seat) != (vote.step, vote.gone):
            names = ", ".join(self.names[seat] for seat in gone)
            self.player.notice(self, f"{names} gone for good: asking the others to end the game")
        self._votes[self.seat] = (vote.step, vote.gone)
        self.mesh.broadcast(vote)
        self._count_votes()

    def _count_votes(self) -> None:
        """Unanimity among the seats still here: reveal the seed; all seeds in: the end."""
        mine = self._votes.get(self.seat)
        if mine is None or self.outcome is not None:
            return
        step, gone = mine
        present = [seat for seat in range(self.players) if not gone & (1 << seat)]
        if any(self._votes.get(seat) != mine for seat in present):
            return
        if self.seat not in self._end_seeds:
            self._end_seeds[self.seat] = self.lockstep.deck.reveal_seed().seed
            self.mesh.broadcast(EndSeed(self._end_seeds[self.seat]))
        if all(seat in self._end_seeds for seat in present):
            seeds = {seat: self._end_seeds.get(seat) for seat in range(self.players)}
            findings = self.lockstep.audit_unfinished(seeds)
            missing = tuple(seat for seat in range(self.players) if gone & (1 << seat))
            record = {
                "kind": "abandoned",
                "gone": list(missing),
                "step": step,
                "audit": list(findings),
            }
            self._end(Outcome(gone=missing, audit_findings=findings), record)

    # --- the turn clock ------------------------------------------------------------------------

    def turn_seconds_left(self) -> float | None:
        """Seconds before this seat's turn clock makes its default moves; None while no clock
        runs for it (no turn clock, or nothing of this seat holds up the game)."""
        return self.turn_clock.seconds_left()

    def _clock_situation(self) -> Situation:
        rules = self.view.rules if self.outcome is None else None
        return rules, self.view.hand, bool(self.queued)

    def _time_is_up(self, actions: list[Action]) -> None:
        self.player.notice(self, "your time is up: the default moves are made for you")
        self.submit(actions)

    def _step_frame(self, link: int, frame: StepFrame) -> None:
        if self.outcome is not None:
            return
        digest = hashlib.sha256(frame.payload).digest()
        if self._accepted.get(digest) == frame.signature:
            return  # a relayed or resent copy of what we already checked (signatures are
            # deterministic: the same message with another signature is checked, and blamed)
        current = self.step
        try:
            body = self._checked((frame.payload, frame.signature))
        except MessageError as error:
            self._stop(Cheat(link, current, f"sent a malformed step message: {error}"))
            return
        except SignatureError as error:
            body = StepBody.decode(frame.payload)
            who = "sent" if link == body.seat else f"relayed as seat {body.seat}'s"
            reason = f"{who} a step message whose signature fails: {error}"
            self._stop(Cheat(link, body.step, reason), ((frame.payload, frame.signature),))
            return
        if body.game != self.lockstep.config.game_id:
            self._another_game(link, body)
            return
        author, step = body.seat, body.step
        if link == author:  # relay first: a conflict must reach everyone, not just us
            self.mesh.broadcast(frame, skip=(author,))
        known = self._frame_of(step, author)
        if known is not None:
            if known[0] != frame.payload:
                self.mesh.broadcast(StepFrame(*known), skip=(author,))  # both, as proof
                reason = f"signed two different messages for step {step} (equivocation)"
                self._stop(Cheat(author, step, reason), (known, (frame.payload, frame.signature)))
            return
        if not current <= step <= current + AHEAD_WINDOW:
            return  # long gone, or far ahead: heartbeats bring it when it is due
        self.inbox.setdefault(step, {})[author] = (frame.payload, frame.signature)
        self._accepted[digest] = frame.signature
        self._step_started.setdefault(step, self.reactor.seconds())
        self._pump()

    def _another_game(self, link: int, body: StepBody) -> None:
        """A step message signed for another game identity is never taken in. Relayed, it is
        a replay (of a game with the same lobby id): ignored. From its own author, that seat
        plays another table than this one (the lobby gave the players different rosters and
        sits in the middle): the game stops before anything more is dealt, blaming nobody."""
        if link != body.seat:
            return
        reason = (
            f"{self.names[link]}'s client plays another game than this one (its messages "
            "name another game identity): the players do not all have the same table. "
            "Compare the table codes; the lobby may sit between the players"
        )
        self._stop(Cheat(None, self.step, reason))

    def _checked(self, frame: Frame) -> StepBody:
        """The body of a signed step message whose signature is its author's (MessageError
        for a malformed body, SignatureError for a bad signature)."""
        body = StepBody.decode(frame[0])
        if body.seat >= self.players:
            raise MessageError(f"there is no seat {body.seat} in this game")
        self._verifiers[body.seat].verify(SignedEnvelope(STEP_DOMAIN, *frame), STEP_DOMAIN)
        return body

    def _frame_of(self, step: int, seat: int) -> Frame | None:
        if step in self.history:
            return self.history[step][seat]
        return self.inbox.get(step, {}).get(seat)

    # --- the steps ----------------------------------------------------------------------------

    def _pump(self) -> None:
        """Do whatever the current step needs next."""
        if self._busy or self.outcome is not None:
            return
        step = self.step
        frames = self.inbox.setdefault(step, {})
        if self.seat not in frames and step in self._own_frames:
            self._send_own(step, self._own_frames.pop(step))  # signed before a crash
        if self.seat not in frames:
            if self.lockstep.urgent() or frames or self.queued:
                self._compose(step)
            return
        if len(frames) == self.players:
            self._play(step)
        else:
            self._arm_deadline()
        self._refresh()

    def _compose(self, step: int) -> None:
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
        """Sign this seat's message for the step, make it durable, and send it to every peer
        (durable first: after a crash the same message is sent again, never another)."""
        if self.outcome is not None:
            return
        frame = (payload, self.identity.sign(STEP_DOMAIN, payload).signature)
        self.gamefile.own(step, frame)
        self._send_own(step, frame)

    def _send_own(self, step: int, frame: Frame) -> None:
        self.inbox.setdefault(step, {})[self.seat] = frame
        self._accepted[hashlib.sha256(frame[0]).digest()] = frame[1]
        self._step_started.setdefault(step, self.reactor.seconds())
        self.mesh.broadcast(StepFrame(*frame))

    def _play(self, step: int) -> None:
        self._cancel_deadline()
        frames = [self.inbox[step][seat] for seat in range(self.players)]
        payloads = {seat: frame[0] for seat, frame in enumerate(frames)}
        self._busy = True
        work = self._in_thread(self.lockstep.play, payloads)

        def played(report: StepReport) -> None:
            if self.outcome is not None:  # stopped (a cheat seen meanwhile) while it was applied
                return
            self.gamefile.step(step, frames)
            self.history[step] = frames
            del self.inbox[step]
            self.step = step + 1
            started = self._step_started.pop(step, self.reactor.seconds())
            if self.view.dealing is not None:  # the view as the step began
                kind = StepKind.DECK_ROUND
                _settle_heap()
            else:
                kind = StepKind.GAME if self.lockstep.final is None else StepKind.AUDIT
            self.timings.append(StepTiming(step, self.reactor.seconds() - started, kind))
            self._refresh()
            self.turn_clock.check()
            self.player.step_played(self, report)
            if self.lockstep.final is not None:
                self._end(Outcome(final=self.lockstep.final), _end_record(self.lockstep.final))

        def cheated(failure: Failure) -> None:
            failure.trap(Cheat)
            if self.outcome is None:
                self._stop(failure.value, tuple(frames))

        work.addCallbacks(played, cheated)
        work.addErrback(self._crashed)
        work.addBoth(self._idle)

    def _in_thread(self, function: Any, *args: Any) -> Deferred[Any]:
        """Run heavy lockstep work (a deck round's shuffle or proofs, the set-up, the audit)
        in a worker thread, so the screen never freezes; while it runs, the view stays as it
        was. An ordinary step takes about a millisecond and runs here at once: handing it to
        a thread would only add latency."""
        rules = self.lockstep.rules
        heavy = self.lockstep.dealing is not None or rules is None or rules.phase is Phase.OVER
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

    # --- deadlines, the end -------------------------------------------------------------------

    def _arm_deadline(self) -> None:
        if self._deadline is None:
            self._deadline = self.reactor.callLater(self.step_deadline, self._deadline_passed)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None

    def _deadline_passed(self) -> None:
        """A seat that is connected yet has not sent its message is withholding it; one that
        is disconnected is waited for (it may come back)."""
        self._deadline = None
        step = self.step
        missing = [s for s in range(self.players) if s not in self.inbox.get(step, {})]
        connected = [s for s in missing if s in self.mesh.connected]
        if connected:
            seconds = f"{self.step_deadline:g}"
            reason = f"withheld its message for step {step} for {seconds} seconds while connected"
            self._stop(Cheat(connected[0], step, reason), tuple(self.inbox.get(step, {}).values()))
            return
        names = ", ".join(self.names[s] for s in missing)
        self.player.notice(self, f"waiting for {names} (disconnected)")
        self._arm_deadline()

    def _stop(self, cheat: Cheat, evidence: Sequence[Frame] = ()) -> None:
        if self.outcome is not None:
            return
        record = {
            "kind": "stopped",
            "seat": cheat.seat,
            "step": cheat.step,
            "reason": cheat.reason,
            "evidence": [list(frame) for frame in evidence],
        }
        self._end(Outcome(cheat=cheat, evidence=tuple(evidence)), record)

    def _end(self, outcome: Outcome, record: dict[str, Any]) -> None:
        if self.outcome is not None:
            return
        self.outcome = outcome
        self.ended_at = self.reactor.seconds()
        self._cancel_deadline()
        if self._ticker.running:
            self._ticker.stop()
        self.turn_clock.stop()
        self.gamefile.write(record)
        self.gamefile.sync()
        self.gamefile.close()
        self._refresh()
        self.player.finished(self, outcome)
        if outcome.final is None:
            self._leave()
            return
        # A peer behind (back from a crash, or its link down as the last step went round)
        # can only get the last steps from us: stay, answering heartbeats, until every peer
        # says it has ended too, or a step deadline has passed.
        self.mesh.broadcast(self._heartbeat())
        self._lingering = self.reactor.callLater(self.step_deadline, self._leave)
        self._leave_once_all_have_ended()

    def _leave_once_all_have_ended(self) -> None:
        others = [seat for seat in range(self.players) if seat != self.seat]
        if all(self._peer_steps.get(seat, 0) >= self.step for seat in others):
            self._leave()

    def _leave(self) -> None:
        """Close the mesh; `done` fires once every link has sent what it holds (a relayed
        proof of a cheat may be the last thing the others need) and closed."""
        if self.mesh.closed:
            return
        if self._lingering is not None and self._lingering.active():
            self._lingering.cancel()
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
        if self._working:
            return replace(self.view, connected=connected, missing=missing, away=away)
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
