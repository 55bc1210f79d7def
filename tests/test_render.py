"""What the REPL shows: the table, hints, the toolbar, the log lines, refusals, questions, help
and the lobby screens; every line fits 80 columns, and with NO_COLOR nothing but plain text
is printed."""

from __future__ import annotations

import io
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from prompt_toolkit.data_structures import Size
from prompt_toolkit.formatted_text import FormattedText, to_plain_text
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.utils import get_cwidth

from client.screen import PlayerView
from client.screen.commands import Submit, parse_game_command
from client.screen.render import (
    colour_wanted,
    game_over,
    render_chat,
    render_error,
    render_event,
    render_hand,
    render_help,
    render_hints,
    render_netcheck,
    render_question,
    render_refusal,
    render_room,
    render_rooms,
    render_table,
    render_table_code,
    render_takers,
    render_toolbar,
    render_who,
    show,
    toolbar_proof_warning,
    toolbar_relayed,
)
from protocol.cards import Bean
from protocol.messages import Member, RoomOptions, RoomState, RoomSummary
from protocol.open_table import OpenTable
from protocol.rules import (
    Accept,
    Action,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Phase,
    PlantPending,
    Reject,
    Result,
    State,
    Take,
    Withdraw,
)
from protocol.simulate import game_seed, random_moves
from protocol.steps import Refusal
from protocol.table import PROOFS_OFF
from tests.rules_helpers import Game, table
from tests.test_commands import (
    NAMES,
    ann_offers_face_soy_for_chili,
    gift_with_takers,
    step1,
    trading,
    view_of,
)

LONG_NAMES = [f"{first} Wolfeschlegelsteinhausen"[:24] for first in NAMES]


def plain(text: FormattedText) -> str:
    return to_plain_text(text)


def widest(text: FormattedText) -> int:
    return max(get_cwidth(line) for line in plain(text).split("\n"))


def crowded() -> Game:
    """Seven players with long names, three long fields each, open hand cards and offers."""
    fields = {
        0: ["black-eyed " * 10, "wax " * 11, "coffee " * 12],
        1: ["stink " * 8, "green " * 7, "chili " * 9],
        2: ["blue " * 10, "soy " * 7, "red " * 5],
    }
    game = table(7, hands={0: "soy red blue", 1: "soy soy green", 2: "blue"}, fields=fields,
                 deck="chili wax", earnings={3: "coffee " * 12})  # fmt: skip
    game = game.do(0, Harvest(2))
    game = game.plant_front(2).do(0, EndPlanting())
    face = game.state.face_up
    for to in (None, 1, 2, 3, 4, 5, 6):  # the face-up cards promised to one offer only
        gives = face if to is None else ()
        game = game.do(0, MakeOffer(to, give_face_up=gives, want_beans=((Bean.SOY, 1),)))
    game = game.do(1, MakeOffer(0, give_hand=(game.hand_slot(1, 1), game.hand_slot(1, 2)),
                                want_cards=face))  # fmt: skip
    return game


# --- The table -------------------------------------------------------------------------------


def test_table_shows_my_hand_in_order_with_the_front_card_marked():
    text = plain(render_table(view_of(step1(), 0)))
    assert "Your hand: #1 chili (front) #2 soy #3 blue #4 blue" in text


def test_table_shows_every_players_fields_coins_and_what_a_harvest_pays_now():
    game = step1(fields={0: ["chili chili chili", ""]}, earnings={1: "red red"})
    lines = plain(render_table(view_of(game, 1))).split("\n")
    assert "> 1 Ann           0 coins hand 4  1:chili 3 (1c, 2c at 6) 2:empty" in lines
    assert "  2 Bob (you)     2 coins hand 4  1:empty 2:empty" in lines
    named_you = plain(render_table(view_of(game, 1, ["Ann", "you", "Cy", "Di"]))).split("\n")
    assert "  2 you           2 coins hand 4  1:empty 2:empty" in named_you  # not "you (you)"


