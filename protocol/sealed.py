"""Sealed links: TLS 1.3 whose certificates are the players' (and the lobby's) own Ed25519 keys.

Foolscap's way: each side's certificate is self-signed by its identity key, with that same key
as the certificate's key, so TLS's own CertificateVerify proves that the other end holds the
key and binds that proof to this connection's handshake. No certificate authority is asked:
each side compares the key in the certificate it was shown with the one it expects (the
roster's key for that seat, or the lobby key it remembers) and fails closed otherwise.
Encryption and integrity are TLS's (AES-GCM or ChaCha20-Poly1305); nothing here is a cipher.

Pure: the contexts are built here, the times passed in; sockets and the reactor are the
callers' (client/net/sealed.py, which the lobby listens with too).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.x509.oid import NameOID
from OpenSSL import SSL

from protocol.identity import Identity, fingerprint

#: A certificate says nothing but "this key"; its dates only have to cover the session.
CERTIFICATE_DAYS = 3650
#: The label of the TLS exporter value (RFC 8446 section 7.5) that application signatures on a
#: sealed link cover, so that a signature made on one connection is worthless on another.
EXPORTER_LABEL = b"EXPORTER-bohnanza-p2p-channel-binding"
EXPORTER_BYTES = 32


class SealError(Exception):
    """A certificate or key that cannot seal a link; the text says why, for a person."""


def certificate(identity: Identity, now: datetime) -> x509.Certificate:
    """A certificate of the identity's own key, signed by that key (valid from a day before
    `now`, so that a peer whose clock is a little behind still accepts its dates)."""
    key = identity.tls_private_key()
    name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, f"bohnanza-p2p {identity.fingerprint}")]
    )
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=CERTIFICATE_DAYS))
        .sign(key, algorithm=None)
    )


def certificate_key(cert: x509.Certificate) -> bytes:
    """The raw 32-byte Ed25519 key a certificate holds; SealError for any other kind of key."""
    key = cert.public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise SealError(f"the certificate holds a {type(key).__name__}, not an Ed25519 key")
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def describe_key(key: bytes | None) -> str:
    return "no key" if key is None else f"key {fingerprint(key)}"


KeyCheck = Callable[[bytes], bool]


def context(identity: Identity | None, now: datetime, check_peer: KeyCheck | None) -> SSL.Context:
    """A TLS 1.3-only context. With `identity`, this side shows its certificate; with
    `check_peer`, the other side must show one whose Ed25519 key the check accepts (else the
    handshake fails). Session tickets are off: every link does the whole handshake, so every
    link proves both keys again and gets fresh keys of its own."""
    ctx = SSL.Context(SSL.TLS_METHOD)
    ctx.set_min_proto_version(SSL.TLS1_3_VERSION)
    ctx.set_max_proto_version(SSL.TLS1_3_VERSION)
    ctx.set_options(SSL.OP_NO_TICKET)
    ctx.set_session_cache_mode(SSL.SESS_CACHE_OFF)
    if identity is not None:
        ctx.use_privatekey(identity.tls_private_key())
        ctx.use_certificate(certificate(identity, now))
        ctx.check_privatekey()
    if check_peer is not None:
        ctx.set_verify(SSL.VERIFY_PEER | SSL.VERIFY_FAIL_IF_NO_PEER_CERT, _verifier(check_peer))
    else:
        ctx.set_verify(SSL.VERIFY_NONE)
    return ctx


def _verifier(check_peer: KeyCheck) -> Callable[[SSL.Connection, object, int, int, int], bool]:
    def verify(connection: SSL.Connection, cert: object, errno: int, depth: int, ok: int) -> bool:
        """OpenSSL's chain checks do not apply (no authority signs these certificates); what
        counts is the key. Only a lone certificate (depth 0) is accepted."""
        if depth != 0:
            return False
        to_cryptography = getattr(cert, "to_cryptography", None)
        if to_cryptography is None:
            return False
        try:
            return check_peer(certificate_key(to_cryptography()))
        except SealError:
            return False

    return verify


def peer_key(connection: SSL.Connection) -> bytes | None:
    """The Ed25519 key of the certificate the other end showed (None: none, or not Ed25519)."""
    cert = connection.get_peer_certificate(as_cryptography=True)
    if cert is None:
        return None
    try:
        return certificate_key(cert)
    except SealError:
        return None


def channel_binding(connection: SSL.Connection) -> bytes:
    """This connection's TLS exporter value: both ends compute the same bytes, and no other
    connection has them."""
    return connection.export_keying_material(EXPORTER_LABEL, EXPORTER_BYTES)
