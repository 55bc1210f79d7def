"""Back into a game after a crash, from the seat's game file (`bean-client resume`, and
`resume N` at the lobby prompt, which lists the unfinished games with `how_far`).

The seat listens again on the port the roster gave it (the seats before it dial it there) and
dials the seats after it; it replays its file through the lockstep, sends again exactly what it
had signed, and its peers' heartbeats bring the steps it missed (docs/gamefile.md). Meanwhile
the others show the player as away.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from client.bots import is_bot_profile
from client.game import Outcome, PeerGame, Player
from client.gamefile import GameFile, GameFileError
from client.net import PeerListener, find_identity, find_profile
from client.session import deck_workers, open_peer_port
from client.table_setup import TableSetup
from protocol.lockstep import StepReport
from protocol.messages import MessageError
from protocol.peer_messages import StepBody
from protocol.rules import EndTrading


def how_far(saved: GameFile) -> str:
    """How far a saved game got, in words: the turn it reached (each turn ends its trading
    once) or that it was still being dealt, and how many steps were played."""
    dealt, turns = False, 0
    for frames in saved.steps:
        for payload, _ in frames:
            try:
                actions = StepBody.decode(payload).actions
            except MessageError:
                continue  # `resume` checks every message; this is only a description
            dealt = dealt or bool(actions)
            turns += sum(isinstance(action, EndTrading) for action in actions)
    steps = f"{len(saved.steps)} step" + ("" if len(saved.steps) == 1 else "s")
    return f"turn {turns + 1}, {steps} played" if dealt else f"still being dealt, {steps} played"


def bots_seat(saved: GameFile) -> str | None:
    """The profile of the person's own bot whose seat this game file is (a bot a person starts
    has a key of its own, NAME-botN, and its game file lies beside its person's), or None."""
    profile = find_profile(saved.roster.seats[saved.seat].public_key)
    return profile if profile is not None and is_bot_profile(profile) else None


def own_seat_file(saved: GameFile) -> Path | None:
    """Beside a bot's game file, the file of the seat of the same game that is no bot's."""
    prefix = saved.path.name.split("-seat")[0]
    for path in sorted(saved.path.parent.glob(f"{prefix}-seat*.game")):
        try:
            other = GameFile.read(path)
        except (GameFileError, OSError):
            continue
        profile = find_profile(other.roster.seats[other.seat].public_key)
        if profile is not None and not is_bot_profile(profile):
            return path
    return None


async def resume_game(
    reactor: Any,
    path: Path,
    player: Player,
    step_deadline: float,
    abandon_after: float,
    on_start: Callable[[PeerGame], None] = lambda game: None,
    *,
    listener: PeerListener | None = None,
    each_step: Callable[[StepReport], None] = lambda report: None,
) -> tuple[PeerGame, Outcome]:
    """Pick the game up where this seat left it and play it to its end. `listener`: a peer
    port already open on the seat's port (the lobby prompt's), else one is opened;
    `each_step` sees each step the file replays (client.story)."""
    if not path.is_file():
        raise GameFileError(f"there is no game file {path}")
    saved = GameFile.read(path)
    if saved.finished:
        raise GameFileError(f"{path} holds a game that is over; see `bean-client replay {path}`")
    seat = saved.roster.seats[saved.seat]
    identity = find_identity(seat.public_key)
    if identity is None:
        raise GameFileError(
            f"none of your identity keys is the key {seat.name} played with; resume with the "
            "same user account (and XDG_CONFIG_HOME) that started the game"
        )
    opened = listener is None
    if listener is None:
        listener = await open_peer_port(
            reactor, f"tcp:{seat.port}:interface={saved.listen_host}", identity
        )
    try:
        with deck_workers() as executor:
            # The table was agreed before the game file was made; the setup still answers
            # peers that had not heard every confirmation when this seat went down.
            setup = TableSetup(
                reactor,
                identity,
                saved.roster,
                saved.seat,
                listener,
                terms=None,
                allow_weak_proofs=True,
                agreed=saved.table,
                mesh_options=None if saved.relay is None else {"relay": saved.relay},
            )
            game = PeerGame(
                reactor,
                identity,
                saved.table,
                saved.seed,
                listener,
                saved.writer(),
                player,
                executor=executor,
                step_deadline=step_deadline,
                abandon_after=abandon_after,
                mesh=setup.mesh,
            )
            setup.attach(game)
            game.restore(saved, each_step)
            on_start(game)
            game.start()
            outcome: Outcome = await game.done
        return game, outcome
    finally:
        if opened:
            await listener.stop()
