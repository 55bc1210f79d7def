"""Who is at the table (client.presence): a dropped link is said once, in words chosen by what
the mesh knows of the loss, the seat is away until its link is back, and then it is back."""

from __future__ import annotations

import pytest
from twisted.internet import reactor

from client.game import PeerGame, Player
from client.gamefile import GameFileWriter
from client.net import LinkLoss
from client.presence import Presence, PresenceNews, loss_sentence
from protocol.identity import Identity
from protocol.messages import GAME_ID_BYTES, GameStart, RoomOptions, Seat
from protocol.table import AgreedTable

NAMES = ("ann", "bob", "cy")


def test_a_drop_is_said_once_the_seat_is_away_and_its_return_is_said():
    presence = Presence(NAMES)
    assert presence.link_up(1) is None  # arriving is not coming back
    gone = presence.link_down(1, "Connection lost.", LinkLoss.BROKEN)
    assert gone == PresenceNews(1, False, loss_sentence("bob", LinkLoss.BROKEN, ""))
    assert gone.sentence.startswith("the link to bob broke (bob's client stopped without")
    assert presence.away == {1}
    # The redials fail while bob is gone: what they add is said once.
    more = presence.link_down(1, "refused", LinkLoss.NOT_LISTENING)
    assert more is not None and more.sentence.startswith("bob's client is not running")
    assert presence.link_down(1, "refused", LinkLoss.NOT_LISTENING) is None
    assert presence.link_down(1, "lost", LinkLoss.BROKEN) is None
    assert presence.link_up(1) == PresenceNews(1, True, "bob is back.")
    assert presence.away == frozenset()
    assert presence.link_up(1) is None


def test_a_seat_that_never_arrived_is_not_away_and_its_first_problem_is_said_once():
    presence = Presence(NAMES)
    first = presence.link_down(2, "cy's machine refuses links on port 4001", LinkLoss.NOT_LISTENING)
    assert first == PresenceNews(
        2, False, "no link to cy yet: cy's machine refuses links on port 4001"
    )
    assert presence.link_down(2, "again", LinkLoss.UNREACHABLE) is None
    assert presence.away == frozenset()
    assert presence.link_up(2) is None  # it arrived; it was never away


@pytest.mark.parametrize(
    ("loss", "words"),
    [
        (LinkLoss.CLOSED, "bob's client closed its link (it left the game or was stopped)"),
        (LinkLoss.BROKEN, "the link to bob broke (bob's client stopped without closing it, or"),
        (LinkLoss.SILENT, "bob's client stopped answering"),
        (LinkLoss.NOT_LISTENING, "bob's client is not running"),
        (LinkLoss.UNREACHABLE, "the network to bob dropped (bob's machine does not answer)"),
        (LinkLoss.TAMPERED, "the link to bob failed its integrity check"),
        (LinkLoss.REFUSED, "the link to bob was refused: it showed another key"),
    ],
)
def test_each_kind_of_loss_has_its_words(loss: LinkLoss, words: str):
    sentence = loss_sentence("bob", loss, "it showed another key.")
    assert sentence.startswith(words)
    assert sentence.endswith("; bob is away, and the game goes on when bob is back.")


class StillMesh:
    """Stands in for the driver's mesh: links up or down as the test says, nothing sent."""

    def __init__(self) -> None:
        self.connected: set[int] = set()
        self.relayed: set[int] = set()

    def send(self, seat: int, message: object) -> bool:
        return seat in self.connected

    def broadcast(self, message: object, skip: object = ()) -> None: ...


class Heard(Player):
    def __init__(self) -> None:
        self.news: list[PresenceNews] = []

    def presence_changed(self, game: PeerGame, news: PresenceNews) -> None:
        self.news.append(news)


def test_the_driver_tells_its_player_and_marks_the_seat_away_in_its_view(tmp_path):
    keys = [Identity.generate() for _ in NAMES]
    roster = GameStart(
        room_id=1,
        game_id=bytes(GAME_ID_BYTES),
        seats=tuple(
            Seat(name, key.public_key, "127.0.0.1", 4000 + n)
            for n, (name, key) in enumerate(zip(NAMES, keys, strict=True))
        ),
        options=RoomOptions(proofs=False),
    )
    table = AgreedTable(roster, 0, tuple(bytes([n]) * 32 for n in range(len(NAMES))))
    mesh, player = StillMesh(), Heard()
    writer = GameFileWriter.create(tmp_path / "a.game", table, bytes(32), "127.0.0.1")
    game = PeerGame(
        reactor,
        keys[0],
        table,
        bytes(32),
        None,
        writer,
        player,
        mesh=mesh,  # type: ignore[arg-type]
    )
    try:
        for seat in (1, 2):
            mesh.connected.add(seat)
            game.link_up(seat)
        mesh.connected.discard(2)
        game.link_down(2, "no word from cy for 15 s", LinkLoss.SILENT)
        assert game.view.away == {2} and game.view.connected == {1}
        game.link_down(2, "refused", LinkLoss.NOT_LISTENING)  # a redial fails
        mesh.connected.add(2)
        game.link_up(2)
        assert game.view.away == frozenset()
        assert [(news.seat, news.here) for news in player.news] == [(2, False)] * 2 + [(2, True)]
        assert player.news[0].sentence.startswith("cy's client stopped answering")
        assert player.news[1].sentence.startswith("cy's client is not running")
        assert player.news[2].sentence == "cy is back."
    finally:
        writer.close()
