"""What one seat can expect of the rest of the game, and what its fields and hand are worth.

Everything here comes from what the seat sees: the shared state, which holds no hidden card (a
hand or the deck is a list of slots; a card is known once it is opened), and the seat's own
hand. The cards the seat has not seen are the deck's composition less every public card
(`State.hidden`: the cards of each epoch not yet opened) less its own hand.

The value of a farm (fields, the hand as a queue, cards to plant) is the coins its fields are
still expected to pay: the known hand is planted turn by turn from the front, as the rules
force, and a card that fits no field forces the harvest that loses least; what comes from
unseen cards (face-up cards kept, cards traded in, drawn cards reaching the front) is counted
by its odds. `plan_planting` searches the orders and harvests for cards that must be planted
now. Everything works on bean indexes (positions in `protocol.cards.BEANS`) for speed.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import accumulate

from protocol.cards import ALL_CARDS, BEANOMETER, BEANS, Card, bean_of, coins
from protocol.kdf import Stream
from protocol.rules import Phase, SingletonRule, Slot, State

EMPTY = -1  # the bean index of an empty field
_MOST_CARDS = 40  # no field grows past this in a game

BEAN_INDEX = {bean: i for i, bean in enumerate(BEANS)}
COINS: tuple[tuple[int, ...], ...] = tuple(
    tuple(coins(bean, n) for n in range(_MOST_CARDS + 1)) for bean in BEANS
)
# The fewest cards that pay a bean's most coins: a field this full can earn nothing more.
FULL: tuple[int, ...] = tuple(max(n for n in BEANOMETER[bean] if n is not None) for bean in BEANS)

Field = tuple[int, int]  # (bean index or EMPTY, cards)


_INDEX_OF: tuple[int, ...] = tuple(BEAN_INDEX[bean_of(card)] for card in ALL_CARDS)


def index_of(card: Card) -> int:
    """The bean index of a card (a table: the planner asks this half a million times a game)."""
    if not 0 <= card < len(_INDEX_OF):
        raise ValueError(f"there is no card {card}")
    return _INDEX_OF[card]


@dataclass(frozen=True)
class Tuning:
    """The judgement in the value of a farm; the bench compares settings on its ladder."""

    keep_per_turn: float = 2.0  # unseen cards of a field's bean kept per own turn (face-up)
    traded_in_per_turn: float = 0.6  # ... received per other player's turn (asked for, given)
    front_per_turn: float = 1.4  # ... planted from the unknown part of the hand per own turn
    field_life: float = 2.5  # own turns a field lasts once the known hand is planted (2 fields)
    third_field_life: float = 4.0  # ... with three fields
    slot_coins_per_turn: float = 0.5  # what a field slot earns per own turn in the long run
    next_deck_share: float = 0.45  # of this deck's cards still to draw, the share discarded
    later_deck_share: float = 0.72  # a later deck's size over the deck before it


TUNING = Tuning()


@dataclass(frozen=True)
class Outlook:
    """What a seat expects of the rest of the game, from public cards and its own hand."""

    odds: tuple[float, ...]  # per bean index: the chance a card still to come is that bean
    own_turns: float  # this seat's turns still to come, after the current one
    turns_to_next: int  # turns until this seat is active again (0: it is active now)
    turns_left: float  # everyone's turns still to come, after the current one
    players: int
    draw_count: int  # cards drawn into the hand at the end of a turn
    rule: SingletonRule
    tuning: Tuning = TUNING
    # Worked out once: an outlook is a key of the planting caches, and `grow` is asked for
    # in every farm played forward.
    _hash: int = field(init=False, compare=False, repr=False)
    _growth: tuple[tuple[float, ...], tuple[float, ...]] = field(
        init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        t = self.tuning
        per_turn = t.keep_per_turn + t.traded_in_per_turn * (self.players - 1)
        known = tuple(per_turn * odds for odds in self.odds)
        unknown = tuple((per_turn + t.front_per_turn) * odds for odds in self.odds)
        object.__setattr__(self, "_growth", (unknown, known))
        compared = (self.odds, self.own_turns, self.turns_to_next, self.turns_left)
        compared += (self.players, self.draw_count, self.rule, self.tuning)
        object.__setattr__(self, "_hash", hash(compared))

    def __hash__(self) -> int:
        return self._hash

    def grow(self, bean: int, known_hand: bool) -> float:
        """Cards of `bean` expected to join a field of it per own turn from unseen cards: kept
        face-up cards, cards traded in on the others' turns, and (once the known hand is
        planted) drawn cards reaching the front."""
        return self._growth[known_hand][bean]


def unseen_cards(state: State, hand: Mapping[Slot, Card]) -> list[int]:
    """Per bean index: the cards of the deck's current epoch the seat has not seen (the rest
    of the deck and other players' hidden cards from it; its own hand it has seen)."""
    current = [0] * len(BEANS)
    own = set(hand.values())
    for card in state.hidden[state.deck.epoch]:
        if card not in own:
            current[_INDEX_OF[card]] += 1  # a card of the state's deck
    return current


