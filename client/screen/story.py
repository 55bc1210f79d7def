"""The end of a game on the full screen: each player's coins and harvests, and a chart of
everyone's coins over the turns, drawn with characters (no colour needed, no line wider than
the screen). Plain mode says the same in lines (plain.story_lines). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from textwrap import wrap

from prompt_toolkit.formatted_text import FormattedText

from client.story import GameStory
from protocol.cards import Bean

WIDTH = 80
HEIGHT = 20  # 24 rows, less the outcome said above the story and the prompt below it
CHART_ROWS = 7  # rows of the plot, from 0 coins to the most anyone had
MIN_CHART_ROWS = 3  # 0, the middle and the top
LABEL_COLUMNS = 4  # the coin counts on the left
SEVERAL = "*"  # two or more players at one point
YOU = " (you)"  # after this person's own name


def render_story(
    story: GameStory,
    names: Sequence[str],
    me: int | None,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> FormattedText:
    """At most `height` lines, so that the outcome said above it stays on an 80x24 screen:
    one line per player, and the chart gets the rows that are left. `me` None: nobody is
    "you" (a game file shown offline, whoever reads it)."""
    lines: list[list[tuple[str, str]]] = [
        [("class:title", f"The game in numbers, over {story.turns} turns:")]
    ]
    for seat, name in enumerate(names):
        lines.append(_player_line(story, seat, name, me, width))
    lines += [[("class:muted", "Harvests by bean: cards sold → coins paid, in how many.")]]
    lines += chart(story, names, width, height - len(lines))
    joined: list[tuple[str, str]] = []
    for number, line in enumerate(lines):
        joined += [("", "\n")] if number else []
        joined += line
    return FormattedText(joined)


def _player_line(
    story: GameStory, seat: int, name: str, me: int | None, width: int
) -> list[tuple[str, str]]:
    """ "1 ann (you): 14 coins  chili 11→5 in 3, soy 9→4 in 2; 6 more cards sold for nothing":
    for each bean, the cards its paying harvests (and final sales) sold, the coins they paid,
    and how many there were, best first (a harvest that paid nothing is only among the cards
    sold for nothing, as plain mode tells it); what does not fit in the line is counted
    ("3 more beans paid"), the same for every seat's screen. Plain mode and `replay
    --summary` say it all."""
    coins = story.coins_of(seat)
    final = story.result.scores[seat] if story.result is not None else (coins[-1] if coins else 0)
    marked = seat == me and name.casefold() != "you"
    who = f"{seat + 1} {name}" + (YOU if marked else "")
    by_bean: dict[Bean, tuple[int, int, int]] = {}
    sales = story.sales_of(seat)
    for sale in sales:
        if sale.coins:
            cards, paid, times = by_bean.get(sale.bean, (0, 0, 0))
            by_bean[sale.bean] = (cards + sale.cards, paid + sale.coins, times + 1)
    ranked = sorted(by_bean.items(), key=lambda item: (-item[1][1], -item[1][0], item[0].value))
    parts = [
        f"{bean} {cards}→{paid}" + (f" in {times}" if times > 1 else "")
        for bean, (cards, paid, times) in ranked
    ]
    unpaid = sum(sale.cards for sale in sales if not sale.coins)
    head = f"{who}: {final} coin{'' if final == 1 else 's'}  "
    room = width - (0 if marked else len(YOU))  # every player's screen lists the same beans
    style = "class:me" if seat == me else ""
    nothing = f"; {unpaid} more card{'' if unpaid == 1 else 's'} sold for nothing"
    for shown in range(len(parts), -1, -1):
        left = len(parts) - shown
        more = f"{left} {'more ' if shown else ''}bean{'' if left == 1 else 's'} paid"
        sold = ", ".join(parts[:shown] + ([more] if left else [])) or "no harvest paid"
        if unpaid and not left and len(head + sold + nothing) <= room:
            sold += nothing
        if len(head + sold) <= room:
            return [(style, head + sold)]
    return [(style, head.rstrip())]  # a name as long as the screen


def chart(
    story: GameStory, names: Sequence[str], width: int = WIDTH, height: int = HEIGHT
) -> list[list[tuple[str, str]]]:
    """Everyone's coins at the end of each turn: one column per turn (several turns a column
    when they do not fit), one row per step of coins, each player drawn with their seat
    number; the axis says the coins on the left and the turns below. At most `height` lines
    (but never fewer than three rows of coins)."""
    series = [story.coins_of(seat) for seat in range(len(names))]
    turns = story.turns
    if turns == 0:
        return []
    columns = min(turns, width - LABEL_COLUMNS - 2)
    top = max(1, *(max(values) for values in series))
    legend = ", ".join(f"{seat + 1} {name}" for seat, name in enumerate(names))
    title, said = "Coins at the end of each turn", f" ({legend}; * several):"
    lines: list[list[tuple[str, str]]] = [[("class:title", title), ("", said)]]
    if len(title + said) > width:  # long names: the legend on lines of its own
        lines = [[("class:title", "Coins at the end of each turn:")]]
        lines += [[("", part)] for part in wrap(legend + "; * several", width)]
    rows = min(CHART_ROWS, top + 1, max(MIN_CHART_ROWS, height - len(lines) - 2))
    grid = [[" "] * columns for _ in range(rows)]
    for seat, values in enumerate(series):
        for turn, value in enumerate(values):
            column = turn * columns // turns
            row = round(value * (rows - 1) / top)
            cell = grid[row][column]
            mark = str(seat + 1)
            grid[row][column] = mark if cell in (" ", mark) else SEVERAL
    for row in range(rows - 1, -1, -1):
        value = round(row * top / (rows - 1))
        label = str(value) if row in (0, rows - 1, (rows - 1) // 2) else ""
        axis = "+" if row == 0 else "|"
        plotted = "".join(grid[row]).rstrip()
        lines.append([("", f"{label:>{LABEL_COLUMNS}}{axis}"), ("", plotted)])
    lines.append([("", " " * LABEL_COLUMNS + "+" + "-" * columns)])
    lines.append([("", _turn_axis(turns, columns))])
    return lines


def _turn_axis(turns: int, columns: int) -> str:
    """Turn numbers under their columns: the last, the first, and every tenth where there
    is room for it."""
    axis = [" "] * (LABEL_COLUMNS + 1 + columns + 6)
    marks = [turns, 1, *range(10, turns, 10)]
    for turn in marks:
        text = str(turn)
        start = LABEL_COLUMNS + 1 + (turn - 1) * columns // turns
        if all(c == " " for c in axis[max(start - 1, 0) : start + len(text) + 1]):
            axis[start : start + len(text)] = text
    words = "".join(axis).rstrip()
    return words + " turn" if len(words) + 5 <= LABEL_COLUMNS + 1 + columns + 6 else words
