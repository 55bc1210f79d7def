"""Lobby mode: `bean-client connect [HOST[:PORT]]`, a person's way into games on a LAN.

Find the lobby (the address given, or LAN discovery), say who you are, pick or open a room;
when the room starts, the game is played in game mode (`repl.GameScreen`), and at its end
the outcome is printed and the lobby prompt comes back, where `rematch` finds a table with the
same seats and options. One identity and one peer port (the port the lobby tells the other
players) serve the whole session. The lobby connection stays open during a game, for the way
back, and is made again if it dropped meanwhile. What the lobby says unasked (players coming,
going, getting ready, chat) is printed above the prompt. Whatever fails is said in a sentence,
never as a traceback. docs/repl.md lists the commands.

`bot` adds a bot to the room as a process of its own (client.bots.process), which this client
stops when the person leaves the room or the program before its game starts; once the game
has started the bot plays it to its end, also when the person leaves it (the game goes on,
and `resume N` takes them back); `unbot` takes one out. `who` knows the bots this client
started by their keys. `resume N` plays an unfinished game of this identity again, from the
list as it is when typed. Ctrl-C or Ctrl-D at a lobby prompt ends the program (`Quit`).
"""

from __future__ import annotations

import argparse
import getpass
import time
from collections.abc import Callable, Sequence
from typing import Any

from prompt_toolkit.formatted_text import FormattedText, to_plain_text
from twisted.internet.defer import Deferred
from twisted.internet.defer import TimeoutError as RequestTimeout
from twisted.internet.error import CannotListenError

from client.bots import BotFailed, RoomBot, bot_profile, start_room_bot
from client.gamefile import GameFile, GameFileError, unfinished_games
from client.net import (
    FoundLobby,
    LanProblem,
    LobbyClient,
    LobbyDisconnected,
    LobbyError,
    LobbyListener,
    PeerListener,
    check_listen_address,
    find_lobbies,
    load_or_create,
    parse_lobby_address,
    relay_answers,
)
from client.resume import how_far
from client.screen.commands import CommandError
from client.screen.completion import LobbyCompleter
from client.screen.lobby_commands import (
    LobbyAddBot,
    LobbyConnect,
    LobbyCreate,
    LobbyHelp,
    LobbyJoin,
    LobbyLeave,
    LobbyListRooms,
    LobbyNetcheck,
    LobbyQuickMatch,
    LobbyQuit,
    LobbyReady,
    LobbyRematch,
    LobbyRemoveBot,
    LobbyRequest,
    LobbyResume,
    LobbySay,
    LobbyWho,
    parse_lobby_command,
)
from client.screen.plain import PlainLooks, room_lines, rooms_lines
from client.screen.player_view import join_words
from client.screen.render import (
    render_room,
    render_rooms,
)
from client.screen.repl import (
    GameScreen,
    Interrupted,
    LinePrompt,
    RichLooks,
    Terminal,
    in_twisted,
    on_ctrl_c,
    play_resumed,
    play_roster,
    terminal_for,
)
from client.session import Seat, check_reachable, connect_lobby, open_peer_port, peer_host
from client.table_setup import TableRefused
from protocol.identity import Identity, IdentityError, fingerprint
from protocol.messages import GameStart, Member, MessageError, RoomOptions, RoomState, RoomSummary
from protocol.table import roster_digest

# What a lobby request can fail with; each says why in a sentence.
LOBBY_PROBLEMS = (LobbyError, LobbyDisconnected, LanProblem, MessageError, RequestTimeout)
LEFT_BECAUSE = {"dropped": "the lobby dropped them", "idle": "idle too long"}
# What resuming a game can fail with, each in a sentence.
RESUME_PROBLEMS = (GameFileError, LanProblem, OSError, TableRefused)

Discover = Callable[[Any], Deferred[list[FoundLobby]]]


class Quit(Exception):
    """Ctrl-C or Ctrl-D at a lobby prompt ("lobby>", "Your name:"): the program ends; the
    sentence says so."""


