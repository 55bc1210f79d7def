"""The rules engine, case by case: every row of RULES.md's edge-case table (section 10), every
mistake the issue names, and the set-up, turn, trading and deck rules. Each test names its rule.
"""

import pytest

from protocol.cards import Bean, bean_of
from protocol.rules import (
    Accept,
    Bid,
    BuyField,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Options,
    Phase,
    Plant,
    PlantPending,
    Reject,
    RevealFaceUp,
    RuleError,
    ShowHandCards,
    SingletonRule,
    Take,
    Withdraw,
    apply,
    canonical,
    hand_cards_opened,
    legal_actions,
    new_game,
    state_hash,
    waiting_for,
)
from tests.rules_helpers import Game, table

LITERAL = Options(SingletonRule.RIO_GRANDE_LITERAL)


def beans_of(cards):
    return [bean_of(c).value for c in cards]


def to_trading(game: Game) -> Game:
    """The active player plants its front card and stops: step 2 with the face-up cards."""
    return game.plant_front(0).do(game.state.active, EndPlanting())


# --- Set-up ----------------------------------------------------------------------------------


def test_setup_the_start_player_is_an_input_and_is_active_first():
    state = new_game(5, start_player=3)
    assert (state.active, state.phase, state.turn) == (3, Phase.PLANT, 1)


def test_setup_six_and_seven_players_deal_3_4_5_then_6_clockwise_from_the_start_player():
    state = new_game(7, start_player=5)
    sizes = {seat: len(p.hand) for seat, p in enumerate(state.players)}
    assert sizes == {5: 3, 6: 4, 0: 5, 1: 6, 2: 6, 3: 6, 4: 6}


def test_setup_three_players_start_with_three_fields_and_may_not_buy_one():
    game = table(3, hands={0: "chili"}, earnings={1: "soy soy soy soy"})
    assert all(len(p.fields) == 3 for p in game.state.players)
    with pytest.raises(RuleError, match="with 3 players everyone has three fields"):
        game.do(1, BuyField())


def test_hidden_cards_a_dealt_hand_card_is_not_in_the_shared_state_until_opened():
    state = new_game(4, 0)
    assert all(h.card is None for p in state.players for h in p.hand)
    game = table(4, hands={0: "chili soy"})
    front = game.hand_slot(0, 1)[1]
    planted = game.plant_front(0)
    assert planted.state.players[0].fields[0] == (front,)
    assert planted.state.players[0].hand[0].card is None  # the soy behind it stays hidden
    assert front not in planted.state.hidden[0]


# --- Step 1: planting ------------------------------------------------------------------------


def test_step1_the_front_card_must_be_planted_before_stopping():
    game = table(hands={0: "chili soy"})
    with pytest.raises(RuleError, match="front card of your hand must be planted first"):
        game.do(0, EndPlanting())
    game = game.plant_front(0).do(0, EndPlanting())
    assert game.field_beans(0) == [["chili"], []]
    assert game.state.phase is Phase.TRADE


def test_step1_only_the_front_card_can_be_planted():
    # Plant takes no hand position; claiming another card's identity for the front slot is
    # refused once that other card is known.
    game = table(hands={0: "chili soy red"}, deck="blue blue")
    game = game.plant_front(0).do(0, EndPlanting())
    red_slot, red = game.hand_slot(0, 2)
    game = game.do(0, MakeOffer(1, give_hand=((red_slot, red),), want_beans=((Bean.BLUE, 1),)))
    before = game.state
    with pytest.raises(RuleError, match="step 1"):
        game.do(0, Plant(1, red))
    assert game.state is before


def test_edge_12_the_second_planting_is_optional_and_a_third_never_happens():
    game = table(hands={0: "chili soy red"})
    game = game.plant_front(0).plant_front(1)
    assert game.state.phase is Phase.TRADE  # step 1 ends after two plantings
    assert game.hand_beans(0) == ["red"]
    with pytest.raises(RuleError, match="planting from the hand is step 1"):
        game.do(0, Plant(0, game.hand_slot(0, 1)[1]))
    stopped = table(hands={0: "chili soy"}).plant_front(0).do(0, EndPlanting())
    assert stopped.hand_beans(0) == ["soy"]


