"""Lobby mode: `bean-client connect [HOST[:PORT]]`, a person's way into games on a LAN.

Find the lobby (the address given, or LAN discovery), say who you are, pick or open a room;
when the room starts, the game is played in game mode (`repl.GameScreen`), and at its end
the outcome is printed and the lobby prompt comes back, where `rematch` finds a table with the
same seats and options. One identity and one peer port (the port the lobby tells the other
players) serve the whole session. The lobby connection stays open during a game, for the way
back, and is made again if it dropped meanwhile. What the lobby says unasked (players coming,
going, getting ready, chat) is printed above the prompt. Whatever fails is said in a sentence,
never as a traceback. docs/repl.md lists the commands.
"""

from __future__ import annotations

import argparse
import getpass
from collections.abc import Callable, Sequence
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.patch_stdout import patch_stdout
from twisted.internet.defer import Deferred
from twisted.internet.defer import TimeoutError as RequestTimeout
from twisted.internet.error import CannotListenError

from client.discovery import FoundLobby, find_lobbies
from client.gamefile import GameFileError, unfinished_games
from client.identity_store import load_or_create
from client.lan_checks import LanProblem, check_listen_address
from client.lobby_client import (
    LobbyClient,
    LobbyDisconnected,
    LobbyError,
    LobbyListener,
    parse_lobby_address,
)
from client.mesh import PeerListener
from client.screen.commands import CommandError
from client.screen.completion import LobbyCompleter
from client.screen.lobby_commands import (
    LobbyConnect,
    LobbyCreate,
    LobbyHelp,
    LobbyJoin,
    LobbyLeave,
    LobbyListRooms,
    LobbyQuickMatch,
    LobbyQuit,
    LobbyReady,
    LobbyRematch,
    LobbyRequest,
    LobbySay,
    LobbyWho,
    parse_lobby_command,
)
from client.screen.player_view import join_words
from client.screen.render import (
    STYLE,
    colour_wanted,
    render_chat,
    render_error,
    render_help,
    render_room,
    render_rooms,
)
from client.screen.repl import GameScreen, Terminal, end_prompt, in_twisted, play_roster, redraw
from client.session import Seat, check_reachable, connect_lobby, open_peer_port, peer_host
from client.table_setup import TableRefused
from protocol.identity import Identity, IdentityError, fingerprint
from protocol.messages import GameStart, Member, MessageError, RoomOptions, RoomState, RoomSummary

# What a lobby request can fail with; each says why in a sentence.
LOBBY_PROBLEMS = (LobbyError, LobbyDisconnected, LanProblem, MessageError, RequestTimeout)
LEFT_BECAUSE = {"dropped": "the lobby dropped them", "idle": "idle too long"}

