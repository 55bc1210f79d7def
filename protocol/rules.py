"""The whole game of Bohnanza (Rio Grande, 3 to 7 players) as a pure state machine.

`apply(state, seat, action)` returns the next state or raises `RuleError` with a sentence a
player can read; the state is never changed in place. Every peer, bot, replay and test runs this
module, so it is the single source of the rules (../shared/RULES.md, project decisions first).

Hidden cards: hands and the deck hold card *slots*, `Slot(epoch, position)`, a place in the
deck of one shuffle epoch. The shared state learns a slot's card only when an action opens it:
planting from the hand, offering or giving a hand card, or turning the face-up cards. An action
that opens a hand card carries the card id its player claims; the shared deck (protocol.deck)
proves the claim. What a player alone knows (its own hand) stays outside the shared state and
is passed to `legal_actions` as `hand`.

The engine never picks a card or a field on a player's behalf. Transitions that need nobody's
decision (the end of step 1 after a second planting, the end of step 3, the step-4 draw, the next
turn, the final scoring) happen inside `apply`; in a lockstep step the table's draws wait until
every move of the step is in (`hold_draws`, `DrawForTable`: protocol.steps).

Trading (docs/trading.md): an offer to one player is traded when that player accepts; an offer
to everyone gathers bids (`Bid`) and its maker takes one (`Take`) or none. Cards in open offers
and standing bids are promised to them (`promised`) and go into no other deal.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import combinations
from typing import Any, NamedTuple, Protocol, overload

import msgpack

from protocol.cards import Bean, Card, Setup, bean_of, coins, setup_for


class RuleError(Exception):
    """An action the rules do not allow now; the message says which rule and what is legal."""


class SingletonRule(StrEnum):
    """When may a field holding a single bean be harvested (RULES.md section 5)?"""

    # Not while the same player has a field of two or more; next to an empty field, yes.
    PROTECT_IF_ANY_FIELD_HAS_2PLUS = "protect_if_any_field_has_2plus"
    # Only when every one of the player's fields holds exactly one card.
    RIO_GRANDE_LITERAL = "rio_grande_literal"


@dataclass(frozen=True)
class Options:
    singleton_rule: SingletonRule = SingletonRule.PROTECT_IF_ANY_FIELD_HAS_2PLUS


class Phase(StrEnum):
    PLANT = "plant"  # step 1: the active player plants from the front of its hand
    REVEAL = "reveal"  # step 2 begins: the face-up cards are being opened to everyone
    TRADE = "trade"  # step 2: trading and gifts
    PLANT_PENDING = "plant-pending"  # step 3: everyone plants the cards it received or kept
    OVER = "over"


class Slot(NamedTuple):
    """A position in the shuffled deck of one epoch (0: the deal; n: the n-th reshuffle)."""

    epoch: int
    position: int


@dataclass(frozen=True)
class HandCard:
    slot: Slot
    card: Card | None = None  # None while only its holder knows it


@dataclass(frozen=True)
class Player:
    hand: tuple[HandCard, ...]  # front first; the order never changes but by removal or draw
    fields: tuple[tuple[Card, ...], ...]  # 2 or 3 fields, each in planting order
    earnings: tuple[Card, ...]  # coin cards, the most recently earned last
    # Received or kept in step 2, to be planted in step 3 in any order the player likes; kept
    # in card order, so that no order of a step's trades shows in the state.
    pending: tuple[Card, ...] = ()


@dataclass(frozen=True)
class Offer:
    """A trade proposal; immutable, a change is a new offer. A gift wants nothing."""

    id: int
    maker: int
    to: int | None  # None: to every other player (only the active player may)
    give_hand: tuple[Slot, ...]  # the maker's hand cards, opened when the offer is made
    give_face_up: tuple[Card, ...]  # the active player's face-up cards
    want_cards: tuple[Card, ...]  # specific visible cards of the accepter
    want_beans: tuple[tuple[Bean, int], ...]  # bean types (with counts) from the accepter's hand

    @property
    def is_gift(self) -> bool:
        return not self.want_cards and not self.want_beans


@dataclass(frozen=True)
class Bid:
    """A binding answer to an offer made to everyone: what `bidder` gives if the maker takes
    it. Its hand cards (those meeting the wanted beans, and those wanted by name) were opened
    when it was made and are promised to it until it is taken, withdrawn or lapses."""

    offer: int
    bidder: int
    give_hand: tuple[Slot, ...]


@dataclass(frozen=True)
class Deck:
    epoch: int
    drawn: int
    size: int

    @property
    def remaining(self) -> int:
        return self.size - self.drawn


@dataclass(frozen=True)
class Result:
    scores: tuple[int, ...]
    hand_counts: tuple[int, ...]
    winners: tuple[int, ...]  # more than one: a shared win


@dataclass(frozen=True)
class State:
    setup: Setup
    options: Options
    start_player: int
    players: tuple[Player, ...]
    active: int
    turn: int
    phase: Phase
    planted: int  # cards planted in step 1 of this turn
    reveal_slots: tuple[Slot, ...]  # phase REVEAL: the slots being turned face up
    face_up: tuple[Card, ...]  # the active player's trading area
    offers: tuple[Offer, ...]
    bids: tuple[Bid, ...]  # on offers made to everyone, waiting for their makers to choose
    rejections: frozenset[tuple[int, int]]  # (offer id, seat) for offers made to everyone
    next_offer_id: int
    deck: Deck
    epochs: tuple[tuple[Card, ...], ...]  # the cards of each epoch's deck, ascending
    hidden: tuple[frozenset[Card], ...]  # per epoch: its cards not yet opened
    discard: tuple[Card, ...]
    exhaustions: int
    ends_after_step3: bool  # the final exhaustion happened while turning the face-up cards
    result: Result | None = None


# ---------------------------------------------------------------------------------------------
# Actions


@dataclass(frozen=True)
class Plant:
    """Step 1: plant the front card of the hand (claimed to be `card`) into a field."""

    field: int
    card: Card


@dataclass(frozen=True)
class EndPlanting:
    """Step 1: stop after the first planting."""


@dataclass(frozen=True)
class RevealFaceUp:
    """Not a player's choice: the face-up cards, opened jointly; applied with seat None."""

    cards: tuple[Card, ...]