def test_step1_a_card_that_fits_no_field_needs_a_harvest_first_and_the_error_says_so():
    game = table(hands={0: "soy"}, fields={0: ["chili chili", "red red"]})
    soy = game.hand_slot(0, 1)[1]
    assert not [a for a in legal_actions(game.state, 0, game.hand(0)) if isinstance(a, Plant)]
    with pytest.raises(RuleError, match="field 1 holds chili; soy needs an empty field or a soy"):
        game.do(0, Plant(0, soy))
    game = game.do(0, Harvest(1)).do(0, Plant(1, soy))
    assert game.field_beans(0) == [["chili", "chili"], ["soy"]]


def test_step1_the_error_for_a_wrong_field_names_the_fields_that_fit():
    game = table(hands={0: "soy"}, fields={0: ["chili", ""]})
    with pytest.raises(RuleError, match="it fits field 2"):
        game.do(0, Plant(0, game.hand_slot(0, 1)[1]))


def test_edge_13_an_empty_hand_skips_step_1():
    game = table(hands={0: "chili"}, deck="chili chili soy soy soy red red")
    game = game.plant_front(0)  # the hand is now empty: straight on to step 2
    assert game.state.phase is Phase.TRADE
    assert beans_of(game.state.face_up) == ["chili", "chili"]
    game = game.do(0, EndTrading())
    game = game.do(0, PlantPending(game.state.players[0].pending[0], 0))
    game = game.do(0, PlantPending(game.state.players[0].pending[0], 0))
    # Seat 0 drew three cards; seat 1 has no hand, so its turn starts at step 2.
    assert game.hand_beans(0) == ["soy", "soy", "soy"]
    assert (game.state.active, game.state.phase) == (1, Phase.TRADE)
    assert beans_of(game.state.face_up) == ["red", "red"]


def test_only_the_active_player_plants_from_the_hand():
    game = table(hands={0: "chili", 1: "soy"})
    with pytest.raises(RuleError, match="only the active player plants"):
        game.do(1, Plant(0, game.hand_slot(1, 1)[1]))


# --- Harvesting and the one-bean rule ------------------------------------------------------


def test_edge_9_a_player_harvests_outside_its_turn_in_every_step():
    game = table(
        hands={0: "chili soy"},
        fields={2: ["soy soy soy", "red red"], 3: ["blue blue", ""]},
        deck="green green",
    )
    game = game.do(2, Harvest(0))  # during seat 0's step 1
    assert game.state.players[2].earnings and game.field_beans(2)[0] == []
    game = to_trading(game).do(2, Harvest(1))  # during trading
    game = game.do(0, EndTrading()).do(3, Harvest(0))  # during step 3
    assert game.field_beans(3) == [[], []]


def test_edge_21_a_harvest_always_sells_the_whole_field():
    game = table(hands={0: "red"}, fields={1: ["blue blue blue blue blue", ""]})
    game = game.do(1, Harvest(0))
    assert game.field_beans(1) == [[], []]
    assert len(game.state.players[1].earnings) == 1  # 5 blue pay 1 coin (4/6/8/10)
    assert beans_of(game.state.discard) == ["blue"] * 4


def test_edge_19_a_harvest_pays_at_most_four_coins_and_garden_at_most_three():
    game = table(
        hands={0: "red"},
        fields={1: [" ".join(["stink"] * 12), " ".join(["garden"] * 6)]},
    )
    game = game.do(1, Harvest(0)).do(1, Harvest(1))
    assert beans_of(game.state.players[1].earnings) == ["stink"] * 4 + ["garden"] * 3


def test_edge_10_one_bean_rule_a_single_bean_waits_while_another_field_holds_two_or_more():
    game = table(hands={0: "red"}, fields={1: ["chili", "soy", "stink stink stink stink"]})
    for single in (0, 1):
        with pytest.raises(RuleError, match="one-bean rule"):
            game.do(1, Harvest(single))
    assert [a for a in legal_actions(game.state, 1) if isinstance(a, Harvest)] == [Harvest(2)]


def test_edge_10_one_bean_rule_when_every_field_holds_one_bean_any_may_be_harvested():
    game = table(hands={0: "red"}, fields={1: ["chili", "soy", "stink"]})
    harvests = [a for a in legal_actions(game.state, 1) if isinstance(a, Harvest)]
    assert harvests == [Harvest(0), Harvest(1), Harvest(2)]
    assert game.do(1, Harvest(1)).field_beans(1) == [["chili"], [], ["stink"]]