def test_table_header_shows_turn_step_deck_discard_and_exhaustions():
    game = step1(exhaustions=1, rest="discard")
    header = plain(render_table(view_of(game, 1))).split("\n")[0]
    assert header.startswith("Turn 1 · Ann's turn · step 1, planting")
    discard = len(game.state.discard)
    assert header.endswith(f"deck 2 · discard {discard} · exhausted 1 of 3")


def test_table_shows_face_up_cards_and_open_offers_with_ids():
    game = ann_offers_face_soy_for_chili()
    text = plain(render_table(view_of(game, 1)))
    assert "Face up: 1:soy 2:chili" in text
    assert "  1 Ann to everyone: gives soy (face 1), wants chili (open to you)" in text
    assert "  1 You to everyone: give soy (face 1), want chili (yours)" in plain(
        render_table(view_of(game, 0))
    )


def test_table_shows_cards_others_can_see_and_cards_waiting_to_be_planted():
    game = trading()
    game = game.do(1, MakeOffer(0, give_hand=(game.hand_slot(1, 3),), want_beans=((Bean.RED, 1),)))
    assert "    shows #3 soy" in plain(render_table(view_of(game, 0)))
    kept = trading().do(0, EndTrading())
    assert "    to plant: chili soy" in plain(render_table(view_of(kept, 1)))


def test_hints_say_where_the_front_card_fits_what_harvests_pay_and_what_to_type():
    hints = plain(render_hints(view_of(step1(), 0))).split("\n")
    assert hints == [
        "Your move: plant the front card.",
        "Your front chili fits field 1 (chili 2) or 2 (empty).",
        "A harvest now pays: field 1: 0 coins.",
        "You may: p 1 · p 2 · h 1",
    ]
    assert "You may: a 1 · r 1 · o …" in plain(
        render_hand(view_of(ann_offers_face_soy_for_chili(), 1))
    )


def test_toolbar_names_whom_the_game_waits_for_and_for_what():
    toolbar = plain(render_toolbar(view_of(step1(rest="discard"), 1))).split("\n")
    assert all(len(line) <= 80 for line in toolbar)
    assert toolbar[0] == ("Turn 1 · Ann's turn · step 1, plant · deck 2, exhausted 0/3 · 0 coins")
    assert toolbar[1] == "Waiting: Ann: plant the front card"
    game = trading()
    game = game.do(
        0, MakeOffer(1, give_face_up=(game.state.face_up[0],), want_beans=((Bean.RED, 1),))
    )
    assert plain(render_toolbar(view_of(game, 2))).split("\n")[1] == (
        "Waiting: Ann: trade, or end trading; Bob: answer offer 1"
    )
    assert plain(render_toolbar(view_of(game, 1))).split("\n")[1] == (
        "Waiting: Ann: trade, or end trading; you: answer offer 1"
    )


def test_toolbar_puts_a_players_duties_together_when_listing_them_apart_is_too_long():
    game = trading()
    for seat in (1, 2):
        for n, wanted in enumerate(game.state.face_up, 1):
            offer = MakeOffer(0, give_hand=(game.hand_slot(seat, n),), want_cards=(wanted,))
            game = game.do(seat, offer)
    first, *_, last = (offer.id for offer in game.state.offers)
    assert len(game.state.offers) == 4 and last == first + 3
    line = plain(render_toolbar(view_of(game, 0))).split("\n")[1]
    assert line == f"Waiting: you: trade, or end trading, answer offers {first}–{last}"
    hints = plain(render_hints(view_of(game, 0)))
    assert f"Your move: trade, or end trading, answer offers {first}–{last}." in hints


def test_toolbar_falls_back_to_names_when_what_they_owe_is_too_long():
    game = crowded()
    line = plain(render_toolbar(view_of(game, 3, LONG_NAMES))).split("\n")[-1]
    assert line.startswith("Waiting: Ann Wolfeschlegelsteinha, Bob Wolfeschlegelsteinha, ")
    assert line.endswith("…") and get_cwidth(line) == 80