async def run_connect(
    reactor: Any,
    args: argparse.Namespace,
    terminal: Terminal | None = None,
    *,
    discover: Discover = find_lobbies,
    game_screen: Callable[[Terminal], GameScreen] = GameScreen,
) -> int:
    """`bean-client connect`: lobby mode until the person quits (0); 1 when this machine
    cannot play (no key, no peer port); 2 for an address that cannot be read. Tests pass
    pipes in `terminal`, a `discover` of their own, and a screen with a typist."""
    terminal = terminal or terminal_for(args)
    terminal.warn_if_narrow()
    address = None
    if args.lobby is not None:
        try:
            address = parse_lobby_address(args.lobby)
        except ValueError as error:
            terminal.error(str(error))
            return 2
    try:
        identity = load_or_create(args.profile)
        listener = await open_peer_port(reactor, args.listen, identity)
    except (IdentityError, OSError, LanProblem) as problem:
        terminal.error(f"cannot play from this machine: {problem}")
        return 1
    try:
        screen = LobbyScreen(reactor, args, terminal, identity, listener, discover, game_screen)
        return await screen.run(address)
    finally:
        await listener.stop()


class LobbyScreen(LobbyListener):
    """Lobby commands in, the lobby's news out, and game mode whenever a room starts."""

    def __init__(
        self,
        reactor: Any,
        args: argparse.Namespace,
        terminal: Terminal,
        identity: Identity,
        listener: PeerListener,
        discover: Discover,
        game_screen: Callable[[Terminal], GameScreen],
    ) -> None:
        self.reactor = reactor
        self.args = args
        self.terminal = terminal
        self.identity = identity
        self.listener = listener
        self.discover = discover
        self.game_screen = game_screen
        self.name: str = args.name or getpass.getuser()
        self.address: tuple[str, int] | None = None
        self.lobby: LobbyClient | None = None
        self.rooms: Sequence[RoomSummary] = ()  # the last list seen, for completion
        self.starting: GameStart | None = None  # a roster that game mode has not taken yet
        self.last_game: GameStart | None = None  # what `rematch` plays again
        self.unfinished: list[GameFile] = []  # the list `resume N` picks from, as last shown
        self.bots: list[RoomBot] = []  # the bots this client started for its room
        self.bots_playing_on: list[RoomBot] = []  # of those, at a game the person left
        self._playing = False
        self._room: RoomState | None = None  # the room as last seen (who was ready)
        self._reading: LinePrompt | None = None  # the prompt a line is awaited from
        self._ctrl_c = False  # a SIGINT came (plain mode, or between prompts)
        completer = LobbyCompleter(lambda: self.rooms, self._bot_names, lambda: self.unfinished)
        self.prompt: LinePrompt = terminal.prompt(self._toolbar, completer, self._status)
        self.asking: LinePrompt = terminal.prompt(asks=True)

    async def run(self, address: tuple[str, int] | None) -> int:
        try:
            with on_ctrl_c(self._interrupted):
                await self._prompts(address)
        except Quit as ending:
            self.terminal.say(str(ending))
        await self._stop_bots()
        if self.bots_playing_on:
            names = join_words([bot.name or bot.profile for bot in self.bots_playing_on])
            self.terminal.say(f"Your bots {names} play on in the game you left, to its end.")
        await self._disconnect()
        return 0

    async def _prompts(self, address: tuple[str, int] | None) -> None:
        """The lobby prompt, and game mode whenever a room starts, until the person quits."""
        self._list_unfinished_games()
        address = address or await self._find_lobby()
        if address is not None:
            await self._connect(*address)
        while True:
            if self.starting is not None:
                await self._play(self.starting)
                continue
            line = await self._ask(self.prompt, "lobby> ", pre_run=self._game_waiting)
            if not line.strip():
                continue
            try:
                request = parse_lobby_command(line)
            except CommandError as error:
                self._error(str(error))
                continue
            if isinstance(request, LobbyQuit):
                return
            await self._do(request)

    # --- reading lines -----------------------------------------------------------------------

    async def _ask(
        self, prompt: LinePrompt, message: str, pre_run: Callable[[], None] | None = None
    ) -> str:
        """A line from the person; Quit when they press Ctrl-C or Ctrl-D (or input ends)."""
        self._reading = prompt
        try:
            line = "" if self._ctrl_c else await in_twisted(prompt.line(message, pre_run))
        except Interrupted:
            self._ctrl_c = True
        except EOFError:
            key = "Your input has ended" if self.terminal.plain else "Ctrl-D"
            raise Quit(f"{key}: bean-client ends. Goodbye.") from None
        finally:
            self._reading = None
        if self._ctrl_c:
            raise Quit("Ctrl-C: bean-client ends. Goodbye.")
        return line

    def _interrupted(self) -> None:
        """A SIGINT: the line awaited ends, and with it the program (`_ask`); while a game is
        set up (its own screen takes Ctrl-C once it plays), it is only said how to leave."""
        if self._playing:
            self.terminal.say("The game is being set up: Ctrl-C at its prompt asks to leave it.")
            return
        self._ctrl_c = True
        if self._reading is not None:
            self._reading.end()

    def _game_waiting(self) -> None:
        """As the lobby prompt starts: a roster that came while it was being set up ends it."""
        if self.starting is not None:
            self.prompt.end()

    def _error(self, sentence: str) -> None:
        self.terminal.error(sentence)

    # --- finding and joining a lobby ---------------------------------------------------------

    def _list_unfinished_games(self, files: bool = False) -> None:
        """This identity's games that never ended, numbered for `resume N` (with `files`, the
        game file of each too, for `bean-client replay` and the like)."""
        self._read_unfinished_games()
        if not self.unfinished:
            return
        self.terminal.say("Your unfinished games (resume N goes back into one):")
        for number, game in enumerate(self.unfinished, 1):
            self.terminal.say(f"  {number}) {_unfinished_words(game)}")
            if files:
                self.terminal.say(f"     {game.path}")

    def _read_unfinished_games(self) -> None:
        """The list `resume N` picks from, read from the games directory as it is now."""
        key = self.identity.public_key
        self.unfinished = [
            game for game in unfinished_games() if game.roster.seats[game.seat].public_key == key
        ]

    async def _find_lobby(self) -> tuple[str, int] | None:
        """The lobby discovery finds: the only one, or the one the person picks."""
        self.terminal.say("Looking for a lobby on this LAN...")
        try:
            found = await self.discover(self.reactor)
        except (CannotListenError, OSError) as error:
            found = []
            self._error(f"cannot look for lobbies: {error}")
        if not found:
            self._error(
                "no lobby answered on this LAN (is bean-lobby running there, with discovery "
                "on?). Give its address: type connect HOST[:PORT] here, or start "
                "bean-client connect HOST[:PORT]."
            )
            return None
        if len(found) == 1:
            self.terminal.say(f"Found {found[0].name} at {found[0].address}.")
            return found[0].host, found[0].port
        self.terminal.say("Lobbies on this LAN:")
        for number, lobby in enumerate(found, 1):
            self.terminal.say(f"  {number}) {lobby.name} at {lobby.address}")
        while True:
            answer = (await self._ask(self.asking, f"Which lobby (1-{len(found)})? ") or "").strip()
            if not answer:
                self.terminal.say("No lobby chosen: connect HOST[:PORT] connects to one.")
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(found):
                chosen = found[int(answer) - 1]
                return chosen.host, chosen.port
            self._error(f"type a number from 1 to {len(found)}, or nothing to choose later")

    async def _connect(self, host: str, port: int) -> LobbyClient | None:
        """Connect and say hello. While the lobby refuses the name, ask for another and connect
        afresh with it (the lobby waits only seconds for a hello)."""
        await self._disconnect()
        self.address = (host, port)
        unreachable = check_listen_address(peer_host(self.listener), host)
        if unreachable is not None:
            self._error(str(unreachable))
            return None
        while True:
            self.terminal.say(f"Connecting to the lobby at {host}:{port}...")
            try:
                self.lobby = await connect_lobby(self.reactor, self.identity, host, port)
                self.lobby.listener = self
                welcome = await self.lobby.hello(self.name, self._peer_port())
                break
            except LOBBY_PROBLEMS as refusal:
                await self._disconnect()
                if not _name_refused(refusal):
                    self._error(_sentence(refusal))
                    return None
                self._error(_name_sentence(refusal))
            name = await self._ask_name()
            if not name:
                self.terminal.say("Not connected: connect HOST[:PORT] tries again.")
                return None
            self.name = name
        self.name = welcome.name
        self.terminal.say(
            f"Connected to the lobby at {host}:{port} as {welcome.name}. Type rooms for the "
            "open rooms, quick 4 for a table of four, help for every command."
        )
        self._first_meeting(self.lobby)
        self.prompt.redraw()
        return self.lobby

    async def _ask_name(self) -> str | None:
        """A name for the lobby, asked again while the line is empty; None when the person
        closes the prompt."""
        while True:
            line = await self._ask(self.asking, "Your name: ")
            if line is None:
                return None
            if line.strip():
                return line.strip()
            self._error("a name cannot be empty: type the name the others will see you by")

    def _first_meeting(self, lobby: LobbyClient) -> None:
        """The first time at this lobby: say its key, which is remembered from now on."""
        if lobby.first_meeting and lobby.lobby_key is not None:
            self.terminal.say(
                f"First time at this lobby: its key is {fingerprint(lobby.lobby_key)} (bean-lobby "
                "prints it when it starts). This machine remembers it and will warn you if "
                "it ever changes."
            )

    def _peer_port(self) -> int:
        assert self.listener.port is not None
        port: int = self.listener.port.getHost().port
        return port

    async def _connected(self) -> LobbyClient | None:
        """The lobby connection, made again if it dropped."""
        lobby = self.lobby
        if lobby is not None and lobby.welcome is not None:
            return lobby
        if self.address is None:
            self._error("not connected to a lobby: connect HOST[:PORT]")
            return None
        return await self._connect(*self.address)

    async def _disconnect(self) -> None:
        lobby, self.lobby = self.lobby, None
        self._room = None
        if lobby is not None:
            lobby.listener = LobbyListener()  # closing on purpose: no news to print
            await lobby.close()

    # --- commands ----------------------------------------------------------------------------

    async def _do(self, request: LobbyRequest) -> None:
        if isinstance(request, LobbyHelp):
            plain = self.terminal.plain
            looks = PlainLooks() if plain else RichLooks(self.terminal.width)
            self.terminal.show(looks.help(request.topic, lobby=True))
            return
        if isinstance(request, LobbyConnect):
            await self._connect(request.host, request.port)
            return
        if isinstance(request, LobbyResume):
            await self._resume(request.number)
            return
        lobby = await self._connected()
        if lobby is None:
            return
        try:
            await self._send(lobby, request)
        except LOBBY_PROBLEMS as problem:
            self._error(_sentence(problem))

    async def _send(self, lobby: LobbyClient, request: LobbyRequest) -> None:
        match request:
            case LobbyListRooms():
                listed = await lobby.list_rooms()
                self.rooms = listed.rooms
                plain = self.terminal.plain
                self.terminal.show(
                    rooms_lines(listed.rooms) if plain else render_rooms(listed.rooms)
                )
                if listed.total > len(listed.rooms):
                    self.terminal.say(f"...and {listed.total - len(listed.rooms)} more.")
            case LobbyCreate(name, seats, options):
                self._entered(await lobby.create_room(name, seats, options), ready=False)
            case LobbyJoin(room_id):
                self._entered(await lobby.join(room_id), ready=False)
            case LobbyQuickMatch(seats, options):
                await self._quick_match(lobby, seats, options)
            case LobbyRematch():
                if self.last_game is None:
                    self._error("no game to play again yet; quick SEATS finds a table")
                    return
                game = self.last_game
                await self._quick_match(lobby, len(game.seats), game.options)
            case LobbyReady(ready):
                await lobby.ready(ready)  # the room's update says so
            case LobbyLeave():
                if lobby.room is None:
                    self._error("you are not in a room")
                    return
                await lobby.leave()
                self.terminal.say("You left the room.")
                await self._stop_bots()
            case LobbyWho():
                if lobby.room is None:
                    self._error("you are not in a room; rooms lists them, quick SEATS finds one")
                else:
                    self._show_room(lobby.room)
            case LobbyNetcheck():
                await self._netcheck(lobby)
            case LobbyAddBot(strategy):
                self._add_bot(lobby, strategy)
            case LobbyRemoveBot(name):
                await self._remove_bot(lobby, name)
            case LobbySay(text):
                await lobby.chat(text)  # it comes back as chat, in order

    async def _netcheck(self, lobby: LobbyClient) -> None:
        assert self.address is not None and lobby.welcome is not None
        assert self.listener.port is not None
        seen, port = lobby.welcome.host, self.listener.port.getHost().port
        self.terminal.say(
            f"The lobby sees you at {seen}: other players dial you there, at port {port}; "
            "where they cannot, your link goes through the lobby if it relays."
        )
        self.terminal.say(await relay_answers(self.reactor, *self.address))

    async def _quick_match(self, lobby: LobbyClient, seats: int, options: RoomOptions) -> None:
        self._entered(await lobby.quick_match(seats, options), ready=True)

    def _entered(self, room: RoomState, ready: bool) -> None:
        self._show_room(room)
        start = f"the game starts when all {room.seats} seats are taken and everyone is ready"
        if ready:
            self.terminal.say(f"You are ready: {start}.")
        else:
            self.terminal.say(f"Type ready when you are: {start}.")

    def _show_room(self, room: RoomState) -> None:
        own = self._own_bots()
        plain = self.terminal.plain
        self.terminal.show(room_lines(room, own) if plain else render_room(room, own))

    # --- bots ----------------------------------------------------------------------------------

    def _add_bot(self, lobby: LobbyClient, strategy: str) -> None:
        """Start a bot process for my room; it says when it is seated (or why it is not)."""
        room = lobby.room
        if room is None:
            self._error("you are not in a room: a bot joins your room (create SEATS opens one)")
            return
        if len(room.members) >= room.seats:
            self._error(f"room {room.room_id} is full: all {room.seats} seats are taken")
            return
        assert self.address is not None
        host, port = self.address
        lobby_address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        used = {bot.profile for bot in self.bots}
        profiles = (bot_profile(self.args.profile, n) for n in range(1, len(used) + 2))
        bot = start_room_bot(
            self.reactor,
            lobby_address,
            room.room_id,
            strategy,
            next(profile for profile in profiles if profile not in used),
            _bot_listen(peer_host(self.listener)),
            _bot_options(self.args),
        )
        self.bots.append(bot)
        self.terminal.say(f"Starting a bot ({strategy}) for room {room.room_id}...")

        def seated(bot: RoomBot) -> None:
            if bot in self.bots:  # not stopped meanwhile
                self.terminal.say(
                    f"Your bot {bot.name} ({strategy}) is in the room, ready; unbot {bot.name} "
                    "takes it out."
                )
                self.prompt.redraw()

        def failed(failure: Any) -> None:
            failure.trap(BotFailed)
            if bot in self.bots:  # not stopped on purpose (the person left the room)
                self._forget_bot(bot)
                self._error(f"the bot could not join the room: {failure.value}")

        bot.seated.addCallbacks(seated, failed)
        bot.process.ended.addCallback(lambda _: self._forget_bot(bot))

    async def _remove_bot(self, lobby: LobbyClient, name: str) -> None:
        """Stop one of my bots; the lobby then drops it from the room (and says so)."""
        typed = name.casefold()
        mine = [bot for bot in self.bots if bot.name and bot.name.casefold().startswith(typed)]
        exact = [bot for bot in mine if bot.name and bot.name.casefold() == typed]
        chosen = exact or mine
        if len(chosen) != 1:
            members = [m.name for m in lobby.room.members] if lobby.room is not None else []
            person = any(member.casefold() == typed for member in members)
            names = join_words([bot.name for bot in self.bots if bot.name]) or "none"
            if person:
                self._error(f"{name} is not a bot of yours: only your own bots can be taken out")
            elif mine:
                self._error(f"'{name}' could be {join_words([b.name or '' for b in mine], 'or')}")
            else:
                self._error(f"no bot of yours is called '{name}'; your bots: {names}")
            return
        bot = chosen[0]
        self.terminal.say(f"Taking {bot.name} out of the room...")
        bot.process.stop(self.reactor)
        await bot.process.ended

    def _forget_bot(self, bot: RoomBot) -> None:
        if bot in self.bots_playing_on:
            self.bots_playing_on.remove(bot)
        if bot in self.bots:
            self.bots.remove(bot)
            self.prompt.redraw()

    async def _stop_bots(self) -> None:
        """The room or the game is over for this person: so it is for their bots, but for
        those at a game the person left, which play on until it ends (or `unbot`)."""
        bots = [bot for bot in self.bots if bot not in self.bots_playing_on]
        self.bots = [bot for bot in self.bots if bot in self.bots_playing_on]
        for bot in bots:
            bot.process.stop(self.reactor)
        for bot in bots:
            await bot.process.ended

    def _own_bots(self) -> dict[bytes, str]:
        return {bot.key: bot.strategy for bot in self.bots if bot.key is not None}

    def _bots_for(self, roster: GameStart) -> list[RoomBot]:
        """The bots this person started for this roster's room and that are seated (not one
        still playing a game the person left): the table check wants each at its seat."""
        return [
            bot
            for bot in self.bots
            if bot.name and bot.key and bot.room == roster.room_id
            and bot not in self.bots_playing_on
        ]  # fmt: skip

    def _bot_names(self) -> list[str]:
        return [bot.name for bot in self.bots if bot.name]

    # --- resuming a game -------------------------------------------------------------------

    async def _resume(self, number: int | None) -> None:
        """`resume`: the list again; `resume N`: back into that game, then the lobby."""
        if number is None:
            self._list_unfinished_games(files=True)
            if not self.unfinished:
                self.terminal.say("You have no unfinished game on this machine.")
            return
        self._read_unfinished_games()  # a game left since the list was shown is on it now
        if not 1 <= number <= len(self.unfinished):
            count = len(self.unfinished)
            known = f"1 to {count}" if count > 1 else "1" if count else "none: resume lists them"
            self._error(f"there is no unfinished game {number} (the list has {known})")
            return
        if self.lobby is not None and self.lobby.room is not None:
            self._error("leave your room first: a game you resume is played right away")
            return
        saved = self.unfinished[number - 1]
        self.terminal.say(f"Back into your game {_unfinished_words(saved)}...")
        seat = saved.roster.seats[saved.seat]
        here = self.listener.port
        same_port = here is not None and here.getHost().port == seat.port
        screen = self.game_screen(self.terminal)
        screen.own_bots = self._own_bots()
        self._playing = True
        try:
            await play_resumed(
                self.reactor,
                saved.path,
                screen,
                self.args.step_deadline,
                self.args.abandon_after,
                self.listener if same_port else None,
            )
        except RESUME_PROBLEMS as problem:
            self._error(f"the game cannot be resumed: {problem}")
        finally:
            self._playing = False
        self.unfinished = [game for game in self.unfinished if game.path != saved.path]
        self.terminal.say("Back in the lobby. resume lists your unfinished games; quit ends.")
        if self.address is not None:
            await self._connected()

    # --- game mode ---------------------------------------------------------------------------

    async def _play(self, roster: GameStart) -> None:
        """Game mode for this roster, then back to the lobby (connected again if need be)."""
        self.starting = None
        self.last_game = roster
        assert self.address is not None  # a roster came from the lobby at this address
        try:
            check_reachable(roster, self.name, peer_host(self.listener))
        except LanProblem as problem:
            self._error(f"the game cannot be played: {problem}")
            return
        host, port = self.address
        args = self.args
        seat = Seat.from_args(args, self.name, args.profile, host, port)
        terms = self.lobby.terms if self.lobby is not None else None
        self._playing = True
        left = False
        try:
            screen = self.game_screen(self.terminal)
            screen.own_bots = self._own_bots()
            bots = self._bots_for(roster)
            gate = bots_agree(bots, roster, self.name) if bots else None
            outcome = await play_roster(
                self.reactor, seat, self.identity, self.listener, roster, terms, screen,
                own_bots={bot.name: bot.key for bot in bots if bot.name and bot.key},
                confirm_gate=gate,
            )  # fmt: skip
            left = outcome.left
        except TableRefused as refused:
            self._error(f"the game did not start: {refused}")
        except (GameFileError, OSError) as error:  # the game file could not be written
            self._error(f"the game could not be played: {error}")
        finally:
            self._playing = False
            if not left:  # ended with the game; a game left goes on with them
                await self._stop_bots()
        if left:
            self.bots_playing_on += self.bots
            self._say_left(roster)
        else:
            self.terminal.say(
                "Back in the lobby. rematch plays again with the same seats and options; "
                "rooms lists the open rooms; quit ends."
            )
        await self._connected()

    def _say_left(self, roster: GameStart) -> None:
        """What became of the game the person left: the others wait, and `resume N` goes back."""
        self._read_unfinished_games()
        found = enumerate(self.unfinished, 1)
        numbers = [n for n, game in found if game.roster.game_id == roster.game_id]
        number = numbers[0] if numbers else None
        others = join_words([s.name for s in roster.seats if s.name != self.name])
        back = f"resume {number} takes you back" if number else "resume lists your games"
        bots = (
            f"; your bots ({join_words(self._bot_names())}) stay at the table until it ends"
            if self.bots
            else ""
        )
        self.terminal.say(
            f"Back in the lobby. You left the game with {others}: they wait for you{bots}; "
            f"{back}. If you do not come back within {self.args.abandon_after:g} s, they end "
            "the game without you."
        )

    # --- what the lobby says unasked (LobbyListener) ------------------------------------------

    def room_updated(self, room: RoomState | None) -> None:
        before, self._room = self._room, room
        if before is not None and room is not None and before.room_id == room.room_id:
            was_ready = {m.name: m.ready for m in before.members}
            for member in room.members:
                if was_ready.get(member.name, member.ready) != member.ready:
                    self._say_ready(member)
        self.prompt.redraw()

    def _say_ready(self, member: Member) -> None:
        who = "You are" if member.name == self.name else f"{member.name} is"
        self.terminal.say(f"{who} {'ready' if member.ready else 'not ready'}.")

    def member_joined(self, room: RoomState, member: Member) -> None:
        seated = f"{len(room.members)} of {room.seats} seats"
        self.terminal.say(f"{member.name} joined the room ({seated}).")

    def member_left(self, room: RoomState, name: str, reason: str) -> None:
        why = f" ({LEFT_BECAUSE[reason]})" if reason in LEFT_BECAUSE else ""
        self.terminal.say(f"{name} left the room{why}.")

    def chat(self, room_id: int, name: str, text: str) -> None:
        looks = PlainLooks() if self.terminal.plain else RichLooks(self.terminal.width)
        self.terminal.show(looks.chat(name, text))

    def game_starting(self, start: GameStart) -> None:
        names = join_words([seat.name for seat in start.seats])
        self.terminal.say(f"The room is full and everyone is ready: the game begins ({names}).")
        self.starting = start
        self.prompt.end()

    def disconnected(self, reason: Exception) -> None:
        """Said at once in the lobby; during a game, the way back reconnects quietly. Out of
        a game, the room is gone for this person, and so are their bots."""
        self.prompt.redraw()
        if self._playing:
            return
        said = str(reason) if isinstance(reason, LobbyDisconnected) else f"the lobby: {reason}"
        self._error(f"{said.rstrip('.')}; the next command connects again")
        if any(bot not in self.bots_playing_on for bot in self.bots):
            self.terminal.say("Your bots are stopped: the room is gone for you.")
            Deferred.fromCoroutine(self._stop_bots())

    def _toolbar(self) -> FormattedText:
        lobby = self.lobby
        if lobby is None or lobby.welcome is None or self.address is None:
            return FormattedText([("class:toolbar", "Not connected · connect HOST[:PORT] · help")])
        host, port = self.address
        room = lobby.room
        if room is None:
            where = "Not in a room · rooms · create SEATS · join ROOM · quick SEATS · rematch"
        else:
            ready = sum(member.ready for member in room.members)
            seated = f"{len(room.members)} of {room.seats} seats, {ready} ready"
            bots = f", {len(self.bots)} bot{'s' if len(self.bots) > 1 else ''} of yours"
            seated += bots if self.bots else ""
            where = f"Room {room.room_id} {room.name}: {seated} · ready · bot · who · leave"
        lines = f"Lobby {host}:{port} · you are {lobby.welcome.name}\n{where}"
        return FormattedText([("class:toolbar", lines)])

    def _status(self) -> str:
        """Plain mode's status line: the toolbar's words."""
        return to_plain_text(self._toolbar())  # a part a line: plain.PlainPrompt