def test_edge_10_one_bean_rule_single_bean_beside_an_empty_field_default_and_literal():
    default = table(hands={0: "red"}, fields={1: ["chili", ""]})
    assert default.do(1, Harvest(0)).field_beans(1) == [[], []]
    literal = table(hands={0: "red"}, fields={1: ["chili", ""]}, options=LITERAL)
    with pytest.raises(RuleError, match="literal Rio Grande rule"):
        literal.do(1, Harvest(0))
    all_single = table(hands={0: "red"}, fields={1: ["chili", "soy"]}, options=LITERAL)
    assert all_single.do(1, Harvest(0)).field_beans(1) == [[], ["soy"]]


def test_edge_10_a_field_of_two_is_always_harvestable_even_for_no_coins():
    game = table(hands={0: "red"}, fields={1: ["chili chili", "soy"]})
    game = game.do(1, Harvest(0))
    assert game.state.players[1].earnings == ()
    assert beans_of(game.state.discard) == ["chili", "chili"]


def test_harvesting_an_empty_or_missing_field_is_refused():
    game = table(hands={0: "red"})
    with pytest.raises(RuleError, match="field 1 is empty"):
        game.do(1, Harvest(0))
    with pytest.raises(RuleError, match="there is no field 3"):
        game.do(1, Harvest(2))


# --- The third field -------------------------------------------------------------------------


def test_edge_6_and_7_third_field_once_paid_with_the_newest_coins_onto_the_discard_pile():
    game = table(hands={0: "red"}, earnings={1: "chili chili soy soy red"})
    old = game.state.players[1].earnings
    game = game.do(1, BuyField())  # off-turn
    player = game.state.players[1]
    assert len(player.fields) == 3
    assert player.earnings == old[:2]  # the oldest coins stay
    assert game.state.discard == tuple(reversed(old[2:]))  # the top coin goes down first
    with pytest.raises(RuleError, match="only once"):
        game.do(1, BuyField())


def test_third_field_costs_two_with_six_players_and_needs_the_coins():
    game = table(6, hands={0: "red"}, earnings={1: "soy soy", 2: "soy"})
    assert len(game.do(1, BuyField()).state.players[1].earnings) == 0
    with pytest.raises(RuleError, match="costs 2 coins; you have 1"):
        game.do(2, BuyField())


def test_edge_7_and_8_paid_coins_return_with_the_reshuffle_earned_coins_stay():
    game = table(
        hands={0: "chili chili"},
        deck="soy",
        earnings={1: "red red red red"},
        rest="discard",
    )
    coins_before = game.state.players[1].earnings
    game = game.do(1, BuyField())
    game = to_trading(game)  # the face-up draw takes the last card, so the pile is reshuffled
    assert game.state.exhaustions == 1
    assert set(coins_before[1:]) <= set(game.state.epochs[1])  # the paid coins are back
    assert game.state.players[1].earnings == coins_before[:1]  # the kept coin stays
    assert coins_before[0] not in game.state.epochs[1]


# --- The deck, exhaustion and the end ---------------------------------------------------


def test_edge_1_deck_runs_out_while_turning_face_up_cards_reshuffle_and_keep_drawing():
    game = table(hands={0: "chili chili"}, deck="soy", rest="discard")
    pile = set(game.state.discard)
    game = to_trading(game)
    assert game.state.exhaustions == 1
    assert len(game.state.face_up) == 2  # one from the old deck, one from the new
    assert bean_of(game.state.face_up[0]) is Bean.SOY
    assert set(game.state.epochs[1]) == pile and game.state.discard == ()
    assert game.state.deck.epoch == 1 and game.state.deck.drawn == 1


def test_edge_2_final_exhaustion_while_turning_finishes_steps_2_and_3_then_ends():
    game = table(hands={0: "chili", 1: "soy soy"}, deck="red", rest="discard", exhaustions=2)
    game = game.plant_front(0)  # empty hand: step 2 at once, and the last card is drawn
    assert beans_of(game.state.face_up) == ["red"]  # only the card that was there
    assert game.state.phase is Phase.TRADE and game.state.result is None
    red = game.state.face_up[0]
    game = game.do(0, MakeOffer(1, give_face_up=(red,)))
    game = game.do(1, Accept(1))  # trading goes on after the final exhaustion
    game = game.do(0, EndTrading())
    assert game.state.phase is Phase.PLANT_PENDING and game.state.result is None
    game = game.do(1, PlantPending(red, 0))
    assert game.state.phase is Phase.OVER
    assert game.state.players[0].hand == ()  # step 4 was skipped: nothing drawn


