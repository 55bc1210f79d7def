"""The cards, the beanometer and the set-up per player count (RULES.md sections 1 and 2.1)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.cards import (
    ALL_CARDS,
    BEANOMETER,
    BEANS,
    CARDS_OF,
    COUNT,
    Bean,
    bean_of,
    coins,
    parse_bean,
    setup_for,
)
from protocol.rules import new_game


def test_154_cards_in_eleven_types_with_the_players_names():
    assert len(ALL_CARDS) == 154 == sum(COUNT.values())
    assert [b.value for b in BEANS] == [
        "coffee", "wax", "blue", "chili", "stink", "green",
        "soy", "black-eyed", "red", "garden", "cocoa",
    ]  # fmt: skip
    for bean in BEANS:
        assert all(bean_of(card) is bean for card in CARDS_OF[bean])
        # The number printed on each card is its type's total count.
        assert len(CARDS_OF[bean]) == COUNT[bean]


def test_stink_bean_worked_example_of_the_rulebook():
    # S1: "1 or 2 ... nothing, 3 or 4 ... one, 5 or 6 ... two, 7 ... three, 8 or more ... four".
    assert [coins(Bean.STINK, n) for n in range(1, 11)] == [0, 0, 1, 1, 2, 2, 3, 4, 4, 4]


def test_garden_pays_at_most_three_and_cocoa_pays_two_for_two():
    assert [coins(Bean.GARDEN, n) for n in range(1, 7)] == [0, 2, 3, 3, 3, 3]
    assert [coins(Bean.COCOA, n) for n in range(1, 5)] == [0, 2, 3, 4]


@given(st.sampled_from(BEANS), st.integers(min_value=0, max_value=30))
def test_coins_grow_with_the_field_never_exceed_four_and_one_card_pays_nothing(bean, n):
    assert 0 <= coins(bean, n) <= coins(bean, n + 1) <= 4
    assert coins(bean, 1) == 0


@pytest.mark.parametrize("bean", BEANS)
def test_each_beanometer_threshold_pays_exactly_its_coins(bean):
    for paid, need in enumerate(BEANOMETER[bean], 1):
        if need is not None:
            assert coins(bean, need) == paid
            assert coins(bean, need - 1) < paid


@pytest.mark.parametrize(
    ("players", "removed", "deck_size", "hands", "fields", "buy", "cost", "draw", "end"),
    [
        (3, {Bean.COCOA}, 150, (5, 5, 5), 3, False, 3, 3, 2),
        (4, {Bean.COFFEE}, 130, (5,) * 4, 2, True, 3, 3, 3),
        (5, {Bean.COFFEE}, 130, (5,) * 5, 2, True, 3, 3, 3),
        (6, {Bean.COCOA, Bean.GARDEN}, 144, (3, 4, 5, 6, 6, 6), 2, True, 2, 4, 3),
        (7, {Bean.COCOA, Bean.GARDEN}, 144, (3, 4, 5, 6, 6, 6, 6), 2, True, 2, 4, 3),
    ],
)
def test_player_count_variants_of_the_rio_grande_edition(
    players, removed, deck_size, hands, fields, buy, cost, draw, end
):
    setup = setup_for(players)
    assert set(setup.removed) == removed
    assert len(setup.deck) == deck_size
    assert not any(bean_of(card) in removed for card in setup.deck)
    assert (setup.hand_sizes, setup.start_fields, setup.can_buy_field) == (hands, fields, buy)
    assert (setup.field_cost, setup.draw_count, setup.exhaustions_to_end) == (cost, draw, end)


@pytest.mark.parametrize(("players", "left"), [(3, 135), (4, 110), (5, 105), (6, 114), (7, 108)])
def test_edge_4_the_deck_cannot_run_out_while_dealing(players, left):
    for start in range(players):
        assert new_game(players, start).deck.remaining == left


@pytest.mark.parametrize("players", [2, 8, 0])
def test_unsupported_player_counts_are_refused(players):
    with pytest.raises(ValueError, match="3 to 7 players"):
        setup_for(players)


def test_bean_names_by_unique_prefix():
    assert parse_bean("chi") is Bean.CHILI
    assert parse_bean("Black-Eyed") is Bean.BLACK_EYED
    assert parse_bean("w") is Bean.WAX
    assert parse_bean(" red ") is Bean.RED


def test_ambiguous_and_unknown_bean_names_say_what_would_match():
    with pytest.raises(ValueError, match="blue or black-eyed"):
        parse_bean("bl")
    with pytest.raises(ValueError, match="not a bean; the beans are coffee"):
        parse_bean("carrot")
    with pytest.raises(ValueError):
        parse_bean("")
