"""The lobby link is sealed, and the lobby's key remembered on first use: an eavesdropper
reads nothing, another lobby at a remembered address is refused with a warning that names the
address and both keys, and a machine in the middle that the client accepted cannot pass the
client's hello on to the real lobby (its signature covers the TLS connection it was made on).
Real TCP on 127.0.0.1, the real lobby, the relays of tests/relay.py."""

from __future__ import annotations

import pytest
import pytest_twisted
from twisted.internet import reactor

from client.net import LobbyError, LobbyKeyChanged, RememberedKeys
from protocol.identity import Identity
from tests.lobby_support import Clients, Recorder, start_lobby
from tests.relay import Relay, Splice
from tests.waiting import within


@pytest_twisted.ensureDeferred
async def test_an_eavesdropper_on_the_lobby_link_reads_no_name_chat_or_key() -> None:
    lobby = await start_lobby()
    relay = Relay(reactor, "127.0.0.1", lobby.port)
    clients = Clients(await within(relay.listen()))
    try:
        ann = await clients.player("Annabel")
        await within(ann.create_room("secret room", 3))
        await within(ann.chat("the password is runner bean"))
        await ann.listener.when(lambda r: bool(r.of_kind("chat")))
        captured = relay.captured()
        assert len(captured) > 1000
        for plain in (b"Annabel", b"runner bean", b"secret room", b"hello", b"type"):
            assert plain not in captured, plain
        assert ann.identity.public_key not in captured
    finally:
        await clients.close()
        await within(relay.stop())
        await lobby.stop()


@pytest_twisted.ensureDeferred
async def test_another_lobby_at_a_remembered_address_is_refused_with_a_clear_warning() -> None:
    honest, impostor = await start_lobby(), await start_lobby()
    relay = Relay(reactor, "127.0.0.1", honest.port)  # the address the player knows
    port = await within(relay.listen())
    clients = Clients(port)
    try:
        first = await clients.connect()
        assert first.first_meeting
        remembered = RememberedKeys.lobbies().get(f"127.0.0.1:{port}")
        assert remembered == first.lobby_key
        await within(first.close())
        again = await clients.connect()
        assert not again.first_meeting  # the same lobby: no news
        await within(again.close())
        relay.target_port = impostor.port  # now someone else answers at that address
        with pytest.raises(LobbyKeyChanged) as caught:
            await clients.connect()
        sentence = str(caught.value)
        assert f"127.0.0.1:{port}" in sentence and "WARNING" in sentence
        assert caught.value.remembered == remembered and caught.value.shown != remembered
        from protocol.identity import fingerprint

        assert fingerprint(remembered) in sentence
        assert fingerprint(caught.value.shown) in sentence
        assert str(RememberedKeys.lobbies().path) in sentence  # what the person can do
    finally:
        await clients.close()
        await within(relay.stop())
        await honest.stop()
        await impostor.stop()


@pytest_twisted.ensureDeferred
async def test_a_machine_in_the_middle_cannot_log_in_as_the_client() -> None:
    lobby = await start_lobby()
    middle = Splice(reactor, ("127.0.0.1", lobby.port), Identity.generate(), None, False)
    clients = Clients(await middle.listen())
    try:
        client = await clients.connect(Recorder())  # its first meeting: it takes the key
        with pytest.raises(LobbyError) as caught:
            await within(client.hello("Victim", 4000))
        assert caught.value.code == "bad_signature"
        assert b"Victim" in middle.plain["up"]  # it read the hello, and could not use it
    finally:
        await clients.close()
        await middle.stop()
        await lobby.stop()
