"""The REPL's command language, against real game situations (tests.rules_helpers.table):
every command and alias, the questions it asks instead of guessing, the rules' own sentences
for lines that would break a rule, completion (pgcli style, with Document objects), and the
lobby's commands. Every action list a line parses to is applied with protocol.rules.apply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from client.gamefile import GameFile, GameFileWriter
from client.screen import PlayerView
from client.screen.commands import (
    CommandError,
    LeaveGame,
    Question,
    Say,
    ShowView,
    Submit,
    View,
    command_for,
    parse_game_command,
)
from client.screen.completion import GameCompleter, LobbyCompleter
from client.screen.lobby_commands import (
    LobbyAddBot,
    LobbyConnect,
    LobbyCreate,
    LobbyHelp,
    LobbyJoin,
    LobbyLeave,
    LobbyListRooms,
    LobbyQuickMatch,
    LobbyQuit,
    LobbyReady,
    LobbyRemoveBot,
    LobbyResume,
    LobbySay,
    LobbyWho,
    parse_lobby_command,
)
from protocol.cards import CARDS_OF, Bean, bean_of
from protocol.kdf import Stream
from protocol.messages import GameStart, RoomOptions, RoomSummary, Seat
from protocol.open_table import OpenTable
from protocol.random_play import random_offer
from protocol.rules import (
    Accept,
    Action,
    BuyField,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Phase,
    Plant,
    PlantPending,
    Reject,
    RuleError,
    State,
    Take,
    Withdraw,
    apply,
    legal_actions,
)
from protocol.simulate import game_seed, random_moves
from protocol.table import AgreedTable
from tests.rules_helpers import Game, table

NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus"]
CHILI = Bean.CHILI


def view_of(game: Game, seat: int, names: list[str] = NAMES) -> PlayerView:
    return PlayerView(game.state, seat, game.hand(seat), names[: len(game.state.players)])


def applied(state: State, seat: int, actions: tuple[Action, ...]) -> State:
    for action in actions:
        state = apply(state, seat, action)
    return state


def submitted(game: Game, seat: int, line: str, names: list[str] = NAMES) -> tuple[Action, ...]:
    """The actions a line parses to; they apply cleanly, in order."""
    result = parse_game_command(line, view_of(game, seat, names))
    assert isinstance(result, Submit), result
    applied(game.state, seat, result.actions)
    return result.actions


def refused(game: Game, seat: int, line: str, names: list[str] = NAMES) -> str:
    with pytest.raises(CommandError) as caught:
        parse_game_command(line, view_of(game, seat, names))
    return str(caught.value)


def asked(game: Game, seat: int, line: str) -> Question:
    result = parse_game_command(line, view_of(game, seat))
    assert isinstance(result, Question), result
    for choice in result.choices:
        applied(game.state, seat, choice.actions)
    return result


def step1(**changes: object) -> Game:
    """Ann (seat 0) at step 1 with chili in front; Bob holds two chilis; soy and chili on top
    of the deck (the face-up cards once Ann stops planting)."""
    layout: dict[str, object] = {
        "hands": {0: "chili soy blue blue", 1: "chili chili soy red", 2: "blue stink"},
        "fields": {0: ["chili chili", ""]},
        "deck": "soy chili",
    }
    layout.update(changes)
    return table(4, **layout)  # type: ignore[arg-type]


def trading(**changes: object) -> Game:
    """Step 2: Ann planted her chili (field 1 holds three) and holds soy blue blue; face up
    are soy and chili."""
    return step1(**changes).plant_front(0).do(0, EndPlanting())


def with_offer(game: Game, seat: int, offer: MakeOffer) -> Game:
    return game.do(seat, offer)


def ann_offers_face_soy_for_chili(to: int | None = None) -> Game:
    game = trading()
    return game.do(
        0, MakeOffer(to, give_face_up=(game.state.face_up[0],), want_beans=((CHILI, 1),))
    )


def card(name: str, nth: int = 0) -> int:
    return CARDS_OF[Bean(name)][nth]


# --- Planting from the hand ------------------------------------------------------------------


def test_plant_puts_the_front_card_in_the_field_claiming_it_from_the_private_hand():
    game = step1()
    front = game.hand_slot(0, 1)[1]
    assert submitted(game, 0, "p 1") == (Plant(0, front),)
    assert submitted(game, 0, "plant 2") == (Plant(1, front),)


def test_plant_two_fields_plants_the_front_card_then_the_next_one():
    game = step1()
    chili, soy = game.hand_slot(0, 1)[1], game.hand_slot(0, 2)[1]
    assert submitted(game, 0, "plant 1 2") == (Plant(0, chili), Plant(1, soy))


def test_plant_then_end_stops_after_one_planting():
    game = step1()
    assert submitted(game, 0, "p 2 end") == (Plant(1, game.hand_slot(0, 1)[1]), EndPlanting())


def test_plant_without_a_field_asks_when_several_fields_fit():
    game = step1()
    question = asked(game, 0, "p")
    assert [c.label for c in question.choices] == ["field 1 (chili 2)", "field 2 (empty)"]
    assert [c.command for c in question.choices] == ["plant 1", "plant 2"]
    answer = parse_game_command("2", view_of(game, 0), question)
    assert answer == Submit((Plant(1, game.hand_slot(0, 1)[1]),))


def test_plant_without_a_field_plants_where_only_one_field_fits():
    game = step1(fields={0: ["chili", "soy"]})
    assert submitted(game, 0, "p") == (Plant(0, game.hand_slot(0, 1)[1]),)


def test_plant_into_a_field_of_another_bean_gives_the_rules_sentence():
    game = step1(fields={0: ["chili", "soy"]})
    assert refused(game, 0, "p 2") == (
        "field 2 holds soy; chili needs an empty field or a chili field; it fits field 1"
    )


def test_plant_when_nothing_fits_says_to_harvest_first():
    game = step1(fields={0: ["soy soy", "red"]})
    assert "harvest a field first" in refused(game, 0, "p")


def test_plant_by_a_player_who_is_not_active_gives_the_rules_sentence():
    assert refused(step1(), 1, "p 1") == "only the active player plants from the hand"


def test_plant_may_name_the_front_cards_bean_but_not_another():
    game = step1()
    assert submitted(game, 0, "p chili 1") == (Plant(0, game.hand_slot(0, 1)[1]),)
    assert refused(game, 0, "p soy 1") == "your front card is chili, not soy"


def test_plant_into_a_field_that_does_not_exist():
    game = step1()
    assert refused(game, 0, "p 3") == "you have 2 fields; there is no field 3"
    assert refused(game, 0, "p x") == "'x' is not a field; fields are numbered from 1"


def test_plant_needs_a_front_card_this_client_knows():
    game = step1()
    view = PlayerView(game.state, 0, {}, NAMES[:4])
    with pytest.raises(CommandError, match="your card #1 is not known to you yet"):
        parse_game_command("p 1", view)


# --- Harvests, the third field, the end of a step -------------------------------------------


def test_harvest_by_a_player_who_is_not_active():
    game = step1(fields={1: ["red red", ""]})
    assert submitted(game, 1, "h 1") == (Harvest(0),)
    assert submitted(game, 1, "harvest 1") == (Harvest(0),)


def test_harvest_without_a_field_asks_even_when_only_one_field_may_be_harvested():
    question = asked(step1(), 0, "h")
    assert [(c.label, c.command) for c in question.choices] == [
        ("field 1 (chili 2, pays 0 coins)", "harvest 1")
    ]


def test_harvest_of_a_single_bean_next_to_a_bigger_field_breaks_the_one_bean_rule():
    game = step1(fields={0: ["chili chili", "soy"]})
    assert "(the one-bean rule)" in refused(game, 0, "h 2")


def test_harvest_with_nothing_to_harvest_says_why_for_every_field():
    assert refused(step1(), 3, "h") == "field 1 is empty; field 2 is empty"


def test_buy_the_third_field_or_hear_what_it_costs():
    assert submitted(step1(earnings={2: "red red red"}), 2, "b") == (BuyField(),)
    assert refused(step1(), 2, "buy") == "a third field costs 3 coins; you have 0"
    three = table(3, hands={0: "chili"})
    assert refused(three, 1, "b") == "with 3 players everyone has three fields; none is bought"


def test_end_in_step_1_stops_planting_and_in_step_2_ends_trading():
    game = step1()
    assert refused(game, 0, "end") == "the front card of your hand must be planted first"
    planted = game.plant_front(0)
    assert submitted(planted, 0, "e") == (EndPlanting(),)
    assert submitted(trading(), 0, "end") == (EndTrading(),)
    assert submitted(trading(), 0, "done") == submitted(trading(), 0, "stop") == (EndTrading(),)
    assert refused(trading(), 1, "e") == "only the active player ends trading"


# --- Several actions in one step --------------------------------------------------------------


def test_actions_joined_with_semicolons_are_checked_in_order():
    game = step1(fields={0: ["soy soy", "blue"]})
    assert submitted(game, 0, "h 1; p 1") == (Harvest(0), Plant(0, game.hand_slot(0, 1)[1]))
    assert refused(game, 0, "p 1; h 1") == (
        "'p 1': field 1 holds soy; chili needs an empty field or a chili field; harvest a field "
        "first"
    )


def test_a_question_after_joined_actions_keeps_them_in_every_choice():
    game = step1(fields={0: ["soy soy", ""]})
    chili = game.hand_slot(0, 1)[1]
    question = asked(game, 0, "h 1; p")
    assert [(c.command, c.actions) for c in question.choices] == [
        ("h 1; plant 1", (Harvest(0), Plant(0, chili))),
        ("h 1; plant 2", (Harvest(0), Plant(1, chili))),
    ]


def test_only_game_actions_join_and_a_question_before_the_end_of_the_line_is_asked():
    game = step1()
    assert refused(game, 0, "p 1; t") == "'table' cannot be joined with ';'; only game actions can"
    assert refused(game, 0, "t; p 1") == "'table' cannot be joined with ';'; only game actions can"
    chili = game.hand_slot(0, 1)[1]
    question = asked(game, 0, "p; e")
    assert [(c.command, c.actions) for c in question.choices] == [
        ("plant 1; e", (Plant(0, chili),)),
        ("plant 2; e", (Plant(1, chili),)),
    ]
    assert question.choose("2", view_of(game, 0)) == Submit((Plant(1, chili), EndPlanting()))


def two_offers_to_bob() -> Game:
    """Ann offers Bob (chili chili soy red) the face-up soy for a chili (offer 1), and the
    face-up chili for his red (offer 2)."""
    game = trading()
    soy, chili = game.state.face_up
    game = game.do(0, MakeOffer(1, give_face_up=(soy,), want_beans=((CHILI, 1),)))
    return game.do(0, MakeOffer(1, give_face_up=(chili,), want_beans=((Bean.RED, 1),)))


def test_acceptances_join_with_their_cards_as_they_are_typed_alone():
    """Each of these lines works alone; joined, they were refused as leaving a choice open."""
    game = two_offers_to_bob()
    red = Accept(2, (game.hand_slot(1, 4),))
    assert submitted(game, 1, "a 1 #1; a 2") == (Accept(1, (game.hand_slot(1, 1),)), red)
    assert submitted(game, 1, "a 2; a 1 #2") == (red, Accept(1, (game.hand_slot(1, 2),)))
    assert submitted(game, 1, "a 2; r 1") == (red, Reject(1))
    assert refused(game, 1, "a 2; a 3") == "'a 3': there is no open offer 3"  # which one failed
    assert refused(game, 1, "a blue") == (  # the hint names the offers open to Bob
        "no offer open to you can be met with those cards; offer 1 asks for 1 chili and offer 2 "
        "asks for 1 red"
    )


def test_a_choice_in_the_middle_of_a_line_is_asked_then_the_rest_is_read():
    game = two_offers_to_bob()
    question = asked(game, 1, "a 1; a 2")
    assert question.prompt == "Offer 1 asks for 1 chili; which of your cards do you give?"
    assert [c.command for c in question.choices] == ["accept 1 #1; a 2", "accept 1 #2; a 2"]
    red = Accept(2, (game.hand_slot(1, 4),))
    answer = question.choose("2", view_of(game, 1))
    assert answer == Submit((Accept(1, (game.hand_slot(1, 2),)), red))
    again = asked(game, 1, "a 2; a 1")  # the second asks: the first is kept in every choice
    assert [c.command for c in again.choices] == [
        "accept 2 #4; accept 1 #1",
        "accept 2 #4; accept 1 #2",
    ]
    assert again.choose("1", view_of(game, 1)) == Submit((red, Accept(1, (game.hand_slot(1, 1),))))


# --- Offers ----------------------------------------------------------------------------------


def test_offer_to_a_player_giving_a_hand_card_for_beans():
    game = trading()
    blue = game.hand_slot(0, 2)
    offer = MakeOffer(1, give_hand=(blue,), want_beans=((CHILI, 2),))
    assert submitted(game, 0, "offer bob give #2 want 2 chili") == (offer,)
    assert submitted(game, 0, "o b give 2 for 2 chilis") == (offer,)
    assert submitted(game, 0, "o 2 want 2 chi give #2") == (offer,)


def test_offer_to_all_giving_face_up_cards():
    game = trading()
    soy, chili = game.state.face_up
    assert submitted(game, 0, "o all give face chili want blue") == (
        MakeOffer(None, give_face_up=(chili,), want_beans=((Bean.BLUE, 1),)),
    )
    assert submitted(game, 0, "o give face want 2 chili") == (
        MakeOffer(None, give_face_up=(soy, chili), want_beans=((CHILI, 2),)),
    )


def test_a_player_who_is_not_active_offers_to_the_active_player_without_naming_her():
    game = trading()
    soy_in_hand = game.hand_slot(1, 3)
    assert submitted(game, 1, "o want face 2 give #3") == (
        MakeOffer(0, give_hand=(soy_in_hand,), want_cards=(game.state.face_up[1],)),
    )


def test_giving_a_bean_held_twice_asks_which_card():
    game = trading()
    question = asked(game, 0, "o bob give blue want chili")
    assert [c.label for c in question.choices] == ["#2 blue", "#3 blue"]
    assert [c.command for c in question.choices] == [
        "offer bob give #2 want 1 chili",
        "offer bob give #3 want 1 chili",
    ]
    answer = question.choose("2", view_of(game, 0))
    assert answer.actions[0].give_hand == (game.hand_slot(0, 3),)  # type: ignore[union-attr]


def test_giving_every_card_of_a_bean_or_the_only_one_needs_no_question():
    game = trading()
    both = (game.hand_slot(0, 2), game.hand_slot(0, 3))
    assert submitted(game, 0, "o bob give 2 blue want soy")[0].give_hand == both  # type: ignore[union-attr]
    assert submitted(game, 0, "g bob soy")[0].give_hand == (game.hand_slot(0, 1),)  # type: ignore[union-attr]
    assert refused(game, 0, "g bob 3 blue") == "you hold 2 blue; you cannot give 3"


def test_too_many_ways_to_pick_cards_asks_for_positions_instead_of_a_long_question():
    game = trading(hands={0: "chili blue blue blue blue blue", 1: "chili"})
    assert refused(game, 0, "o bob give 2 blue want chili") == (
        "Which blue do you give? There are 10 ways; name the cards by position, e.g. "
        "offer bob give #1 #2 want 1 chili or offer bob give #1 #3 want 1 chili"
    )


def test_too_many_ways_in_a_joined_line_names_the_command_it_is_about():
    """As every other refusal in a line of several does (before, this one alone did not:
    found by test_a_line_joined_with_semicolons_does_what_its_commands_typed_one_by_one_do)."""
    game = trading(hands={0: "chili blue blue blue blue blue", 1: "chili"})
    assert refused(game, 0, "o bob give 2 blue want chili; o bob give #6 want chili") == (
        "'o bob give 2 blue want chili': Which blue do you give? There are 10 ways; name the "
        "cards by position, e.g. offer bob give #1 #2 want 1 chili or offer bob give #1 #3 "
        "want 1 chili"
    )


def test_an_ambiguous_bean_prefix_lists_the_beans_it_could_be():
    message = refused(trading(), 0, "o bob give #1 want bl")
    assert message == "'bl' could be blue or black-eyed; type more of the name"


def test_an_ambiguous_player_prefix_lists_the_players_it_could_be():
    names = ["Ann", "Bea", "Ben", "Dan"]
    assert (
        refused(trading(), 0, "o b give #1", names)
        == "'b' could be Bea or Ben; type more of the name"
    )
    assert refused(trading(), 0, "o zed give #1") == (
        "no player is called 'zed'; the players are Ann, Bob, Cat and Dan"
    )
    assert (
        refused(trading(), 0, "o 9 give #1") == "there is no player 9; players are numbered 1 to 4"
    )


def test_an_offer_that_breaks_a_rule_gets_the_rules_sentence_with_names():
    assert refused(trading(), 1, "o cat give #1 want soy") == (
        "non-active players trade only with the active player (Ann), never with each other"
    )
    assert refused(step1(), 0, "o bob give #2 want chili") == (
        "trading is step 2; the game is at step 1 (planting from the hand)"
    )
    assert refused(trading(), 0, "o all want coffee") == (
        "there are no coffee beans in a 4-player game"
    )


def test_offer_wanting_a_card_everyone_can_see():
    game = trading()
    bob_soy = game.hand_slot(1, 3)
    game = game.do(1, MakeOffer(0, give_hand=(bob_soy,), want_cards=(game.state.face_up[1],)))
    mine = game.hand_slot(0, 1)
    wanted = MakeOffer(1, give_hand=(mine,), want_cards=(bob_soy[1],))
    assert submitted(game, 0, "o bob give #1 want #3") == (wanted,)
    assert submitted(game, 0, "o all give #1 want bob#3") == (
        MakeOffer(None, give_hand=(mine,), want_cards=(bob_soy[1],)),
    )
    assert refused(game, 0, "o bob give #1 want #2") == (
        "Bob's card #2 is hidden; want a bean instead (want soy)"
    )
    assert refused(game, 0, "o all give #1 want #3") == (
        "say whose card you want (bob#3), or make the offer to one player"
    )


def test_offer_lines_that_say_too_little():
    game = trading()
    assert (
        refused(game, 0, "o bob") == "say give or want after the player: offer ann give #2 want soy"
    )
    assert refused(game, 0, "o bob give #9") == "you hold 3 cards; there is no card #9"
    assert refused(game, 0, "o bob give sand").startswith("'sand' is not a card to give")


def test_gift_gives_cards_for_nothing():
    game = trading()
    assert submitted(game, 0, "gift bob #1") == (MakeOffer(1, give_hand=(game.hand_slot(0, 1),)),)
    assert submitted(game, 1, "g #4") == (MakeOffer(0, give_hand=(game.hand_slot(1, 4),)),)
    assert refused(game, 0, "gift bob").startswith("say what to give: gift bob #3")
    assert refused(game, 0, "gift bob #1 want soy") == (
        "a gift wants nothing; use offer to ask for something"
    )


def test_counter_makes_a_new_offer_to_the_maker_of_an_offer():
    game = ann_offers_face_soy_for_chili()
    face_soy, face_chili = game.state.face_up
    bob_chili = game.hand_slot(1, 1)
    assert submitted(game, 1, "counter 1 give #1 want face 2") == (
        MakeOffer(0, give_hand=(bob_chili,), want_cards=(face_chili,)),
    )
    # Without a want part, a counter wants what the offer gives.
    assert submitted(game, 1, "c 1 give #3") == (
        MakeOffer(0, give_hand=(game.hand_slot(1, 3),), want_cards=(face_soy,)),
    )
    assert refused(game, 0, "c 1 give #1") == "offer 1 is yours; withdraw it and make a new one"
    assert refused(game, 1, "c 9 give #1") == "there is no open offer 9"


# --- Answering offers ------------------------------------------------------------------------


def test_accept_asks_which_card_when_several_match():
    game = ann_offers_face_soy_for_chili()
    question = asked(game, 1, "a 1")
    assert question.prompt == "Offer 1 asks for 1 chili; which of your cards do you give?"
    assert [(c.label, c.command) for c in question.choices] == [
        ("offer 1, giving #1 chili", "accept 1 #1"),
        ("offer 1, giving #2 chili", "accept 1 #2"),
    ]
    assert question.choose("2", view_of(game, 1)) == Submit((Accept(1, (game.hand_slot(1, 2),)),))
    assert isinstance(parse_game_command("accept 1 chili", view_of(game, 1)), Question)


def test_accept_naming_the_card_needs_no_question():
    game = ann_offers_face_soy_for_chili()
    assert submitted(game, 1, "a 1 #2") == (Accept(1, (game.hand_slot(1, 2),)),)
    assert submitted(game, 1, "accept 1 2") == (Accept(1, (game.hand_slot(1, 2),)),)


def test_accept_with_a_single_matching_card_takes_it():
    game = trading()
    game = game.do(
        0, MakeOffer(1, give_face_up=(game.state.face_up[0],), want_beans=((Bean.RED, 1),))
    )
    assert submitted(game, 1, "a") == (Accept(1, (game.hand_slot(1, 4),)),)


def test_accept_a_gift_gives_nothing_back():
    game = trading()
    game = game.do(0, MakeOffer(1, give_face_up=(game.state.face_up[0],)))
    assert submitted(game, 1, "accept 1") == (Accept(1),)


def test_accept_what_cannot_be_accepted_says_why():
    game = ann_offers_face_soy_for_chili()
    assert refused(game, 2, "a 1") == "offer 1 asks for 1 chili; you hold 0 chili"
    assert refused(game, 1, "a 9") == "there is no open offer 9"
    assert (
        refused(game, 1, "a 1 #3") == "offer 1 asks for 1 chili; the cards you named do not match"
    )
    only_bob = ann_offers_face_soy_for_chili(to=1)
    assert refused(only_bob, 2, "a 1") == "offer 1 is not open to you"
    assert refused(trading(), 1, "a") == "no offer is open to you now"


def test_reject_and_withdraw_by_number_all_or_the_only_one():
    game = ann_offers_face_soy_for_chili()
    game = game.do(0, MakeOffer(1, give_hand=(game.hand_slot(0, 1),), want_beans=((CHILI, 1),)))
    assert submitted(game, 1, "r 1") == (Reject(1),)
    assert submitted(game, 1, "reject all") == (Reject(1), Reject(2))
    assert submitted(game, 2, "r") == (Reject(1),)
    assert submitted(game, 0, "w all") == (Withdraw(1), Withdraw(2))
    assert submitted(game, 0, "withdraw 2") == (Withdraw(2),)
    assert refused(game, 1, "w 1") == "offer 1 is not yours to withdraw, and you have no bid on it"
    assert refused(game, 1, "r x") == "reject takes offer numbers (or all)"
    assert refused(game, 3, "w") == "you have no open offers or bids"


def gift_with_takers() -> Game:
    """Ann gives the face-up soy to everyone; Bob and Cat take it: two bids wait for her."""
    game = trading()
    game = game.do(0, MakeOffer(None, give_face_up=(game.state.face_up[0],)))
    return game.do(1, Accept(1)).do(2, Accept(1))


def test_take_names_the_offer_and_the_taker_by_name_or_seat():
    game = gift_with_takers()
    assert submitted(game, 0, "take 1 bob") == (Take(1, 1),)
    assert submitted(game, 0, "take 1 3") == (Take(1, 2),)
    assert submitted(game, 0, "take 1 ca") == (Take(1, 2),)
    question = asked(game, 0, "take 1")
    assert question.prompt == "Take whose bid on offer 1?"
    assert [(c.label, c.command) for c in question.choices] == [
        ("Bob", "take 1 bob"), ("Cat", "take 1 cat"),
    ]  # fmt: skip
    assert [c.command for c in asked(game, 0, "take").choices] == ["take 1 bob", "take 1 cat"]


def test_take_what_cannot_be_taken_says_why():
    game = gift_with_takers()
    assert refused(game, 0, "take 1 dan") == "Dan has no bid on offer 1"
    assert refused(game, 0, "take 1 all") == "take one player's bid; the others lapse with it"
    assert refused(game, 1, "take 1 cat") == (
        "offer 1 is not yours; only its maker takes a bid on it"
    )
    assert refused(game, 0, "take 4 bob") == "there is no open offer 4"
    assert refused(trading(), 0, "take") == ("nobody has taken an offer of yours to everyone yet")


def test_a_bidder_withdraws_its_bid_and_bids_are_answered_in_one_step_only_once():
    game = gift_with_takers()
    assert submitted(game, 1, "w 1") == (Withdraw(1),)
    assert submitted(game, 1, "withdraw all") == (Withdraw(1),)
    assert refused(game, 1, "a 1") == "you have bid on offer 1; withdraw your bid to take it back"
    assert refused(game, 0, "w 1; g bob face 1") == (
        "the soy card (face up) is promised in your offer 1; withdraw that first "
        "(a withdrawal counts from the next step on); one step cannot hold this whole line, so "
        "type its commands in separate lines"
    )
    assert refused(trading(), 0, "e; p chili 1") == (
        "traded and kept cards are planted in step 3; the game is at step 2 (trading); one step "
        "cannot hold this whole line, so type its commands in separate lines"
    )


def test_an_answer_is_checked_again_against_the_state_when_it_comes():
    game = ann_offers_face_soy_for_chili()
    question = asked(game, 1, "a 1")
    with pytest.raises(CommandError, match="answer with a number from 1 to 2"):
        parse_game_command("3", view_of(game, 1), question)
    withdrawn = game.do(0, Withdraw(1))
    with pytest.raises(CommandError, match="there is no open offer 1"):
        parse_game_command("1", view_of(withdrawn, 1), question)


# --- Step 3: planting traded and kept cards ---------------------------------------------------


def planting_kept_cards() -> Game:
    """Ann ended trading and keeps the face-up soy and chili (to plant in card order: chili,
    soy); her fields: chili 3, empty."""
    return trading().do(0, EndTrading())


def test_plant_pending_cards_in_a_chosen_order_into_chosen_fields():
    game = planting_kept_cards()
    chili, soy = game.state.players[0].pending
    assert submitted(game, 0, "p chili 1 soy 2") == (PlantPending(chili, 0), PlantPending(soy, 1))
    assert submitted(game, 0, "plant soy 2; plant chili 1") == (
        PlantPending(soy, 1),
        PlantPending(chili, 0),
    )


def test_plant_pending_without_a_field_plants_where_only_one_fits_and_asks_otherwise():
    game = planting_kept_cards()
    _, soy = game.state.players[0].pending
    assert submitted(game, 0, "p soy") == (PlantPending(soy, 1),)
    question = asked(game, 0, "p chili")
    assert [c.command for c in question.choices] == ["plant chili 1", "plant chili 2"]


def test_plant_pending_with_several_beans_asks_which_card_and_where():
    game = planting_kept_cards()
    question = asked(game, 0, "p")
    assert question.prompt == "Plant which card, and where?"
    assert [(c.label, c.command) for c in question.choices] == [
        ("chili in field 1 (chili 3)", "plant chili 1"),
        ("chili in field 2 (empty)", "plant chili 2"),
        ("soy in field 2 (empty)", "plant soy 2"),
    ]


def test_plant_pending_with_several_beans_and_a_field_needs_the_bean_named():
    game = planting_kept_cards()
    # The example is one the rules allow (soy would not fit field 1).
    assert refused(game, 0, "p 1") == (
        "say which card: you have chili, soy to plant (plant chili 1)"
    )
    assert refused(game, 0, "p red 1") == "you have no red to plant; you have chili, soy"
    assert refused(game, 0, "p soy 1") == (
        "field 1 holds chili; soy needs an empty field or a soy field; it fits field 2"
    )
    assert refused(game, 1, "p 1") == "you have nothing (left) to plant"


def test_plant_several_pending_cards_of_one_bean_by_count_or_field_by_field():
    game = step1(deck="chili chili").plant_front(0).do(0, EndPlanting())
    game = game.do(0, MakeOffer(1, give_face_up=game.state.face_up))
    game = game.do(1, Accept(1)).do(0, EndTrading())
    first, second = game.state.players[1].pending
    assert submitted(game, 1, "p 2 chili 1") == (PlantPending(first, 0), PlantPending(second, 0))
    assert submitted(game, 1, "p 1 2") == (PlantPending(first, 0), PlantPending(second, 1))
    assert refused(game, 1, "p 3 chili 1") == "you have nothing (left) to plant"


# --- Views, chat, leaving, mistakes ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("t", ShowView(View.TABLE)),
        ("table", ShowView(View.TABLE)),
        ("hand", ShowView(View.HAND)),
        ("cards", ShowView(View.HAND)),
        ("l", ShowView(View.LOG)),
        ("help", ShowView(View.HELP)),
        ("? o", ShowView(View.HELP, "offer")),
        ("help counter", ShowView(View.HELP, "counter")),
        ("say gl; hf", Say("gl; hf")),
        ("'good luck", Say("good luck")),
        ("chat hi", Say("hi")),
        ("leave", LeaveGame()),
        ("quit", LeaveGame()),
    ],
)
def test_views_chat_and_leaving(line: str, expected: object):
    assert parse_game_command(line, view_of(step1(), 1)) == expected


def test_mistyped_lines_say_what_to_type():
    game = step1()
    assert refused(game, 0, "zz") == "'zz' is not a command; type help for the list"
    guessed = "is not a command; did you mean {}? type help for the list"
    assert refused(game, 0, "hravest 1") == "'hravest' " + guessed.format("harvest")
    assert refused(game, 0, "Plnat 2") == "'Plnat' " + guessed.format("plant")
    assert refused(game, 0, "qiut") == "'qiut' " + guessed.format("quit")
    assert refused(game, 0, "ha") == "'ha' could be harvest or hand; type more of it"
    assert refused(game, 0, "  ") == "type a command (help lists them)"
    assert refused(game, 0, "help zz") == "there is no command 'zz'; help lists them"
    assert refused(game, 0, "help ofer") == (
        "there is no command 'ofer'; did you mean help offer? help alone lists them"
    )
    assert refused(game, 0, "say") == "say what? e.g. say good luck"
    assert refused(game, 0, "say " + "x" * 501) == "a chat line holds at most 500 characters"
    assert refused(game, 0, "b now") == "buy takes nothing after it"


def test_rule_sentences_name_players_and_beans_instead_of_numbers():
    view = view_of(step1(), 0)
    assert view.readable(RuleError(f"seat 1 and card {card('chili')}")) == "Bob and the chili card"
    assert view.readable("hand card 3 of seat 0") == "hand card 3 of you"


# --- Every legal action has a command ---------------------------------------------------------


def alike(action: Action) -> object:
    """Actions a player cannot tell apart: cards of one bean to plant, wanted beans in any
    order."""
    if isinstance(action, PlantPending):
        return ("plant pending", bean_of(action.card), action.field)
    if isinstance(action, MakeOffer):
        return (action.to, action.give_hand, action.give_face_up, action.want_cards,
                tuple(sorted(action.want_beans)))  # fmt: skip
    return action


def state_after(players: int, seed: bytes, moves: int, phase: Phase | None = None) -> State:
    """The state of a random game after `moves` moves (then, with `phase`, once it is in it)."""
    state = None
    for number, move in enumerate(random_moves(players, seed)):
        state = move.after or move.before
        if number >= moves and phase in (None, state.phase):
            break
    assert state is not None
    return state


def assert_round_trip(action: Action, view: PlayerView) -> None:
    line = command_for(action, view)
    result = parse_game_command(line, view)
    assert isinstance(result, Submit), (line, result)
    assert [alike(a) for a in result.actions] == [alike(action)], line
    short = parse_game_command(command_for(action, view, short=True), view)
    assert isinstance(short, Submit) and short.actions == result.actions


@settings(max_examples=60)
@given(
    players=st.integers(3, 7),
    game=st.integers(0, 2**32),
    moves=st.integers(0, 300),
)
def test_every_legal_action_and_offer_has_a_command_that_parses_back_to_it(
    players: int, game: int, moves: int
):
    """Over states of random play: random offers (each seat in turn, those the rules allow,
    so that there are offers to answer), then every seat's legal actions."""
    seed = game_seed(game, players)
    state = state_after(players, seed, moves)
    cards = OpenTable(seed)

    def view(seat: int) -> PlayerView:
        return PlayerView(state, seat, cards.hand(state, seat), NAMES[:players])

    for seat in range(players):
        offer = random_offer(state, seat, view(seat).hand, Stream(seed, "offer", seat))
        if offer is not None:
            try:
                following = apply(state, seat, offer)
            except RuleError:
                continue
            assert_round_trip(offer, view(seat))
            state = following
    for seat in range(players):
        for action in legal_actions(state, seat, view(seat).hand):
            assert_round_trip(action, view(seat))