@dataclass(frozen=True)
class ShowHandCards:
    """Not a player's choice: hand cards the shared deck has opened to everyone (a card its
    holder played, offered or gave), applied with seat None before the actions that opened
    them, so they stay known even if such an action is then refused."""

    seat: int
    cards: tuple[tuple[Slot, Card], ...]


@dataclass(frozen=True)
class DrawForTable:
    """Not a player's choice: the table's own move that a lockstep step's actions made due,
    applied with seat None after all of them (protocol.steps): turning the face-up cards once
    step 1 is over, or, once every traded card is planted, the step-4 draw and the next turn
    (or the end of the game). So a draw, and what a reshuffle takes from the discard pile,
    never depends on whose move of the step was applied first."""


@dataclass(frozen=True)
class Harvest:
    field: int


@dataclass(frozen=True)
class BuyField:
    pass


@dataclass(frozen=True)
class MakeOffer:
    to: int | None
    give_hand: tuple[tuple[Slot, Card], ...] = ()  # hand slots and the cards they hold
    give_face_up: tuple[Card, ...] = ()
    want_cards: tuple[Card, ...] = ()
    want_beans: tuple[tuple[Bean, int], ...] = ()


@dataclass(frozen=True)
class Accept:
    offer: int
    give_hand: tuple[tuple[Slot, Card], ...] = ()  # the hand cards that meet the wanted beans


@dataclass(frozen=True)
class Reject:
    """Turn down an offer made to you (to everyone: you will not bid on it)."""

    offer: int


@dataclass(frozen=True)
class Withdraw:
    """Take back your own offer (its bids lapse), or your bid on an offer made to everyone."""

    offer: int


@dataclass(frozen=True)
class Take:
    """The maker of an offer to everyone takes one bid on it: that trade happens, and the
    other bids lapse with the offer."""

    offer: int
    bidder: int


@dataclass(frozen=True)
class EndTrading:
    pass


@dataclass(frozen=True)
class PlantPending:
    card: Card
    field: int


Action = (
    Plant
    | EndPlanting
    | RevealFaceUp
    | ShowHandCards
    | DrawForTable
    | Harvest
    | BuyField
    | MakeOffer
    | Accept
    | Reject
    | Withdraw
    | Take
    | EndTrading
    | PlantPending
)

MAX_OPEN_OFFERS_PER_PLAYER = 16  # a bound against flooding the table; far above real play
MAX_BEANS_WANTED = 24  # no bean type has more cards


# ---------------------------------------------------------------------------------------------
# Set-up


def new_game(players: int, start_player: int, options: Options | None = None) -> State:
    """A new game: epoch 0 holds every card. Each hand is the next run of slots from the top,
    clockwise from the start player (6-7 players: 3/4/5/6...). The deck is uniformly shuffled,
    so this deals the same as one card at a time, and the shared deck opens slots in order."""
    setup = setup_for(players)
    if not 0 <= start_player < players:
        raise ValueError(f"the start player must be a seat from 0 to {players - 1}")
    deck_cards = setup.deck
    hands: dict[int, list[HandCard]] = {}
    dealt = 0
    for i, size in enumerate(setup.hand_sizes):
        hands[(start_player + i) % players] = [HandCard(Slot(0, dealt + n)) for n in range(size)]
        dealt += size
    return State(
        setup=setup,
        options=options or Options(),
        start_player=start_player,
        players=tuple(
            Player(tuple(hands[seat]), ((),) * setup.start_fields, ()) for seat in range(players)
        ),
        active=start_player,
        turn=1,
        phase=Phase.PLANT,
        planted=0,
        reveal_slots=(),
        face_up=(),
        offers=(),
        bids=(),
        rejections=frozenset(),
        next_offer_id=1,
        deck=Deck(0, dealt, len(deck_cards)),
        epochs=(deck_cards,),
        hidden=(frozenset(deck_cards),),
        discard=(),
        exhaustions=0,
        ends_after_step3=False,
    )


# ---------------------------------------------------------------------------------------------
# Applying actions: a mutable draft of the state, frozen again at the end. On RuleError the
# draft is dropped, so a refused action changes nothing.


@dataclass
class _PlayerDraft:
    hand: list[HandCard]
    fields: list[list[Card]]
    earnings: list[Card]
    pending: list[Card]

    @classmethod
    def of(cls, p: Player) -> _PlayerDraft:
        return cls(list(p.hand), [list(f) for f in p.fields], list(p.earnings), list(p.pending))

    def freeze(self) -> Player:
        return Player(
            tuple(self.hand),
            tuple(map(tuple, self.fields)),
            tuple(self.earnings),
            tuple(sorted(self.pending)),  # whoever's trade came first, one order
        )


class _Players(Sequence[Player | _PlayerDraft]):
    """A draft's players, read as they were until one is changed (`changing` copies it): an
    action changes one or two players, and copying them all made most of its cost."""

    def __init__(self, players: tuple[Player, ...]) -> None:
        self._players: list[Player | _PlayerDraft] = list(players)

    @overload
    def __getitem__(self, seat: int) -> Player | _PlayerDraft: ...
    @overload
    def __getitem__(self, seats: slice) -> Sequence[Player | _PlayerDraft]: ...
    def __getitem__(
        self, seat: int | slice
    ) -> Player | _PlayerDraft | Sequence[Player | _PlayerDraft]:
        return self._players[seat]

    def __len__(self) -> int:
        return len(self._players)

    def __iter__(self) -> Iterator[Player | _PlayerDraft]:
        return iter(self._players)

    def changing(self, seat: int) -> _PlayerDraft:
        player = self._players[seat]
        if isinstance(player, Player):
            player = self._players[seat] = _PlayerDraft.of(player)
        return player

    def freeze(self) -> tuple[Player, ...]:
        return tuple(p if isinstance(p, Player) else p.freeze() for p in self._players)