def outlook(state: State, seat: int, hand: Mapping[Slot, Card], tuning: Tuning = TUNING) -> Outlook:
    """The odds of the cards still to come and the turns left, as the seat can know them."""
    setup = state.setup
    current = unseen_cards(state, hand)
    in_deck = state.deck.remaining
    unseen = sum(current)
    deck_share = [c / unseen if unseen else 0.0 for c in current]
    reshuffles_left = setup.exhaustions_to_end - state.exhaustions - 1
    discard = [0] * len(BEANS)
    for card in state.discard:
        discard[index_of(card)] += 1
    # Cards still to be drawn: this deck, then each later deck (the discard pile by then).
    to_draw = float(in_deck)
    next_deck = len(state.discard) + tuning.next_deck_share * in_deck
    weights = [in_deck * share for share in deck_share]
    for n in range(max(0, reshuffles_left)):
        to_draw += next_deck
        if n == 0:  # the next deck's known part: today's discard pile
            weights = [w + d for w, d in zip(weights, discard, strict=True)]
        next_deck *= tuning.later_deck_share
    total = sum(weights)
    odds = tuple(w / total for w in weights) if total else tuple(deck_share)
    per_turn = 2 + setup.draw_count
    turns_left = 0.0 if state.phase is Phase.OVER else to_draw / per_turn
    players = len(state.players)
    turns_to_next = (seat - state.active) % players
    return Outlook(
        odds,
        _own_turns(turns_left, players, turns_to_next),
        turns_to_next,
        turns_left,
        players,
        setup.draw_count,
        state.options.singleton_rule,
        tuning,
    )


def _own_turns(turns_left: float, players: int, turns_to_next: int) -> float:
    first = turns_to_next or players
    return max(0.0, (turns_left - first) / players + 1.0) if turns_left >= first else 0.0


def outlook_of_another(out: Outlook, seat: int, active: int) -> Outlook:
    """What this seat's outlook says about another seat's: the same odds, its own turns."""
    turns_to_next = (seat - active) % out.players
    own = _own_turns(out.turns_left, out.players, turns_to_next)
    return replace(out, own_turns=own, turns_to_next=turns_to_next)


@lru_cache(maxsize=1 << 16)
def expected_coins(bean: int, cards: int, more: float) -> float:
    """Coins a field of `cards` beans pays once `more` cards (a Poisson count with that mean)
    join it."""
    table = COINS[bean]
    full = FULL[bean]
    if more < 0.01 or cards >= full:
        return float(table[min(cards, _MOST_CARDS)])
    chance = math.exp(-more)
    total, left = 0.0, 1.0
    x = 0
    while cards + x < full:
        total += chance * table[cards + x]
        left -= chance
        x += 1
        chance *= more / x
    return total + max(left, 0.0) * table[full]


def _expected(bean: int, cards: int, more: float) -> float:
    return expected_coins(bean, cards, round(more, 2))


def may_harvest(fields: Sequence[Field], index: int, rule: SingletonRule) -> bool:
    """The one-bean rule (RULES.md section 5), as protocol.rules applies it."""
    bean, cards = fields[index]
    if bean == EMPTY:
        return False
    if cards >= 2:
        return True
    if any(n >= 2 for b, n in fields if b != EMPTY):
        return False
    return rule is not SingletonRule.RIO_GRANDE_LITERAL or all(b != EMPTY for b, _ in fields)


