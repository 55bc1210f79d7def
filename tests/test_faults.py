"""A game whose frames are delayed, duplicated, reordered and dropped ends in the same final
state as the same game (same keys, roster and seeds) played cleanly, over real TCP."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import ensureDeferred, gatherResults

from client.bots import BotPlayer, GreedyBot
from client.game import LINK_SILENCE, PeerGame
from client.gamefile import GameFile, GameFileError, GameFileWriter
from client.net import FrameFaults, PeerListener
from protocol.identity import Identity
from protocol.kdf import Stream, derive
from protocol.messages import GameStart, Message, RoomOptions, Seat
from protocol.peer_messages import StepBody, StepFrame
from protocol.rules import legal_actions, state_hash
from protocol.table import AgreedTable
from tests.test_peer_bounds import a_game
from tests.waiting import within

PLAYERS = 3
# Bots act only after steps (an active bot with nothing more to do gives the others A_MOMENT,
# 0.3 s, to make offers; a message lost on its way to it is asked for within a heartbeat,
# 0.05 s here), so the game does not depend on timing, and they draw the same lots between
# equal partners in every run.
NEVER = 10_000.0
# Also how long a seat that has ended stays for a peer that may lack the last steps. Here the
# frame saying a peer has ended too may be dropped or held back, so the default's minute would
# be most of the test; a seat missing the last steps gets them once its links to the peers
# that have ended, silent since, are dialled again (a frame lost on a live link is not sent
# again on it), so they stay longer than that. A step here waits 0.3 s at most.
STEP_DEADLINE = 2 * LINK_SILENCE


def deaf_from(game: PeerGame, step: int, seconds: float) -> list[int]:
    """From `step` on, for `seconds`, the seat hears no step message: as if its links were
    down as the last steps went round. Returns the count of messages it missed."""
    hear = game.received
    missed = [0]
    until: list[float] = []

    def received(seat: int, message: Message) -> None:
        if game.step >= step and not until:
            until.append(reactor.seconds() + seconds)
        if isinstance(message, StepFrame) and until and reactor.seconds() < until[0]:
            missed[0] += 1
            return
        hear(seat, message)

    game.received = received  # type: ignore[method-assign]
    return missed


async def play(
    tmp_path: Path,
    run: str,
    identities: list[Identity],
    faulty: bool,
    late: Callable[[PeerGame], object] = lambda game: None,
    ports: list[int] | None = None,
    first: Callable[[PeerGame, PeerListener], object] = lambda game, listener: None,
):
    """One game of bots in this process. `ports`: those of an earlier run, so that the roster,
    and so the game's identity and its deal, are that run's again. `late` and `first` may
    change the last seat's game and the first's (with its listener) before it starts."""
    listeners = [PeerListener(reactor, identities[i]) for i in range(PLAYERS)]
    wanted = ports or [0] * PLAYERS
    ports = [
        await within(listener.listen(f"tcp:{port}:interface=127.0.0.1"))
        for listener, port in zip(listeners, wanted, strict=True)
    ]
    roster = GameStart(
        room_id=1,
        game_id=derive(b"fault injection test", "game")[:16],
        seats=tuple(
            Seat(f"p{i}", identities[i].public_key, "127.0.0.1", ports[i]) for i in range(PLAYERS)
        ),
        options=RoomOptions(proofs=False),
    )
    seeds = [derive(b"fault injection test", "seed", seat) for seat in range(PLAYERS)]
    contributions = tuple(derive(b"fault injection test", "table", s) for s in range(PLAYERS))
    with ThreadPoolExecutor(2) as executor:
        games = [
            PeerGame(
                reactor,
                identities[seat],
                AgreedTable(roster, seat, contributions),
                seeds[seat],
                listeners[seat],
                GameFileWriter.create(
                    tmp_path / f"{run}-{seat}.game",
                    AgreedTable(roster, seat, contributions),
                    seeds[seat],
                    "127.0.0.1",
                ),
                BotPlayer(reactor, GreedyBot(seed=seeds[seat]), patience=NEVER),
                executor=executor,
                step_deadline=STEP_DEADLINE,
                heartbeat=0.05,
                faults=FrameFaults(Stream(b"fault schedule!!", seat)) if faulty else None,
            )
            for seat in range(PLAYERS)
        ]
        late(games[-1])
        first(games[0], listeners[0])
        for game in games:
            game.start()
        try:
            outcomes = await within(gatherResults([game.done for game in games]), 120)
        finally:
            for listener in listeners:
                await within(listener.stop())
    return games, outcomes


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_injected_faults_change_nothing_in_the_game(tmp_path):
    identities = [Identity.generate() for _ in range(PLAYERS)]
    clean, clean_outcomes = await play(tmp_path, "clean", identities, faulty=False)
    ports = [seat.port for seat in clean[0].roster.seats]
    faulty, faulty_outcomes = await play(tmp_path, "faulty", identities, faulty=True, ports=ports)
    for outcome in clean_outcomes + faulty_outcomes:
        assert outcome.final is not None and outcome.final.agreed and outcome.final.audit_passed
    expected = state_hash(clean[0].lockstep.rules)
    assert all(state_hash(game.lockstep.rules) == expected for game in clean + faulty)
    assert faulty[0].step == clean[0].step
    for game in faulty:  # the faults really happened, on every seat's links
        counts = game.mesh.faults.counts
        assert all(counts[kind] > 0 for kind in ("dropped", "duplicated", "reordered")), counts


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_seat_that_missed_the_last_steps_gets_them_from_peers_that_stay(tmp_path):
    """The others have ended; they stay until the late seat has the last steps too."""
    identities = [Identity.generate() for _ in range(PLAYERS)]
    clean, _ = await play(tmp_path, "clean", identities, faulty=False)
    last = clean[0].step - 1
    missed: list[list[int]] = []
    late, outcomes = await play(
        tmp_path, "late", identities, faulty=False,
        late=lambda game: missed.append(deaf_from(game, last, seconds=1.0)),
        ports=[seat.port for seat in clean[0].roster.seats],
    )  # fmt: skip
    assert missed[0][0] > 0  # it really missed messages of the last steps
    for outcome in outcomes:
        assert outcome.final is not None and outcome.final.agreed and outcome.final.audit_passed
    assert {state_hash(game.lockstep.rules) for game in late} == {
        state_hash(clean[0].lockstep.rules)
    }


class MovesAtStep(BotPlayer):
    """A bot that, once the game is at `step`, first makes a move of its own choosing there
    (as a person back from a crash might)."""

    def __init__(self, step: int, seed: bytes) -> None:
        super().__init__(reactor, GreedyBot(seed=seed), patience=NEVER)
        self.step = step
        self.tried = False

    def _decide(self, game: PeerGame) -> None:
        view = game.view
        if not self.tried and game.step == self.step and view.rules is not None:
            self.tried = True
            moves = legal_actions(view.rules, view.seat, view.hand)
            assert moves, "the step was chosen for a seat that may move"
            game.submit(moves[:1])
        super()._decide(game)


@pytest_twisted.ensureDeferred
async def test_a_seat_back_from_a_crash_never_sends_moves_where_it_sent_none_before(tmp_path):
    """Seat 0 crashes just after sending a message without moves, at a step where it could
    have moved, and loses everything its file had not synced; back, it moves there at once.
    The peers hold the message it sent: moves in its place would be two signed messages for
    one step, and seat 0 named for equivocation. It must send that message again, the same
    (it was synced before it left, client/game.py `_publish`), and move later; the game ends
    agreed with nobody named."""
    identities = [Identity.generate() for _ in range(PLAYERS)]
    crashed: list[int] = []
    sent: list[tuple[bytes, bytes]] = []
    synced: list[int] = []
    restarted: list[PeerGame] = []
    failed: list[object] = []

    def crash_after_sending_no_moves(game: PeerGame, listener: PeerListener) -> None:
        path = game.gamefile.path
        sync, send_own = game.gamefile.sync, game._send_own

        def sync_and_note() -> None:
            sync()
            if not crashed:
                synced.append(path.stat().st_size)

        def send_and_maybe_crash(step: int, frame: tuple[bytes, bytes]) -> None:
            send_own(step, frame)
            rules = game.view.rules
            if crashed or step < 12 or rules is None or StepBody.decode(frame[0]).actions:
                return
            if legal_actions(rules, game.seat, game.view.hand):
                crashed.append(step)
                sent.append(frame)
                reactor.callLater(0, crash)

        def crash() -> None:
            game.stop("crashed")
            game.done.addCallback(lambda _: restart())

        async def restart_soon() -> None:
            await within(listener.stop())
            listener.port = None  # stopped: the harness need not stop it again
            os.truncate(path, synced[-1])  # the crash took all that was not synced
            saved = GameFile.read(path)
            again = PeerListener(reactor, game.identity)
            port = game.roster.seats[game.seat].port
            await within(again.listen(f"tcp:{port}:interface=127.0.0.1"))
            back = PeerGame(
                reactor,
                game.identity,
                saved.table,
                saved.seed,
                again,
                saved.writer(),
                MovesAtStep(crashed[0], saved.seed),
                heartbeat=0.05,
            )
            back.restore(saved)
            restarted.append(back)
            back.start()

        def restart() -> None:
            ensureDeferred(restart_soon()).addErrback(failed.append)

        game.gamefile.sync = sync_and_note  # type: ignore[method-assign]
        game._send_own = send_and_maybe_crash  # type: ignore[method-assign]

    _, outcomes = await play(
        tmp_path, "crash", identities, faulty=False, first=crash_after_sending_no_moves
    )
    assert not failed, failed
    assert crashed and restarted, "seat 0 never sent a message without moves where it may move"
    for outcome in outcomes[1:]:
        assert outcome.cheat is None, outcome.cheat
    back = restarted[0]
    final = await within(back.done, 120)
    await within(back.mesh.listener.stop())
    for outcome in [*outcomes[1:], final]:
        assert outcome.final is not None and outcome.final.agreed and outcome.final.audit_passed
    step, frame = crashed[0], sent[0]
    after = GameFile.read(back.gamefile.path)
    assert after.steps[step][0] == frame  # the message sent before the crash, again
    moved = [later for later, own in after.own.items() if StepBody.decode(own[0]).actions]
    assert any(later > step for later in moved)  # the move went out later


@pytest.mark.parametrize("older", [1, 2, 3, 4])
def test_a_game_file_of_an_older_protocol_is_refused_in_plain_words(tmp_path, older):
    """Games of formats 1 to 4 were dealt by older deck protocols (1 to 3 with cut-and-choose
    proofs), which this version no longer checks: audit, replay and resume say so instead of
    failing on the roster.
    (Before: the roster's old `proof_rounds` option failed to read as "a damaged header".)"""
    game, _, _, _ = a_game(tmp_path)
    header = {"kind": "header", "format": older, "roster": game.roster.to_wire(), "seat": 0,
              "contributions": list(game.table.contributions), "seed": bytes(32),
              "listen_host": "127.0.0.1"}  # fmt: skip
    old = GameFileWriter(tmp_path / "old.game")
    old.write(header)
    old.close()
    with pytest.raises(GameFileError, match="older protocol") as caught:
        GameFile.read(tmp_path / "old.game")
    assert "cannot audit, replay or resume" in str(caught.value)