# --- A line joined with ';' does what its commands typed one by one do -----------------------

LOOSE_FORMS = {Accept: "a {offer}", Take: "take {offer}", Reject: "r", Withdraw: "w"}


def typed_line(view: PlayerView, action: Action, loose: bool) -> str:
    """A line a person types for an action: the exact one, or a short one that may ask."""
    if loose:
        if isinstance(action, Plant | PlantPending):
            return "p"
        if isinstance(action, Harvest):
            return "h"
        if type(action) in LOOSE_FORMS:
            return LOOSE_FORMS[type(action)].format(offer=getattr(action, "offer", ""))
    return command_for(action, view)


@dataclass
class Person:
    """Types lines and answers each question with a choice: the `pick`-th the first time a
    question of that prompt comes, the choice of the same meaning (label) ever after."""

    pick: int
    chosen: dict[str, str] = field(default_factory=dict)

    def types(self, line: str, view: PlayerView) -> tuple[Action, ...] | str:
        """The actions a line sends (once its questions are answered), or the error it gets."""
        try:
            result = parse_game_command(line, view)
            while isinstance(result, Question):
                labels = [choice.label for choice in result.choices]
                label = self.chosen.setdefault(result.prompt, labels[self.pick % len(labels)])
                if label not in labels:
                    return f"no choice {label}"
                result = parse_game_command(str(labels.index(label) + 1), view, result)
        except CommandError as error:
            return f"refused: {error}"
        assert isinstance(result, Submit), result
        return result.actions


