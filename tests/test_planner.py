"""The planner (client.bots.planner, client.bots.farm, client.bots.trading) in exact situations:
what it plants, harvests, buys, offers and accepts, and the odds and values it judges them by."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from client.bots import PlannerBot
from client.bots.farm import (
    BEAN_INDEX,
    EMPTY,
    expected_coins,
    may_harvest,
    outlook,
    plan_planting,
    unseen_cards,
)
from protocol.cards import BEANS, CARDS_OF, Bean, bean_of, parse_bean
from protocol.rules import (
    Accept,
    BuyField,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Options,
    Plant,
    PlantPending,
    Reject,
    SingletonRule,
    Take,
    legal_actions,
)
from tests.rules_helpers import table

GREEN, RED, SOY, BLUE = (BEAN_INDEX[b] for b in (Bean.GREEN, Bean.RED, Bean.SOY, Bean.BLUE))


def test_cards_to_plant_go_in_the_order_that_keeps_a_pair():
    """The issue's game: green first makes green 2, and red then forces harvesting it for
    nothing; red first clears the single soy, and green still makes a pair."""
    game = table(hands={0: "chili chili"}, fields={1: ["green", "soy"]}, deck="green red")
    game = game.plant_front(0).do(0, EndPlanting())
    green, red = game.state.face_up
    game = game.do(0, MakeOffer(1, give_face_up=(green, red))).do(1, Accept(1))
    game = game.do(0, EndTrading())
    assert PlannerBot().decide(game.state, 1, game.hand(1)) == [
        Harvest(1),
        PlantPending(red, 1),
        PlantPending(green, 0),
    ]


def test_planting_plans_search_every_order_under_the_one_bean_rule():
    out = outlook(table(hands={0: "chili"}).state, 0, {})
    plan = plan_planting([(GREEN, 1), (SOY, 1)], [GREEN, RED], [], out)
    assert plan.steps == (("harvest", 1, 0), ("plant", RED, 1), ("plant", GREEN, 0))


def test_the_front_card_goes_on_its_field_and_the_next_one_too_where_it_fits():
    game = table(hands={0: "blue chili soy"}, fields={0: ["blue blue", "chili chili"]})
    blue, chili = game.hand_slot(0, 1)[1], game.hand_slot(0, 2)[1]
    assert PlannerBot().decide(game.state, 0, game.hand(0)) == [Plant(0, blue), Plant(1, chili)]


def test_a_hand_card_that_would_force_a_bad_harvest_is_offered_away():
    game = table(
        hands={0: "blue soy chili chili"},
        fields={0: ["blue blue blue blue blue", "chili chili chili chili chili"]},
        deck="blue chili",
    )
    game = game.plant_front(0).do(0, EndPlanting())
    soy = game.hand_slot(0, 1)
    actions = PlannerBot().decide(game.state, 0, game.hand(0))
    offers = [a for a in actions if isinstance(a, MakeOffer)]
    assert any(a.give_hand == (soy,) and a.to is None for a in offers)
    assert not any(a.give_face_up for a in offers)  # both face-up cards grow its fields


def test_the_planner_asks_the_active_player_for_a_face_up_card_that_grows_a_field():
    game = table(
        hands={0: "chili chili", 1: "red"},
        fields={0: ["chili chili", ""], 1: ["blue blue blue", "stink stink"]},
        deck="blue garden",
    )
    game = game.plant_front(0).do(0, EndPlanting())
    blue = game.state.face_up[0]
    actions = PlannerBot().decide(game.state, 1, game.hand(1))
    assert MakeOffer(0, want_cards=(blue,)) in actions


def test_the_planner_takes_a_gift_that_grows_a_field_and_refuses_one_that_forces_a_harvest():
    game = table(
        hands={0: "chili soy", 1: "red", 2: "red"},
        fields={
            1: ["blue blue blue", "stink stink"],
            2: ["green green green green", "soy soy soy"],
        },
        deck="blue black-eyed",
    )
    game = game.plant_front(0).do(0, EndPlanting())
    blue, black_eyed = game.state.face_up
    game = game.do(0, MakeOffer(1, give_face_up=(blue,)))
    game = game.do(0, MakeOffer(2, give_face_up=(black_eyed,)))
    assert PlannerBot().decide(game.state, 1, game.hand(1))[0] == Accept(1)
    assert PlannerBot().decide(game.state, 2, game.hand(2))[0] == Reject(2)


def test_the_third_field_is_bought_while_it_has_time_to_pay():
    early = table(
        hands={0: "soy soy soy soy"},
        fields={0: ["blue blue", "stink stink"]},
        earnings={0: "green green green"},
    )
    assert PlannerBot().decide(early.state, 0, early.hand(0)) == [BuyField()]
    late = replace(early.state, exhaustions=2, deck=replace(early.state.deck, drawn=125))
    assert BuyField() not in PlannerBot().decide(late, 0, early.hand(0))


def test_a_field_that_can_earn_no_more_is_sold():
    game = table(hands={0: "chili", 1: "soy"}, fields={1: ["red red red red red", ""]})
    assert PlannerBot().decide(game.state, 1, game.hand(1)) == [Harvest(0)]


def test_the_unseen_cards_are_the_deck_less_every_public_card_and_the_own_hand():
    game = table(
        hands={0: "red red", 1: "red"},
        fields={2: ["red red", ""]},
        discard="red",
        earnings={3: "red"},
    )
    unseen = unseen_cards(game.state, game.hand(0))
    # 8 reds: 2 in seat 0's hand, 4 public; seat 1's red and one in the deck are unseen.
    assert unseen[RED] == 2
    assert sum(unseen) == len(game.state.hidden[0]) - 2


def test_the_turns_left_shrink_as_the_deck_runs_out():
    game = table(hands={0: "chili"})
    start = outlook(game.state, 0, game.hand(0))
    last_pass = replace(game.state, exhaustions=2)
    end = outlook(last_pass, 0, game.hand(0))
    assert start.own_turns > end.own_turns > 0
    assert abs(sum(start.odds) - 1) < 1e-9


@given(
    st.sampled_from(range(len(BEANS))),
    st.integers(0, 14),
    st.floats(0, 8),
    st.floats(0, 8),
)
def test_expected_coins_grow_with_the_cards_to_come(bean, cards, more, extra):
    now = expected_coins(bean, cards, 0.0)
    assert now == expected_coins(bean, cards, 0.0)
    assert expected_coins(bean, cards, more) >= now - 1e-9
    assert expected_coins(bean, cards, more + extra) >= expected_coins(bean, cards, more) - 1e-9
    assert expected_coins(bean, cards + 1, more) >= expected_coins(bean, cards, more) - 1e-9


def test_an_empty_field_is_planted_on_only_when_no_field_of_the_bean_exists():
    out = outlook(table(hands={0: "chili"}).state, 0, {})
    plan = plan_planting([(BLUE, 2), (EMPTY, 0)], [BLUE], [], out)
    assert plan.steps == (("plant", BLUE, 0),)
    assert bean_of(CARDS_OF[Bean.BLUE][0]) is Bean.BLUE


@given(
    st.lists(st.tuples(st.sampled_from(["blue", "stink", "green"]), st.integers(0, 3)), min_size=2,
             max_size=3),
    st.sampled_from(list(SingletonRule)),
)  # fmt: skip
def test_the_one_bean_rule_is_the_engines(layout, rule):
    fields = [" ".join([bean] * count) for bean, count in layout]
    game = table(hands={0: "chili"}, fields={0: fields}, options=Options(rule))
    engine = {a.field for a in legal_actions(game.state, 0) if isinstance(a, Harvest)}
    farm = [(BEAN_INDEX[parse_bean(b)], n) if n else (EMPTY, 0) for b, n in layout]
    assert {i for i in range(len(farm)) if may_harvest(farm, i, rule)} == engine


def test_among_takers_the_planner_takes_the_bid_that_helps_its_rival_least():
    game = table(
        hands={0: "chili chili", 1: "blue", 2: "blue", 3: "soy"},
        fields={
            0: ["blue blue blue", "chili chili"],
            1: ["garden garden", "stink"],
            2: ["", "stink"],
        },
        deck="garden red",
    )
    game = game.plant_front(1).do(0, EndPlanting())
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(None, give_face_up=(garden,), want_beans=((Bean.BLUE, 1),)))
    for bidder in (1, 2):  # each gives a blue; the garden makes 3 coins for seat 1, none for 2
        game = game.do(bidder, Accept(1, give_hand=(game.hand_slot(bidder, 1),)))
    game = game.do(3, Reject(1))
    assert PlannerBot().decide(game.state, 0, game.hand(0)) == [Take(1, 2)]