def test_edge_2_final_exhaustion_on_the_second_face_up_card_shows_both():
    game = table(hands={0: "chili chili"}, deck="red soy", rest="discard", exhaustions=2)
    game = to_trading(game)
    assert beans_of(game.state.face_up) == ["red", "soy"]
    assert game.state.ends_after_step3


def test_edge_3_and_5_final_exhaustion_in_step_4_ends_the_game_at_once():
    game = table(hands={0: "chili"}, deck="red red soy soy", rest="discard", exhaustions=2)
    game = game.plant_front(0).do(0, EndTrading())
    game = game.do(0, PlantPending(game.state.players[0].pending[0], 1))
    game = game.do(0, PlantPending(game.state.players[0].pending[0], 1))
    # Two cards were left: both drawn, the third draw never happens, nor the next turn.
    assert game.state.phase is Phase.OVER
    assert game.hand_beans(0) == ["soy", "soy"]
    assert game.state.active == 0


def test_game_length_three_players_end_at_the_second_exhaustion_others_at_the_third():
    three = table(3, hands={0: "chili"}, deck="red red soy", rest="discard", exhaustions=1)
    four = table(4, hands={0: "chili"}, deck="red red soy", rest="discard", exhaustions=1)
    for game in (three, four):
        game = game.plant_front(0).do(0, EndTrading())
        for _ in range(2):
            game = game.do(0, PlantPending(game.state.players[0].pending[0], 1))
        finished = game.state.phase is Phase.OVER
        assert finished == (game.state.setup.players == 3)
        assert game.state.exhaustions == 2


def test_step4_draws_three_to_the_back_of_the_hand_in_deck_order():
    game = table(hands={0: "chili soy"}, deck="red red blue green stink")
    slots_before = [h.slot for h in game.state.players[0].hand]
    game = to_trading(game).do(0, EndTrading())
    for _ in range(2):
        game = game.do(0, PlantPending(game.state.players[0].pending[0], 1))
    hand = [h.slot for h in game.state.players[0].hand]
    assert hand[:1] == slots_before[1:]
    assert [s.position for s in hand[1:]] == sorted(s.position for s in hand[1:])
    assert game.hand_beans(0) == ["soy", "blue", "green", "stink"]
    assert game.state.active == 1


def test_step4_six_and_seven_players_draw_four():
    game = table(6, hands={0: "chili"}, deck="red red blue green stink soy black-eyed")
    game = game.plant_front(0).do(0, EndTrading())
    for _ in range(2):
        game = game.do(0, PlantPending(game.state.players[0].pending[0], 1))
    assert game.hand_beans(0) == ["blue", "green", "stink", "soy"]


def test_an_empty_reshuffle_ends_the_game_when_a_draw_is_needed():
    # Every other card is in seat 3's hand and the discard pile is empty when the last card is
    # drawn: the new deck is empty, and the second face-up draw ends the game after step 3.
    game = table(hands={0: "chili"}, deck="red", rest=3)
    game = game.plant_front(0)
    assert (game.state.exhaustions, game.state.epochs[1]) == (1, ())
    assert beans_of(game.state.face_up) == ["red"] and game.state.ends_after_step3
    game = game.do(0, EndTrading()).do(0, PlantPending(game.state.face_up[0], 1))
    assert game.state.phase is Phase.OVER


# --- Step 2: trading -------------------------------------------------------------------------


def trading_table(**changes) -> Game:
    """Seat 0 is in step 2 with garden and black-eyed face up."""
    hands = {
        0: "chili soy red blue",
        1: "blue red chili",
        2: "stink green",
        3: "blue stink",
    }
    return to_trading(table(hands=hands, deck="garden black-eyed soy soy soy", **changes))


def test_edge_15_and_22_a_trade_moves_cards_to_pending_never_into_a_hand():
    game = trading_table()
    garden, black_eyed = game.state.face_up
    game = game.do(0, MakeOffer(1, give_face_up=(garden,), want_beans=((Bean.RED, 1),)))
    red_slot, red = game.hand_slot(1, 2)
    game = game.do(1, Accept(1, give_hand=((red_slot, red),)))
    assert game.state.players[1].pending == (garden,)
    assert game.state.players[0].pending == (red,)
    assert game.hand_beans(1) == ["blue", "chili"]
    assert game.hand_beans(0) == ["soy", "red", "blue"]  # nothing entered the hand
    assert game.state.face_up == (black_eyed,)