@dataclass
class _Draft:
    """A mutable copy of a State for the length of one `apply`."""

    setup: Setup
    options: Options
    start_player: int
    players: _Players
    active: int
    turn: int
    phase: Phase
    planted: int
    reveal_slots: tuple[Slot, ...]
    face_up: list[Card]
    offers: list[Offer]
    bids: list[Bid]
    rejections: set[tuple[int, int]]
    next_offer_id: int
    deck: Deck
    epochs: list[tuple[Card, ...]]
    hidden: list[frozenset[Card]]  # replaced, never changed in place: shared with the state
    discard: list[Card]
    exhaustions: int
    ends_after_step3: bool
    result: Result | None
    ending: bool = False  # a draw has just triggered the end of the game
    hold_draws: bool = False  # a lockstep step: the table's draws wait for DrawForTable

    @classmethod
    def of(cls, s: State) -> _Draft:
        return cls(
            setup=s.setup,
            options=s.options,
            start_player=s.start_player,
            players=_Players(s.players),
            active=s.active,
            turn=s.turn,
            phase=s.phase,
            planted=s.planted,
            reveal_slots=s.reveal_slots,
            face_up=list(s.face_up),
            offers=list(s.offers),
            bids=list(s.bids),
            rejections=set(s.rejections),
            next_offer_id=s.next_offer_id,
            deck=s.deck,
            epochs=list(s.epochs),
            hidden=list(s.hidden),
            discard=list(s.discard),
            exhaustions=s.exhaustions,
            ends_after_step3=s.ends_after_step3,
            result=s.result,
        )

    def freeze(self) -> State:
        return State(
            setup=self.setup,
            options=self.options,
            start_player=self.start_player,
            players=self.players.freeze(),
            active=self.active,
            turn=self.turn,
            phase=self.phase,
            planted=self.planted,
            reveal_slots=self.reveal_slots,
            face_up=tuple(self.face_up),
            offers=tuple(self.offers),
            bids=tuple(self.bids),
            rejections=frozenset(self.rejections),
            next_offer_id=self.next_offer_id,
            deck=self.deck,
            epochs=tuple(self.epochs),
            hidden=tuple(self.hidden),
            discard=tuple(self.discard),
            exhaustions=self.exhaustions,
            ends_after_step3=self.ends_after_step3,
            result=self.result,
        )


def apply(state: State, seat: int | None, action: Action, *, hold_draws: bool = False) -> State:
    """The state after `seat` does `action`, or RuleError. Seat None is the table itself, which
    turns the face-up cards, shows hand cards once the shared deck has opened them, and makes
    the draws held for it. With `hold_draws` (a lockstep step: protocol.steps), a draw the
    action makes due waits for `DrawForTable` (`draw_due` says when one waits)."""
    if state.phase is Phase.OVER:
        raise RuleError("the game is over")
    draft = _Draft.of(state)
    if seat is None:
        if isinstance(action, RevealFaceUp):
            _reveal_face_up(draft, action)
        elif isinstance(action, ShowHandCards):
            _show_hand_cards(draft, action)
        elif isinstance(action, DrawForTable):
            _draw_for_table(draft)
        else:
            raise RuleError("the table itself only turns face-up cards, shows hand cards and draws")
        return draft.freeze()
    draft.hold_draws = hold_draws
    if not 0 <= seat < len(state.players):
        raise RuleError(f"there is no seat {seat}")
    handler = _HANDLERS.get(type(action))
    if handler is None:
        raise RuleError(f"{type(action).__name__} is not something a player does")
    handler(draft, seat, action)
    return draft.freeze()


def _phase_text(phase: Phase) -> str:
    return {
        Phase.PLANT: "step 1 (planting from the hand)",
        Phase.REVEAL: "step 2 (turning the face-up cards)",
        Phase.TRADE: "step 2 (trading)",
        Phase.PLANT_PENDING: "step 3 (planting traded cards)",
        Phase.OVER: "the end",
    }[phase]


def _field_name(index: int) -> str:
    return f"field {index + 1}"


def _fits(fields: Sequence[Sequence[Card]], index: int, card: Card) -> bool:
    return not fields[index] or bean_of(fields[index][0]) == bean_of(card)


def _check_field(draft: _Draft, seat: int, index: int) -> Sequence[Card]:
    fields = draft.players[seat].fields
    if not 0 <= index < len(fields):
        raise RuleError(f"you have {len(fields)} fields; there is no {_field_name(index)}")
    return fields[index]


def _check_fits(draft: _Draft, seat: int, index: int, card: Card) -> None:
    target = _check_field(draft, seat, index)
    fields = draft.players[seat].fields
    if not _fits(fields, index, card):
        bean = bean_of(card)
        fitting = [_field_name(i) for i in range(len(fields)) if _fits(fields, i, card)]
        legal = f"; it fits {' or '.join(fitting)}" if fitting else "; harvest a field first"
        raise RuleError(
            f"{_field_name(index)} holds {bean_of(target[0])}; {bean} needs an empty field "
            f"or a {bean} field{legal}"
        )


def _claim(draft: _Draft, seat: int, slot: Slot, card: Card) -> HandCard:
    """Open a hand card: the slot must be in the seat's hand and the claimed card able to be
    there. Whether it really is there, the shared deck proves."""
    hand = draft.players[seat].hand
    index = next((i for i, held in enumerate(hand) if held.slot == slot), None)
    if index is None:
        raise RuleError(f"that card (slot {slot.epoch}:{slot.position}) is not in your hand")
    if hand[index].card is not None:
        if hand[index].card != card:
            raise RuleError(f"hand card {index + 1} is known to be another card")
        return hand[index]
    if not 0 <= slot.epoch < len(draft.hidden) or card not in draft.hidden[slot.epoch]:
        raise RuleError(f"card {card} cannot be hand card {index + 1}")
    draft.hidden[slot.epoch] = draft.hidden[slot.epoch] - {card}
    opened = draft.players.changing(seat).hand[index] = HandCard(slot, card)
    return opened


def _remove_from_hand(draft: _Draft, seat: int, slots: Iterable[Slot]) -> list[Card]:
    """Take opened cards out of a hand, keeping the order of the rest."""
    wanted = set(slots)
    hand = draft.players[seat].hand
    taken = [h.card for h in hand if h.slot in wanted and h.card is not None]
    kept = [h for h in hand if h.slot not in wanted]
    if len(kept) < len(hand):
        draft.players.changing(seat).hand = kept
    return taken


# --- Steps 1, 3 and 4, the deck and the end ----------------------------------------------------