def offers_to(state: State, seat: int, beans: list[Bean], data: st.DataObject) -> State:
    """The active player offers to `seat` (or each other seat to her) for beans it holds."""
    active = state.active
    for maker in (
        [m for m in range(len(state.players)) if m != seat] if seat == active else [active]
    ):
        gives = tuple(state.face_up[: data.draw(st.integers(0, len(state.face_up)))])
        offer = MakeOffer(
            to=data.draw(st.sampled_from([seat, None])) if maker == active else active,
            give_face_up=gives if maker == active else (),
            want_beans=((data.draw(st.sampled_from(beans)), data.draw(st.integers(1, 2))),),
        )
        try:
            state = apply(state, maker, offer)
        except RuleError:
            continue
    return state


@settings(max_examples=80, deadline=None)
@given(
    players=st.integers(3, 5),
    number=st.integers(0, 2**32),
    moves=st.integers(0, 200),
    data=st.data(),
)
def test_a_line_joined_with_semicolons_does_what_its_commands_typed_one_by_one_do(
    players: int, number: int, moves: int, data: st.DataObject
):
    """Each command typed one by one is read once the ones before it are played; joined, the
    same commands, with the same answers to the same questions, send the same actions in one
    step, or get the same refusal (naming the command); where one step cannot hold them all
    (a withdrawal counts from the next step on; trading ends after the step's other moves),
    the line is refused, or a question is settled by the only way the step allows."""
    seed = game_seed(number, players)
    phase = data.draw(st.sampled_from([None, Phase.TRADE]))
    state = state_after(players, seed, moves, phase)
    cards = OpenTable(seed)
    seat = data.draw(st.integers(0, players - 1))
    held = sorted({bean_of(c) for c in cards.hand(state, seat).values()})
    if state.phase is Phase.TRADE and held:
        state = offers_to(state, seat, held, data)
    view = PlayerView(state, seat, cards.hand(state, seat), NAMES[:players])
    segments: list[str] = []
    current = view
    for _ in range(data.draw(st.integers(2, 4))):
        source = view if data.draw(st.booleans()) else current  # a stale line may be refused
        actions = legal_actions(source.state, seat, source.hand)
        offer = random_offer(source.state, seat, source.hand, Stream(seed, "offer", len(segments)))
        actions += [offer] if offer is not None else []
        if not actions:
            break
        action = data.draw(st.sampled_from(actions))
        segments.append(typed_line(source, action, data.draw(st.booleans())))
        try:
            current = current.after([action])
        except RuleError:
            break
    if len(segments) < 2:
        return
    person = Person(data.draw(st.integers(0, 8)))
    one_by_one: list[Action] = []
    refusal = None
    current = view
    for segment in segments:
        done = person.types(segment, current)
        if isinstance(done, str):  # joined, the refusal names the command it is about
            refusal = done.replace("refused: ", f"refused: '{segment}': ", 1)
            break
        one_by_one += done
        current = current.after(done)
    joined = person.types("; ".join(segments), view)
    try:
        view.after(one_by_one)
    except RuleError:  # one step cannot hold them: refused, or narrowed to what it holds
        assert isinstance(joined, str) or view.after(joined), segments
        return
    assert joined == (refusal or tuple(one_by_one)), segments