def test_toolbar_at_the_end_says_who_won():
    state = final_state(4, 7)
    assert state.result is not None
    view = PlayerView(state, 0, {}, NAMES[:4])
    winners = [NAMES[s] if s else "You" for s in state.result.winners]
    assert plain(render_toolbar(view)).split("\n")[1].startswith(winners[0])


def final_state(players: int, game: int) -> State:
    state = None
    for move in random_moves(players, game_seed(game, players)):
        state = move.after or move.before
    assert state is not None and state.phase is Phase.OVER
    return state


# --- Fitting 80 columns, and colour -----------------------------------------------------------


def test_a_crowded_table_fits_80_columns_and_wraps_rather_than_cuts():
    game = crowded()
    for seat in (0, 1, 3):
        view = view_of(game, seat, LONG_NAMES)
        for text in (render_table(view), render_hand(view), render_toolbar(view)):
            assert widest(text) <= 80
        assert widest(render_table(view, width=40)) <= 40
    text = plain(render_table(view_of(game, 0, LONG_NAMES)))
    assert "3:coffee 12 (4c)" not in text  # harvested
    assert "1:black-eyed 10 (4c) 2:wax 11 (4c)" in text
    assert "Bob Wolfesc…" in text


def test_no_colour_prints_plain_text_and_colour_prints_styles():
    text = render_table(view_of(ann_offers_face_soy_for_chili(), 1))
    assert not colour_wanted({"NO_COLOR": "1"})
    assert not colour_wanted({}, no_colour=True)
    assert colour_wanted({"NO_COLOR": ""}) and colour_wanted({})
    quiet, loud = terminal(), terminal()
    show(text, colour=colour_wanted({"NO_COLOR": "1"}), output=quiet)
    assert "\x1b" not in quiet.stdout.getvalue()  # type: ignore[attr-defined]
    assert quiet.stdout.getvalue() == plain(text) + "\n"  # type: ignore[attr-defined]
    show(text, colour=True, output=loud)
    assert "\x1b[" in loud.stdout.getvalue()  # type: ignore[attr-defined]


def terminal() -> Vt100_Output:
    """A colour terminal that writes into a string."""
    return Vt100_Output(io.StringIO(), lambda: Size(24, 80), term="xterm")


# --- The log ----------------------------------------------------------------------------------


def event(
    game: Game, seat: int | None, action: Action, me: int = 1, names: list[str] = NAMES
) -> tuple[str, Game]:
    after = game.do(seat, action) if seat is not None else game
    text = plain(render_event(game.state, seat, action, after.state, names[:4], me))
    return text, after


def test_log_lines_for_planting_harvesting_and_offers():
    game = step1(fields={0: ["chili chili chili", ""]})
    text, _ = event(game, 0, Harvest(0))
    assert text == "Ann harvested field 1 (chili 3) for 1 coin."
    text, planted = event(game, 0, parse_actions(game, 0, "p 1")[0])
    assert text == "Ann planted chili in field 1 (chili 4)."
    text, _ = event(planted, 0, EndPlanting())
    assert text == "Ann stopped planting."
    game = trading()
    offer = MakeOffer(
        None,
        give_face_up=(game.state.face_up[0],),
        give_hand=(game.hand_slot(0, 1),),
        want_beans=((Bean.CHILI, 2),),
    )
    text, game = event(game, 0, offer)
    assert text == (  # wrapped at 80 columns, the next line indented
        "Ann made offer 1 to everyone: gives soy (Ann's #1) and soy (face 1), wants 2\n    chili."
    )
    text, _ = event(game, 1, Reject(1), me=1)
    assert text == "You rejected offer 1."
    text, _ = event(game, 0, Withdraw(1))
    assert text == "Ann withdrew offer 1."


def parse_actions(game: Game, seat: int, line: str) -> tuple[Action, ...]:
    result = parse_game_command(line, view_of(game, seat))
    assert isinstance(result, Submit)
    return result.actions


