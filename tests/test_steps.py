"""One lockstep step's moves, applied as protocol/steps.py says: every pair of moves that can
meet has its written rule and a test here, and a property test checks over random play that a
step ends the same however the seats are numbered (no seat gains from its number, or from
being evaluated first or last)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.cards import Bean
from protocol.kdf import Stream
from protocol.open_table import OpenTable
from protocol.random_play import random_offer
from protocol.rules import (
    Accept,
    Action,
    Bid,
    BuyField,
    DrawForTable,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Phase,
    PlantPending,
    Reject,
    Result,
    RuleError,
    State,
    Take,
    Withdraw,
    hand_cards_opened,
    legal_actions,
)
from protocol.simulate import random_moves
from protocol.steps import ForbiddenAction, Group, apply_own, apply_step, group_of
from tests.rules_helpers import Game, table


def at_trading() -> Game:
    """Ann (seat 0) trades; face up: garden, black-eyed. Bob holds blue red chili, Cy stink
    green, Dan blue stink (all hidden)."""
    hands = {0: "red soy red blue", 1: "blue red chili", 2: "stink green", 3: "blue stink"}
    game = table(hands=hands, deck="garden black-eyed soy soy soy")
    return game.plant_front(0).do(0, EndPlanting())


def step(game: Game, actions: dict[int, list[Action]]) -> tuple[Game, list]:
    state, refusals, _ = apply_step(game.state, actions)
    return Game(state, game.known, game.orders), refusals


# --- Acceptances and withdrawals ---------------------------------------------------------------


@pytest.mark.parametrize("maker, taker", [(0, 1), (0, 3), (1, 0), (3, 0)])
def test_an_acceptance_holds_against_a_withdrawal_of_the_same_step(maker, taker):
    """Maker below and above the accepter: the trade happens, the withdrawal finds nothing."""
    game = at_trading()
    garden = game.state.face_up[0]
    if maker == 0:
        offer = MakeOffer(taker, give_face_up=(garden,), want_beans=((Bean.BLUE, 1),))
        paid = game.hand_slot(taker, 1)  # blue
    else:
        offer = MakeOffer(0, give_hand=(game.hand_slot(maker, 1),), want_beans=((Bean.SOY, 1),))
        paid = game.hand_slot(0, 1)  # soy
    game = game.do(maker, offer)
    game, refusals = step(game, {taker: [Accept(1, (paid,))], maker: [Withdraw(1)]})
    assert paid[1] in game.state.players[maker].pending and game.state.offers == ()
    assert [(r.seat, r.action, r.reason) for r in refusals] == [
        (maker, Withdraw(1), "there is no open offer 1")
    ]


def test_an_acceptance_holds_when_the_active_player_ends_trading_in_the_same_step():
    game = at_trading()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(2, give_face_up=(garden,)))
    game, refusals = step(game, {2: [Accept(1)], 0: [EndTrading()]})
    assert refusals == [] and game.state.players[2].pending == (garden,)
    assert game.state.phase is Phase.PLANT_PENDING


def test_an_offer_made_in_the_step_trading_ends_is_made_and_lapses():
    game = at_trading()
    blue = game.hand_slot(3, 1)
    game, refusals = step(game, {3: [MakeOffer(0, give_hand=(blue,))], 0: [EndTrading()]})
    assert refusals == [] and game.state.offers == () and game.state.phase is Phase.PLANT_PENDING


# --- Bids on offers to everyone ----------------------------------------------------------------


def test_a_gift_to_everyone_raced_by_every_seat_gets_a_bid_from_each_and_its_maker_chooses():
    game = at_trading()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(None, give_face_up=(garden,)))
    game, refusals = step(game, {3: [Accept(1)], 1: [Accept(1)], 2: [Accept(1)]})
    assert refusals == [] and {b.bidder for b in game.state.bids} == {1, 2, 3}
    assert game.state.players[1].pending == () and garden in game.state.face_up
    game, refusals = step(game, {0: [Take(1, 2)]})
    assert game.state.players[2].pending == (garden,) and game.state.bids == ()


def test_bids_on_one_offer_in_different_steps_all_stand_until_the_maker_takes_one():
    """No bid wins by its timing: the first bid waits for the later ones."""
    game = at_trading()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(None, give_face_up=(garden,), want_beans=((Bean.BLUE, 1),)))
    dans_blue, bobs_blue = game.hand_slot(3, 1), game.hand_slot(1, 1)
    game, _ = step(game, {3: [Accept(1, (dans_blue,))]})
    game, _ = step(game, {1: [Accept(1, (bobs_blue,))]})
    assert [b.bidder for b in game.state.bids] == [3, 1]
    game, _ = step(game, {0: [Take(1, 1)]})
    assert game.state.players[0].pending == (bobs_blue[1],)
    assert game.state.players[1].pending == (garden,) and game.state.bids == ()


@pytest.mark.parametrize(
    "closing",
    [[Take(1, 3)], [Withdraw(1)], [EndTrading()]],
    ids=["another-bid-taken", "offer-withdrawn", "trading-ended"],
)
def test_a_bid_in_the_step_its_offer_closes_is_placed_and_lapses(closing):
    game = at_trading()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(None, give_face_up=(garden,), want_beans=((Bean.BLUE, 1),)))
    game, _ = step(game, {3: [Accept(1, (game.hand_slot(3, 1),))]})
    late = game.hand_slot(1, 1)
    game, refusals = step(game, {1: [Accept(1, (late,))], 0: closing})
    assert refusals == [] and game.state.bids == () and game.state.players[1].pending == ()
    assert game.state.players[1].hand[0].card == late[1]  # a bid shows what it names


def test_a_take_holds_when_the_bidder_withdraws_that_bid_in_the_same_step():
    game = at_trading()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(None, give_face_up=(garden,)))
    game, _ = step(game, {2: [Accept(1)]})
    game, refusals = step(game, {2: [Withdraw(1)], 0: [Take(1, 2)]})
    assert game.state.players[2].pending == (garden,)
    assert [(r.seat, r.action) for r in refusals] == [(2, Withdraw(1))]


def test_a_bid_withdrawn_before_the_take_is_gone_and_its_cards_are_free_again():
    game = at_trading()
    wants = ((Bean.STINK, 1),)
    game = game.do(0, MakeOffer(None, give_face_up=game.state.face_up[:1], want_beans=wants))
    stink = game.hand_slot(3, 2)
    game, _ = step(game, {3: [Accept(1, (stink,))]})
    assert game.state.bids == (Bid(1, 3, (stink[0],)),)
    with pytest.raises(ForbiddenAction, match="promised in your bid on offer 1"):
        apply_step(game.state, {3: [MakeOffer(0, give_hand=(stink,))]})
    game, _ = step(game, {3: [Withdraw(1)]})
    game, refusals = step(game, {3: [MakeOffer(0, give_hand=(stink,))]})
    assert refusals == [] and game.state.offers[-1].give_hand == (stink[0],)


# --- Promised cards: counters, two offers, face-up cards wanted twice ---------------------------


def test_a_card_is_never_in_two_deals_so_its_maker_withdraws_before_offering_it_again():
    game = at_trading()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(1, give_face_up=(garden,)))
    again = MakeOffer(2, give_face_up=(garden,))
    with pytest.raises(ForbiddenAction, match=r"promised in your offer 1.*from the next step on"):
        apply_step(game.state, {0: [Withdraw(1), again]})  # the withdrawal counts at the end
    game, _ = step(game, {0: [Withdraw(1)]})
    game, refusals = step(game, {0: [again]})
    assert refusals == [] and game.state.offers[-1].to == 2


def test_a_counter_to_a_standing_offer_waits_for_the_original_to_be_withdrawn():
    """Ann offers Bob the garden; Bob counters (his red for the garden). While the original
    stands its garden is promised to it, so Ann cannot accept the counter in the same step as
    Bob might accept the original; she withdraws first, and Bob's acceptance of that step
    would still hold."""
    game = at_trading()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(1, give_face_up=(garden,), want_beans=((Bean.CHILI, 1),)))
    counter = MakeOffer(0, give_hand=(game.hand_slot(1, 2),), want_cards=(garden,))
    game, _ = step(game, {1: [counter]})
    with pytest.raises(ForbiddenAction, match="promised in your offer 1"):
        apply_step(game.state, {0: [Accept(2)]})
    game, _ = step(game, {0: [Withdraw(1)]})
    game, refusals = step(game, {0: [Accept(2)]})
    assert refusals == [] and game.state.players[1].pending == (garden,)


def test_offers_wanting_the_same_face_up_card_the_active_player_accepts_one_the_rest_lapse():
    game = at_trading()
    garden = game.state.face_up[0]
    game, refusals = step(game, {
        1: [MakeOffer(0, give_hand=(game.hand_slot(1, 1),), want_cards=(garden,))],
        3: [MakeOffer(0, give_hand=(game.hand_slot(3, 1),), want_cards=(garden,))],
    })  # fmt: skip
    assert refusals == [] and [o.maker for o in game.state.offers] == [1, 3]
    accept_both = [Accept(1), Accept(2)]
    with pytest.raises(ForbiddenAction, match=r"not open to you|no open offer"):
        apply_step(game.state, {0: accept_both})
    game, refusals = step(game, {0: [Accept(2)], 1: [Withdraw(1)]})
    assert game.state.players[3].pending == (garden,) and game.state.offers == ()
    assert [(r.seat, r.action) for r in refusals] == [(1, Withdraw(1))]


def test_an_action_names_only_offers_that_stood_when_the_step_began():
    game = at_trading()
    offer = MakeOffer(1, give_face_up=game.state.face_up[:1])
    with pytest.raises(ForbiddenAction, match="offer 1 is not on the table yet"):
        apply_step(game.state, {0: [offer, Withdraw(1)]})
    with pytest.raises(RuleError, match="there is no open offer 7"):
        apply_own(game.state, 1, [Accept(7)])


def test_the_groups_of_a_step():
    game = at_trading()
    game = game.do(0, MakeOffer(None, give_face_up=game.state.face_up[:1]))
    state = game.state
    moves = (MakeOffer(1), Reject(1), Accept(1), Take(1, 2))
    assert [group_of(state, 0, a) for a in moves] == [
        Group.OFFERS, Group.REJECTIONS, Group.DEALS, Group.TAKES,
    ]  # fmt: skip
    assert group_of(state, 2, Withdraw(1)) is Group.BID_WITHDRAWALS
    assert group_of(state, 0, Withdraw(1)) is Group.OFFER_WITHDRAWALS
    assert group_of(state, 0, EndTrading()) is Group.END_OF_TRADING


# --- Any numbering of the seats gives the same step ---------------------------------------------


def relabel(state: State, perm: list[int]) -> State:
    """The same table with seat s renamed perm[s]."""
    inverse = sorted(range(len(perm)), key=lambda s: perm[s])
    result = state.result
    if result is not None:
        result = Result(
            tuple(result.scores[s] for s in inverse),
            tuple(result.hand_counts[s] for s in inverse),
            tuple(sorted(perm[w] for w in result.winners)),
        )
    return replace(
        state,
        players=tuple(state.players[s] for s in inverse),
        start_player=perm[state.start_player],
        active=perm[state.active],
        offers=tuple(
            replace(o, maker=perm[o.maker], to=None if o.to is None else perm[o.to])
            for o in state.offers
        ),
        bids=tuple(replace(b, bidder=perm[b.bidder]) for b in state.bids),
        rejections=frozenset((i, perm[s]) for i, s in state.rejections),
        result=result,
    )


def relabel_action(action: Action, perm: list[int]) -> Action:
    if isinstance(action, MakeOffer) and action.to is not None:
        return replace(action, to=perm[action.to])
    if isinstance(action, Take):
        return replace(action, bidder=perm[action.bidder])
    return action


def outcome(state: State) -> tuple:
    """What a step decided, offers named by what they are (their ids are only names given in
    seat order) and the discard pile as a set (its order is never read: a reshuffle sorts)."""
    terms = {
        o.id: (o.maker, o.to, o.give_hand, o.give_face_up, o.want_cards, o.want_beans)
        for o in state.offers
    }
    return (
        replace(state, offers=(), bids=(), rejections=frozenset(), discard=()),
        sorted(terms.values(), key=repr),
        sorted(((terms[b.offer], b.bidder, b.give_hand) for b in state.bids), key=repr),
        sorted(((terms[i], s) for i, s in state.rejections), key=repr),
        sorted(state.discard),
    )


def seat_actions(data, state: State, seat: int, hand) -> list[Action]:
    """Up to three actions the seat may send together, drawn from what it may do (trading
    moves more often than harvests, which are many and meet nothing)."""
    chosen: list[Action] = []
    rng = Stream(data.draw(st.binary(min_size=16, max_size=16)), "offers")
    for _ in range(data.draw(st.integers(0, 3))):
        current = apply_own(state, seat, chosen)
        options: list[Action] = legal_actions(current, seat, hand)
        offer = random_offer(current, seat, hand, rng)
        options += [offer] if offer is not None else []
        trading = [a for a in options if not isinstance(a, Harvest | BuyField)]
        if trading and data.draw(st.integers(0, 4)):
            options = trading
        if not options:
            break
        candidate = data.draw(st.sampled_from(options))
        try:
            apply_own(state, seat, [*chosen, candidate])
        except RuleError:
            continue
        chosen.append(candidate)
    return chosen


def a_state(players: int, seed: bytes, moves: int, trading: bool) -> State:
    """A state of random play after about `moves` moves (with `trading`, the next state in
    step 2's trading from there on, if the game has one)."""
    state = None
    for number, move in enumerate(random_moves(players, seed)):
        state = move.after or move.before
        if number >= moves and (not trading or state.phase is Phase.TRADE):
            break
    assert state is not None
    return state


def assert_numbering_does_not_count(data, state: State, actions) -> State:
    """The step's outcome under other numberings of the seats is the same outcome renamed;
    only withdrawals are refused. Returns the step's outcome."""
    players = len(state.players)
    first, refusals, applied = apply_step(state, actions)
    assert all(isinstance(r.action, Withdraw) for r in refusals), refusals
    opened_by_applied = {
        slot for a in applied if a.seat is not None
        for slot, _ in hand_cards_opened(a.before, a.seat, a.action)
    }  # fmt: skip
    for seat, own in actions.items():
        opened = {slot for a in own for slot, _ in hand_cards_opened(state, seat, a)}
        assert opened <= opened_by_applied
    rotation = data.draw(st.integers(1, players - 1))
    perms = [[(s + rotation) % players for s in range(players)]]
    if first.turn == state.turn:
        perms.append(data.draw(st.permutations(range(players))))
    for perm in perms:
        renamed = {perm[s]: [relabel_action(a, perm) for a in own] for s, own in actions.items()}
        second, second_refusals, _ = apply_step(relabel(state, perm), renamed)
        assert outcome(second) == outcome(relabel(first, perm))
        assert sorted((perm[r.seat], repr(r.action)) for r in refusals) == sorted(
            (r.seat, repr(r.action)) for r in second_refusals
        )
    return first


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(3, 7),
    seed=st.binary(min_size=16, max_size=16),
    moves=st.integers(0, 600),
    trading=st.booleans(),
    data=st.data(),
)
def test_a_step_ends_alike_however_the_seats_are_numbered(players, seed, moves, trading, data):
    """Over states of random play (half of them in trading) and three steps of moves that
    every seat may send together: renumbering the seats (which changes who is evaluated
    first) renumbers each step's outcome and changes nothing else; the only moves refused are
    withdrawals of what the step traded or closed, so every hand card a step opens belongs to
    a move that took effect. (A renumbering keeps the clockwise order only if it is a
    rotation, so a step that passes the turn on is compared under rotations.)"""
    state = a_state(players, seed, moves, trading)
    cards = OpenTable(seed)
    for _ in range(3):
        if state.phase in (Phase.OVER, Phase.REVEAL):
            return
        actions = {}
        for seat in range(players):
            chosen = seat_actions(data, state, seat, cards.hand(state, seat))
            if chosen:
                actions[seat] = chosen
        state = assert_numbering_does_not_count(data, state, actions)


@pytest.mark.parametrize("harvester", [1, 3])
def test_a_harvest_sent_in_the_step_that_ends_step_3_is_sold_before_the_step_4_draw(harvester):
    """The draw waits for every move of its step, so what a reshuffle takes from the discard
    pile does not depend on whose seat is lower: the harvest is in the new deck either way."""
    game = table(
        hands={0: "red soy"},
        fields={0: ["", "black-eyed"], harvester: ["green green", ""]},
        deck="black-eyed black-eyed soy soy soy",  # the step-4 draw takes the last three
        rest="discard",
    )
    game = game.plant_front(0).do(0, EndPlanting()).do(0, EndTrading())
    first, last = game.state.players[0].pending
    game = game.do(0, PlantPending(first, 1))
    greens = game.state.players[harvester].fields[0]
    after, refusals, applied = apply_step(
        game.state, {0: [PlantPending(last, 1)], harvester: [Harvest(0)]}
    )
    assert refusals == [] and after.turn == 2 and after.exhaustions == 1
    assert set(greens) <= set(after.epochs[1])
    assert isinstance(applied[-1].action, DrawForTable) and applied[-1].seat is None