def _unfinished_words(game: GameFile) -> str:
    """ "with bob and cy, turn 7, 52 steps played, 3 minutes ago"."""
    others = join_words([s.name for i, s in enumerate(game.roster.seats) if i != game.seat])
    try:
        ago = _ago(time.time() - game.path.stat().st_mtime)
    except OSError:
        ago = "some time ago"
    return f"with {others}, {how_far(game)}, {ago}"


def _ago(seconds: float) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count > 1 else ''} ago"
    return "just now"


def _bot_listen(host: str) -> str:
    """Where a bot listens for its peers: on the interface its person's client listens on."""
    if host in ("0.0.0.0", "::"):
        return "tcp:0"
    return "tcp:0:interface=" + host.replace(":", "\\:")


def _bot_options(args: argparse.Namespace) -> list[str]:
    """What a bot takes over from its person's command line: how long it waits for others,
    and whether it plays below the proof floor."""
    options = [
        "--step-deadline",
        str(args.step_deadline),
        "--abandon-after",
        str(args.abandon_after),
    ]
    return options + (["--allow-weak-proofs"] if args.allow_weak_proofs else [])


def _sentence(problem: Exception) -> str:
    if isinstance(problem, RequestTimeout):
        return "the lobby did not answer in time; try again, or connect to another lobby"
    return str(problem)