def _plant(draft: _Draft, seat: int, action: Plant) -> None:
    if draft.phase is not Phase.PLANT:
        raise RuleError(
            f"planting from the hand is step 1; the game is at {_phase_text(draft.phase)}"
        )
    if seat != draft.active:
        raise RuleError("only the active player plants from the hand")
    if draft.planted >= 2:
        raise RuleError("at most two cards are planted from the hand in step 1")
    player = draft.players.changing(seat)
    front = player.hand[0]  # step 1 is skipped on an empty hand, so there is a front card
    _claim(draft, seat, front.slot, action.card)
    _check_fits(draft, seat, action.field, action.card)
    player.hand.pop(0)
    player.fields[action.field].append(action.card)
    draft.planted += 1
    if draft.planted == 2 or not player.hand:
        _begin_step2(draft)


def _end_planting(draft: _Draft, seat: int, action: EndPlanting) -> None:
    if draft.phase is not Phase.PLANT or seat != draft.active:
        raise RuleError("only the active player ends its planting, in step 1")
    if draft.planted == 0:
        raise RuleError("the front card of your hand must be planted first")
    _begin_step2(draft)


def _begin_step2(draft: _Draft) -> None:
    """Turn two cards face up; after the final exhaustion only those drawn (RULES.md section 7).
    Held for the table (`hold_draws`): the reveal begins with nothing drawn yet."""
    if draft.hold_draws:
        draft.phase, draft.reveal_slots = Phase.REVEAL, ()
        return
    slots = _draw(draft, 2)
    if draft.ending:
        draft.ends_after_step3 = True
    draft.reveal_slots = tuple(slots)
    draft.phase = Phase.REVEAL if slots else Phase.TRADE


def draw_due(state: State) -> bool:
    """Whether a draw of the table's was held for `DrawForTable` (see `apply`)."""
    return (state.phase is Phase.REVEAL and not state.reveal_slots) or (
        state.phase is Phase.PLANT_PENDING and not any(p.pending for p in state.players)
    )


def _draw_for_table(draft: _Draft) -> None:
    if draft.phase is Phase.REVEAL and not draft.reveal_slots:
        _begin_step2(draft)
    elif draft.phase is Phase.PLANT_PENDING and not any(p.pending for p in draft.players):
        _after_planting_pending(draft)
    else:
        raise RuleError("the table has no draw to make now")


def _reveal_face_up(draft: _Draft, action: RevealFaceUp) -> None:
    if draft.phase is not Phase.REVEAL:
        raise RuleError("no face-up cards are being turned now")
    slots = draft.reveal_slots
    if len(action.cards) != len(slots):
        raise RuleError(f"{len(slots)} face-up cards are being turned, not {len(action.cards)}")
    _distinct(action.cards, "face-up card")
    for slot, card in zip(slots, action.cards, strict=True):
        if card not in draft.hidden[slot.epoch]:
            raise RuleError(f"card {card} cannot be in the deck at {slot.epoch}:{slot.position}")
        draft.hidden[slot.epoch] = draft.hidden[slot.epoch] - {card}
    draft.face_up.extend(action.cards)
    draft.reveal_slots = ()
    draft.phase = Phase.TRADE


def _show_hand_cards(draft: _Draft, action: ShowHandCards) -> None:
    if not 0 <= action.seat < len(draft.players):
        raise RuleError(f"there is no seat {action.seat}")
    for slot, card in action.cards:
        _claim(draft, action.seat, slot, card)


def hand_cards_opened(state: State, seat: int, action: Action) -> list[tuple[Slot, Card]]:
    """The hidden hand cards this action opens, with the cards it claims they are: the front
    card it plants, or the hand cards it offers or gives."""
    player = state.players[seat]
    if isinstance(action, Plant):
        claimed = [(player.hand[0].slot, action.card)] if player.hand else []
    elif isinstance(action, MakeOffer | Accept):
        claimed = list(action.give_hand)
    else:
        return []
    hidden = {h.slot for h in player.hand if h.card is None}
    return [(slot, card) for slot, card in claimed if slot in hidden]


def _draw(draft: _Draft, count: int) -> list[Slot]:
    """Take up to `count` slots from the deck. The deck is exhausted when its last card is drawn:
    then the discard pile is reshuffled at once, or, at the final exhaustion, `draft.ending` is
    set and drawing stops; the caller decides what the end means in its step."""
    slots = []
    for _ in range(count):
        if draft.deck.remaining == 0:
            # Only after a reshuffle of an empty discard pile: end as if the final exhaustion
            # had come now (RULES.md section 7, last decision).
            draft.ending = True
            break
        slots.append(Slot(draft.deck.epoch, draft.deck.drawn))
        draft.deck = replace(draft.deck, drawn=draft.deck.drawn + 1)
        if draft.deck.remaining == 0:
            draft.exhaustions += 1
            if draft.exhaustions >= draft.setup.exhaustions_to_end:
                draft.ending = True
                break
            _reshuffle(draft)
    return slots


def _reshuffle(draft: _Draft) -> None:
    """The discard pile becomes the deck of a new epoch; its order is the shared deck's secret."""
    cards = tuple(sorted(draft.discard))
    draft.epochs.append(cards)
    draft.hidden.append(frozenset(cards))
    draft.discard.clear()
    draft.deck = Deck(len(draft.epochs) - 1, 0, len(cards))


def _plant_pending(draft: _Draft, seat: int, action: PlantPending) -> None:
    if draft.phase is not Phase.PLANT_PENDING:
        step = _phase_text(draft.phase)
        raise RuleError(f"traded and kept cards are planted in step 3; the game is at {step}")
    pending = draft.players.changing(seat).pending
    if action.card not in pending:
        raise RuleError(f"card {action.card} is not among your cards to plant")
    _check_fits(draft, seat, action.field, action.card)
    pending.remove(action.card)
    draft.players.changing(seat).fields[action.field].append(action.card)
    _after_planting_pending(draft)


def _after_planting_pending(draft: _Draft) -> None:
    """Once every pending card is planted: the end, or the step-4 draw and the next turn
    (held for the table with `hold_draws`: step 3 stays, with nothing left to plant)."""
    if any(p.pending for p in draft.players) or draft.hold_draws:
        return
    if draft.ends_after_step3:
        _finish(draft)
        return
    drawn = _draw(draft, draft.setup.draw_count)
    draft.players.changing(draft.active).hand.extend(HandCard(slot) for slot in drawn)
    if draft.ending:
        _finish(draft)  # the final exhaustion in step 4 ends the game at once
        return
    draft.active = (draft.active + 1) % len(draft.players)
    draft.turn += 1
    draft.planted = 0
    draft.phase = Phase.PLANT
    if not draft.players[draft.active].hand:
        _begin_step2(draft)  # step 1 is skipped on an empty hand