# --- Completion --------------------------------------------------------------------------------


def completions(game: Game | None, seat: int, text: str) -> list[tuple[str, str]]:
    view = view_of(game, seat) if game is not None else None
    completer = GameCompleter(lambda: view)
    found = list(completer.get_completions(Document(text), CompleteEvent()))
    word = text.replace(",", " ").split()[-1] if text and not text.endswith(" ") else ""
    assert all(c.start_position == -len(word) for c in found)
    return [(c.text, c.display_meta_text) for c in found]


def texts(game: Game | None, seat: int, text: str) -> list[str]:
    return [t for t, _ in completions(game, seat, text)]


def test_complete_command_names_by_prefix_even_before_a_game():
    assert texts(None, 0, "") == [
        "plant", "harvest", "buy", "offer", "gift", "counter", "accept", "take", "reject",
        "withdraw",
        "end", "table", "hand", "beans", "log", "who", "netcheck", "help", "say", "leave",
    ]  # fmt: skip
    assert texts(None, 0, "ha") == ["harvest", "hand"]
    assert texts(None, 0, "p 1") == []


def test_complete_plant_offers_the_fields_that_fit_then_end():
    game = step1(fields={0: ["chili chili", "soy"]}, hands={0: "chili chili"})
    assert completions(game, 0, "p ") == [("1", "chili 2")]
    assert completions(game, 0, "plant 1 ") == [("1", "chili 3"), ("end", "plant no more")]
    assert texts(game, 1, "p ") == []