def test_log_lines_for_an_accepted_offer_and_the_offers_it_made_impossible():
    game = ann_offers_face_soy_for_chili(to=1)
    game = game.do(2, MakeOffer(0, want_cards=(game.state.face_up[0],)))
    accept = Accept(1, (game.hand_slot(1, 1),))
    text, _ = event(game, 1, accept, me=2)
    assert text.split("\n") == [
        "Bob gave Ann chili for soy (offer 1).",
        "Offer 2 lapsed: nobody can accept it now.",
    ]


def test_log_lines_for_bids_a_take_and_the_bids_that_lapse():
    game = trading()
    game = game.do(0, MakeOffer(None, give_face_up=(game.state.face_up[0],)))
    text, game = event(game, 1, Accept(1), me=1)
    assert text == "You bid on offer 1: would take Ann's soy as a gift. Waiting for Ann to choose."
    text, game = event(game, 2, Accept(1), me=0)
    assert text == "Cat bid on offer 1: would take your soy as a gift."
    text, _ = event(game, 0, Take(1, 2), me=1)
    assert text.split("\n") == [
        "Ann took Cat's bid on offer 1: Cat took Ann's soy as a gift.",
        "Your bid on offer 1 lapsed.",
    ]
    text, _ = event(game, 0, Take(1, 2), me=2)
    assert text.split("\n")[0] == "Ann took your bid on offer 1: you took Ann's soy as a gift."
    assert event(game, 1, Withdraw(1), me=1)[0] == "You withdrew your bid on offer 1."
    assert event(game, 1, Withdraw(1), me=0)[0] == "Bob withdrew the bid on offer 1."
    assert event(game, 0, Withdraw(1), me=3)[0].split("\n") == [
        "Ann withdrew offer 1.",
        "Bob's bid on offer 1 lapsed.",
        "Cat's bid on offer 1 lapsed.",
    ]


LOWER = ["ann", "bot1", "cat", "dan"]


def test_an_offer_says_both_sides_from_the_readers_side_and_names_as_typed():
    """Bob reads the offers Ann (typed "ann") makes him: what she gives him, what she wants of
    his; the words once said "offered you nothing for chili" for "wants your chili"."""
    game = trading()
    soy = game.state.face_up[0]
    offers = {
        MakeOffer(1, give_face_up=(soy,), want_beans=((Bean.CHILI, 1),)): (
            "ann made offer 1: gives you soy (face 1), wants your chili."
        ),
        MakeOffer(1, give_face_up=(soy,)): "ann made offer 1: gives you soy (face 1) as a gift.",
        MakeOffer(1, want_beans=((Bean.CHILI, 2),)): (
            "ann made offer 1: asks for your 2 chili, gives nothing."
        ),
        MakeOffer(2, want_beans=((Bean.BLUE, 1),)): (
            "ann made offer 1: asks for cat's blue, gives nothing."
        ),
    }
    for offer, said in offers.items():
        text, made = event(game, 0, offer, names=LOWER)
        assert text == said
        terms = said.removeprefix("ann made offer 1: ").removesuffix(".")  # the table's row too
        open_to_bob = " (open to you)" if offer.to == 1 else ""
        assert f"  1 ann: {terms}{open_to_bob}" in plain(render_table(view_of(made, 1, LOWER)))
    mine = MakeOffer(2, give_face_up=(soy,), want_beans=((Bean.BLUE, 1),))
    assert (
        event(game, 0, mine, me=0)[0] == "You made offer 1: give Cat soy (face 1), want Cat's blue."
    )


