"""The game's story at its end (client.story) and how it is shown: on the full screen, with a
chart of coins over the turns that fits 80 columns (client.screen.story), and in plain lines
(client.screen.plain.story_lines). Whole games between greedy bots in memory feed it, as the
lockstep's steps do."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from prompt_toolkit.formatted_text import to_plain_text

from client.bots import GreedyBot
from client.screen import render_story, story_lines
from client.screen.story import HEIGHT, WIDTH
from client.story import GameStory, Sale
from protocol.cards import Bean
from protocol.kdf import Stream
from protocol.open_table import OpenTable
from protocol.rules import BuyField, Phase, Result, State, apply, new_game
from protocol.simulate import game_seed
from protocol.steps import apply_step

NAMES = ("ann", "bob", "cy", "dee", "ed", "flo", "gus")


def a_whole_game(players: int, seed: int) -> tuple[GameStory, list[int], State]:
    """A game of greedy bots told to a story as it is applied; the fields each seat bought,
    and the last state."""
    dealt = game_seed(seed, players)
    table = OpenTable(dealt)
    state = new_game(players, Stream(dealt, "start").randbelow(players))
    strategies = [GreedyBot() for _ in range(players)]
    story, bought = GameStory(), [0] * players
    while state.phase is not Phase.OVER:
        if state.phase is Phase.REVEAL:
            reveal = table.reveal(state)
            after = apply(state, None, reveal)
            story.applied(None, reveal, state, after)
            state = after
            continue
        moves = {
            seat: actions
            for seat, strategy in enumerate(strategies)
            if (actions := strategy.decide(state, seat, table.hand(state, seat)))
        }
        state, _, applied = apply_step(state, moves)
        for done in applied:
            bought[done.seat or 0] += isinstance(done.action, BuyField)
            story.applied(done.seat, done.action, done.before, done.after)
    assert state.result is not None
    return story, bought, state


@settings(max_examples=8)
@given(st.integers(min_value=3, max_value=7), st.integers(min_value=0, max_value=10**6))
def test_every_coin_a_player_ends_with_comes_from_a_sale_the_story_tells(players, seed):
    story, bought, end = a_whole_game(players, seed)
    result = end.result
    assert result is not None
    for seat in range(players):
        earned = sum(sale.coins for sale in story.sales_of(seat))
        assert earned - end.setup.field_cost * bought[seat] == result.scores[seat]
        assert story.coins_of(seat)[-1] == result.scores[seat]
    assert story.result == result
    assert story.turns == max(story.coins)
    assert any(sale.at_end for sale in story.sales)  # the fields sold in the final scoring


@settings(max_examples=8)
@given(st.integers(min_value=3, max_value=7), st.integers(min_value=0, max_value=10**6))
def test_the_summary_fits_80_columns_and_draws_every_player(players, seed):
    story, _, end = a_whole_game(players, seed)
    assert end.result is not None
    names = [name + "-with-a-long-name" * (seat % 2) for seat, name in enumerate(NAMES[:players])]
    lines = to_plain_text(render_story(story, names, 0)).splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    chart = lines[lines.index(next(line for line in lines if line.startswith("Coins at"))) :]
    drawn = "".join(chart[1:])
    for seat in range(players):
        assert str(seat + 1) in drawn or "*" in drawn
    assert chart[-1].startswith("     1 ") and chart[-1].endswith(f"{story.turns} turn")
    for seat, name in enumerate(names):
        said = f"{seat + 1} {name}{' (you)' if seat == 0 else ''}: {end.result.scores[seat]} coin"
        assert any(line.startswith(said) for line in lines)


def a_small_story() -> GameStory:
    story = GameStory(
        sales=[
            Sale(2, 0, Bean.CHILI, 4, 1),
            Sale(4, 2, Bean.SOY, 6, 3),
            Sale(4, 0, Bean.CHILI, 5, 2),
            Sale(5, 1, Bean.WAX, 1, 0, at_end=True),
            Sale(5, 0, Bean.BLUE, 4, 1, at_end=True),
        ],
        coins={1: (0, 0, 0), 2: (1, 0, 0), 3: (1, 0, 0), 4: (3, 0, 3), 5: (4, 0, 3)},
    )
    story.result = Result((4, 0, 3), (2, 3, 1), (0,))
    return story


def test_a_small_game_is_drawn_as_expected():
    text = to_plain_text(render_story(a_small_story(), NAMES[:3], 1))
    assert text.splitlines() == [
        "The game in numbers, over 5 turns:",
        "1 ann: 4 coins  chili 9→3 in 2, blue 4→1",
        "2 bob (you): 0 coins  no harvest paid; 1 more card sold for nothing",
        "3 cy: 3 coins  soy 6→3",
        "Harvests by bean: cards sold → coins paid, in how many.",
        "Coins at the end of each turn (1 ann, 2 bob, 3 cy; * several):",
        "   4|    1",
        "    |   *3",
        "   2|",
        "    | 11",
        "   0+***22",
        "    +-----",
        "     1   5 turn",
    ]


@given(
    st.integers(min_value=3, max_value=7),
    st.integers(min_value=1, max_value=60),
    st.integers(min_value=0, max_value=24),
)
def test_a_crowded_story_fits_the_screen_below_the_outcome(players, turns, longer):
    """Every player harvesting every bean twice, with names of any length: one line each, the beans
    that do not fit counted, the whole story within HEIGHT lines of 80 columns, and the same
    story on every player's screen."""
    names = [name + "-" + "x" * longer for name in NAMES[:players]]
    story = GameStory(
        sales=[
            Sale(1 + (n % turns), seat, bean, 4 + n % 9, 1 + n % 4)
            for seat in range(players)
            for n, bean in enumerate(list(Bean) * 2)
        ],
        coins={
            turn: tuple(turn * (seat + 1) for seat in range(players))
            for turn in range(1, turns + 1)
        },
    )
    lines = to_plain_text(render_story(story, names, 0)).splitlines()
    assert len(lines) <= HEIGHT and all(len(line) <= WIDTH for line in lines), lines
    for me in range(1, players):  # every player sees the same story, but for "(you)"
        seen = to_plain_text(render_story(story, names, me)).replace(" (you)", "")
        assert seen == "\n".join(lines).replace(" (you)", "")
    for seat, name in enumerate(names):
        line = next(line for line in lines if line.startswith(f"{seat + 1} {name}"))
        shown = len(re.findall(r"\d+→\d+ in 2", line))
        more = re.search(r"(\d+) (more )?beans? paid$", line)
        assert more is not None and bool(shown) == bool(more.group(2)), line
        assert shown + int(more.group(1)) == len(Bean), line
    chart = lines[lines.index(next(line for line in lines if line.startswith("Coins at"))) :]
    assert sum(1 for row in chart if re.match(r" {0,3}\d* *[|+]", row)) >= 3  # rows and axis