def test_complete_after_a_semicolon_sees_the_actions_before_it():
    game = step1(fields={0: ["soy soy", "blue"]})
    assert texts(game, 0, "p ") == []
    assert texts(game, 0, "h 1; p ") == ["1"]


def test_complete_harvest_offers_the_fields_that_may_be_harvested_with_their_pay():
    game = step1(fields={0: ["chili chili chili", "soy"]})
    assert completions(game, 0, "h ") == [("1", "chili 3, pays 1")]


def test_complete_plant_in_step_3_offers_beans_then_the_fields_they_fit():
    game = planting_kept_cards()
    assert completions(game, 0, "p ") == [("chili", "1 to plant"), ("soy", "1 to plant")]
    assert texts(game, 0, "p chili ") == ["1", "2"]
    assert texts(game, 0, "p soy ") == ["2"]
    assert texts(game, 0, "p soy 2 ") == ["chili", "1"]  # one bean left: its fields too


def test_complete_offer_recipients_then_what_to_give_and_want():
    game = trading()
    assert texts(game, 0, "o ") == ["all", "bob", "cat", "dan", "give", "want"]
    assert texts(game, 1, "o ") == ["ann", "give", "want"]
    assert completions(game, 0, "o bob give #") == [("#1", "soy"), ("#2", "blue"), ("#3", "blue")]
    assert completions(game, 0, "o bob give f") == [("face", "soy, chili")]
    assert completions(game, 0, "o give face ") == [("1", "soy"), ("2", "chili")]
    assert texts(game, 0, "o bob give #1 w") == ["want"]
    assert texts(game, 0, "o bob give #1 want ch") == ["chili"]
    assert completions(game, 1, "o give #1 want f") == [("face", "soy, chili")]


