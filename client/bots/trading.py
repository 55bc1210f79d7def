"""The planner's trading: which offers to make, which to accept, and which taker to choose, all
by what the cards are worth to its farm (client.bots.farm) and what they would give the other side.

A card it holds is worth giving away when its farm is worth more without it: a face-up card
that fits no field, or a hand card that would force a harvest when it reaches the front. A card
is worth asking for when its farm is worth more with it. What another seat gains is judged from
what that seat shows (its fields and cards to plant), and a trade that helps a rival more than
it helps the planter is weighed down by `envy`.

It trades as a person at a table would: few offers a turn concern any one seat (any seat may
be a person, who reads and answers each), and it asks a seat only for beans that seat could
hold (`Holders`), the likeliest holder first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from client.bots.farm import EMPTY, Holding, index_of, outlook_of_another, plan_planting
from protocol.cards import BEANS, CARDS_OF, Bean, Card, bean_of
from protocol.rules import (
    Accept,
    Action,
    EndTrading,
    MakeOffer,
    Offer,
    Reject,
    RuleError,
    Slot,
    State,
    Take,
    Withdraw,
    accepters,
    apply,
    bid_cards,
    bids_on,
    legal_actions,
    promised,
)

WANT = 0.3  # a card is asked for when it adds at least this many expected coins
UNWANTED = 0.05  # a card is offered away when the farm is worth this much more without it
# Offers a turn that concern one seat (made to it, or to everyone): the active player's, and
# the most that all the other players' offers to the active player add up to. A person reads
# each: at a real table two or three a turn is a lot.
CONCERNING_PER_TURN = 3
ASKS_OF_THE_ACTIVE = 3


@dataclass
class Trader:
    """One seat's trading memory: the offers it made this turn, and what it last thought
    over (whether to answer an offer is in the state: the offer is open and the seat may
    answer it)."""

    envy: float = 0.35  # weight of a rival's gain against the planter's own
    margin: float = 0.05  # the least gain for which it takes a trade
    _turn: int = -1
    _made: set[tuple[object, ...]] = field(default_factory=set)
    _concerning: Counter[int] = field(default_factory=Counter)  # this turn's, per seat
    _considered: tuple[object, ...] = ()
    _wants: dict[tuple[object, ...], list[Bean]] = field(default_factory=dict)

    def trade(
        self, state: State, seat: int, hand: Mapping[Slot, Card], farm: Holding
    ) -> list[Action]:
        """This seat's trading moves now, each checked against the rules after the ones
        before it (so they need no checking again)."""
        if state.turn != self._turn:
            self._turn, self._made = state.turn, set()
            self._wants, self._concerning = {}, Counter()
        answers = self._answer(state, seat, hand, farm)
        if answers:
            return answers
        takes = self._choose_takers(state, seat, hand, farm, everyone_answered=True)
        if takes:
            return takes
        offers = self._offers(state, seat, hand, farm)
        if offers:
            return offers
        # The active player waits: for answers to its offers, and for the others' offers for
        # its face-up cards; when they do not come, stop_waiting.
        return []

    def stop_waiting(
        self, state: State, seat: int, hand: Mapping[Slot, Card], farm: Holding
    ) -> list[Action]:
        """The answers are not coming: the active player chooses among the takers it has,
        or ends trading."""
        if seat != state.active:
            return []
        takes = self._choose_takers(state, seat, hand, farm, everyone_answered=False)
        return takes or [EndTrading()]

    # --- Values ------------------------------------------------------------------------------

    @staticmethod
    def _worth(
        state: State,
        seat: int,
        farm: Holding,
        received: Sequence[Card] = (),
        given_hand: frozenset[Slot] = frozenset(),
        given_face_up: Sequence[Card] = (),
    ) -> float:
        """The farm's worth after a trade: the active player also plants the face-up cards
        it keeps."""
        kept = [c for c in state.face_up if c not in given_face_up] if seat == state.active else []
        return farm.worth((*kept, *received), given_hand)

    @staticmethod
    def _rival_gain(state: State, seat: int, farm: Holding, cards: Sequence[Card]) -> float:
        """What `seat` gains by planting `cards`, judged from what it shows (its hand is
        hidden: only its fields and cards to plant count)."""
        if not cards:
            return 0.0
        player = state.players[seat]
        fields = tuple((index_of(f[0]), len(f)) if f else (EMPTY, 0) for f in player.fields)
        pending = [index_of(c) for c in player.pending]
        if seat == state.active:
            pending += [index_of(c) for c in state.face_up if c not in cards]
        out = outlook_of_another(farm.out, seat, state.active)
        before = plan_planting(fields, pending, (), out).value
        after = plan_planting(fields, pending + [index_of(c) for c in cards], (), out).value
        return after - before

    def _envy(self, state: State, seat: int, rival: int) -> float:
        """How much a rival's gain counts against this seat's: the full `envy` for the
        leader, less for a rival further behind (by coins, this seat counted too)."""
        coins = [len(p.earnings) for p in state.players]
        low, high = min(coins), max(coins)
        if high == low:
            return self.envy
        return self.envy * (0.3 + 0.7 * (coins[rival] - low) / (high - low))

    # --- Answering offers ----------------------------------------------------------------------

    def _answer(
        self, state: State, seat: int, hand: Mapping[Slot, Card], farm: Holding
    ) -> list[Action]:
        """Every offer open to this seat, answered in one step: the best deals first, each
        judged again on what the ones before it left, the rest turned down. An answer the
        step refuses (another seat's move came first) leaves the offer open, to be answered
        again."""
        waiting = [o for o in state.offers if seat in accepters(state, o)]
        legal = legal_actions(state, seat, hand)  # for every offer at once
        first = {o.id: self._best_acceptance(state, seat, hand, farm, o, legal) for o in waiting}
        ranked = sorted(waiting, key=lambda o: -first[o.id][0])
        answers: list[Action] = []
        accepted = False  # a rejection changes no other offer's best deal; a deal may
        for n, offer in enumerate(ranked):
            if offer not in state.offers or seat not in accepters(state, offer):
                continue  # it went with a deal taken before it
            if accepted:
                deal = self._best_acceptance(state, seat, hand, farm, offer)[1]
            else:
                deal = first[offer.id][1]
            # A bid promises its cards: a deal before it may have promised them already.
            after = _if_legal(state, seat, deal) if deal is not None else None
            answer: Action = deal if deal is not None and after is not None else Reject(offer.id)
            state = after if after is not None else apply(state, seat, answer)
            answers.append(answer)
            if isinstance(answer, Accept) and n + 1 < len(ranked):
                farm = Holding.of(state, seat, hand, farm.out.tuning)
                accepted = True
        return answers

    def _best_acceptance(
        self,
        state: State,
        seat: int,
        hand: Mapping[Slot, Card],
        farm: Holding,
        offer: Offer,
        legal: Sequence[Action] | None = None,
    ) -> tuple[float, Accept | None]:
        """The best way to accept the offer and its score (gain less envy), or None when no
        way scores above the margin. `legal`: the seat's legal actions now, if known."""
        received = _cards_given(state, offer)
        mine = {card: slot for slot, card in farm.hand}
        base = self._worth(state, seat, farm)
        best, best_score = None, self.margin
        for choice in legal if legal is not None else legal_actions(state, seat, hand):
            if not isinstance(choice, Accept) or choice.offer != offer.id:
                continue
            given_cards = [card for _, card in choice.give_hand] + list(offer.want_cards)
            given_slots = frozenset(
                [slot for slot, _ in choice.give_hand]
                + [mine[c] for c in offer.want_cards if c in mine]
            )
            given_face_up = [c for c in offer.want_cards if c in state.face_up]
            gain = self._worth(state, seat, farm, received, given_slots, given_face_up) - base
            rival = self._rival_gain(state, offer.maker, farm, given_cards)
            score = gain - self._envy(state, seat, offer.maker) * rival
            if score > best_score:
                best, best_score = choice, score
        return best_score, best

    # --- Choosing among takers ------------------------------------------------------------------

    def _choose_takers(
        self,
        state: State,
        seat: int,
        hand: Mapping[Slot, Card],
        farm: Holding,
        everyone_answered: bool,
    ) -> list[Action]:
        """For each of its offers to everyone with bids (once every possible taker has
        answered, unless it waits no longer): take the bid worth most to it, counting what the
        bidder gains against it, or, if none is worth taking, withdraw the offer."""
        moves: list[Action] = []
        for offer in state.offers:
            bids = bids_on(state, offer.id)
            if offer.maker != seat or not bids:
                continue
            if everyone_answered and accepters(state, offer):
                continue
            given = _cards_given(state, offer)
            base = self._worth(state, seat, farm)
            scored = []
            for bid in bids:
                gain = self._worth(
                    state, seat, farm, bid_cards(state, bid), frozenset(offer.give_hand),
                    offer.give_face_up,
                ) - base  # fmt: skip
                rival = self._rival_gain(state, bid.bidder, farm, given)
                # Between bids worth the same: the poorer bidder, then the one to play last.
                coins = len(state.players[bid.bidder].earnings)
                later = (bid.bidder - seat) % len(state.players)
                scored.append(
                    (gain - self._envy(state, seat, bid.bidder) * rival, -coins, later, bid)
                )
            score, _, _, best = max(scored, key=lambda s: s[:3])
            taken = score > -self.margin
            move: Action = Take(offer.id, best.bidder) if taken else Withdraw(offer.id)
            state = apply(state, seat, move)
            moves.append(move)
            if isinstance(move, Take):
                farm = Holding.of(state, seat, hand, farm.out.tuning)
        return moves

    # --- Making offers -------------------------------------------------------------------------

    def _offers(
        self, state: State, seat: int, hand: Mapping[Slot, Card], farm: Holding
    ) -> list[Action]:
        """New offers, thought out again only when something this seat may offer changed,
        within this turn's budget of offers concerning each seat."""
        situation = (
            farm.fields,
            farm.hand,
            farm.pending,
            state.face_up,
            tuple(o.id for o in state.offers),
        )
        if situation == self._considered:
            return []
        self._considered = situation
        base = self._worth(state, seat, farm)
        open_cards = {c for o in state.offers if o.maker == seat for c in o.give_face_up}
        open_slots = {s for o in state.offers if o.maker == seat for s in o.give_hand}
        gains: list[tuple[float, tuple[tuple[Slot, Card], ...], tuple[Card, ...]]] = []
        if seat == state.active:
            for card in state.face_up:
                if card not in open_cards:
                    gain = self._worth(state, seat, farm, given_face_up=[card]) - base
                    gains.append((gain, (), (card,)))
        for slot, card in farm.hand:
            if slot not in open_slots:
                gain = self._worth(state, seat, farm, given_hand=frozenset([slot])) - base
                gains.append((gain, ((slot, card),), ()))
        gains.sort(key=lambda u: -u[0])
        unwanted = [g for g in gains if g[0] > UNWANTED]
        # Hand cards it loses nothing by giving: to sweeten an offer for a card it wants.
        spare = [g[1][0] for g in gains if g[1] and g[0] > -UNWANTED]
        holders = Holders(state, hand)
        if seat == state.active:
            leaving = {c for o in state.offers if o.maker == seat for c in o.give_face_up}
            leaving.update(c for _, _, cards in unwanted for c in cards)
            wanted = self._wanted_beans(state, seat, farm, sorted(leaving))
            candidates = self._active_offers(state, seat, unwanted, wanted, spare, holders)
        else:
            candidates = self._offers_to_active(state, seat, farm, base, unwanted, spare, holders)
        budget = concerning_budget(state, seat)
        made: list[Action] = []
        for offer in candidates:
            signature = (
                offer.to,
                offer.give_hand,
                offer.give_face_up,
                offer.want_cards,
                offer.want_beans,
            )
            concerned = concerns(state, seat, offer.to)
            if signature in self._made or any(self._concerning[s] >= budget for s in concerned):
                continue
            if _like_for_like(offer):
                continue
            try:
                state = apply(state, seat, offer)  # legal after the ones before it
            except RuleError:
                continue
            self._made.add(signature)
            self._concerning.update(concerned)
            made.append(offer)
        return made

    def _wanted_beans(
        self, state: State, seat: int, farm: Holding, leaving: Sequence[Card]
    ) -> list[Bean]:
        """Beans worth asking for, most wanted first, once the face-up cards it is giving
        away have gone (worked out once a turn for each farm)."""
        key = (farm.fields, farm.hand, farm.pending, tuple(leaving), state.face_up)
        if key not in self._wants:
            self._wants[key] = self._beans_wanted(state, seat, farm, leaving)
        return self._wants[key]

    def _beans_wanted(
        self, state: State, seat: int, farm: Holding, leaving: Sequence[Card]
    ) -> list[Bean]:
        base = self._worth(state, seat, farm, given_face_up=leaving)
        gains = []
        # A card is worth asking for when it grows a field, or fills an empty one for the
        # hand's next cards of its bean: the beans of its fields and of its hand.
        beans = {BEANS[b] for b, _ in farm.fields if b != EMPTY}
        beans.update(bean_of(card) for _, card in farm.hand)
        for bean in sorted(beans):
            card = CARDS_OF[bean][0]
            gain = self._worth(state, seat, farm, [card], given_face_up=leaving) - base
            if gain > WANT:
                gains.append((gain, bean))
        return [bean for _, bean in sorted(gains, key=lambda g: -g[0])]

    def _active_offers(
        self,
        state: State,
        seat: int,
        unwanted: list[tuple[float, tuple[tuple[Slot, Card], ...], tuple[Card, ...]]],
        wanted: list[Bean],
        spare: list[tuple[Slot, Card]],
        holders: Holders,
    ) -> list[MakeOffer]:
        """The active player's offers, the most useful first (the budget keeps the first few):
        its unwanted cards to everyone for the bean it wants most of those somebody could give,
        then (once those are answered) as gifts; to each other player, a card it can spare that
        grows one of that player's fields for the bean it wants most of those that player
        could give, then that bean for nothing, the likeliest holders first; the next bean it
        wants from anyone."""
        offers = []
        waiting = any(o.maker == seat for o in state.offers)
        others = [other for other in range(len(state.players)) if other != seat]
        somebody = [b for b in wanted if any(holders.could_give(o, b) for o in others)]
        best = [((bean, 1),) for bean in somebody[:1]]
        for _, give_hand, give_face_up in unwanted[:3]:
            offers += [MakeOffer(None, give_hand, give_face_up, want_beans=w) for w in best]
            if not waiting:
                offers.append(MakeOffer(None, give_hand, give_face_up))
        asks = [
            (other, bean)
            for other in others
            for bean in [b for b in wanted if holders.could_give(other, b)][:1]
        ]
        asks.sort(key=lambda ask: -holders.expected(*ask))
        offered: set[Slot] = set()  # a card goes into one offer at a time (it is promised)
        for other, bean in asks:
            liked = [c for c in spare if c[0] not in offered and _grows(state, other, c[1])]
            for give in liked[:1]:
                offered.add(give[0])
                offers.append(MakeOffer(other, (give,), want_beans=((bean, 1),)))
        offers += [MakeOffer(other, want_beans=((bean, 1),)) for other, bean in asks]
        offers += [MakeOffer(None, want_beans=((bean, 1),)) for bean in somebody[1:2]]
        return offers

    def _offers_to_active(
        self,
        state: State,
        seat: int,
        farm: Holding,
        base: float,
        unwanted: list[tuple[float, tuple[tuple[Slot, Card], ...], tuple[Card, ...]]],
        spare: list[tuple[Slot, Card]],
        holders: Holders,
    ) -> list[MakeOffer]:
        """Ask the active player for face-up cards that grow a field (for one it can spare
        that grows a field of the active player, for nothing, or for a hand card this seat
        would rather lose); give it hand cards that block this seat and that it can plant;
        and ask for the bean it wants most of those the active player could give."""
        active = state.active
        offers = []
        blockers = [u[1] for u in unwanted if u[1]]
        liked: list[tuple[tuple[Slot, Card], ...]] = [
            (c,) for c in spare if _grows(state, active, c[1])
        ]
        for card in state.face_up:
            gain = self._worth(state, seat, farm, received=[card]) - base
            if gain > WANT:
                gives = list(dict.fromkeys([*liked[:1], (), *blockers[:1]]))
                offers += [MakeOffer(active, give, want_cards=(card,)) for give in gives]
        for give in blockers[:2]:
            if _fits(state, active, give[0][1]):
                offers.append(MakeOffer(active, give_hand=give))
        wanted = self._wanted_beans(state, seat, farm, ())
        for bean in [b for b in wanted if holders.could_give(active, b)][:1]:
            want = ((bean, 1),)
            offers += [MakeOffer(active, give, want_beans=want) for give in liked[:1]]
            offers.append(MakeOffer(active, want_beans=want))
        return offers


class Holders:
    """What each seat could give from its hand, as one seat (holding `mine`) can know it: its
    opened hand cards not promised elsewhere for sure, and each hidden hand card any card of
    its deck's epoch that nobody has opened and that is not in `mine`. A card received never
    enters a hand (it is planted), so a hand holds only what was dealt or drawn."""

    def __init__(self, state: State, mine: Mapping[Slot, Card]) -> None:
        self.state = state
        self.mine = frozenset(mine.values())
        self._unseen: dict[int, tuple[Counter[Bean], int]] = {}

    def _unseen_of(self, epoch: int) -> tuple[Counter[Bean], int]:
        """The beans of the epoch's cards this seat has not seen, and how many there are."""
        if epoch not in self._unseen:
            cards = [c for c in self.state.hidden[epoch] if c not in self.mine]
            self._unseen[epoch] = (Counter(map(bean_of, cards)), len(cards))
        return self._unseen[epoch]

    def _sure_and_hidden(self, seat: int, bean: Bean) -> tuple[int, Counter[int]]:
        hand = self.state.players[seat].hand
        tied = promised(self.state, seat)
        sure = sum(
            1 for h in hand if h.card is not None and h.slot not in tied and bean_of(h.card) == bean
        )
        return sure, Counter(h.slot.epoch for h in hand if h.card is None)

    def most(self, seat: int, bean: Bean) -> int:
        """The most cards of `bean` the seat could give from its hand now."""
        sure, hidden = self._sure_and_hidden(seat, bean)
        return sure + sum(min(n, self._unseen_of(e)[0][bean]) for e, n in hidden.items())

    def could_give(self, seat: int, bean: Bean, count: int = 1) -> bool:
        return self.most(seat, bean) >= count

    def expected(self, seat: int, bean: Bean) -> float:
        """How many cards of `bean` the seat holds, by the odds of its hidden cards."""
        sure, hidden = self._sure_and_hidden(seat, bean)
        expected = float(sure)
        for epoch, slots in hidden.items():
            beans, total = self._unseen_of(epoch)
            expected += slots * beans[bean] / total if total else 0.0
        return expected


def concerns(state: State, seat: int, to: int | None) -> list[int]:
    """The seats an offer from `seat` concerns: its recipient, or everyone else."""
    return [to] if to is not None else [s for s in range(len(state.players)) if s != seat]


def concerning_budget(state: State, seat: int) -> int:
    """How many of this seat's offers a turn may concern any one seat: the active player's
    `CONCERNING_PER_TURN`; each other player's share of `ASKS_OF_THE_ACTIVE` (one at least),
    all of whose offers go to the active player."""
    if seat == state.active:
        return CONCERNING_PER_TURN
    return max(1, ASKS_OF_THE_ACTIVE // (len(state.players) - 1))


def _if_legal(state: State, seat: int, action: Action) -> State | None:
    try:
        return apply(state, seat, action)
    except RuleError:
        return None


def _cards_given(state: State, offer: Offer) -> list[Card]:
    """The cards an offer gives (its maker's hand cards are open once offered)."""
    opened = {h.slot: h.card for h in state.players[offer.maker].hand if h.card is not None}
    return [opened[s] for s in offer.give_hand if s in opened] + list(offer.give_face_up)


def _like_for_like(offer: MakeOffer) -> bool:
    """Whether an offer gives a bean it also wants. It is legal (the card received is planted
    at once), but a person reads "gives garden, wants garden" as a riddle, so no bot makes one."""
    given = [card for _, card in offer.give_hand] + list(offer.give_face_up)
    wanted = {bean for bean, _ in offer.want_beans} | {bean_of(c) for c in offer.want_cards}
    return any(bean_of(card) in wanted for card in given)


def _fits(state: State, seat: int, card: Card) -> bool:
    """Whether the seat can plant the card without a harvest (from what it shows)."""
    bean = index_of(card)
    return any(not f or index_of(f[0]) == bean for f in state.players[seat].fields)


def _grows(state: State, seat: int, card: Card) -> bool:
    """Whether the card joins one of the seat's planted fields."""
    bean = index_of(card)
    return any(f and index_of(f[0]) == bean for f in state.players[seat].fields)