def fitting(fields: Sequence[Field], bean: int) -> list[int]:
    """Fields a bean may be planted in without a harvest: its own (fullest first), then empty."""
    own = [i for i, (b, _) in enumerate(fields) if b == bean]
    if len(own) > 1:
        own.sort(key=lambda i: -fields[i][1])
    return own + [i for i, (b, _) in enumerate(fields) if b == EMPTY]


class _Farm:
    """A farm being played forward: fields with the unseen cards expected to join them."""

    __slots__ = ("beans", "cards", "earned", "more", "out")

    def __init__(self, fields: Sequence[Field], out: Outlook) -> None:
        self.beans = [b for b, _ in fields]
        self.cards = [n for _, n in fields]
        self.more = [0.0] * len(fields)
        self.out = out
        self.earned = 0.0

    def fields(self) -> list[Field]:
        return list(zip(self.beans, self.cards, strict=True))

    def life(self) -> float:
        t = self.out.tuning
        return t.third_field_life if len(self.beans) > 2 else t.field_life

    def keep_value(self, i: int, turns: float) -> float:
        bean = self.beans[i]
        if bean == EMPTY:
            return self.out.tuning.slot_coins_per_turn * turns
        life = min(turns, self.life())
        more = self.more[i] + self.out.grow(bean, False) * life
        rest = self.out.tuning.slot_coins_per_turn * max(0.0, turns - life)
        return _expected(bean, self.cards[i], more) + rest

    def harvest(self, i: int) -> None:
        self.earned += _expected(self.beans[i], self.cards[i], self.more[i])
        self.beans[i], self.cards[i], self.more[i] = EMPTY, 0, 0.0

    def plant(self, bean: int, turns: float) -> None:
        """Plant one card as the rules force: its fullest field, an empty one, or after the
        harvest that gives up least."""
        beans, cards = self.beans, self.cards
        place = -1
        for i, b in enumerate(beans):
            if b == bean and (place < 0 or cards[i] > cards[place]):
                place = i
        if place < 0 and EMPTY in beans:
            place = beans.index(EMPTY)
        if place < 0:
            fields = self.fields()
            best_loss = 0.0
            for i in range(len(fields)):
                if not may_harvest(fields, i, self.out.rule):
                    continue
                loss = self.keep_value(i, turns) - _expected(beans[i], cards[i], self.more[i])
                if place < 0 or (loss, -cards[i]) < (best_loss, -cards[place]):
                    place, best_loss = i, loss
            self.harvest(place)
        beans[place] = bean
        cards[place] += 1

    def fits(self, bean: int) -> bool:
        return bean in self.beans or EMPTY in self.beans

    def value(self, queue: Sequence[int]) -> float:
        """Coins earned playing the known hand forward, plus what the fields are then worth."""
        out = self.out
        turns = out.own_turns
        played = 0
        i = 0
        while i < len(queue) and played + 1 <= turns + 0.5:
            self.plant(queue[i], turns - played)
            i += 1
            if i < len(queue) and self.fits(queue[i]):
                self.plant(queue[i], turns - played)
                i += 1
            played += 1
            for f, bean in enumerate(self.beans):
                if bean != EMPTY:
                    self.more[f] += out.grow(bean, True)
        left = max(0.0, turns - played)
        return self.earned + sum(self.keep_value(f, left) for f in range(len(self.beans)))


def farm_value(fields: Sequence[Field], queue: Sequence[int], out: Outlook) -> float:
    """Coins these fields are still expected to pay, with this hand planted from the front on
    the seat's coming turns."""
    return _Farm(fields, out).value(queue)


# --- Determinized rollouts --------------------------------------------------------------------


@dataclass(frozen=True)
class Futures:
    """Ways the rest of the game may go for one seat, each drawn from the odds of the unseen
    cards: how many own turns it gets, then per turn its two face-up cards and the cards it
    draws. One decision judges all its candidates on the same futures."""

    turns: tuple[int, ...]
    cards: tuple[tuple[int, ...], ...]