Discover = Callable[[Any], Deferred[list[FoundLobby]]]


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
    terminal = terminal or Terminal(colour_wanted(no_colour=args.no_color))
    address = None
    if args.lobby is not None:
        try:
            address = parse_lobby_address(args.lobby)
        except ValueError as error:
            terminal.show(render_error(str(error)))
            return 2
    try:
        identity = load_or_create(args.profile)
        listener = await open_peer_port(reactor, args.listen, identity)
    except (IdentityError, OSError, LanProblem) as problem:
        terminal.show(render_error(f"cannot play from this machine: {problem}"))
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
        self._playing = False
        self._room: RoomState | None = None  # the room as last seen (who was ready)
        self.session: PromptSession[str] = PromptSession(
            history=InMemoryHistory(),
            completer=LobbyCompleter(lambda: self.rooms),
            complete_while_typing=False,
            bottom_toolbar=self._toolbar,
            style=STYLE,
            input=terminal.input,
            output=terminal.output,
        )
        self.asking: PromptSession[str] = PromptSession(
            style=STYLE, input=terminal.input, output=terminal.output
        )

    async def run(self, address: tuple[str, int] | None) -> int:
        self._list_unfinished_games()
        address = address or await self._find_lobby()
        if address is not None:
            await self._connect(*address)
        while True:
            if self.starting is not None:
                await self._play(self.starting)
                continue
            line = await self._ask(self.session, "lobby> ", pre_run=self._game_waiting)
            if line is None:
                break
            if not line.strip():
                continue
            try:
                request = parse_lobby_command(line)
            except CommandError as error:
                self._error(str(error))
                continue
            if isinstance(request, LobbyQuit):
                break
            await self._do(request)
        await self._disconnect()
        return 0

    # --- reading lines -----------------------------------------------------------------------

    async def _ask(
        self, session: PromptSession[str], message: str, pre_run: Callable[[], None] | None = None
    ) -> str | None:
        """A line from the person; None when they close the terminal (Ctrl-D) or press Ctrl-C."""
        try:
            return await in_twisted(_prompt(session, message, pre_run))
        except (EOFError, KeyboardInterrupt):
            return None

    def _game_waiting(self) -> None:
        """As the lobby prompt starts: a roster that came while it was being set up ends it."""
        if self.starting is not None:
            end_prompt(self.session)

    def _error(self, sentence: str) -> None:
        self.terminal.show(render_error(sentence))

    # --- finding and joining a lobby ---------------------------------------------------------

    def _list_unfinished_games(self) -> None:
        games = unfinished_games()
        if not games:
            return
        self.terminal.say("Unfinished games on this machine (bean-client resume FILE goes on):")
        for game in games:
            others = [s.name for i, s in enumerate(game.roster.seats) if i != game.seat]
            steps = f"{len(game.steps)} steps played"
            self.terminal.say(f"  {game.path}  with {join_words(others)}, {steps}")

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
            name = (await self._ask(self.asking, "Your name: ") or "").strip()
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
        redraw(self.session)
        return self.lobby

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
            self.terminal.show(render_help(request.topic, lobby=True))
            return
        if isinstance(request, LobbyConnect):
            await self._connect(request.host, request.port)
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
                self.terminal.show(render_rooms(listed.rooms))
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
            case LobbyWho():
                if lobby.room is None:
                    self._error("you are not in a room; rooms lists them, quick SEATS finds one")
                else:
                    self.terminal.show(render_room(lobby.room))
            case LobbySay(text):
                await lobby.chat(text)  # it comes back as chat, in order

    async def _quick_match(self, lobby: LobbyClient, seats: int, options: RoomOptions) -> None:
        self._entered(await lobby.quick_match(seats, options), ready=True)

    def _entered(self, room: RoomState, ready: bool) -> None:
        self.terminal.show(render_room(room))
        start = f"the game starts when all {room.seats} seats are taken and everyone is ready"
        if ready:
            self.terminal.say(f"You are ready: {start}.")
        else:
            self.terminal.say(f"Type ready when you are: {start}.")

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
        try:
            screen = self.game_screen(self.terminal)
            await play_roster(
                self.reactor, seat, self.identity, self.listener, roster, terms, screen
            )
        except TableRefused as refused:
            self._error(f"the game did not start: {refused}")
        except (GameFileError, OSError) as error:  # the game file could not be written
            self._error(f"the game could not be played: {error}")
        finally:
            self._playing = False
        self.terminal.say(
            "Back in the lobby. rematch plays again with the same seats and options; "
            "rooms lists the open rooms; quit ends."
        )
        await self._connected()

    # --- what the lobby says unasked (LobbyListener) ------------------------------------------

    def room_updated(self, room: RoomState | None) -> None:
        before, self._room = self._room, room
        if before is not None and room is not None and before.room_id == room.room_id:
            was_ready = {m.name: m.ready for m in before.members}
            for member in room.members:
                if was_ready.get(member.name, member.ready) != member.ready:
                    self._say_ready(member)
        redraw(self.session)

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
        self.terminal.show(render_chat(name, text))

    def game_starting(self, start: GameStart) -> None:
        names = join_words([seat.name for seat in start.seats])
        self.terminal.say(f"The room is full and everyone is ready: the game begins ({names}).")
        self.starting = start
        end_prompt(self.session)

    def disconnected(self, reason: Exception) -> None:
        """Said at once in the lobby; during a game, the way back reconnects quietly."""
        redraw(self.session)
        if self._playing:
            return
        said = str(reason) if isinstance(reason, LobbyDisconnected) else f"the lobby: {reason}"
        self._error(f"{said.rstrip('.')}; the next command connects again")

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
            where = f"Room {room.room_id} {room.name}: {seated} · ready · who · leave"
        lines = f"Lobby {host}:{port} · you are {lobby.welcome.name}\n{where}"
        return FormattedText([("class:toolbar", lines)])


async def _prompt(
    session: PromptSession[str], message: str, pre_run: Callable[[], None] | None
) -> str:
    """The prompt, with whatever is printed meanwhile shown above it (an asyncio coroutine)."""
    with patch_stdout(raw=True):
        return await session.prompt_async(message, pre_run=pre_run)


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
