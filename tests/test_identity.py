"""Keys, fingerprints, signed envelopes, and where the key file lives."""

from __future__ import annotations

import os
import re
import stat
import sys
import threading
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from client.net import config_home, key_path, load_or_create
from protocol.identity import (
    Identity,
    IdentityError,
    KeyAgreementError,
    SignatureError,
    SignedEnvelope,
    check_public_key,
    fingerprint,
    signed_bytes,
    verify,
    x25519,
)

DOMAIN = "bohnanza-p2p/test/v1"


def test_a_signed_envelope_verifies_and_returns_its_payload() -> None:
    identity = Identity.generate()
    envelope = identity.sign(DOMAIN, b"step 7: plant")
    assert verify(identity.public_key, envelope, DOMAIN) == b"step 7: plant"


def test_the_domain_is_part_of_what_is_signed() -> None:
    identity = Identity.generate()
    envelope = identity.sign("bohnanza-p2p/lobby-hello/v1", b"payload")
    with pytest.raises(SignatureError, match="signed for 'bohnanza-p2p/lobby-hello/v1'"):
        verify(identity.public_key, envelope, "bohnanza-p2p/step/v1")
    relabelled = SignedEnvelope("bohnanza-p2p/step/v1", envelope.payload, envelope.signature)
    with pytest.raises(SignatureError, match="does not match"):
        verify(identity.public_key, relabelled, "bohnanza-p2p/step/v1")
    assert signed_bytes("ab", b"c") != signed_bytes("a", b"bc")


def test_tampering_and_other_keys_are_caught() -> None:
    identity, other = Identity.generate(), Identity.generate()
    envelope = identity.sign(DOMAIN, b"give 2 coins")
    tampered = SignedEnvelope(DOMAIN, b"give 3 coins", envelope.signature)
    flipped = SignedEnvelope(
        DOMAIN, envelope.payload, bytes([envelope.signature[0] ^ 1]) + envelope.signature[1:]
    )
    for bad in (tampered, flipped):
        with pytest.raises(SignatureError, match=identity.fingerprint):
            verify(identity.public_key, bad, DOMAIN)
    with pytest.raises(SignatureError, match="does not match"):
        verify(other.public_key, envelope, DOMAIN)
    with pytest.raises(SignatureError, match="64 bytes"):
        verify(identity.public_key, SignedEnvelope(DOMAIN, b"", b"short"), DOMAIN)
    with pytest.raises(SignatureError, match="32 bytes"):
        verify(b"short", envelope, DOMAIN)


def test_small_order_keys_that_accept_forged_signatures_are_refused() -> None:
    # The all-zero key is a point of small order: OpenSSL accepts an all-zero signature for it.
    forged = SignedEnvelope(DOMAIN, b"anything", bytes(64))
    with pytest.raises(SignatureError, match="small order"):
        verify(bytes(32), forged, DOMAIN)
    identity_point = (1).to_bytes(32, "little")
    with pytest.raises(SignatureError):
        check_public_key(identity_point)
    assert check_public_key(Identity.generate().public_key)


def test_two_keys_agree_a_value_that_a_third_does_not() -> None:
    one, other, third = Identity.generate(), Identity.generate(), Identity.generate()
    shared = one.shared_secret(other.public_key)
    assert shared == other.shared_secret(one.public_key)
    assert len(shared) == 32 and any(shared)
    assert shared not in (
        third.shared_secret(one.public_key),
        third.shared_secret(other.public_key),
    )


def test_no_value_is_agreed_with_a_key_of_small_order() -> None:
    """A point of small order gives a value anyone knows (all zero): the Ed25519 key is
    refused as unusable, and X25519 itself refuses an all-zero value."""
    one = Identity.generate()
    small_order = (bytes(32), (1).to_bytes(32, "little"))
    for key in small_order:
        with pytest.raises(SignatureError, match="small order"):
            one.shared_secret(key)
        with pytest.raises(KeyAgreementError, match="all zero"):
            x25519(bytes(range(32)), key)


def test_fingerprints_are_short_stable_and_distinct() -> None:
    identity = Identity.generate()
    assert re.fullmatch(r"[a-z2-7]{4}(-[a-z2-7]{4}){4}", identity.fingerprint)
    assert fingerprint(identity.public_key) == identity.fingerprint
    assert identity.fingerprint != Identity.generate().fingerprint
    assert repr(identity) == f"Identity({identity.fingerprint})"


def test_the_pem_form_round_trips_and_other_keys_are_refused() -> None:
    identity = Identity.generate()
    again = Identity.from_pem(identity.to_pem())
    assert again.public_key == identity.public_key
    with pytest.raises(IdentityError, match="PEM"):
        Identity.from_pem(b"not a key")
    ec_pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with pytest.raises(IdentityError, match="not an Ed25519 key"):
        Identity.from_pem(ec_pem)


# -- the key file -----------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG is for Linux and Unix")
def test_the_key_lives_under_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert key_path() == tmp_path / "xdg" / "bohnanza-p2p" / "identity" / "default.key"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")
    assert config_home() == tmp_path / "home" / ".config"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert key_path("bot1").parent == tmp_path / "home" / ".config" / "bohnanza-p2p" / "identity"


def test_a_key_is_created_private_once_and_then_reused(tmp_path: Path) -> None:
    directory = tmp_path / "identity"
    created = load_or_create("alice", directory)
    path = directory / "alice.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert load_or_create("alice", directory).public_key == created.public_key
    assert load_or_create("bob", directory).public_key != created.public_key
    assert sorted(p.name for p in directory.iterdir()) == ["alice.key", "bob.key"]  # no temps


def test_profiles_cannot_escape_the_directory(tmp_path: Path) -> None:
    for bad in ("../x", "", "a/b", ".hidden", "x" * 65):
        with pytest.raises(IdentityError, match="profile"):
            load_or_create(bad, tmp_path)


def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    load_or_create("shared", tmp_path)
    path = tmp_path / "shared.key"
    os.chmod(path, 0o644)
    with pytest.raises(IdentityError, match="chmod 600"):
        load_or_create("shared", tmp_path)


def test_a_broken_key_file_is_reported_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "broken.key"
    path.write_bytes(b"garbage")
    os.chmod(path, 0o600)
    with pytest.raises(IdentityError, match=re.escape(str(path))):
        load_or_create("broken", tmp_path)


def test_clients_starting_at_once_share_one_new_key(tmp_path: Path) -> None:
    keys: list[bytes] = []
    start = threading.Barrier(8)

    def start_client() -> None:
        start.wait()
        keys.append(load_or_create("race", tmp_path).public_key)

    threads = [threading.Thread(target=start_client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(keys) == 8 and len(set(keys)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["race.key"]