def test_why_the_chosen_copy_leaves_the_hand_not_the_front_most_one():
    game = to_trading(table(hands={0: "red soy", 1: "chili blue chili"}, deck="green green"))
    first_chili = game.hand_slot(1, 1)
    game = game.do(0, MakeOffer(1, want_beans=((Bean.CHILI, 1),)))
    chosen = game.hand_slot(1, 3)
    game = game.do(1, Accept(1, give_hand=(chosen,)))
    assert [h.slot for h in game.state.players[1].hand] == [
        first_chili[0],
        game.hand_slot(1, 2)[0],
    ]
    assert game.state.players[0].pending == (chosen[1],)


def test_edge_15_the_active_player_trades_hand_cards_from_any_position_after_the_face_up():
    game = trading_table()
    garden, black_eyed = game.state.face_up
    game = game.do(0, MakeOffer(1, give_face_up=(garden, black_eyed)))
    game = game.do(1, Accept(1))
    assert game.state.face_up == ()
    blue = game.hand_slot(0, 3)  # hand: soy red blue
    game = game.do(0, MakeOffer(2, give_hand=(blue,), want_beans=((Bean.STINK, 1),)))
    game = game.do(2, Accept(2, give_hand=(game.hand_slot(2, 1),)))
    assert game.hand_beans(0) == ["soy", "red"]
    assert beans_of(game.state.players[2].pending) == ["blue"]


def test_edge_20_and_why_non_active_players_never_trade_with_each_other():
    game = trading_table()
    offer = MakeOffer(2, give_hand=(game.hand_slot(1, 1),), want_beans=((Bean.STINK, 1),))
    with pytest.raises(RuleError, match="never with each other"):
        game.do(1, offer)
    with pytest.raises(RuleError, match="never with each other"):
        game.do(1, MakeOffer(None, give_hand=(game.hand_slot(1, 1),)))


def test_edge_14_a_gift_can_be_refused_and_moves_nothing_until_accepted():
    game = trading_table()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(2, give_face_up=(garden,)))
    assert game.state.offers[0].is_gift
    assert garden in game.state.face_up and game.state.players[2].pending == ()
    assert (2, "answer offer 1") in waiting_for(game.state)
    game = game.do(2, Reject(1))
    assert game.state.offers == () and garden in game.state.face_up


def test_a_gift_from_a_non_active_player_to_the_active_player():
    game = trading_table()
    stink = game.hand_slot(3, 2)
    game = game.do(3, MakeOffer(0, give_hand=(stink,)))
    game = game.do(0, Accept(1))
    assert game.state.players[0].pending == (stink[1],)


def test_edge_16_fields_coins_and_received_cards_cannot_be_traded():
    game = table(
        hands={0: "chili soy", 1: "red"},
        fields={0: ["", "stink stink"]},
        earnings={0: "blue"},
        deck="garden green",
    )
    game = to_trading(game)
    field_card = game.state.players[0].fields[1][0]
    coin = game.state.players[0].earnings[0]
    for card in (field_card, coin):
        with pytest.raises(RuleError, match="not among the face-up cards"):
            game.do(0, MakeOffer(1, give_face_up=(card,)))
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(1, give_face_up=(garden,)))
    game = game.do(1, Accept(1))
    with pytest.raises(RuleError, match="only the active player gives face-up"):
        game.do(1, MakeOffer(0, give_face_up=(garden,)))
    fake_slot = (game.state.players[0].hand[0].slot._replace(position=999), garden)
    with pytest.raises(RuleError, match="not in your hand"):
        game.do(1, MakeOffer(0, give_hand=(fake_slot,)))


def test_a_non_active_player_asks_for_a_face_up_card_by_name():
    game = trading_table()
    black_eyed = game.state.face_up[1]
    blue = game.hand_slot(3, 1)
    game = game.do(3, MakeOffer(0, give_hand=(blue,), want_cards=(black_eyed,)))
    game = game.do(0, Accept(1))
    assert game.state.players[3].pending == (black_eyed,)
    assert game.state.players[0].pending == (blue[1],)


