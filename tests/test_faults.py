"""A game whose frames are delayed, duplicated, reordered and dropped ends in the same final
state as the same game (same keys, roster and seeds) played cleanly, over real TCP."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults

from client.bot_player import BotPlayer
from client.bots import GreedyBot
from client.faults import FrameFaults
from client.game import PeerGame
from client.gamefile import GameFileWriter
from client.mesh import PeerListener
from protocol.identity import Identity
from protocol.kdf import Stream, derive
from protocol.messages import GameStart, RoomOptions, Seat
from protocol.rules import state_hash
from tests.waiting import within

PLAYERS = 3
NEVER = 10_000.0  # bots act only after steps, so the game does not depend on timing


async def play(tmp_path: Path, run: str, identities: list[Identity], faulty: bool):
    listeners = [PeerListener(reactor) for _ in range(PLAYERS)]
    ports = [await within(listener.listen("tcp:0:interface=127.0.0.1")) for listener in listeners]
    roster = GameStart(
        room_id=1,
        game_id=derive(b"fault injection test", "game")[:16],
        seats=tuple(
            Seat(f"p{i}", identities[i].public_key, "127.0.0.1", ports[i]) for i in range(PLAYERS)
        ),
        options=RoomOptions(proof_rounds=1),
    )
    seeds = [derive(b"fault injection test", "seed", seat) for seat in range(PLAYERS)]
    with ThreadPoolExecutor(2) as executor:
        games = [
            PeerGame(
                reactor,
                identities[seat],
                roster,
                seat,
                seeds[seat],
                listeners[seat],
                GameFileWriter.create(
                    tmp_path / f"{run}-{seat}.game", roster, seat, seeds[seat], "127.0.0.1"
                ),
                BotPlayer(reactor, GreedyBot(), patience=NEVER),
                executor=executor,
                heartbeat=0.05,
                faults=FrameFaults(Stream(b"fault schedule!!", seat)) if faulty else None,
            )
            for seat in range(PLAYERS)
        ]
        for game in games:
            game.start()
        try:
            outcomes = await within(gatherResults([game.done for game in games]), 600)
        finally:
            for listener in listeners:
                await within(listener.stop())
    return games, outcomes


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_injected_faults_change_nothing_in_the_game(tmp_path):
    identities = [Identity.generate() for _ in range(PLAYERS)]
    clean, clean_outcomes = await play(tmp_path, "clean", identities, faulty=False)
    faulty, faulty_outcomes = await play(tmp_path, "faulty", identities, faulty=True)
    for outcome in clean_outcomes + faulty_outcomes:
        assert outcome.final is not None and outcome.final.agreed and outcome.final.audit_passed
    expected = state_hash(clean[0].lockstep.rules)
    assert all(state_hash(game.lockstep.rules) == expected for game in clean + faulty)
    assert faulty[0].step == clean[0].step
    for game in faulty:  # the faults really happened, on every seat's links
        counts = game.mesh.faults.counts
        assert all(counts[kind] > 0 for kind in ("dropped", "duplicated", "reordered")), counts
