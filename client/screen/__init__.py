"""The person's terminal: everything that draws the game or the lobby, or reads a keyboard.

What it offers (the entry points import these from `client.screen`):

- `run_connect`: `bean-client connect`, the lobby prompt and the games played from it;
- `GameScreen` on a `Terminal`, with `in_twisted`, `play_human_seat`, `play_roster` and
  `play_resumed`: one person's seat in a game, as `play` and `resume` start it (and
  `ask_play_again`, `play`'s question after a game); `screen_for`,
  `terminal_for` and `plain_wanted` choose the full screen or plain mode;
- `PlayerView`, `render_table`, `render_event`, `render_story`, `story_lines`, `show` and
  `colour_wanted`: the table, its events and the game's story as text, for `bean-client replay`.

Inside: `commands` and `lobby_commands` (what a person types, parsed into moves), `completion`,
`player_view` (the words for cards, fields and players), `render` (what the screen shows),
`story` (the end of a game: coins, harvests, a chart), `plain` (plain mode: the same things as
lines, read and written without prompt_toolkit), and `repl` and `lobby`, which wire them to
prompt_toolkit and the game driver. The parts that parse, complete and render are pure and
tested without a terminal.

Only the entry points (`client.cli` and the commands it runs) import this package; the game
driver, the mesh, the bots and the game file must never import it, so that a bot or a test
plays without a terminal.
"""

from client.screen.lobby import run_connect
from client.screen.plain import ascii_punctuation, plain_wanted, story_lines
from client.screen.player_view import PlayerView
from client.screen.render import colour_wanted, render_event, render_table, show
from client.screen.repl import (
    GameScreen,
    Terminal,
    ask_play_again,
    in_twisted,
    play_human_seat,
    play_resumed,
    play_roster,
    screen_for,
    take_a_bots_seat,
    terminal_for,
)
from client.screen.story import render_story

__all__ = [
    "GameScreen",
    "PlayerView",
    "Terminal",
    "ascii_punctuation",
    "ask_play_again",
    "colour_wanted",
    "in_twisted",
    "plain_wanted",
    "play_human_seat",
    "play_resumed",
    "play_roster",
    "render_event",
    "render_story",
    "render_table",
    "run_connect",
    "screen_for",
    "show",
    "story_lines",
    "take_a_bots_seat",
    "terminal_for",
]
