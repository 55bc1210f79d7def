"""A hostile player for the end-to-end tests of issue 12: an ordinary greedy bot whose game
driver attacks the other seats in the ways chosen on its command line, as a modified client
would. Each attack says what it did on stderr, one JSON line per fact the test checks.

    python -m tests.hostile_player ATTACKS HOST:PORT [--victim NAME] [--record FILE]
        [--replay FILE] [bot options...]

ATTACKS, comma-separated:
- `flood`: stops reading its link to the victim and sends it hundreds of holdings a second
  asking for the whole game (step 0, holding nothing, unsigned);
- `far-future`: sends the victim signed step messages for step 10^7, each a frame full of tiny
  values, many a second; then once a frame longer than any link allows;
- `wrong-final`: reports a wrong final state at the end;
- `record`: keeps every signed step message of the victim in FILE (for `replay`, next game);
- `replay`: relays the messages kept in FILE (a game with the same seats) to everyone, as they
  were and with this game's header;
- `seed-thief`: votes to end with the others, takes their seeds, never ends itself nor
  reveals its seed, and plays on; for each seed it checks that its owner's game file held
  the ending before the seed came;
- `cycle`: withholds its message for a step the others started, and drops all its links just
  before each deadline, coming back just after (up UP s, down DOWN s: `--cycle UP,DOWN`);
- `withhold-at`: withholds its message for the first step from `--at N` on that every seat
  owes at once (a deck round or keys: the shared state says so, so every seat agrees which
  step that is); it stays connected and talking;
- `withhold-idle`: withholds as `withhold-at` does, and sends its holdings only every 5 s
  (the idle pace), answering no asks;
- `cycle-own-turn`: on its first turn once the deal is over makes no move (as a person
  thinking; it still sends what every seat owes), and drops all its links every UP + DOWN
  seconds (`--cycle`), for ever;
- `freeze-at`: the process stops itself (SIGSTOP) just before it would send its message for
  that same step, as a machine put to sleep would: its links stay up, and it says nothing
  until the test wakes it (this one plays no attack: it stands for an honest seat);
- `bad-shuffle`: replaces points of its shuffle with points of no card (only the audit can
  tell who, with the shuffle proofs off).
- `selective`: sends each of its step messages once the deal is over to one other seat only
  (the next one round the table, turn about), and never answers a request for them: the
  others have them only from that seat.
- `lone-end`: at the first step from `--at N` on, signs an ending by a vote without the first
  other seat (`Ended(why="vote")`) that nobody voted for, with the votes `--votes` says:
  `none`, `own` (its own vote only) or `forged` (its own, and one in every other present
  seat's name, signed with its own key); then signs no step message again, as an ending
  says, and stays connected. It says every seed it is sent, when, and the ending its
  owner's game file held by then.
- `equivocate-split`: once told to (SIGUSR1), at its next own turn signs two versions of its
  message for the step: version A, with its moves, goes to the first other seat, version B,
  without them, to the others (`{"equivocated": step}`). From then on it relays nobody's
  message of a later step, never sends version A again, and looks into no fork: a seat can
  learn of the other version only from another honest seat.
- `think`: stands for an honest seat whose player takes its time (it plays no attack): once
  told to (SIGUSR1), at its next own turn, when the game waits for it alone (to plant, with
  no step under way), it says `{"thinking": step}` and makes its moves `--think S` seconds
  later (`{"moved": step}`): a test can cut links meanwhile, knowing that every seat is at
  that step and nothing is on its way.
- `reconnect-walk`: drops its link to the victim every RECONNECT_EVERY seconds, and on each
  link up asks it for the whole game again: a holding for every step from 0 to the one it
  plays (an honest seat back on a link asks about its own step only); it plays on as usual.
- `feed-other-version`: once its link to the victim has dropped (the victim's machine lost its
  power), answers the victim's requests for steps this seat has played with another signed
  version of its own message of each (the same body encoded another way); it says whenever it
  holds two different signed messages of the victim for one step.

`--slow S` makes it a slow seat (whatever its attacks): each of its messages is made S
seconds after it is due, so that a game lasts long enough for an attack to run its course.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import signal
import struct
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgpack
from twisted.internet.task import LoopingCall

from client.game import PeerGame
from client.gamefile import ENDINGS, GameFile, game_path
from protocol.blame import ForkedState
from protocol.deck import RISTRETTO255
from protocol.ending import mask_of
from protocol.messages import encode
from protocol.peer_messages import (
    MAX_STEP,
    MAX_STEP_PAYLOAD,
    Ended,
    EndVote,
    Holding,
    StepBody,
    StepFrame,
    sign,
)
from protocol.rules import Action, Phase, RuleError

ATTACKS = (
    "flood", "far-future", "wrong-final", "record", "replay", "seed-thief", "cycle",
    "withhold-at", "withhold-idle", "cycle-own-turn", "freeze-at", "bad-shuffle", "selective",
    "lone-end", "equivocate-split", "think", "reconnect-walk", "feed-other-version",
)  # fmt: skip
IDLE_PACE = 5.0  # seconds between the holdings of `withhold-idle`
FLOOD_PER_SECOND = 500
FAR_FUTURE_PER_SECOND = 40
FAR_FUTURE_SECONDS = 3.0  # then the oversized frame; a planner game is over in seconds
DEALT = 15  # the step after which the attacks begin (the deal is over)
RECONNECT_EVERY = 0.5  # seconds between the drops of `reconnect-walk`


def say(**fact: Any) -> None:
    print(json.dumps(fact), file=sys.stderr, flush=True)


def tiny_values_payload() -> bytes:
    """A step message body as large as a frame allows, all of it tiny msgpack values (each
    array within the decoder's limits, so only its place outside the window refuses it)."""
    block = [[{}] * 200] * 200
    blocks = MAX_STEP_PAYLOAD // len(msgpack.packb(block))
    payload: bytes = msgpack.packb([block] * blocks)
    return payload


class HostileGame(PeerGame):
    attacks: frozenset[str] = frozenset()
    victim_name = ""
    record_file: Path | None = None
    replay_file: Path | None = None
    cycle = (2.0, 3.0)
    at = 0
    votes = "none"
    think = 2.0
    slow = 0.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loops: list[LoopingCall] = []
        self._recorded: list[list[Any]] = []
        self._down_until = 0.0
        self._withholding: int | None = None
        self._ended_alone: int | None = None  # the step of its lone ending
        self._stalled_turn: int | None = None  # `cycle-own-turn`: the step its turn stalls at
        self._told = False  # SIGUSR1 came
        self._split_at: int | None = None  # the step of its two versions
        self._thought_at: int | None = None  # the step it took its time at
        self._thinking = False
        self._victims: dict[int, tuple[bytes, bytes]] = {}  # the victim's messages, by step
        self._reported: set[int] = set()  # the victim's steps said to have come
        self._fed: set[int] = set()  # steps another version of its own message went out for
        self._feeding = self._feeding_now = False
        self.victim = self.names.index(self.victim_name) if self.victim_name else None

    def start(self) -> None:
        if "withhold-idle" in self.attacks:
            self._pace_holdings()
        super().start()
        self._every(0.2, self._attack)
        if "reconnect-walk" in self.attacks:
            self._every(RECONNECT_EVERY, self._reconnect)
        if "bad-shuffle" in self.attacks:
            self._spoil_the_shuffle()
        if self.attacks & {"equivocate-split", "think"}:
            signal.signal(signal.SIGUSR1, lambda *_: self.reactor.callFromThread(self._told_to))

    def _told_to(self) -> None:
        self._told = True
        say(told_at=self.step)

    def _own_turn(self) -> bool:
        rules = self.lockstep.rules
        return rules is not None and rules.active == self.seat

    def _every(self, seconds: float, work: Any) -> None:
        loop = LoopingCall(work)
        loop.clock = self.reactor
        loop.start(seconds, now=False)
        self._loops.append(loop)

    def _end(self, outcome: Any, record: dict[str, Any]) -> None:
        for loop in self._loops:
            if loop.running:
                loop.stop()
        if self.record_file is not None and self._recorded:
            self.record_file.write_bytes(msgpack.packb(self._recorded, use_bin_type=True))
            say(recorded=len(self._recorded))
        super()._end(outcome, record)

    # --- the attacks that start once the deal is over --------------------------------------------

    def _attack(self) -> None:
        if self.step < DEALT or self.outcome is not None:
            return
        if "flood" in self.attacks and not getattr(self, "_flooding", False):
            self._flooding = True
            self._every(1 / FLOOD_PER_SECOND, self._flood)
        if "far-future" in self.attacks and not getattr(self, "_far", False):
            self._far, self._far_until = True, self.reactor.seconds() + FAR_FUTURE_SECONDS
            self._far_payload = tiny_values_payload()
            self._every(1 / FAR_FUTURE_PER_SECOND, self._far_future)
        if "replay" in self.attacks and not getattr(self, "_replayed", False):
            self._replayed = True
            self._replay()
        if "cycle" in self.attacks and self._withholding is not None:
            self._cycle_links()
        if "lone-end" in self.attacks and self._ended_alone is None and self.step >= self.at:
            self._end_alone()
        if "cycle-own-turn" in self.attacks and self._stalled_turn is not None:
            self._cycle_links()

    def _flood(self) -> None:
        link = self.mesh.links.get(self.victim) if self.victim is not None else None
        if link is None:
            return
        link.transport.pauseProducing()  # stop reading what the victim sends
        self._peers[self.victim].heard = self.reactor.seconds()  # and never drop it for that
        link.send(Holding(self.game_id, 0, self.seat, 0))
        self._flooded = getattr(self, "_flooded", 0) + 1
        if self._flooded % FLOOD_PER_SECOND == 0:
            say(flooded=self._flooded)

    def _far_future(self) -> None:
        link = self.mesh.links.get(self.victim) if self.victim is not None else None
        if link is None:
            return
        if self.reactor.seconds() > self._far_until:
            link.transport.write(struct.pack(">I", 8 * 1024 * 1024) + bytes(4096))
            say(oversized=1, far_future_sent=self._far_sent)
            self._loops[-1].stop()
            return
        far = sign(self.identity, StepFrame(self.game_id, MAX_STEP, self.seat, self._far_payload))
        link.send(far)
        self._far_sent = getattr(self, "_far_sent", 0) + 1
        if self._far_sent % FAR_FUTURE_PER_SECOND == 0:
            say(far_future_sent=self._far_sent)

    def _replay(self) -> None:
        assert self.replay_file is not None
        frames = msgpack.unpackb(self.replay_file.read_bytes())
        for game, step, seat, payload, signature in frames:
            self.mesh.broadcast(StepFrame(game, step, seat, payload, signature))
        for _, step, seat, payload, signature in frames[: self.players * 4]:
            if self.step <= step <= self.step + 1:
                self.mesh.broadcast(StepFrame(self.game_id, step, seat, payload, signature))
        say(replayed=len(frames))

    def _end_alone(self) -> None:
        """Sign the game ended by a vote without the first other seat, with no vote of
        theirs behind it, and its own seed for the audit (as an honest ending by a vote
        has), and tell everyone."""
        step, target = self.step, min(seat for seat in range(self.players) if seat != self.seat)
        gone = mask_of({target})
        present = [seat for seat in range(self.players) if seat != target]
        voters = {"none": [], "own": [self.seat], "forged": present}[self.votes]
        votes = tuple(
            encode(sign(self.identity, EndVote(self.game_id, step, seat, gone))) for seat in voters
        )
        self._ended_alone = step
        seed = self.lockstep.deck.reveal_seed().seed
        self.mesh.broadcast(sign(self.identity, Ended(self.game_id, step, self.seat, "vote",
                                                      gone, seed, votes=votes)))  # fmt: skip
        say(lone_end=step, target=target, votes=self.votes, at=time.time())

    # --- what it does to its own messages --------------------------------------------------------

    def received(self, seat: int, message: Any) -> None:
        victims = isinstance(message, StepFrame) and message.seat == self.victim
        if "record" in self.attacks and victims and message.game == self.game_id:
            self._recorded.append(
                [message.game, message.step, message.seat, message.payload, message.signature]
            )
        if "seed-thief" in self.attacks and isinstance(message, Ended):
            self._check_the_seed(message)
        if "lone-end" in self.attacks and isinstance(message, Ended) and message.seed:
            saved = GameFile.read(game_path(self.game_id, message.seat))
            ending = saved.end["kind"] if saved.end is not None else None
            say(seed_from=message.seat, owners_ending=ending, at=time.time())
        if "feed-other-version" in self.attacks and victims and message.game == self.game_id:
            self._two_versions(message)
        super().received(seat, message)

    def _two_versions(self, frame: StepFrame) -> None:
        """Keep the victim's first message of each step; say if another comes, and (once it
        feeds the victim) each step the victim sent a message for."""
        first = self._victims.setdefault(frame.step, frame.frame)
        if first != frame.frame:
            say(two_versions=frame.step)
        if self._feeding and frame.step not in self._reported:
            self._reported.add(frame.step)
            say(victim_step=frame.step)

    def _check_the_seed(self, ended: Ended) -> None:
        """A seed came: its owner's game file must already say the game ended for it."""
        if ended.seed is None or ended.game != self.game_id:
            return
        saved = GameFile.read(game_path(self.game_id, ended.seat))
        say(seed_from=ended.seat, ending_on_disk=saved.end is not None
            and saved.end["kind"] in ENDINGS)  # fmt: skip

    def _conclude(self, ending: Any, record: dict[str, Any]) -> None:
        if "seed-thief" in self.attacks and ending.why in ("vote", "followed"):
            if not getattr(self, "_said_so", False):
                self._said_so = True
                say(kept_playing_instead_of=ending.why)
            return  # never ends, never reveals, plays on
        super()._conclude(ending, record)

    def _publish(self, step: int, payload: bytes) -> None:
        if self._ended_alone is not None and step >= self._ended_alone:
            return  # it said it ended: it signs no step message again
        due = step >= self.at and self.lockstep.urgent()
        if "freeze-at" in self.attacks and due and not getattr(self, "_slept", 0):
            self._slept = 1
            say(frozen_at=step)
            # What it wrote before goes out first; this step's message never does.
            self.reactor.callLater(0.2, os.kill, os.getpid(), signal.SIGSTOP)
            return
        body = StepBody.decode(payload)
        if "wrong-final" in self.attacks and body.final is not None:
            wire = body.to_wire() | {"final": secrets.token_bytes(32)}
            payload = StepBody.from_wire(wire).encode()
            say(wrong_final=step)
        if self._splits(step, bool(body.actions)):
            self._split(step, payload)
            return
        if self._withholds(step):
            if self._withholding is None:
                self._withholding = step
                say(withholding=step, at=time.time())
            return  # made, never signed nor sent: its holdings say so (`_compose` stops)
        super()._publish(step, payload)

    def _compose(self, step: int) -> None:
        if step == self._withholding:
            return  # withheld: not made again
        if self._ended_alone is not None and step >= self._ended_alone:
            return  # it said it ended: it makes no step message again
        if self.slow <= 0 or getattr(self, "_thought", -1) == step:
            super()._compose(step)
            return
        self._thought, self._busy = step, True  # `--slow`: nothing else is made meanwhile

        def thought() -> None:
            self._busy = False
            self._pump()

        self.reactor.callLater(self.slow, thought)

    def _beat(self, now: float) -> None:
        if self._ended_alone is None:
            super()._beat(now)  # an ended client says no more where it is (client/game.py)

    def _tell_holding(self, seat: int) -> None:
        if self._ended_alone is None:
            super()._tell_holding(seat)

    def _pace_holdings(self) -> None:
        """`withhold-idle`: once withholding, its holdings (heartbeats, for older clients) go
        out only in a broadcast every IDLE_PACE seconds; none answers anything."""
        send, broadcast = self.mesh.send, self.mesh.broadcast

        def says_where(message: Any) -> bool:
            paced = self._withholding is not None and getattr(message, "TYPE", "")
            return paced in ("holding", "heartbeat")

        def paced_send(seat: int, message: Any) -> bool:
            return False if says_where(message) else send(seat, message)

        def paced_broadcast(message: Any, skip: Any = ()) -> None:
            if says_where(message):
                now = self.reactor.seconds()
                if now - getattr(self, "_paced", 0.0) < IDLE_PACE:
                    return
                self._paced = now
            broadcast(message, skip=skip)

        self.mesh.send, self.mesh.broadcast = paced_send, paced_broadcast  # type: ignore[method-assign]

    def _send_own(self, step: int, frame: tuple[bytes, bytes]) -> None:
        if "selective" not in self.attacks or step < DEALT:
            super()._send_own(step, frame)
            return
        self.inbox.setdefault(step, {})[self.seat] = frame
        self._started(step)
        others = [seat for seat in range(self.players) if seat != self.seat]
        self.mesh.send(others[step % len(others)], StepFrame(self.game_id, step, self.seat, *frame))
        self._selective = getattr(self, "_selective", 0) + 1
        if self._selective % 20 == 1:
            say(sent_to_one_seat_only=self._selective)

    def _splits(self, step: int, moves: bool) -> bool:
        wanted = "equivocate-split" in self.attacks and self._split_at is None
        return wanted and self._told and moves and self._own_turn()

    def _split(self, step: int, with_moves: bytes) -> None:
        """Version A (its moves) to the first other seat, B (none) to the rest; it plays A."""
        versions = [
            sign(self.identity, StepFrame(self.game_id, step, self.seat, payload)).frame
            for payload in (with_moves, self.lockstep.compose())
        ]
        self.gamefile.own(step, versions[0])
        self.inbox.setdefault(step, {})[self.seat] = versions[0]
        self._started(step)
        self._held_wire[encode(StepFrame(self.game_id, step, self.seat, *versions[0]))] = step
        others = [seat for seat in range(self.players) if seat != self.seat]
        for seat in others:
            version = versions[0] if seat == others[0] else versions[1]
            self.mesh.send(seat, StepFrame(self.game_id, step, self.seat, *version))
        self._split_at = step
        say(equivocated=step, version_a_to=others[0], version_b_to=others[1:])

    def _pass_on(self, frame: StepFrame) -> None:
        if self._split_at is None or frame.step <= self._split_at:
            super()._pass_on(frame)

    def _suspect_fork(self, fork: ForkedState) -> None:
        if self._split_at is None:
            super()._suspect_fork(fork)
            return
        say(fork_seen=fork.step, against=fork.seat)
        self.forks.suspect(fork)  # stalls here, offering no version round (`_offer_contested`)

    def _offer_contested(self, seats: Sequence[int]) -> None:
        if self._split_at is None:
            super()._offer_contested(seats)

    def submit(self, actions: Sequence[Action]) -> None:
        rules = self.view.rules
        own_turn = rules is not None and rules.active == self.seat and rules.phase is Phase.PLANT
        if "cycle-own-turn" in self.attacks and self.step >= DEALT and own_turn:
            if self._stalled_turn is None:
                self._stalled_turn = self.step
                say(stalled_turn=self.step, at=time.time())
            return  # its moves never come: it sends only what it owes (urgent steps)
        if not self._thinks():
            if not self._thinking:  # else its player asks again while it thinks: not yet
                super().submit(actions)
        elif not self.inbox.get(self.step) and not self.lockstep.urgent():
            self._thinking = True
            self._thought_at = self.step
            say(thinking=self.step)
            self.reactor.callLater(self.think, self._thought, list(actions))
        # else a step is under way: its player asks again once it is played

    def _thinks(self) -> bool:
        """Told to, at its first own turn's planting since."""
        if "think" not in self.attacks or not self._told or self._thought_at is not None:
            return False
        rules = self.lockstep.rules
        return rules is not None and rules.active == self.seat and rules.phase is Phase.PLANT

    def _thought(self, actions: list[Action]) -> None:
        self._thinking = False
        say(moved=self.step)
        try:
            super().submit(actions)
        except RuleError:
            self.player.may_act(self)

    def _withholds(self, step: int) -> bool:
        if self._withholding is not None:
            return step == self._withholding
        started = bool(self.inbox.get(step)) or self.lockstep.urgent()
        if "cycle" in self.attacks:
            return step >= DEALT and started and self.view.rules is not None
        withholds = {"withhold-at", "withhold-idle"} & self.attacks
        return bool(withholds) and step >= self.at and self.lockstep.urgent()

    def _answer(self, seat: int) -> None:
        self._feeding_now = self._feeding and seat == self.victim
        try:
            super()._answer(seat)
        finally:
            self._feeding_now = False

    def _other_version(self, step: int, frame: tuple[bytes, bytes]) -> tuple[bytes, bytes]:
        """Its own message of `step` signed again, its body encoded in another order."""
        wire = StepBody.decode(frame[0]).to_wire()
        payload = msgpack.packb(dict(reversed(list(wire.items()))), use_bin_type=True)
        if step not in self._fed:
            self._fed.add(step)
            say(fed_other_version=step)
        return sign(self.identity, StepFrame(self.game_id, step, self.seat, payload)).frame

    def _frames_held(self, step: int) -> dict[int, tuple[bytes, bytes]]:
        split = self._split_at
        if split is not None and step > split:
            return {}  # relays nothing of the steps after its two versions
        held = super()._frames_held(step)
        if self._feeding_now and step < self.step and self.seat in held:
            held[self.seat] = self._other_version(step, held[self.seat])
        selective = "selective" in self.attacks and step >= DEALT
        if step in (self._withholding, split) or selective:
            held.pop(self.seat, None)
        return held

    def _cycle_links(self) -> None:
        up, down = self.cycle
        now = self.reactor.seconds()
        phase = (now - getattr(self, "_cycle_from", now)) % (up + down)
        if not hasattr(self, "_cycle_from"):
            self._cycle_from = now
        if phase >= up and now >= self._down_until:
            self._down_until = now + (up + down - phase)
            for seat in list(self.mesh.connected):
                self.mesh.drop(seat, "hostile: cycling its links")
            say(links_down=now)

    def link_up(self, seat: int) -> None:
        if self.reactor.seconds() < self._down_until:
            self.mesh.drop(seat, "hostile: not yet")
            return
        if seat == self.victim:
            say(victim_link="up")
        super().link_up(seat)
        if "reconnect-walk" in self.attacks and seat == self.victim and self.outcome is None:
            self._walk(seat)

    def _reconnect(self) -> None:
        """Drop the link to the victim (the mesh dials it again, or the victim does)."""
        if self.victim in self.mesh.connected and self.outcome is None:
            self.mesh.drop(self.victim, "hostile: reconnecting")

    def _walk(self, seat: int) -> None:
        """Ask the victim about every step played so far, as if this seat held none of it,
        then say where it really is."""
        for step in range(self.step + 1):
            self.mesh.send(seat, Holding(self.game_id, step, self.seat, 0))
        self.mesh.send(seat, self._holding())
        self._walks = getattr(self, "_walks", 0) + 1
        if self._walks % 10 == 0:
            say(walks=self._walks, steps=self.step)

    def link_down(self, seat: int, reason: str, loss: Any) -> None:
        if seat == self.victim:
            say(victim_link="down", why=reason)
            self._feeding = "feed-other-version" in self.attacks and self.step > DEALT
        super().link_down(seat, reason, loss)

    def _spoil_the_shuffle(self) -> None:
        deck = self.lockstep.deck
        honest = deck._shuffle

        def shuffle(state: Any, round_: int) -> Any:
            made = honest(state, round_)
            points = list(made.deck)
            for position in range(0, len(points), 4):
                points[position] = RISTRETTO255.hash_to_point(
                    hashlib.sha512(secrets.token_bytes(32)).digest()
                )
            say(spoiled_shuffle=state.epoch)
            return type(made)(tuple(points), made.public_key)

        deck._shuffle = shuffle  # type: ignore[method-assign]


def main() -> None:
    from client.cli import build_parser, run_bot
    from client.runtime import run

    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("attacks")
    parser.add_argument("--victim", default="")
    parser.add_argument("--record", type=Path)
    parser.add_argument("--replay", type=Path)
    parser.add_argument("--cycle", default="2,3")
    parser.add_argument("--at", type=int, default=0)
    parser.add_argument("--votes", choices=("none", "own", "forged"), default="none")
    parser.add_argument("--think", type=float, default=2.0)
    parser.add_argument("--slow", type=float, default=0.0)
    ours, rest = parser.parse_known_args()
    attacks = frozenset(ours.attacks.split(","))
    if not attacks <= set(ATTACKS):
        sys.exit(f"unknown attacks: {sorted(attacks - set(ATTACKS))}; known: {ATTACKS}")
    up, down = (float(part) for part in ours.cycle.split(","))
    game_class = type(
        "Hostile",
        (HostileGame,),
        {
            "attacks": attacks,
            "victim_name": ours.victim,
            "record_file": ours.record,
            "replay_file": ours.replay,
            "cycle": (up, down),
            "at": ours.at,
            "votes": ours.votes,
            "think": ours.think,
            "slow": ours.slow,
        },
    )
    args = build_parser().parse_args(["bot", *rest])
    run(lambda reactor: run_bot(reactor, args, game_class))


if __name__ == "__main__":
    main()