def test_offers_are_immutable_a_counter_offer_is_a_new_offer_with_a_new_id():
    game = trading_table()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(1, give_face_up=(garden,), want_beans=((Bean.BLUE, 1),)))
    counter = MakeOffer(0, give_hand=(game.hand_slot(1, 2),), want_cards=(garden,))
    game = game.do(1, counter)
    assert [o.id for o in game.state.offers] == [1, 2]
    assert game.state.offers[0].want_beans == ((Bean.BLUE, 1),)


def test_an_offer_to_everyone_gathers_bids_and_its_maker_takes_one():
    game = trading_table()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(None, give_face_up=(garden,), want_beans=((Bean.STINK, 1),)))
    stink = game.hand_slot(3, 2)
    game = game.do(3, Accept(1, give_hand=(stink,)))
    # A bid moves nothing yet: its card is open and promised, and the maker chooses.
    assert game.state.players[3].pending == () and garden in game.state.face_up
    assert game.state.bids == (Bid(1, 3, (stink[0],)),)
    assert game.state.players[3].hand[1].card == stink[1]
    assert (0, "choose a taker for offer 1") in waiting_for(game.state)
    assert Take(1, 3) in legal_actions(game.state, 0)
    game = game.do(0, Take(1, 3))
    assert game.state.players[3].pending == (garden,)
    assert game.state.players[0].pending == (stink[1],)
    assert game.state.offers == () and game.state.bids == ()


def test_an_offer_to_everyone_lapses_when_everyone_refuses():
    game = trading_table()
    black_eyed = game.state.face_up[1]
    game = game.do(0, MakeOffer(None, give_face_up=(black_eyed,)))
    for seat in (1, 2):
        game = game.do(seat, Reject(1))
        assert [o.id for o in game.state.offers] == [1]
    game = game.do(3, Reject(1))
    assert game.state.offers == ()


def test_only_the_active_player_offers_to_everyone():
    game = trading_table()
    with pytest.raises(RuleError, match="never with each other"):
        game.do(2, MakeOffer(None, want_beans=((Bean.CHILI, 1),)))


def test_accepting_names_cards_that_meet_exactly_the_wanted_beans():
    game = trading_table()
    game = game.do(0, MakeOffer(1, want_beans=((Bean.RED, 1), (Bean.CHILI, 1))))
    blue, red, chili = (game.hand_slot(1, i) for i in (1, 2, 3))
    for wrong in ((red,), (blue, red), (red, chili, blue)):
        with pytest.raises(RuleError, match="asks for 1 chili, 1 red"):
            game.do(1, Accept(1, give_hand=wrong))
    choices = [a for a in legal_actions(game.state, 1, game.hand(1)) if isinstance(a, Accept)]
    assert choices == [Accept(1, (chili, red))]
    game = game.do(1, Accept(1, give_hand=(chili, red)))
    assert sorted(beans_of(game.state.players[0].pending)) == ["chili", "red"]


def test_only_the_maker_withdraws_and_only_the_addressee_answers():
    game = trading_table()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(1, give_face_up=(garden,)))
    for seat, action in ((1, Withdraw(1)), (2, Accept(1)), (2, Reject(1))):
        with pytest.raises(RuleError, match=r"not yours to withdraw|not open to you"):
            game.do(seat, action)
    assert game.do(0, Withdraw(1)).state.offers == ()


def test_offers_that_became_impossible_are_withdrawn_automatically():
    game = trading_table()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(1, give_face_up=(garden,)))
    game = game.do(2, MakeOffer(0, give_hand=(game.hand_slot(2, 1),), want_cards=(garden,)))
    game = game.do(3, MakeOffer(0, give_hand=(game.hand_slot(3, 1),), want_cards=(garden,)))
    game = game.do(1, Accept(1))
    assert game.state.offers == ()  # the garden is gone: both offers that wanted it went with it


