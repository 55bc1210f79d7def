"""Who a player is: one Ed25519 key per user, its fingerprint, and signed envelopes.

A player is known to the lobby and to its peers by the raw 32-byte public key; people compare
the short fingerprint aloud. Every signature covers a domain string (what the signature is
for) as well as the payload, so a signature made for one purpose can never be replayed as
another. The same key, taken as its Curve25519 twin, agrees a value with another player's key
that only the two of them can compute (`Identity.shared_secret`: their relay link's secret).
Pure: the key file lives in `client.net.identity_store`.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.bindings import (
    crypto_core_ed25519_is_valid_point,
    crypto_scalarmult,
    crypto_sign_ed25519_pk_to_curve25519,
    crypto_sign_ed25519_sk_to_curve25519,
)
from nacl.exceptions import BadSignatureError, CryptoError
from nacl.signing import VerifyKey

PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64
FINGERPRINT_GROUPS = 5
FINGERPRINT_GROUP_CHARS = 4

_SIGNATURE_PREFIX = b"bohnanza-p2p signature v1\x00"
_MAX_DOMAIN_BYTES = 255


class SignatureError(ValueError):
    """A signature, public key or envelope that does not verify; the text says which check."""


class IdentityError(ValueError):
    """A private key that cannot be read."""


class KeyAgreementError(ValueError):
    """A key agreement whose value anyone could compute (a point of small order)."""


def fingerprint(public_key: bytes) -> str:
    """Base32 of SHA-256 of the raw public key: 20 characters (100 bits) as 'abcd-efgh-…'."""
    if len(public_key) != PUBLIC_KEY_BYTES:
        raise SignatureError(f"a public key is {PUBLIC_KEY_BYTES} bytes, not {len(public_key)}")
    digest = base64.b32encode(hashlib.sha256(public_key).digest()).decode().lower()
    size = FINGERPRINT_GROUP_CHARS
    return "-".join(digest[i * size : (i + 1) * size] for i in range(FINGERPRINT_GROUPS))


def check_public_key(public_key: bytes) -> bytes:
    """The key, if it is a usable Ed25519 public key; SignatureError otherwise.

    A small-order point "verifies" signatures that anyone can make (an all-zero key accepts
    an all-zero signature), so such keys are refused before any signature is checked.
    """
    if len(public_key) != PUBLIC_KEY_BYTES:
        raise SignatureError(f"a public key is {PUBLIC_KEY_BYTES} bytes, not {len(public_key)}")
    if not crypto_core_ed25519_is_valid_point(public_key):
        raise SignatureError(
            f"key {fingerprint(public_key)} is not a usable Ed25519 public key "
            "(not on the curve, not canonical, or of small order)"
        )
    return public_key


def x25519(private: bytes, public: bytes) -> bytes:
    """X25519 of a Curve25519 scalar and point; KeyAgreementError where the value would be
    all zero, as it is for a point of small order: a value anyone knows is no secret."""
    refused = KeyAgreementError("the other key is of small order: the agreed value is all zero")
    try:
        shared: bytes = crypto_scalarmult(private, public)
    except CryptoError:  # libsodium refuses an all-zero value itself
        raise refused from None
    if not any(shared):  # and this module does not rely on it
        raise refused
    return shared


def signed_bytes(domain: str, payload: bytes) -> bytes:
    """The exact bytes an Ed25519 signature covers: a fixed prefix, the domain, the payload."""
    encoded = domain.encode()
    if not 1 <= len(encoded) <= _MAX_DOMAIN_BYTES:
        raise SignatureError(f"a signature domain is 1 to {_MAX_DOMAIN_BYTES} bytes long")
    return _SIGNATURE_PREFIX + bytes([len(encoded)]) + encoded + payload


@dataclass(frozen=True)
class SignedEnvelope:
    """A payload signed for one purpose (`domain`) by the holder of some key."""

    domain: str
    payload: bytes
    signature: bytes


class Identity:
    """One user's Ed25519 signing key. Its repr shows the fingerprint, never the key."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._private_key = private_key
        self.public_key: bytes = private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.fingerprint = fingerprint(self.public_key)

    @classmethod
    def generate(cls) -> Identity:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, pem: bytes) -> Identity:
        """The identity in an unencrypted PKCS#8 PEM (the key file's format)."""
        try:
            key = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError) as error:
            raise IdentityError(f"not an unencrypted PEM private key ({error})") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise IdentityError(f"the key is {type(key).__name__}, not an Ed25519 key")
        return cls(key)

    def to_pem(self) -> bytes:
        return self._private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def tls_private_key(self) -> Ed25519PrivateKey:
        """The key itself, for one use only: loading it into a TLS context (protocol.sealed),
        where it signs this side's certificate and handshakes."""
        return self._private_key

    def shared_secret(self, peer_public_key: bytes) -> bytes:
        """The X25519 value this key and `peer_public_key` agree (each Ed25519 key taken as its
        Curve25519 twin): the holders of the two private keys compute the same 32 bytes, and
        nobody else can. SignatureError for a peer key that is not usable (check_public_key),
        KeyAgreementError rather than an all-zero value."""
        peer = crypto_sign_ed25519_pk_to_curve25519(check_public_key(peer_public_key))
        seed = self._private_key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        own = crypto_sign_ed25519_sk_to_curve25519(seed + self.public_key)
        return x25519(own, peer)

    def sign(self, domain: str, payload: bytes) -> SignedEnvelope:
        signature = self._private_key.sign(signed_bytes(domain, payload))
        return SignedEnvelope(domain, payload, signature)

    def __repr__(self) -> str:
        return f"Identity({self.fingerprint})"


class Verifier:
    """One public key, checked once, for verifying many envelopes (a peer's every step).

    Verification is libsodium's (PyNaCl), which takes half the time of OpenSSL's here (55
    against 115 microseconds): every client verifies every other seat's message of every
    step, on the step's critical path. libsodium is also the stricter of the two (it refuses
    a signature whose R is of small order, as well as non-canonical encodings), which no
    honest signer ever makes."""

    def __init__(self, public_key: bytes) -> None:
        self._key = VerifyKey(check_public_key(public_key))
        self.public_key = public_key

    def verify(self, envelope: SignedEnvelope, domain: str) -> bytes:
        """The envelope's payload if this key signed it for `domain`; SignatureError
        otherwise. The caller names the domain it expects: any other purpose is refused."""
        if envelope.domain != domain:
            raise SignatureError(
                f"the envelope was signed for {envelope.domain[:60]!r}, not for {domain!r}"
            )
        if len(envelope.signature) != SIGNATURE_BYTES:
            raise SignatureError(
                f"a signature is {SIGNATURE_BYTES} bytes, not {len(envelope.signature)}"
            )
        try:
            self._key.verify(signed_bytes(domain, envelope.payload), envelope.signature)
        except BadSignatureError:
            raise SignatureError(
                f"the signature for {domain!r} does not match key {fingerprint(self.public_key)}"
            ) from None
        return envelope.payload


def verify(public_key: bytes, envelope: SignedEnvelope, domain: str) -> bytes:
    """The envelope's payload if `public_key` signed it for `domain`; SignatureError otherwise."""
    return Verifier(public_key).verify(envelope, domain)