def _finish(draft: _Draft) -> None:
    """Final scoring: every field is sold (single beans too); hand cards score nothing; a tie
    goes to the most cards in hand, and is shared after that (RULES.md section 8)."""
    for seat, player in enumerate(draft.players):
        for index, cards in enumerate(player.fields):
            if cards:
                _sell(draft, seat, index)
    scores = tuple(len(p.earnings) for p in draft.players)
    hands = tuple(len(p.hand) for p in draft.players)
    best = max(zip(scores, hands, strict=True))
    winners = tuple(s for s in range(len(scores)) if (scores[s], hands[s]) == best)
    draft.result = Result(scores, hands, winners)
    draft.phase = Phase.OVER


# --- Harvests and the third field (any player, at any time) -----------------------------------


def _harvest_refusal(
    fields: Sequence[Sequence[Card]], index: int, rule: SingletonRule
) -> str | None:
    """Why this field may not be harvested now, or None (the one-bean rule, RULES.md section 5)."""
    target = fields[index]
    if not target:
        return f"{_field_name(index)} is empty"
    if len(target) >= 2:
        return None
    bean = bean_of(target[0])
    for i, other in enumerate(fields):
        if len(other) >= 2:
            return (
                f"{_field_name(index)} holds a single {bean}; a single bean may not be harvested "
                f"while {_field_name(i)} holds two or more (the one-bean rule)"
            )
    if rule is SingletonRule.RIO_GRANDE_LITERAL and any(not f for f in fields):
        return (
            f"{_field_name(index)} holds a single {bean}; under the literal Rio Grande rule a "
            "single bean is harvested only when every field holds exactly one card"
        )
    return None


def _harvest(draft: _Draft, seat: int, action: Harvest) -> None:
    _check_field(draft, seat, action.field)
    refusal = _harvest_refusal(
        draft.players[seat].fields, action.field, draft.options.singleton_rule
    )
    if refusal:
        raise RuleError(refusal)
    _sell(draft, seat, action.field)


def _sell(draft: _Draft, seat: int, index: int) -> None:
    """Sell the whole field: as many cards as the beanometer pays turn into coins on the
    earnings stack; the rest go face up onto the discard pile."""
    player = draft.players.changing(seat)
    cards = player.fields[index]
    paid = coins(bean_of(cards[0]), len(cards))
    draft.discard.extend(cards[: len(cards) - paid])
    player.earnings.extend(cards[len(cards) - paid :])
    player.fields[index] = []


def _buy_refusal(setup: Setup, fields: int, coins_held: int) -> str | None:
    if not setup.can_buy_field:
        return f"with {setup.players} players everyone has three fields; none is bought"
    if fields >= 3:
        return "you already have a third field; it can be bought only once"
    if coins_held < setup.field_cost:
        return f"a third field costs {setup.field_cost} coins; you have {coins_held}"
    return None


def _buy_field(draft: _Draft, seat: int, action: BuyField) -> None:
    player = draft.players.changing(seat)
    refusal = _buy_refusal(draft.setup, len(player.fields), len(player.earnings))
    if refusal:
        raise RuleError(refusal)
    cost = draft.setup.field_cost
    paid = player.earnings[-cost:]
    del player.earnings[-cost:]
    draft.discard.extend(reversed(paid))  # the top coin goes onto the discard pile first
    player.fields.append([])


# --- Trading (step 2) -------------------------------------------------------------------------
#
# A trade is always between the active player and one other player. An offer to one player
# is traded when that player accepts it; an offer to everyone gathers bids, and its maker takes
# one of them or none. The cards an open offer gives and the cards a standing bid gives are
# promised to it: a promised card goes into no other offer, bid or trade until that promise is
# withdrawn. So no two deals ever need the same card, which is what lets every seat's moves of
# a lockstep step stand side by side (protocol.steps: who moves first never matters).


class _Holder(Protocol):
    @property
    def hand(self) -> Sequence[HandCard]: ...


class _Table(Protocol):
    """What the trading checks read; both a State and a draft provide it."""

    @property
    def players(self) -> Sequence[_Holder]: ...
    @property
    def face_up(self) -> Sequence[Card]: ...
    @property
    def active(self) -> int: ...
    @property
    def offers(self) -> Sequence[Offer]: ...
    @property
    def bids(self) -> Sequence[Bid]: ...
    @property
    def rejections(self) -> AbstractSet[tuple[int, int]]: ...


def _visible_cards_of(table: _Table, seat: int) -> set[Card]:
    """Cards of this seat that everyone can see and that it may trade away."""
    cards = {h.card for h in table.players[seat].hand if h.card is not None}
    if seat == table.active:
        cards.update(table.face_up)
    return cards


def _promises(table: _Table, seat: int) -> dict[Slot | Card, str]:
    """What the seat has promised (hand cards by slot, face-up cards by card) and to what."""
    promised: dict[Slot | Card, str] = {}
    for offer in table.offers:
        if offer.maker == seat:
            for slot in offer.give_hand:
                promised[slot] = f"offer {offer.id}"
            for card in offer.give_face_up:
                promised[card] = f"offer {offer.id}"
    for bid in table.bids:
        if bid.bidder == seat:
            for slot in bid.give_hand:
                promised[slot] = f"bid on offer {bid.offer}"
    return promised


def _check_unpromised(table: _Table, seat: int, things: Iterable[Slot | Card]) -> None:
    promised = _promises(table, seat)
    positions = {h.slot: i for i, h in enumerate(table.players[seat].hand, 1)}
    for thing in things:
        where = promised.get(thing)
        if where is not None:
            what = (
                f"your hand card {positions[thing]}"
                if isinstance(thing, Slot)
                else f"card {thing} (face up)"
            )
            raise RuleError(
                f"{what} is promised in your {where}; withdraw that first "
                "(a withdrawal counts from the next step on)"
            )


def _bidders(table: _Table, offer: Offer) -> set[int]:
    return {b.bidder for b in table.bids if b.offer == offer.id}