def test_a_card_is_promised_to_one_offer_at_a_time():
    """Two offers never give the same card, so no two deals can ever need it."""
    game = trading_table()
    garden = game.state.face_up[0]
    game = game.do(0, MakeOffer(1, give_face_up=(garden,)))
    with pytest.raises(RuleError, match=r"card \d+ \(face up\) is promised in your offer 1"):
        game.do(0, MakeOffer(2, give_face_up=(garden,), want_beans=((Bean.GREEN, 1),)))
    blue = game.hand_slot(3, 1)
    game = game.do(3, MakeOffer(0, give_hand=(blue,)))
    with pytest.raises(RuleError, match="your hand card 1 is promised in your offer 2"):
        game.do(3, MakeOffer(0, give_hand=(blue,), want_cards=(garden,)))
    game = game.do(0, Withdraw(1))
    game = game.do(0, MakeOffer(2, give_face_up=(garden,), want_beans=((Bean.GREEN, 1),)))
    assert [o.to for o in game.state.offers] == [0, 2]


def test_an_offered_hand_card_stays_open_after_the_offer_is_withdrawn():
    game = trading_table()
    slot, card = game.hand_slot(1, 3)
    game = game.do(1, MakeOffer(0, give_hand=((slot, card),))).do(1, Withdraw(1))
    assert game.state.players[1].hand[2].card == card


def test_edge_11_face_up_cards_nobody_takes_stay_with_the_active_player_and_must_be_planted():
    game = trading_table()
    face_up = game.state.face_up
    game = game.do(0, EndTrading())
    assert game.state.players[0].pending == tuple(sorted(face_up))
    assert waiting_for(game.state) == [(0, "plant traded and kept cards")]
    kinds = {type(a) for a in legal_actions(game.state, 0, game.hand(0))}
    assert kinds <= {PlantPending, Harvest, BuyField}
    with pytest.raises(RuleError, match="trading is step 2"):
        game.do(0, EndTrading())


def test_edge_18_each_player_plants_received_cards_in_its_own_order_harvesting_between():
    game = table(
        hands={0: "chili soy", 1: "red"},
        fields={1: ["blue blue", "stink stink stink"]},
        deck="garden black-eyed soy soy soy",
    )
    game = to_trading(game)
    garden, black_eyed = game.state.face_up
    game = game.do(0, MakeOffer(1, give_face_up=(garden, black_eyed)))
    game = game.do(1, Accept(1)).do(0, EndTrading())
    assert game.state.phase is Phase.PLANT_PENDING  # seat 1 has cards to plant
    game = game.do(1, Harvest(1))
    game = game.do(1, PlantPending(black_eyed, 1))  # its choice of order
    with pytest.raises(RuleError, match="field 1 holds blue"):
        game.do(1, PlantPending(garden, 0))
    game = game.do(1, Harvest(0)).do(1, PlantPending(garden, 0))
    assert game.field_beans(1) == [["garden"], ["black-eyed"]]
    assert game.state.active == 1  # step 3 done, seat 0 drew, the turn passed


def test_edge_23_a_hand_has_no_size_limit():
    game = table(hands={0: "chili " + "soy " * 12 + "green " * 8}, deck="red red blue blue blue")
    game = to_trading(game).do(0, EndTrading())
    for _ in range(2):
        game = game.do(0, PlantPending(game.state.players[0].pending[0], 1))
    assert len(game.state.players[0].hand) == 23


# --- The end and the score --------------------------------------------------------------


def ending_table(hands_1: str, hands_2: str, earnings: dict[int, str]) -> Game:
    """Seat 0 plants its last card; the final exhaustion turns one red card, seat 0 keeps it."""
    game = table(
        hands={0: "chili", 1: hands_1, 2: hands_2, 3: "blue"},
        deck="red",
        rest="discard",
        exhaustions=2,
        earnings=earnings,
    )
    game = game.plant_front(0).do(0, EndTrading())
    return game.do(0, PlantPending(game.state.players[0].pending[0], 1))


def test_edge_17_a_tie_goes_to_the_most_cards_in_hand_then_is_shared():
    coins = {0: "soy soy soy", 1: "soy soy soy", 2: "stink stink stink", 3: "green green green"}
    shared = ending_table("soy soy", "red red", coins)
    assert shared.state.result.scores == (3, 3, 3, 3)
    assert shared.state.result.winners == (1, 2)
    single = ending_table("soy soy", "red", coins)
    assert single.state.result.winners == (1,)


def test_final_scoring_sells_every_field_single_beans_too_and_hand_cards_score_nothing():
    game = ending_table("soy soy soy soy soy", "red", {1: "blue"})
    result = game.state.result
    assert all(f == () for p in game.state.players for f in p.fields)
    # Seat 0: a single chili (0 coins) and a single red (0 coins).
    assert result.scores == (0, 1, 0, 0)
    assert result.hand_counts[1] == 5


