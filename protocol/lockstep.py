"""The game as every peer plays it: numbered steps carrying actions, deck messages and keys.

Each seat runs one `Lockstep`. In every step each seat sends exactly one message (`compose`),
made against the shared state of the step's start; when all are in, every seat applies them
(`play`) in the same order, through the shared deck and the rules, and arrives at the same
shared state, whose hash chains from step to step. What a seat alone knows (its seed, its
hand) stays in its own object.

What a step carries is fixed by the shared state, so every seat can tell what each seat owes:

- steps 0 and 1: a commitment to a start coin, then the coin (the start player comes from all
  coins); epoch 0 of the deck is dealt meanwhile, one deck round per step;
- while a deck epoch is being dealt: each seat's message for the round (protocol.deck);
- keys: for every hidden card drawn to another seat's hand, each seat's key to that seat; for
  the face-up cards being turned, each seat's key to all; for a hand card a seat opens by its
  actions (planting, offering, giving), that seat's own key, in the same message;
- at the end: the final state hash and the seed, then the audit.

A seat whose message breaks this, whose keys do not open what it claims, or whose own actions
the rules forbid is a cheat: `play` raises `Cheat` naming it. The actions of a step are applied
by protocol.steps, where a rule of the game (never a seat number, never the order of arrival)
decides between moves that meet; the few it refuses are refused alike everywhere
(`StepReport`).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

from protocol.blame import Cheat, state_verdict
from protocol.cards import Card, setup_for
from protocol.deck import (
    AuditError,
    DeckConfig,
    DeckError,
    DeckMessage,
    DeckPlayer,
    EpochMessage,
    Keys,
    Opening,
    SeedReveal,
    audit,
    decode_message,
    epoch_rounds,
)
from protocol.kdf import derive
from protocol.messages import GameStart, MessageError
from protocol.peer_messages import StepBody
from protocol.rules import (
    Action,
    Options,
    Phase,
    Result,
    RevealFaceUp,
    RuleError,
    ShowHandCards,
    SingletonRule,
    Slot,
    State,
    apply,
    new_game,
    state_hash,
)
from protocol.steps import (
    Applied,
    ForbiddenAction,
    Refusal,
    apply_step,
    check_own_actions,
)

LOCKSTEP_VERSION = 3  # 2: the shuffle argument, proofs on or off; 3: the argument comes later


@dataclass(frozen=True)
class GameConfig:
    game_id: bytes  # the game's identity (protocol.table), never the lobby's own id
    players: int
    options: Options
    proofs: bool  # False: the shuffle and relock proofs are off
    turn_seconds: int = 0

    @classmethod
    def from_roster(cls, roster: GameStart, identity: bytes) -> GameConfig:
        """The game of a roster the table agreed on, under the identity it derived (which
        binds the whole roster and every seat's contribution)."""
        return cls(
            identity,
            len(roster.seats),
            Options(SingletonRule(roster.options.singleton_rule)),
            roster.options.proofs,
            roster.options.turn_seconds,
        )

    @property
    def deck(self) -> DeckConfig:
        return DeckConfig(self.game_id, self.players, self.proofs)


@dataclass(frozen=True)
class Final:
    """How the game ended, as this seat sees it."""

    result: Result
    agreed: bool  # every seat reported the same final state
    audit_findings: tuple[str, ...]  # empty: the audit passed
    disagreeing: tuple[int, ...] = ()  # seats whose signed final report is not this state

    @property
    def audit_passed(self) -> bool:
        return not self.audit_findings


@dataclass
class StepReport:
    """What one step did, for the screen and the log."""

    step: int
    actions: dict[int, list[Action]] = field(default_factory=dict)
    applied: list[Applied] = field(default_factory=list)  # in order, the table's own included
    refusals: list[Refusal] = field(default_factory=list)
    start_player: int | None = None  # the step that chose it
    dealt: bool = False  # the step after which every seat knows its hand
    face_up: tuple[Card, ...] = ()  # cards turned in this step
    final: Final | None = None


def start_coin(seed: bytes, game_id: bytes) -> bytes:
    return derive(seed, "start coin", game_id)


def start_commitment(game_id: bytes, seat: int, coin: bytes) -> bytes:
    return hashlib.sha256(b"bohnanza-p2p start coin\x00" + game_id + bytes([seat]) + coin).digest()


def _genesis(config: GameConfig) -> bytes:
    """The chain's first link: the game's identity (the whole roster, every contribution)
    and, again in the clear, every option the rules and the deck run by."""
    fields = [
        b"bohnanza-p2p lockstep",
        bytes([LOCKSTEP_VERSION, config.players]),
        config.game_id,
        config.options.singleton_rule.value.encode(),
        bytes([config.proofs]),
        config.turn_seconds.to_bytes(4, "big"),
    ]
    return hashlib.sha256(b"".join(len(f).to_bytes(2, "big") + f for f in fields)).digest()


class Lockstep:
    """One seat's side of the game: what it sends, how it applies everyone's messages."""

    def __init__(
        self, config: GameConfig, seat: int, seed: bytes, executor: Executor | None = None
    ) -> None:
        self.config = config
        self.seat = seat
        self._seed = seed
        self.deck = DeckPlayer(config.deck, seat, seed, executor=executor)
        self.step = 0
        self.chain = _genesis(config)
        self.inputs: tuple[bytes, ...] = ()  # the SHA-256 of each message of the step before
        self.rules: State | None = None
        self.final: Final | None = None
        self.seeds: dict[int, bytes | None] = {}  # revealed at the end, for anyone's audit
        self.transcript: list[tuple[int, DeckMessage]] = []
        self._known: dict[Slot, Card] = {}  # this seat's hand cards, as only it knows them
        self._keyed: list[set[tuple[int, int]]] = [set() for _ in range(config.players)]
        self._commits: dict[int, bytes] = {}
        self._coins: dict[int, bytes] = {}
        self._rounds = epoch_rounds(config.players)
        self._dealing: tuple[int, int] | None = None  # (epoch, next round) while dealing
        self._dealt: set[int] = set()
        self._begun = 0
        self._begin_epoch(0, setup_for(config.players).deck)

    def __repr__(self) -> str:
        return f"Lockstep(seat={self.seat}, step={self.step})"

    # --- What this seat knows -----------------------------------------------------------------

    @property
    def hand(self) -> dict[Slot, Card]:
        """This seat's hand cards that it knows (opened to it, or to everyone), by slot."""
        if self.rules is None:
            return {}
        known: dict[Slot, Card] = {}
        for held in self.rules.players[self.seat].hand:
            card = held.card if held.card is not None else self._known.get(held.slot)
            if card is not None:
                known[held.slot] = card
        return known

    @property
    def over(self) -> bool:
        return self.final is not None

    @property
    def dealing(self) -> tuple[int, int, int] | None:
        """(epoch, round, rounds) while the deck of an epoch is being shuffled and locked."""
        if self._dealing is None:
            return None
        return (*self._dealing, self._rounds)

    def urgent(self) -> bool:
        """Whether the current step must be played now: some seat owes something in it (deck
        work, keys, the start coin, the final report). Otherwise a step waits for someone to
        act."""
        if self.final is not None:
            return False
        if self.step < 2 or self._dealing is not None:
            return True
        if self.rules is not None and self.rules.phase is Phase.OVER:
            return True
        return any(self._owed_openings(seat) for seat in range(self.config.players))

    # --- Composing this seat's message --------------------------------------------------------

    def compose(self, actions: Sequence[Action] = ()) -> bytes:
        """This seat's message for the current step, with everything it owes; RuleError if the
        actions may not be taken now (nothing is sent then)."""
        if self.final is not None:
            raise RuleError("the game is over")
        opened: list[tuple[Slot, Card]] = []  # the hand cards the actions open, to all
        if actions:
            if self.rules is None:
                raise RuleError("the cards are still being dealt")
            try:
                opened = check_own_actions(self.rules, self.seat, actions)
            except ForbiddenAction as refused:
                raise RuleError(refused.reason) from None
            unknown = [s for s, _ in opened if s not in self._known]
            if unknown:
                raise RuleError("that card is not open to you yet; wait for the deal")
        deck: list[DeckMessage] = []
        if self._dealing is not None:
            epoch_message = self.deck.epoch_message(self._dealing[1])
            if epoch_message is not None:
                deck.append(epoch_message)
        openings = sorted(
            self._owed_openings(self.seat) | _openings([slot for slot, _ in opened], None),
            key=_order,
        )
        deck += [self.deck.keys_for(o.epoch, o.slots, o.to, check_routes=False) for o in openings]
        over = self.rules is not None and self.rules.phase is Phase.OVER
        if over:
            deck.append(self.deck.reveal_seed())
        coin = start_coin(self._seed, self.config.game_id)
        body = StepBody(
            game=self.config.game_id,
            step=self.step,
            seat=self.seat,
            state=self.chain,
            inputs=self.inputs,
            actions=tuple(actions),
            deck=tuple(message.to_wire() for message in deck),
            start_commit=start_commitment(self.config.game_id, self.seat, coin)
            if self.step == 0
            else None,
            start_coin=coin if self.step == 1 else None,
            final=state_hash(self.rules) if over and self.rules is not None else None,
        )
        return body.encode()

    # --- Playing a step -----------------------------------------------------------------------

    def play(self, payloads: Mapping[int, bytes]) -> StepReport:
        """Apply every seat's message for the current step (signatures already checked).
        Raises Cheat naming the first seat that broke the protocol; the state is then
        unusable for play, but the transcript so far stays for the evidence."""
        seats = range(self.config.players)
        if sorted(payloads) != list(seats):
            raise ValueError("play needs one message from every seat")
        bodies = {seat: self._read(seat, payloads[seat]) for seat in seats}
        report = StepReport(self.step)
        over = self.rules is not None and self.rules.phase is Phase.OVER
        owed = {seat: self._owed_openings(seat) for seat in seats}
        deck = {seat: self._deck_messages(seat, bodies[seat], over) for seat in seats}
        self._start(bodies, report)
        self._epoch_round(deck)
        opened = {seat: self._check_plays(seat, list(bodies[seat].actions)) for seat in seats}
        self._keys(deck, owed, opened)
        self._apply_actions(bodies, opened, report)
        self._turn_face_up(report)
        self._open_own_hand(report)
        if over:
            self._finish(bodies, deck, report)
        self._next_epoch()
        self._advance(payloads)
        return report

    def _read(self, seat: int, payload: bytes) -> StepBody:
        try:
            body = StepBody.decode(payload)
        except MessageError as error:
            raise Cheat(seat, self.step, f"sent a malformed step message: {error}") from None
        if body.game != self.config.game_id or body.seat != seat or body.step != self.step:
            raise Cheat(seat, self.step, "sent a message for another game, seat or step")
        self._check_state(seat, body)
        return body

    def _check_state(self, seat: int, body: StepBody) -> None:
        """The message's `state` against this seat's chain (protocol.blame.state_verdict)."""
        verdict = state_verdict(seat, self.step, body.state, body.inputs, self.chain, self.inputs)
        if verdict is not None:
            raise verdict

    def _deck_messages(self, seat: int, body: StepBody, over: bool) -> list[DeckMessage]:
        """The deck messages of a step: epoch rounds and keys; the seed only at the end."""
        if (body.final is not None) != over:
            raise Cheat(seat, self.step, "sent or withheld its final report out of turn")
        messages: list[DeckMessage] = []
        for wire in body.deck:
            try:
                message = decode_message(wire, seat)
            except DeckError as error:
                reason = f"sent a malformed deck message: {error.reason}"
                raise Cheat(seat, self.step, reason) from None
            allowed = (EpochMessage, Keys, SeedReveal) if over else (EpochMessage, Keys)
            if not isinstance(message, allowed):
                raise Cheat(seat, self.step, f"sent a {type(message).__name__} message here")
            messages.append(message)
        return messages

    def _start(self, bodies: Mapping[int, StepBody], report: StepReport) -> None:
        """Steps 0 and 1: the start coins, committed then revealed; then the deal."""
        for seat, body in bodies.items():
            expected = (self.step == 0, self.step == 1)
            if (body.start_commit is not None, body.start_coin is not None) != expected:
                raise Cheat(seat, self.step, "sent or withheld a start coin out of turn")
            if body.start_commit is not None:
                self._commits[seat] = body.start_commit
            if body.start_coin is not None:
                commitment = start_commitment(self.config.game_id, seat, body.start_coin)
                if not hmac.compare_digest(commitment, self._commits[seat]):
                    raise Cheat(seat, self.step, "revealed a start coin it had not committed to")
                self._coins[seat] = body.start_coin
        if self.step == 1:
            joined = b"".join(self._coins[seat] for seat in sorted(self._coins))
            digest = hashlib.sha256(b"bohnanza-p2p start player\x00" + joined).digest()
            start = int.from_bytes(digest, "big") % self.config.players
            self.rules = new_game(self.config.players, start, self.config.options)
            report.start_player = start

    def _epoch_round(self, deck: Mapping[int, list[DeckMessage]]) -> None:
        messages: dict[int, EpochMessage | None] = {}
        for seat, received in deck.items():
            epochs = [m for m in received if isinstance(m, EpochMessage)]
            if len(epochs) > 1 or (epochs and self._dealing is None):
                raise Cheat(seat, self.step, "sent a deck round that is not due")
            messages[seat] = epochs[0] if epochs else None
        if self._dealing is None:
            return
        epoch, round_ = self._dealing
        try:
            self.deck.receive_round(round_, messages)
        except DeckError as error:
            raise Cheat(error.blame, self.step, error.reason) from None
        self.transcript += [(seat, m) for seat, m in sorted(messages.items()) if m is not None]
        self._dealing = (epoch, round_ + 1) if round_ + 1 < self._rounds else None
        if self._dealing is None:
            self._dealt.add(epoch)

    def _check_plays(self, seat: int, actions: list[Action]) -> list[tuple[Slot, Card]]:
        """The hand cards the seat's actions open (with the cards it claims), after checking
        that the rules allow its actions and that it could know those cards."""
        if not actions:
            return []
        if self.rules is None:
            raise Cheat(seat, self.step, "acted before the cards were dealt")
        try:
            opened = check_own_actions(self.rules, seat, actions)
        except ForbiddenAction as refused:
            raise Cheat(seat, self.step, str(refused)) from None
        others = [s for s in range(self.config.players) if s != seat]
        for slot, _ in opened:
            if not all((slot.epoch, slot.position) in self._keyed[s] for s in others):
                raise Cheat(seat, self.step, f"played hand card {slot} before it could see it")
        return opened

    def _owed_openings(self, seat: int) -> set[Opening]:
        """Keys the seat owes now: to other seats for cards they drew, to all for face-up
        cards being turned; only for epochs already dealt, each key once."""
        rules = self.rules
        if rules is None or rules.phase is Phase.OVER:
            return set()
        keyed = self._keyed[seat]
        owed: set[Opening] = set()
        for holder, player in enumerate(rules.players):
            if holder != seat:
                drawn = [h.slot for h in player.hand if h.card is None]
                owed |= _openings(self._unkeyed(drawn, keyed), holder)
        if rules.phase is Phase.REVEAL:
            owed |= _openings(self._unkeyed(list(rules.reveal_slots), keyed), None)
        return owed

    def _unkeyed(self, slots: list[Slot], keyed: set[tuple[int, int]]) -> list[Slot]:
        return [s for s in slots if s.epoch in self._dealt and (s.epoch, s.position) not in keyed]

    def _keys(
        self,
        deck: Mapping[int, list[DeckMessage]],
        owed: Mapping[int, set[Opening]],
        opened: Mapping[int, list[tuple[Slot, Card]]],
    ) -> None:
        """Every seat sent exactly the keys it owes; they are checked in slot order (the deck
        opens fresh slots from the top of the pile) and must open what was claimed."""
        received: list[tuple[int, Keys]] = []
        for seat, messages in deck.items():
            sent_keys = [m for m in messages if isinstance(m, Keys)]
            sent = [Opening(k.epoch, k.slots, k.to) for k in sent_keys]
            due = owed[seat] | _openings([slot for slot, _ in opened[seat]], None)
            if len(set(sent)) != len(sent) or set(sent) != due:
                missing = sorted(due - set(sent), key=_order)
                if missing:
                    raise Cheat(seat, self.step, f"withheld its keys for {missing[0]}")
                raise Cheat(seat, self.step, "sent keys the game did not ask for")
            received += [(seat, k) for k in sent_keys]
        received.sort(key=lambda sk: (sk[1].epoch, sk[1].slots[0], sk[0]))
        for seat, message in received:
            opening = Opening(message.epoch, message.slots, message.to)
            try:
                self.deck.receive_keys(seat, message, opening)
            except DeckError as error:
                raise Cheat(error.blame, self.step, error.reason) from None
            self._keyed[seat].update((message.epoch, slot) for slot in message.slots)
            self.transcript.append((seat, message))
        for seat, cards in opened.items():
            for slot, claimed in cards:
                actual = self._open_public(slot)
                if actual != claimed:
                    raise Cheat(
                        seat,
                        self.step,
                        f"claimed card {claimed} for hand card {slot}, "
                        f"but it is card {actual}: it played a card it does not hold",
                    )

    def _open_public(self, slot: Slot) -> Card:
        try:
            return self.deck.open_public(slot.epoch, slot.position)
        except DeckError as error:
            raise Cheat(error.blame, self.step, error.reason) from None

    def _apply_actions(
        self,
        bodies: Mapping[int, StepBody],
        opened: Mapping[int, list[tuple[Slot, Card]]],
        report: StepReport,
    ) -> None:
        actions = {seat: list(body.actions) for seat, body in bodies.items() if body.actions}
        if not actions:
            return
        assert self.rules is not None
        rules = self.rules
        for seat, cards in sorted(opened.items()):
            if cards:
                shown = ShowHandCards(seat, tuple(cards))
                after = apply(rules, None, shown)
                report.applied.append(Applied(None, shown, rules, after))
                rules = after
        # Each seat's actions were checked alone (_check_plays); showing the cards they open
        # makes none of them illegal.
        self.rules, report.refusals, applied = apply_step(rules, actions, checked=True)
        report.applied += applied
        report.actions = actions

    def _turn_face_up(self, report: StepReport) -> None:
        rules = self.rules
        if rules is None or rules.phase is not Phase.REVEAL:
            return
        everyone = range(self.config.players)
        slots = rules.reveal_slots
        if all((s.epoch, s.position) in self._keyed[seat] for s in slots for seat in everyone):
            report.face_up = tuple(self._open_public(slot) for slot in slots)
            turn = RevealFaceUp(report.face_up)
            self.rules = apply(rules, None, turn)
            report.applied.append(Applied(None, turn, rules, self.rules))

    def _open_own_hand(self, report: StepReport) -> None:
        if self.rules is None:
            return
        others = [s for s in range(self.config.players) if s != self.seat]
        for held in self.rules.players[self.seat].hand:
            slot = held.slot
            hidden_from_me = held.card is None and slot not in self._known
            if hidden_from_me and all(
                (slot.epoch, slot.position) in self._keyed[s] for s in others
            ):
                try:
                    self._known[slot] = self.deck.open_private(slot.epoch, slot.position)
                except DeckError as error:
                    raise Cheat(error.blame, self.step, error.reason) from None
                report.dealt = report.dealt or slot.epoch == 0

    def _finish(
        self,
        bodies: Mapping[int, StepBody],
        deck: Mapping[int, list[DeckMessage]],
        report: StepReport,
    ) -> None:
        """The step after the end: every seat reports its final state and reveals its seed
        (one that withholds its seed is blamed by the audit, which still judges the rest)."""
        assert self.rules is not None and self.rules.result is not None
        mine = state_hash(self.rules)
        disagreeing = tuple(
            seat
            for seat, body in sorted(bodies.items())
            if body.final is None or not hmac.compare_digest(body.final, mine)
        )
        seeds = {
            seat: next((m.seed for m in messages if isinstance(m, SeedReveal)), None)
            for seat, messages in deck.items()
        }
        self.seeds = seeds
        self.final = Final(self.rules.result, not disagreeing, self._audit(seeds), disagreeing)
        report.final = self.final

    def audit_unfinished(
        self, seeds: Mapping[int, bytes | None], excused: Sequence[int] = ()
    ) -> tuple[str, ...]:
        """The audit of a game ended early: the deck as far as it was played. A seat that owed
        its seed and has none is a finding against it; `excused` seats (voted out) owed none."""
        self.seeds = dict(seeds)
        return self._audit(seeds, excused)

    def _audit(
        self, seeds: Mapping[int, bytes | None], excused: Sequence[int] = ()
    ) -> tuple[str, ...]:
        # Before the start player is chosen there is only the deal's deck.
        deal = (setup_for(self.config.players).deck,)
        epochs = self.rules.epochs if self.rules is not None else deal
        findings: list[str] = []
        try:
            # Every message of this transcript passed this seat's own live checks on receipt.
            audit(
                self.config.deck,
                epochs,
                self.transcript,
                seeds,
                excused=excused,
                checked_live=True,
            )
        except AuditError as error:
            findings += [f"seat {e.blame}: {e.reason} ({e.step})" for e in error.findings]
        for seat, seed in seeds.items():
            coin = self._coins.get(seat)
            derived = None if seed is None else start_coin(seed, self.config.game_id)
            if coin is not None and derived is not None and not hmac.compare_digest(coin, derived):
                findings.append(f"seat {seat}: its start coin does not come from its seed")
        return tuple(findings)

    def _begin_epoch(self, epoch: int, cards: Sequence[Card]) -> None:
        self.deck.begin_epoch(epoch, cards)
        self._begun = epoch + 1
        self._dealing = (epoch, 0)

    def _next_epoch(self) -> None:
        """Deal the next epoch the rules reshuffled, once the previous one is dealt (an empty
        discard pile makes an empty deck, which ends the game and needs no dealing)."""
        rules = self.rules
        if rules is None or self._dealing is not None or rules.phase is Phase.OVER:
            return
        if self._begun < len(rules.epochs) and rules.epochs[self._begun]:
            self._begin_epoch(self._begun, rules.epochs[self._begun])

    def _advance(self, payloads: Mapping[int, bytes]) -> None:
        digest = hashlib.sha256()
        digest.update(self.chain)
        digest.update(self.step.to_bytes(8, "big"))
        self.inputs = tuple(hashlib.sha256(payloads[seat]).digest() for seat in sorted(payloads))
        for each in self.inputs:
            digest.update(each)
        digest.update(state_hash(self.rules) if self.rules is not None else bytes(32))
        self.chain = digest.digest()
        self.step += 1


def _openings(slots: Sequence[Slot], to: int | None) -> set[Opening]:
    by_epoch: dict[int, list[int]] = {}
    for slot in slots:
        by_epoch.setdefault(slot.epoch, []).append(slot.position)
    return {Opening(epoch, tuple(sorted(set(p))), to) for epoch, p in by_epoch.items()}


def _order(opening: Opening) -> tuple[int, int]:
    return opening.epoch, opening.slots[0]