def _accepters(table: _Table, offer: Offer, bidders: AbstractSet[int] | None = None) -> list[int]:
    """The seats that may accept the offer now (to everyone: bid on it, once each).
    `bidders`: the offer's bidders, when the caller knows them."""
    if offer.to is not None:
        candidates = [offer.to]
    else:
        bid = _bidders(table, offer) if bidders is None else bidders
        candidates = [s for s in range(len(table.players)) if s != offer.maker and s not in bid]
    unanswered = [s for s in candidates if (offer.id, s) not in table.rejections]
    if not offer.want_cards:
        return unanswered
    wanted = set(offer.want_cards)
    return [s for s in unanswered if wanted <= _visible_cards_of(table, s)]


class _OfferCheck:
    """Whether offers are still possible, reading the table once for all of them."""

    def __init__(self, table: _Table) -> None:
        self.table = table
        self.face_up = set(table.face_up)
        self.bidders: dict[int, set[int]] = {}
        for bid in table.bids:
            self.bidders.setdefault(bid.offer, set()).add(bid.bidder)
        self.hand_slots: dict[int, set[Slot]] = {}

    def possible(self, offer: Offer) -> bool:
        """The offer's cards are still there, and a bid stands or somebody may answer."""
        slots = self.hand_slots.get(offer.maker)
        if slots is None:
            slots = {h.slot for h in self.table.players[offer.maker].hand}
            self.hand_slots[offer.maker] = slots
        bidders = self.bidders.get(offer.id, set())
        return (
            set(offer.give_hand) <= slots
            and set(offer.give_face_up) <= self.face_up
            and bool(bidders or _accepters(self.table, offer, bidders))
        )


def offer_possible(table: _Table, offer: Offer) -> bool:
    """Whether the offer's cards are still there and a bid stands or somebody may answer."""
    return _OfferCheck(table).possible(offer)


def _drop_impossible_offers(draft: _Draft, touched: Offer | None = None) -> None:
    """Offers whose cards are gone, or that nobody may answer any more, are withdrawn; bids
    and rejections go with their offers. After a trade, which moves cards, every offer is
    looked at; an answer or a withdrawal changes only the chances of the offer it `touched`,
    so only that one is. Either way every open offer is possible after every action."""
    check = _OfferCheck(draft)
    draft.offers = [
        o for o in draft.offers if (touched is not None and o != touched) or check.possible(o)
    ]
    open_ids = {o.id for o in draft.offers}
    draft.bids = [b for b in draft.bids if b.offer in open_ids]
    draft.rejections = {r for r in draft.rejections if r[0] in open_ids}


def _distinct(items: Iterable[object], what: str) -> None:
    seen = list(items)
    if len(set(seen)) != len(seen):
        raise RuleError(f"the same {what} is named twice")


def _check_trading(draft: _Draft) -> None:
    if draft.phase is not Phase.TRADE:
        raise RuleError(f"trading is step 2; the game is at {_phase_text(draft.phase)}")


def _make_offer(draft: _Draft, seat: int, action: MakeOffer) -> None:
    _check_trading(draft)
    players = len(draft.players)
    if seat == draft.active:
        if action.to is not None and not (0 <= action.to < players and action.to != seat):
            raise RuleError("offer to another player, or to everyone")
    else:
        if action.to != draft.active:
            raise RuleError(
                "non-active players trade only with the active player "
                f"(seat {draft.active}), never with each other"
            )
        if action.give_face_up:
            raise RuleError("only the active player gives face-up cards")
    if sum(1 for o in draft.offers if o.maker == seat) >= MAX_OPEN_OFFERS_PER_PLAYER:
        raise RuleError(
            f"you have {MAX_OPEN_OFFERS_PER_PLAYER} open offers; withdraw one before making another"
        )
    slots = tuple(slot for slot, _ in action.give_hand)
    _distinct(slots, "hand card")
    _distinct(action.give_face_up, "face-up card")
    _distinct(action.want_cards, "wanted card")
    _distinct((bean for bean, _ in action.want_beans), "wanted bean")
    for card in action.give_face_up:
        if card not in draft.face_up:
            raise RuleError(f"card {card} is not among the face-up cards")
    for bean, count in action.want_beans:
        if bean not in draft.setup.beans:
            raise RuleError(f"there are no {bean} beans in a {players}-player game")
        if not 1 <= count <= MAX_BEANS_WANTED:
            raise RuleError(f"ask for 1 to {MAX_BEANS_WANTED} {bean} beans, not {count}")
    if not (action.give_hand or action.give_face_up or action.want_cards or action.want_beans):
        raise RuleError("an offer gives something, asks for something, or both")
    for slot, card in action.give_hand:
        _claim(draft, seat, slot, card)
    _check_unpromised(draft, seat, (*slots, *action.give_face_up))
    offer = Offer(
        id=draft.next_offer_id,
        maker=seat,
        to=action.to,
        give_hand=slots,
        give_face_up=action.give_face_up,
        want_cards=action.want_cards,
        want_beans=tuple(sorted(action.want_beans)),
    )
    if not _accepters(draft, offer):
        raise RuleError("nobody you may trade with holds every card this offer asks for")
    draft.offers.append(offer)
    draft.next_offer_id += 1


def _find_offer(draft: _Draft, offer_id: int) -> Offer:
    for offer in draft.offers:
        if offer.id == offer_id:
            return offer
    raise RuleError(f"there is no open offer {offer_id}")


def _not_open(draft: _Draft, seat: int, offer: Offer) -> RuleError:
    if seat in _bidders(draft, offer):
        return RuleError(f"you have bid on offer {offer.id}; withdraw your bid to take it back")
    return RuleError(f"offer {offer.id} is not open to you")