def test_a_trade_says_what_each_side_gave_and_got_for_the_reader_and_for_others():
    game = trading()
    asks = game.do(0, MakeOffer(1, want_beans=((Bean.CHILI, 1),)))
    accept = Accept(1, (asks.hand_slot(1, 1),))
    assert (
        event(asks, 1, accept, me=1, names=LOWER)[0] == "You gave ann chili for nothing (offer 1)."
    )
    assert (
        event(asks, 1, accept, me=0, names=LOWER)[0] == "bot1 gave you chili for nothing (offer 1)."
    )
    gift = game.do(0, MakeOffer(1, give_face_up=(game.state.face_up[0],)))
    assert (
        event(gift, 1, Accept(1), me=1, names=LOWER)[0] == "You took ann's soy as a gift (offer 1)."
    )
    assert (
        event(gift, 1, Accept(1), me=2, names=LOWER)[0]
        == "bot1 took ann's soy as a gift (offer 1)."
    )


def test_ending_trading_says_what_is_kept_in_a_sentence_and_names_keep_their_case():
    game = trading()
    you = ["you", "bot1", "bot2", "bot3"]  # bean-client play names the person "you"
    assert event(game, 0, EndTrading(), me=0, names=you)[0].startswith("You ended trading")
    assert event(game, 0, EndTrading(), me=1, names=you)[0].startswith("you ended trading")
    assert (
        event(game, 0, EndTrading(), me=0)[0]
        == "You ended trading, keeping soy and chili to plant."
    )
    assert (
        event(game, 0, EndTrading(), names=LOWER)[0]
        == "ann ended trading, keeping soy and chili to plant."
    )


def test_the_end_of_a_game_is_one_line_that_explains_a_tie_on_coins():
    view = PlayerView(trading().state, 1, {}, LOWER)
    won = Result(scores=(2, 2, 1, 0), hand_counts=(1, 0, 2, 0), winners=(0,))
    assert game_over(view, won) == (
        "Game over: ann won with 2 coins and more cards left in hand than you. "
        "Coins: ann 2, you 2, cat 1, dan 0."
    )
    shared = Result(scores=(2, 2, 1, 0), hand_counts=(1, 1, 2, 0), winners=(0, 1))
    assert game_over(view, shared) == (
        "Game over: ann and you share the win with 2 coins each. Coins: ann 2, you 2, cat 1, dan 0."
    )


def test_the_maker_sees_its_takers_and_a_bidder_whom_it_waits_for():
    game = gift_with_takers()
    ann, bob = view_of(game, 0), view_of(game, 1)
    assert plain(render_takers(ann, 1)) == (
        "Bob and Cat take offer 1: take 1 bob or take 1 cat; withdraw 1 lets them lapse."
    )
    assert plain(render_toolbar(ann)).split("\n")[1:] == [
        "Offer 1: 2 takers",
        "Waiting: you: trade, or end trading, choose for offer 1; Dan: answer offer 1",
    ]
    assert plain(render_toolbar(bob)).split("\n")[1] == (
        "Your bid on offer 1: waiting for Ann to choose"
    )
    assert "You may: e · w 1 · take 1 bob · take 1 cat" in plain(render_hints(ann))
    assert "Your bid on offer 1 stands: waiting for Ann to choose." in plain(render_hints(bob))
    table_lines = plain(render_table(bob)).split("\n")
    offer_row = table_lines.index(
        "  1 Ann to everyone: gives soy (face 1) as a gift (your bid stands: Ann chooses)"
    )
    assert table_lines[offer_row + 1] == "    takers: you and Cat"


def test_log_lines_for_the_end_of_a_turn():
    game = trading().do(0, EndTrading())
    chili, soy = game.state.players[0].pending
    text, game = event(game, 0, PlantPending(soy, 1))
    assert text == "Ann planted soy in field 2 (soy 1)."
    text, game = event(game, 0, PlantPending(chili, 0))
    assert text.split("\n") == [
        "Ann planted chili in field 1 (chili 4).",
        "Ann drew 3 cards. Turn 2: you to play.",
    ]


def test_log_lines_for_the_deck_running_out():
    game = step1(rest="discard").plant_front(0)
    text, _ = event(game, 0, EndPlanting())
    assert text.split("\n") == [
        "Ann stopped planting.",
        "The deck ran out (1 of 3); the discard pile is the new deck.",
    ]