def test_complete_offer_wants_cards_everyone_can_see():
    game = trading()
    game = game.do(1, MakeOffer(0, give_hand=(game.hand_slot(1, 3),), want_beans=((CHILI, 1),)))
    assert completions(game, 0, "o bob give #1 want #") == [("#3", "soy, open")]
    assert completions(game, 0, "o all give #1 want bob") == [("bob#3", "soy, open")]


def test_complete_accept_offers_open_to_me_then_the_cards_that_meet_them():
    game = ann_offers_face_soy_for_chili()
    assert completions(game, 1, "a ") == [("1", "Ann: soy for chili")]
    assert completions(game, 1, "a 1 ") == [("#1", "chili"), ("#2", "chili")]
    assert texts(game, 1, "a 1 #1 ") == ["#2"]
    assert texts(game, 2, "a ") == []


def test_complete_reject_withdraw_and_counter_offer_numbers():
    game = ann_offers_face_soy_for_chili()
    assert texts(game, 1, "r ") == ["1", "all"]
    assert texts(game, 0, "w ") == ["1", "all"]
    assert texts(game, 1, "w ") == []
    assert texts(game, 1, "c ") == ["1"]
    assert texts(game, 1, "c 1 ") == ["give", "want"]


def test_complete_take_offers_with_takers_then_the_takers():
    game = gift_with_takers()
    assert completions(game, 0, "take ") == [("1", "you: soy for nothing")]
    assert completions(game, 0, "take 1 ") == [("bob", "Bob"), ("cat", "Cat")]
    assert texts(game, 1, "take ") == []
    assert texts(game, 1, "w ") == ["1", "all"]