def _accept(draft: _Draft, seat: int, action: Accept) -> None:
    """Accept an offer to you (the trade happens now) or bid on an offer to everyone (its
    maker chooses among the bids). Either way the named cards are opened and must meet what
    the offer asks for."""
    _check_trading(draft)
    offer = _find_offer(draft, action.offer)
    if seat not in _accepters(draft, offer):
        raise _not_open(draft, seat, offer)
    slots = [slot for slot, _ in action.give_hand]
    _distinct(slots, "hand card")
    named_in_hand = [h.slot for h in draft.players[seat].hand if h.card in offer.want_cards]
    if set(named_in_hand) & set(slots):
        raise RuleError("a card the offer asks for by name is given with it already")
    named_face_up = [card for card in offer.want_cards if card in draft.face_up]
    opened = [_claim(draft, seat, slot, card) for slot, card in action.give_hand]
    _check_unpromised(draft, seat, (*slots, *named_in_hand, *named_face_up))
    given = Counter(bean_of(h.card) for h in opened if h.card is not None)
    if given != Counter(dict(offer.want_beans)):
        asked = ", ".join(f"{n} {b}" for b, n in offer.want_beans) or "no beans from your hand"
        raise RuleError(f"offer {offer.id} asks for {asked}; the cards you named do not match")
    if offer.to is None:
        draft.bids.append(Bid(offer.id, seat, (*slots, *named_in_hand)))
    else:
        _trade(draft, offer, seat, (*slots, *named_in_hand))


def _trade(draft: _Draft, offer: Offer, partner: int, partner_slots: Sequence[Slot]) -> None:
    """The offer's maker and its partner swap what the offer gives for the partner's cards
    (those slots, and the face-up cards it wanted); the offer closes and its bids lapse."""
    # What each side gives goes to the other side's pending area, never into a hand.
    to_partner = _remove_from_hand(draft, offer.maker, offer.give_hand)
    for card in offer.give_face_up:
        draft.face_up.remove(card)
        to_partner.append(card)
    to_maker = _remove_from_hand(draft, partner, partner_slots)
    for card in offer.want_cards:
        if card in draft.face_up:
            draft.face_up.remove(card)
            to_maker.append(card)
    for seat, cards in ((partner, to_partner), (offer.maker, to_maker)):
        if cards:
            draft.players.changing(seat).pending.extend(cards)
    draft.offers.remove(offer)
    _drop_impossible_offers(draft)


def _take(draft: _Draft, seat: int, action: Take) -> None:
    _check_trading(draft)
    offer = _find_offer(draft, action.offer)
    if offer.maker != seat:
        raise RuleError(f"offer {offer.id} is not yours; only its maker takes a bid on it")
    bid = next((b for b in draft.bids if b.offer == offer.id and b.bidder == action.bidder), None)
    if bid is None:
        raise RuleError(f"seat {action.bidder} has no bid on offer {offer.id}")
    _trade(draft, offer, bid.bidder, bid.give_hand)


def _reject(draft: _Draft, seat: int, action: Reject) -> None:
    _check_trading(draft)
    offer = _find_offer(draft, action.offer)
    if seat not in _accepters(draft, offer):
        raise _not_open(draft, seat, offer)
    draft.rejections.add((offer.id, seat))
    _drop_impossible_offers(draft, touched=offer)


def _withdraw(draft: _Draft, seat: int, action: Withdraw) -> None:
    _check_trading(draft)
    offer = _find_offer(draft, action.offer)
    if offer.maker == seat:
        draft.offers.remove(offer)
    else:
        bid = next((b for b in draft.bids if b.offer == offer.id and b.bidder == seat), None)
        if bid is None:
            raise RuleError(f"offer {offer.id} is not yours to withdraw, and you have no bid on it")
        draft.bids.remove(bid)
    _drop_impossible_offers(draft, touched=offer)


def _end_trading(draft: _Draft, seat: int, action: EndTrading) -> None:
    _check_trading(draft)
    if seat != draft.active:
        raise RuleError("only the active player ends trading")
    if draft.face_up:  # face-up cards nobody took stay with it
        draft.players.changing(seat).pending.extend(draft.face_up)
    draft.face_up.clear()
    draft.offers.clear()
    draft.bids.clear()
    draft.rejections.clear()
    draft.phase = Phase.PLANT_PENDING
    _after_planting_pending(draft)


_HANDLERS: dict[type, Callable[[_Draft, int, Any], None]] = {
    Plant: _plant,
    EndPlanting: _end_planting,
    Harvest: _harvest,
    BuyField: _buy_field,
    MakeOffer: _make_offer,
    Accept: _accept,
    Reject: _reject,
    Withdraw: _withdraw,
    Take: _take,
    EndTrading: _end_trading,
    PlantPending: _plant_pending,
}


# ---------------------------------------------------------------------------------------------
# Questions about a state: what may a seat do, what is the game waiting for, its hash.


def _known(card: HandCard, hand: Mapping[Slot, Card]) -> Card | None:
    return card.card if card.card is not None else hand.get(card.slot)


def legal_actions(state: State, seat: int, hand: Mapping[Slot, Card] | None = None) -> list[Action]:
    """Every action `seat` may take now, except making offers (see `offer_options`: the offers
    a seat could make are too many to list). `hand` is what the seat privately knows of its own
    hidden hand cards; without it, actions that open a hidden card are not listed."""
    known = hand or {}
    if state.phase is Phase.OVER:
        return []
    player = state.players[seat]
    actions: list[Action] = []
    if state.phase is Phase.PLANT and seat == state.active:
        front = _known(player.hand[0], known) if state.planted < 2 and player.hand else None
        if front is not None:
            actions += [
                Plant(i, front) for i in range(len(player.fields)) if _fits(player.fields, i, front)
            ]
        if state.planted >= 1:
            actions.append(EndPlanting())
    elif state.phase is Phase.TRADE:
        if seat == state.active:
            actions.append(EndTrading())
        for offer in state.offers:
            if offer.maker == seat:
                actions.append(Withdraw(offer.id))
                actions += [Take(offer.id, bid.bidder) for bid in bids_on(state, offer.id)]
            elif seat in _accepters(state, offer):
                actions += [
                    Accept(offer.id, give) for give in _accept_choices(state, seat, offer, known)
                ]
                actions.append(Reject(offer.id))
            elif seat in _bidders(state, offer):
                actions.append(Withdraw(offer.id))
    elif state.phase is Phase.PLANT_PENDING:
        for card in dict.fromkeys(player.pending):
            actions += [
                PlantPending(card, i)
                for i in range(len(player.fields))
                if _fits(player.fields, i, card)
            ]
    rule = state.options.singleton_rule
    actions += [
        Harvest(i)
        for i in range(len(player.fields))
        if _harvest_refusal(player.fields, i, rule) is None
    ]
    if _buy_refusal(state.setup, len(player.fields), len(player.earnings)) is None:
        actions.append(BuyField())
    return actions


