"""Bots trade like people: a person at a table of bots is shown few offers a turn, and no bot
asks a seat for a bean that seat provably cannot hold.

An offer concerns a seat when another seat makes it to that seat or to everyone
(client.bots.shown). Whole games are played in memory (play_local_game), a person who answers
nothing standing in at one seat."""

from __future__ import annotations

from collections import Counter

import pytest

from client.bots import (
    GreedyBot,
    Hand,
    PlannerBot,
    Strategy,
    Unanswering,
    offers_shown,
    play_local_game,
)
from protocol.cards import CARDS_OF, Bean, bean_of
from protocol.rules import Action, EndPlanting, MakeOffer, State, promised
from tests.rules_helpers import table

MOST_A_TURN, MEAN_A_TURN = 6, 3.0  # what a person is shown at most, and on average


def tables(players: int) -> list[list[Strategy]]:
    """Planners only; planners with a person; greedy bots with a person (seat 0 here: the
    start player is drawn from each game's seed)."""
    return [
        [PlannerBot() for _ in range(players)],
        [Unanswering(PlannerBot()), *(PlannerBot() for _ in range(players - 1))],
        [
            Unanswering(PlannerBot()),
            *(GreedyBot(seed=b"a greedy bot, replayed") for _ in range(players - 1)),
        ],
    ]


@pytest.mark.slow
@pytest.mark.parametrize("players", [4, 6])
def test_a_person_is_shown_at_most_three_offers_a_turn_on_average_and_six_at_most(players):
    for number in range(len(tables(players))):
        shown: list[int] = []
        for game in range(3):
            strategies = tables(players)[number]  # fresh bots for every game
            per_seat = offers_shown(strategies, f"the offers shown, {number} {game}".encode())
            counted = per_seat if number == 0 else per_seat[:1]  # the person's seat
            shown += [n for turns in counted for n in turns]
        assert max(shown) <= MOST_A_TURN, (number, max(shown))
        assert sum(shown) / len(shown) <= MEAN_A_TURN, (number, sum(shown) / len(shown))


def could_hold(state: State, asker_hand: Hand, seat: int, bean: Bean) -> int:
    """The most cards of `bean` the seat could give from its hand, as the asker can prove it
    (the loosest bound: its opened cards not promised, and at most as many hidden cards as
    there are cards of the bean nobody has opened, less the asker's own)."""
    hand = state.players[seat].hand
    tied = promised(state, seat)
    sure = sum(
        1 for h in hand if h.card is not None and h.slot not in tied and bean_of(h.card) == bean
    )
    hidden_cards = sum(1 for h in hand if h.card is None)
    mine = set(asker_hand.values())
    unopened = {c for cards in state.hidden for c in cards if c not in mine}
    return sure + min(hidden_cards, sum(1 for c in unopened if bean_of(c) == bean))


class Checked(Strategy):
    """A strategy whose offers are checked: each bean it asks for, the seats the offer
    concerns could hold (one of them, for an offer to everyone)."""

    def __init__(self, inner: Strategy, asked: Counter[str]) -> None:
        self.inner = inner
        self.asked = asked

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        actions = self.inner.decide(state, seat, hand)
        for offer in (a for a in actions if isinstance(a, MakeOffer) and a.want_beans):
            seats = (
                [offer.to]
                if offer.to is not None
                else [s for s in range(len(state.players)) if s != seat]
            )
            for bean, count in offer.want_beans:
                self.asked["asked"] += 1
                if all(could_hold(state, hand, s, bean) < count for s in seats):
                    self.asked["provably not held"] += 1
        return actions

    def stop_waiting(self, state: State, seat: int, hand: Hand) -> list[Action]:
        return self.inner.stop_waiting(state, seat, hand)


def test_in_whole_games_no_planner_asks_for_a_bean_the_seat_provably_cannot_hold():
    asked: Counter[str] = Counter()
    for game in range(3):
        play_local_game(
            [Checked(PlannerBot(), asked) for _ in range(4)],
            f"the beans held, game {game}".encode(),
        )
    assert asked["asked"] > 0 and asked["provably not held"] == 0, asked


def offers_of(game, seat: int) -> list[MakeOffer]:  # type: ignore[no-untyped-def]
    actions = PlannerBot().decide(game.state, seat, game.hand(seat))
    return [a for a in actions if isinstance(a, MakeOffer)]


def test_the_planner_asks_no_one_for_a_bean_whose_every_card_is_in_view():
    every_red = len(CARDS_OF[Bean.RED])
    game = table(
        hands={0: "chili soy", 1: "stink", 2: "green", 3: "soy"},
        fields={0: ["red red red", "chili chili"]},
        discard=" ".join(["red"] * (every_red - 3)),
        deck="blue garden",
    )
    game = game.plant_front(1).do(0, EndPlanting())
    offers = offers_of(game, 0)
    assert offers  # it trades: its face-up cards fit no field
    assert not any(bean is Bean.RED for o in offers for bean, _ in o.want_beans)


def test_the_planner_asks_a_seat_with_no_hand_cards_for_no_bean():
    game = table(
        hands={0: "chili soy", 1: "", 2: "green", 3: "soy"},
        fields={0: ["red red red", "chili chili"]},
        deck="blue garden",
    )
    game = game.plant_front(1).do(0, EndPlanting())
    offers = offers_of(game, 0)
    assert any(o.to == 2 and o.want_beans for o in offers)  # a seat that could hold red
    assert not any(o.to == 1 and o.want_beans for o in offers)