def sample_futures(out: Outlook, samples: int, stream: Stream) -> Futures:
    """`samples` futures, from a stream that knows nothing hidden (its seed is the bot's)."""
    whole = int(out.own_turns)
    per_turn = 2 + out.draw_count
    length = per_turn * (whole + 1)
    cdf = list(accumulate(out.odds))
    scale = cdf[-1] / 65536 if cdf and cdf[-1] > 0 else 0.0
    last = len(cdf) - 1
    raw = stream.read(2 * samples * (length + 1))
    numbers = [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2)]
    turns, cards = [], []
    for s in range(samples):
        row = numbers[s * (length + 1) : (s + 1) * (length + 1)]
        turns.append(whole + (1 if row[0] / 65536 < out.own_turns - whole else 0))
        cards.append(tuple(min(last, bisect_right(cdf, u * scale)) for u in row[1:]))
    return Futures(tuple(turns), tuple(cards))


def _played_out(
    fields: Sequence[Field], queue: Sequence[int], out: Outlook, turns: int, cards: Sequence[int]
) -> float:
    """Coins one future brings: each own turn the front card (and the next one where it fits)
    is planted, face-up cards are kept where they grow a field or fill an empty one (the
    others given away), the drawn cards join the back of the hand; at the end every field is
    sold."""
    farm = _Farm(fields, out)
    hand = list(queue)
    front = 0
    drawn = 0
    for turn in range(turns):
        left = turns - turn
        if front < len(hand):
            farm.plant(hand[front], left)
            front += 1
            if front < len(hand) and farm.fits(hand[front]):
                farm.plant(hand[front], left)
                front += 1
        for card in cards[drawn : drawn + 2]:
            if farm.fits(card):
                farm.plant(card, left)
        hand += cards[drawn + 2 : drawn + 2 + out.draw_count]
        drawn += 2 + out.draw_count
    return farm.earned + sum(
        COINS[b][n] for b, n in zip(farm.beans, farm.cards, strict=True) if b != EMPTY
    )


def rollout_value(
    fields: Sequence[Field], queue: Sequence[int], out: Outlook, futures: Futures
) -> float:
    """The mean coins of the fields over the futures: a search over what the unseen cards may
    be, where `farm_value` counts them by their odds."""
    total = sum(
        _played_out(fields, queue, out, turns, cards)
        for turns, cards in zip(futures.turns, futures.cards, strict=True)
    )
    return total / len(futures.turns) if futures.turns else 0.0


@dataclass(frozen=True)
class Planting:
    """How to plant cards that must be planted now: harvests (field index) and plantings
    (bean index, field index), in order, and what the farm is then worth."""

    steps: tuple[tuple[str, int, int], ...]  # ("harvest", field, 0) or ("plant", bean, field)
    value: float


def ways_to_plant(
    fields: tuple[Field, ...], bean: int, count: int, rule: SingletonRule
) -> Iterator[tuple[tuple[tuple[str, int, int], ...], tuple[Field, ...], float]]:
    """Each way to plant `count` cards of one bean into one field: its fullest field or an
    empty one (a second field of the same bean, or a second empty one, is no better), or, when
    it fits nowhere, after harvesting a field: (steps, fields after, coins harvested)."""
    places = fitting(fields, bean)
    choices: list[tuple[int, int | None]] = [(p, None) for p in places[:1]]
    if places and fields[places[0]][0] != EMPTY:
        choices += [(p, None) for p in places if fields[p][0] == EMPTY][:1]
    if not places:
        choices = [(h, h) for h in range(len(fields)) if may_harvest(fields, h, rule)]
    for place, harvested in choices:
        coins_now = 0.0
        after = list(fields)
        steps: tuple[tuple[str, int, int], ...] = ()
        if harvested is not None:
            hb, hn = after[harvested]
            coins_now = float(COINS[hb][hn])
            after[harvested] = (EMPTY, 0)
            steps = (("harvest", harvested, 0),)
        after[place] = (bean, after[place][1] + count)
        steps += (("plant", bean, place),) * count
        yield steps, tuple(after), coins_now