def test_complete_nothing_inside_a_chat_line():
    assert texts(trading(), 0, "'hello o") == []
    assert texts(trading(), 0, "say p") == []
    assert texts(trading(), 0, "say hi; p") == []
    assert texts(trading(), 0, "sa") == ["say"]


def test_complete_lobby_commands_and_their_arguments():
    rooms = [RoomSummary(room_id=3, name="friday", seats=5, taken=2, options=RoomOptions())]
    completer = LobbyCompleter(lambda: rooms)

    def lobby(text: str) -> list[tuple[str, str]]:
        found = completer.get_completions(Document(text), CompleteEvent())
        return [(c.text, c.display_meta_text) for c in found]

    assert [t for t, _ in lobby("")][:4] == ["rooms", "create", "join", "quick"]
    assert lobby("join ") == [("3", "friday (2/5)")]
    assert [t for t, _ in lobby("create ")] == ["3", "4", "5", "6", "7"]
    assert [t for t, _ in lobby("quick 4 r")] == ["rule=protect", "rule=literal"]
    assert [t for t, _ in lobby("b")] == ["bot"]
    assert lobby("bot ") == [(name, "strategy") for name in ("planner", "greedy", "random")]
    assert [t for t, _ in lobby("res")] == ["resume"]


def test_complete_my_bots_and_my_unfinished_games_in_the_lobby(tmp_path):
    table = AgreedTable(
        GameStart(
            room_id=1,
            game_id=bytes(16),
            seats=tuple(Seat(name, bytes([n]) * 32, "10.0.0.1", 4000) for n, name in
                        enumerate(("ann", "bob", "cy"))),
            options=RoomOptions(),
        ),
        1,
        (bytes(32),) * 3,
    )  # fmt: skip
    GameFileWriter.create(tmp_path / "a.game", table, bytes(32), "10.0.0.1").close()
    saved = GameFile.read(tmp_path / "a.game")
    completer = LobbyCompleter(lambda: [], lambda: ["bot-1f3a", "bot-77aa"], lambda: [saved])

    def lobby(text: str) -> list[tuple[str, str]]:
        found = completer.get_completions(Document(text), CompleteEvent())
        return [(c.text, c.display_meta_text) for c in found]

    assert lobby("unbot ") == [("bot-1f3a", "your bot"), ("bot-77aa", "your bot")]
    assert lobby("kick bot-7") == [("bot-77aa", "your bot")]
    assert lobby("resume ") == [("1", "with ann, cy")]