def _accept_choices(
    state: State, seat: int, offer: Offer, hand: Mapping[Slot, Card]
) -> list[tuple[tuple[Slot, Card], ...]]:
    """Every set of the seat's hand cards that meets the offer's wanted beans, leaving out
    cards it has promised elsewhere (none at all if a card the offer names is promised)."""
    named = set(offer.want_cards)
    promised = _promises(state, seat)
    named_slots = {h.slot for h in state.players[seat].hand if h.card in named}
    if any(thing in promised for thing in (*named_slots, *named)):
        return []
    by_bean: dict[Bean, list[tuple[Slot, Card]]] = {}
    for held in state.players[seat].hand:
        card = _known(held, hand)
        if card is not None and card not in named and held.slot not in promised:
            by_bean.setdefault(bean_of(card), []).append((held.slot, card))
    choices: list[tuple[tuple[Slot, Card], ...]] = [()]
    for bean, count in offer.want_beans:
        picks = list(combinations(by_bean.get(bean, []), count))
        choices = [c + p for c in choices for p in picks]
    return choices


@dataclass(frozen=True)
class OfferOptions:
    """What an offer from this seat may contain now."""

    recipients: tuple[int | None, ...]  # None: everyone
    hand: tuple[Slot, ...]  # the seat's hand cards not promised elsewhere, any position
    face_up: tuple[Card, ...]  # the active player's face-up cards not promised elsewhere
    visible: tuple[tuple[int, Card], ...]  # (holder, card): cards that may be asked for by name
    beans: tuple[Bean, ...]  # bean types that may be asked for


def offer_options(state: State, seat: int) -> OfferOptions | None:
    """None when the seat may not make an offer now."""
    if state.phase is not Phase.TRADE:
        return None
    if sum(1 for o in state.offers if o.maker == seat) >= MAX_OPEN_OFFERS_PER_PLAYER:
        return None
    others = [s for s in range(len(state.players)) if s != seat]
    promised = _promises(state, seat)
    if seat == state.active:
        recipients: tuple[int | None, ...] = (None, *others)
        face_up = tuple(card for card in state.face_up if card not in promised)
    else:
        recipients, face_up = (state.active,), ()
    counterparts = others if seat == state.active else [state.active]
    visible = tuple(
        (holder, card)
        for holder in counterparts
        for card in sorted(_visible_cards_of(state, holder))
    )
    hand = tuple(h.slot for h in state.players[seat].hand if h.slot not in promised)
    return OfferOptions(recipients, hand, face_up, visible, state.setup.beans)


def accepters(state: State, offer: Offer) -> list[int]:
    """The seats that may accept this open offer now (to everyone: that may still bid)."""
    return _accepters(state, offer)


def bids_on(state: State, offer_id: int) -> list[Bid]:
    """The standing bids on an offer to everyone, in the order they were made."""
    return [bid for bid in state.bids if bid.offer == offer_id]


def bid_cards(state: State, bid: Bid) -> list[Card]:
    """The cards a bid gives (all of them opened when it was made), in hand order."""
    hand = state.players[bid.bidder].hand
    return [h.card for h in hand if h.slot in bid.give_hand and h.card is not None]


def promised(state: State, seat: int) -> dict[Slot | Card, str]:
    """What the seat has promised to its open offers and standing bids (hand cards by slot,
    face-up cards by card), each with what holds it ("offer 7", "bid on offer 7"). A promised
    card goes into no other offer, bid or trade until that promise is withdrawn."""
    return _promises(state, seat)


def waiting_for(state: State) -> list[tuple[int, str]]:
    """Who the game waits for and for what; empty while the table turns cards or at the end."""
    active = state.active
    if state.phase is Phase.PLANT:
        what = "plant the front card" if state.planted == 0 else "plant a second card or stop"
        return [(active, what)]
    if state.phase is Phase.TRADE:
        waiting = [(active, "trade, or end trading")]
        for offer in state.offers:
            waiting += [(s, f"answer offer {offer.id}") for s in _accepters(state, offer)]
            if _bidders(state, offer):
                waiting.append((offer.maker, f"choose a taker for offer {offer.id}"))
        return waiting
    if state.phase is Phase.PLANT_PENDING:
        return [
            (s, "plant traded and kept cards") for s, p in enumerate(state.players) if p.pending
        ]
    return []


def harvest_value(state: State, seat: int, field_index: int) -> int:
    """Coins this field would pay if harvested now."""
    cards = state.players[seat].fields[field_index]
    return coins(bean_of(cards[0]), len(cards)) if cards else 0


STATE_ENCODING_VERSION = 2


def canonical(state: State) -> list[Any]:
    """The whole shared state as plain msgpack values in a fixed order."""
    return [
        STATE_ENCODING_VERSION,
        state.setup.players,
        state.options.singleton_rule.value,
        state.start_player,
        [
            [
                [[h.slot.epoch, h.slot.position, h.card] for h in p.hand],
                [list(f) for f in p.fields],
                list(p.earnings),
                list(p.pending),
            ]
            for p in state.players
        ],
        state.active,
        state.turn,
        state.phase.value,
        state.planted,
        [list(s) for s in state.reveal_slots],
        list(state.face_up),
        [
            [
                o.id,
                o.maker,
                o.to,
                [list(s) for s in o.give_hand],
                list(o.give_face_up),
                list(o.want_cards),
                [[b.value, n] for b, n in o.want_beans],
            ]
            for o in state.offers
        ],
        [[b.offer, b.bidder, [list(s) for s in b.give_hand]] for b in state.bids],
        sorted(list(r) for r in state.rejections),
        state.next_offer_id,
        [state.deck.epoch, state.deck.drawn, state.deck.size],
        [list(e) for e in state.epochs],
        [sorted(h) for h in state.hidden],
        list(state.discard),
        state.exhaustions,
        state.ends_after_step3,
        None
        if state.result is None
        else [
            list(state.result.scores),
            list(state.result.hand_counts),
            list(state.result.winners),
        ],
    ]


def encode_state(state: State) -> bytes:
    packed: bytes = msgpack.packb(canonical(state), use_bin_type=True)
    return packed


def state_hash(state: State) -> bytes:
    """SHA-256 of the canonical encoding; equal on every peer that applied the same actions."""
    return hashlib.sha256(b"bohnanza-p2p state\x00" + encode_state(state)).digest()