def planting_outcomes(
    fields: Sequence[Field], cards: Sequence[int], rule: SingletonRule
) -> dict[tuple[Field, ...], tuple[float, tuple[tuple[str, int, int], ...]]]:
    """Every way planting `cards` now can leave the fields (the same search as
    `plan_planting`): fields after -> (coins harvested, steps), the most coins for each."""
    counts: dict[int, int] = {}
    for bean in cards:
        counts[bean] = counts.get(bean, 0) + 1
    outcomes: dict[tuple[Field, ...], tuple[float, tuple[tuple[str, int, int], ...]]] = {}

    def search(
        now: tuple[Field, ...],
        groups: tuple[tuple[int, int], ...],
        earned: float,
        done: tuple[tuple[str, int, int], ...],
    ) -> None:
        if not groups:
            if now not in outcomes or outcomes[now][0] < earned:
                outcomes[now] = (earned, done)
            return
        for g, (bean, count) in enumerate(groups):
            rest = groups[:g] + groups[g + 1 :]
            for steps, after, coins_now in ways_to_plant(now, bean, count, rule):
                search(after, rest, earned + coins_now, done + steps)

    search(tuple(fields), tuple(sorted(counts.items())), 0.0, ())
    return outcomes


def plan_planting(
    fields: Sequence[Field], cards: Sequence[int], queue: Sequence[int], out: Outlook
) -> Planting:
    """The best way to plant `cards` now (all of them, any order), judged with the hand to come.

    Cards of one bean go together into one field; a group that fits nowhere harvests a field
    first (each legal one is tried)."""
    counts: dict[int, int] = {}
    for bean in cards:
        counts[bean] = counts.get(bean, 0) + 1
    return _best_planting(tuple(fields), tuple(sorted(counts.items())), tuple(queue), out)


@lru_cache(maxsize=1 << 15)
def _best_planting(
    fields: tuple[Field, ...],
    groups: tuple[tuple[int, int], ...],
    queue: tuple[int, ...],
    out: Outlook,
) -> Planting:
    """Groups of same-bean cards (bean, count) planted in every order (the one-bean rule makes
    the order matter), each into one field; the same situations are met on many paths, so
    each is worked out once."""
    if not groups:
        return Planting((), farm_value(fields, queue, out))
    best: Planting | None = None
    for g, (bean, count) in enumerate(groups):
        rest = groups[:g] + groups[g + 1 :]
        for steps, after, earned in ways_to_plant(fields, bean, count, out.rule):
            then = _best_planting(after, rest, queue, out)
            if best is None or earned + then.value > best.value:
                best = Planting(steps + then.steps, earned + then.value)
    assert best is not None  # planting can never deadlock (RULES.md section 4, step 3)
    return best


@dataclass
class Holding:
    """One seat's farm as that seat sees it: fields, hand (front first), cards to plant."""

    seat: int
    fields: tuple[Field, ...]
    hand: tuple[tuple[Slot, Card], ...]  # the known front of the hand
    pending: tuple[Card, ...]
    coins: int
    out: Outlook
    _worths: dict[tuple[tuple[int, ...], frozenset[Slot]], float] = field(default_factory=dict)

    @classmethod
    def of(cls, state: State, seat: int, hand: Mapping[Slot, Card], tuning: Tuning) -> Holding:
        player = state.players[seat]
        known: list[tuple[Slot, Card]] = []
        for held in player.hand:
            card = held.card if held.card is not None else hand.get(held.slot)
            if card is None:
                break  # not open to this seat yet: the rest of the hand is unknown for now
            known.append((held.slot, card))
        fields = tuple((index_of(f[0]), len(f)) if f else (EMPTY, 0) for f in player.fields)
        return cls(
            seat,
            fields,
            tuple(known),
            player.pending,
            len(player.earnings),
            outlook(state, seat, hand, tuning),
        )

    def queue(self, without: frozenset[Slot] = frozenset()) -> tuple[int, ...]:
        return tuple(index_of(card) for slot, card in self.hand if slot not in without)

    def worth(self, plant: Sequence[Card] = (), without: frozenset[Slot] = frozenset()) -> float:
        """Coins the farm is still expected to pay after planting its pending cards and `plant`
        (all must be planted this turn) with the hand less `without`."""
        beans = tuple(sorted(index_of(c) for c in (*self.pending, *plant)))
        key = (beans, without)
        if key not in self._worths:
            plan = plan_planting(self.fields, beans, self.queue(without), self.out)
            self._worths[key] = plan.value
        return self._worths[key]