def test_log_lines_for_the_end_of_the_game():
    previous = None
    for move in random_moves(4, game_seed(7, 4)):
        if move.after is not None and move.after.phase is Phase.OVER:
            previous = move
    assert previous is not None and previous.after is not None and previous.after.result
    text = plain(
        render_event(previous.before, previous.seat, previous.action, previous.after, NAMES[:4], 0)
    )
    assert text.count("Game over") == 1
    assert re.search(r"Game over: .* (won|share the win) with \d+ coins", text.replace("\n", " "))


def test_a_refusal_names_the_player_and_gives_the_rules_sentence():
    game = ann_offers_face_soy_for_chili()
    refusal = Refusal(2, Accept(1), "offer 1 is not open to seat 2")
    assert plain(render_refusal(refusal, game.state, NAMES[:4], 1)) == (
        "Cat could not accept offer 1: offer 1 is not open to Cat."
    )
    harvest = Refusal(1, Harvest(0), "field 1 is empty")
    assert plain(render_refusal(harvest, game.state, NAMES[:4], 1)) == (
        "You could not harvest: field 1 is empty."
    )


def test_chat_errors_and_questions_wrap_within_the_width():
    chat = render_chat("Bob", "word " * 60)
    assert plain(chat).startswith("Bob: word word") and widest(chat) <= 80
    assert widest(render_error("x" * 200)) <= 80
    question = parse_game_command("a 1", view_of(ann_offers_face_soy_for_chili(), 1))
    assert not isinstance(question, Submit)
    assert plain(render_question(question)).split("\n") == [  # type: ignore[arg-type]
        "Offer 1 asks for 1 chili; which of your cards do you give?",
        "  1) offer 1, giving #1 chili (accept 1 #1)",
        "  2) offer 1, giving #2 chili (accept 1 #2)",
        "Type a number, or another command.",
    ]


# --- Help and the lobby -----------------------------------------------------------------------


def test_help_lists_every_command_and_explains_one_within_80_columns():
    overview = render_help()
    assert widest(overview) <= 80
    assert "accept (a)" in plain(overview) and "withdraw (w)" in plain(overview)
    offer = plain(render_help("offer"))
    assert offer.startswith("offer [PLAYER|all] give CARDS want WANTS")
    assert "face 2, face chili" in offer and "bob#3" in offer
    assert widest(render_help("offer")) <= 80
    assert "create SEATS" in plain(render_help("create", lobby=True))
    assert plain(render_help("zz")) == "there is no command 'zz'"


def test_lobby_rooms_and_the_room_i_am_in():
    rooms = [
        RoomSummary(room_id=3, name="friday", seats=5, taken=2, options=RoomOptions()),
        RoomSummary(
            room_id=12,
            name="strict",
            seats=4,
            taken=1,
            options=RoomOptions(singleton_rule="rio_grande_literal", turn_seconds=60),
        ),
    ]
    assert plain(render_rooms(rooms)).split("\n") == [
        "    3 2/5 friday",
        "   12 1/4 strict literal one-bean rule, 60s a turn",
    ]
    assert plain(render_rooms([])) == "No open rooms. create SEATS NAME opens one."
    key = bytes(32)
    room = RoomState(room_id=3, name="friday", seats=5, options=RoomOptions(),
                     members=(Member("Ann", key, True), Member("Bob", key, False)))  # fmt: skip
    assert plain(render_room(room)).split("\n") == [
        "Room 3 friday: 2 of 5 seats",
        "  Ann ready",
        "  Bob not ready",
    ]


# --- Any state of random play -----------------------------------------------------------------