# --- Lobby mode ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("rooms", LobbyListRooms()),
        ("ls", LobbyListRooms()),
        ("create 5 friday beans", LobbyCreate("friday beans", 5, RoomOptions())),
        ("create 4", LobbyCreate("4 players", 4, RoomOptions())),
        (
            "create 6 Late Night rule=lit proofs=off clock=60",
            LobbyCreate(
                "Late Night",
                6,
                RoomOptions(singleton_rule="rio_grande_literal", proofs=False, turn_seconds=60),
            ),
        ),
        ("join 3", LobbyJoin(3)),
        ("j #3", LobbyJoin(3)),
        ("quick 4", LobbyQuickMatch(4, RoomOptions())),
        ("qm 7 proofs=off", LobbyQuickMatch(7, RoomOptions(proofs=False))),
        ("qm 7 proofs=on", LobbyQuickMatch(7, RoomOptions(proofs=True))),
        ("ready", LobbyReady(True)),
        ("ready off", LobbyReady(False)),
        ("unready", LobbyReady(False)),
        ("not ready", LobbyReady(False)),
        ("leave", LobbyLeave()),
        ("who", LobbyWho()),
        ("say see you; soon", LobbySay("see you; soon")),
        ("'hi", LobbySay("hi")),
        ("connect lobby.local", LobbyConnect("lobby.local", 7777)),
        ("connect 10.0.0.2:7000", LobbyConnect("10.0.0.2", 7000)),
        ("quit", LobbyQuit()),
        ("exit", LobbyQuit()),
        ("help", LobbyHelp(None)),
        ("? cr", LobbyHelp("create")),
        ("bot", LobbyAddBot("planner")),
        ("bot rand", LobbyAddBot("random")),
        ("unbot bot-1f3a", LobbyRemoveBot("bot-1f3a")),
        ("kick bot-1", LobbyRemoveBot("bot-1")),
        ("resume", LobbyResume(None)),
        ("resume 2", LobbyResume(2)),
        ("continue #1", LobbyResume(1)),
    ],
)
def test_lobby_commands(line: str, expected: object):
    assert parse_lobby_command(line) == expected


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("create 8 big", "a game has 3 to 7 seats, not '8'"),
        ("create", "create SEATS NAME, e.g. create 5 friday beans"),
        ("create 4 x proofs=20", "proofs is on (the default) or off"),
        (
            "create 4 x colour=red",
            "'colour' is not a room option; the options are rule, proofs, clock",
        ),
        ("create 4 x rule=strict", "rule is protect (the default) or literal"),
        ("create 4 x clock=soon", "clock takes a number: clock=20"),
        ("create 4 " + "n" * 33, "a room name is 1 to 32 printable characters"),
        ("quick 4 fast", "'fast' is not a room option; write option=value"),
        ("join", "join which room? give its number, e.g. join 3 (rooms lists them)"),
        ("connect", "connect HOST[:PORT], e.g. connect 192.168.1.20"),
        ("connect host:99999", "lobby port must be a number from 1 to 65535, not '99999'"),
        ("plant 1", "'plant' is not a command; type help for the list"),
        ("lsit", "'lsit' is not a command; did you mean list? type help for the list"),
        ("jion 3", "'jion' is not a command; did you mean join? type help for the list"),
        ("bot clever", "a bot plays planner, greedy or random, not 'clever'"),
        ("unbot", "unbot NAME: which of your bots? who shows their names"),
        ("resume one", "resume takes the number of a game in the list, not 'one'"),
        ("resume 0", "resume takes the number of a game in the list, not '0'"),
    ],
)
def test_lobby_lines_that_cannot_be_sent_say_why(line: str, message: str):
    with pytest.raises(CommandError) as caught:
        parse_lobby_command(line)
    assert str(caught.value) == message