def _name_refused(problem: Exception) -> bool:
    """The lobby, or the hello message's own limits, refused the name: another may do."""
    if isinstance(problem, LobbyError):
        return problem.code == "name_taken"
    return isinstance(problem, MessageError) and problem.field == "name"


def _name_sentence(refusal: Exception) -> str:
    """Why the lobby will not take the name: its own sentence, or the name's limits."""
    if isinstance(refusal, MessageError):
        return "a name " + str(refusal).split("field 'name' ", 1)[-1] + "; choose another"
    return str(refusal)


def bots_agree(
    bots: Sequence[RoomBot], roster: GameStart, me: str
) -> Callable[[bytes], Deferred[None]]:
    """The confirm gate of the client that started `bots` (TableSetup.confirm_gate): it
    confirms `identity` only once each bot reported the roster it got and the identity it
    derived, the same as this client's; else TableRefused, in words. A bot that never
    reports holds the confirmation until the setup's deadline."""
    digest = roster_digest(roster)

    async def compare(identity: bytes) -> None:
        for bot in bots:
            await bot.reported
            if bot.table is not None and bot.table[0] != digest:
                lie = "the lobby gave {} bot {} another roster than {}"
            elif bot.table is not None and bot.table[1] != identity:
                lie = "{} bot {} derived another game identity than {}"
            else:
                continue
            raise TableRefused(
                lie.format("your", bot.name, "yours"), said=lie.format(f"{me}'s", bot.name, me)
            )

    return lambda identity: Deferred.fromCoroutine(compare(identity))