def test_nothing_happens_after_the_end():
    game = ending_table("soy", "red", {})
    with pytest.raises(RuleError, match="game is over"):
        game.do(1, Harvest(0))


# --- Errors change nothing; the table itself; hashes -----------------------------------------


def test_a_refused_action_changes_nothing():
    game = trading_table()
    before = (canonical(game.state), state_hash(game.state))
    for seat, action in [
        (1, Plant(0, 0)),
        (2, EndTrading()),
        (1, Accept(99)),
        (0, MakeOffer(0)),
        (0, MakeOffer(1, give_hand=(game.hand_slot(0, 1), game.hand_slot(0, 1)))),
        (9, Harvest(0)),
    ]:
        with pytest.raises(RuleError):
            apply(game.state, seat, action)
    assert (canonical(game.state), state_hash(game.state)) == before


def test_only_the_table_turns_face_up_cards_and_only_cards_still_in_the_deck():
    game = table(hands={0: "chili chili"}, deck="red soy")
    chili = game.hand_slot(0, 1)[1]
    red, soy = game.deck_card(0), game.deck_card(1)
    state = apply(apply(game.state, 0, Plant(0, chili)), 0, EndPlanting())
    assert state.phase is Phase.REVEAL
    assert waiting_for(state) == []  # the table, not a player, is what the game waits for
    with pytest.raises(RuleError, match="not something a player does"):
        apply(state, 0, RevealFaceUp((red, soy)))
    with pytest.raises(RuleError, match="only turns face-up cards, shows hand cards and draws"):
        apply(state, None, Harvest(0))
    with pytest.raises(RuleError, match="2 face-up cards are being turned, not 1"):
        apply(state, None, RevealFaceUp((red,)))
    with pytest.raises(RuleError, match="cannot be in the deck"):
        apply(state, None, RevealFaceUp((red, chili)))
    with pytest.raises(RuleError, match="named twice"):
        apply(state, None, RevealFaceUp((red, red)))
    assert apply(state, None, RevealFaceUp((red, soy))).face_up == (red, soy)


def test_the_state_hash_is_deterministic_and_tracks_every_change():
    a, b = new_game(4, 1), new_game(4, 1)
    assert state_hash(a) == state_hash(b)
    assert state_hash(new_game(4, 2)) != state_hash(a)
    game = table(hands={0: "chili soy"})
    assert state_hash(game.plant_front(0).state) != state_hash(game.state)


def test_the_table_shows_hand_cards_the_deck_opened_and_they_stay_known():
    game = trading_table()
    slot, card = game.hand_slot(1, 2)
    shown = apply(game.state, None, ShowHandCards(1, ((slot, card),)))
    assert shown.players[1].hand[1].card == card
    assert card not in shown.hidden[0]
    with pytest.raises(RuleError, match="is known to be another card"):
        apply(shown, None, ShowHandCards(1, ((slot, game.hand_slot(1, 1)[1]),)))
    with pytest.raises(RuleError, match="not in your hand"):
        apply(shown, None, ShowHandCards(2, ((slot, card),)))


def test_which_hidden_hand_cards_an_action_opens():
    game = trading_table()
    front = game.hand_slot(0, 1)
    second = game.hand_slot(1, 2)
    state = game.state
    assert hand_cards_opened(state, 1, MakeOffer(0, give_hand=(second,))) == [second]
    assert hand_cards_opened(state, 1, Reject(1)) == []
    shown = apply(state, None, ShowHandCards(1, (second,)))
    assert hand_cards_opened(shown, 1, MakeOffer(0, give_hand=(second,))) == []
    fresh = table(hands={0: "chili soy"})
    assert hand_cards_opened(fresh.state, 0, Plant(0, fresh.hand_slot(0, 1)[1])) == [
        fresh.hand_slot(0, 1)
    ]
    assert front[0] not in {s for s, _ in hand_cards_opened(state, 0, EndTrading())}


def test_each_hand_is_dealt_as_the_next_run_of_slots_from_the_start_player():
    state = new_game(6, start_player=4)
    runs = {seat: [h.slot.position for h in p.hand] for seat, p in enumerate(state.players)}
    assert runs[4] == [0, 1, 2] and runs[5] == [3, 4, 5, 6] and runs[0] == list(range(7, 12))
    assert runs[3] == list(range(24, 30))