def test_plain_mode_says_the_story_in_lines_that_stand_alone():
    assert story_lines(a_small_story(), NAMES[:3], 1) == [
        "summary: 5 turns",
        "summary, ann: 4 coins; harvests: turn 2 chili 4 cards for 1 coin; turn 4 chili 5 cards "
        "for 2 coins; at the end blue 4 cards for 1 coin",
        "summary, you: 0 coins; harvests: none paid; 1 more card sold for nothing",
        "summary, cy: 3 coins; harvests: turn 4 soy 6 cards for 3 coins",
        "coins, ann: 1 after turn 2, 3 after turn 4, 4 after turn 5",
        "coins, you: none",
        "coins, cy: 3 after turn 4",
    ]


def test_a_harvest_that_paid_nothing_is_told_alike_on_the_screen_and_in_plain_lines():
    """Issue 25: a 3-card chili harvest for 1 coin and a single chili sold for nothing read
    "chili 4→1 in 2" on the screen, against one 3-card chili harvest in plain mode."""
    story = GameStory(
        sales=[Sale(2, 0, Bean.CHILI, 3, 1), Sale(3, 0, Bean.CHILI, 1, 0)],
        coins={1: (0, 0, 0), 2: (1, 0, 0), 3: (1, 0, 0)},
    )
    screen = to_plain_text(render_story(story, NAMES[:3], None)).splitlines()
    assert screen[1] == "1 ann: 1 coin  chili 3→1; 1 more card sold for nothing"
    assert story_lines(story, NAMES[:3], None)[1] == (
        "summary, ann: harvests: turn 2 chili 3 cards for 1 coin; 1 more card sold for nothing"
    )