@settings(max_examples=40)
@given(players=st.integers(3, 7), game=st.integers(0, 2**32), moves=st.integers(0, 300))
@example(players=7, game=1119, moves=239)  # three long names tie: the toolbar's "won" line
def test_any_state_of_random_play_renders_within_80_columns(players: int, game: int, moves: int):
    seed = game_seed(game, players)
    cards = OpenTable(seed)
    for number, move in enumerate(random_moves(players, seed)):
        if move.after is not None:
            me = number % players
            text = render_event(move.before, move.seat, move.action, move.after, LONG_NAMES, me)
            assert widest(text) <= 80
        if number == moves:
            break
    state = move.after or move.before
    for me in range(players):
        view = PlayerView(state, me, cards.hand(state, me), LONG_NAMES[:players])
        for text in (render_table(view), render_toolbar(view)):
            assert widest(text) <= 80


# --- The table's identity: its code, its keys, weak proofs ---------------------------------


def test_who_lists_everyone_with_key_and_link_then_the_code_and_the_check() -> None:
    from protocol.identity import Identity, fingerprint

    view = view_of(step1(), 0)
    keys = [Identity.generate().public_key for _ in view.names]
    text = plain(render_who(view, keys, frozenset({1}), "123 456 789 012"))
    lines = text.split("\n")
    assert lines[0].startswith(f"1 {view.names[0]}") and lines[0].endswith("you")
    assert fingerprint(keys[1]) in lines[1] and lines[1].endswith("linked")
    assert lines[2].endswith("no link")
    assert "Table code 123 456 789 012" in text and "same code" in text
    assert widest(render_who(view, keys, frozenset(), "123 456 789 012")) <= 80


def test_who_the_toolbar_and_netcheck_mark_the_links_through_the_lobbys_relay() -> None:
    from protocol.identity import Identity

    view = view_of(step1(), 0)
    keys = [Identity.generate().public_key for _ in view.names]
    both = frozenset({1, 2})
    text = plain(render_who(view, keys, both, "123 456 789 012", relayed=frozenset({2})))
    lines = text.split("\n")
    assert lines[1].endswith(" linked") and lines[2].endswith("linked through the lobby")
    assert toolbar_relayed(view.names, frozenset()) is None
    assert toolbar_relayed(view.names, frozenset({2})) == f"Through the lobby: {view.names[2]}"
    how = ["", "directly", "through the lobby's relay: it refuses links on port 4000"]
    how += ["no link now"] * (len(view.names) - len(how))
    shown = plain(render_netcheck(view, how)).split("\n")
    assert shown[:2] == [f"2 {view.names[1]} directly", f"3 {view.names[2]} {how[2]}"]
    assert len(shown) == len(view.names) - 1
    # A long reason is wrapped between words, its lines indented under the name.
    why = (
        "through the lobby's relay: bot1's machine at 127.0.0.1 refuses links on port 58005: "
        "nothing listens there for other machines. bot1's client may listen on 127.0.0.1 only"
    )
    how[2] = why
    shown = plain(render_netcheck(view, how, width=60)).split("\n")
    reason = shown[1 : -(len(view.names) - 3)] if len(view.names) > 3 else shown[1:]
    assert all(len(line) <= 60 for line in shown), shown
    assert all(line.startswith("    ") for line in reason[1:]), reason
    assert " ".join(" ".join(reason).split()) == f"3 {view.names[2]} {why}"


def test_the_table_code_line_says_weak_proofs_and_the_toolbar_too() -> None:
    full = plain(render_table_code("123 456 789 012", True))
    assert full.startswith("Table code 123 456 789 012") and "Weak" not in full
    weak = plain(render_table_code("123 456 789 012", False))
    assert f"Weak {PROOFS_OFF}." in weak
    assert toolbar_proof_warning(False) == PROOFS_OFF
    assert toolbar_proof_warning(True) is None


def test_offer_numbers_are_said_in_runs():
    from client.screen.render import _runs

    assert _runs(["15", "3", "7", "8", "9", "10", "11", "12"]) == "3, 7–12, 15"
    assert _runs(["4", "5"]) == "4, 5"
    assert _runs(["9"]) == "9"
