"""The prime-order group the deck's commutative locks live in: ristretto255 (RFC 9496).

The deck code talks to a small `Group` interface; the one backend is ristretto255 through
`rbcl` (which bundles libsodium). ristretto255 is a prime-order group built on edwards25519:
every element has exactly one canonical encoding and there are no small-order elements, so a
multiplication needs no subgroup check, which is most of the cost of a checked multiplication
on edwards25519 itself (measured when the backend was chosen: docs/deck.md). Points and scalars
are plain `bytes` (typed as `Point` and `Scalar`) so that they cross process pools and the wire
without conversion.

Facts about rbcl this module relies on (each is proved by tests/test_group.py):

- `crypto_scalarmult_ristretto255` refuses (RuntimeError) an encoding that is not an element and
  an identity result; with a canonical non-zero scalar only a bad point can make it fail.
- Decoding ignores bit 255 of a point, so one element has a second encoding with that bit set:
  `validate` and `mul` refuse it, or two byte strings could be the same card (P4).
- `crypto_core_ristretto255_is_valid_point` accepts the identity: `validate` refuses it.
- `crypto_core_ristretto255_add`/`_sub` do not refuse a bad encoding (they return the identity's
  bytes): only validated points may enter them (P4).
- Scalar multiplication ignores bit 255 of the scalar and reduces it modulo the order (P5), so
  scalars from the wire are checked canonical first.
- `crypto_core_ristretto255_from_hash` of 64 zero bytes is the identity (P6).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NewType, Protocol

import rbcl

Point = NewType("Point", bytes)
Scalar = NewType("Scalar", bytes)

# The order of ristretto255 (the prime-order subgroup of edwards25519 it is built on).
GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493


class InvalidPoint(ValueError):
    """A byte string that is not an acceptable group element (or a forbidden identity)."""


class InvalidScalar(ValueError):
    """A byte string that is not a canonical, non-zero scalar."""


class Group(Hashable, Protocol):
    """A prime-order group with hash-to-group, as the deck needs it (hashable: stateless).

    No backend error leaves it: a bad point raises InvalidPoint, a bad scalar InvalidScalar."""

    name: str
    point_size: int
    scalar_size: int
    wide_scalar_size: int
    order: int
    security_bits: int  # log2 of the work of the best known discrete-log attack

    def generator(self) -> Point:
        """The fixed public base point G (nothing-up-my-sleeve: fixed by the standard)."""
        ...

    def validate(self, data: bytes) -> Point:
        """`data` as the canonical encoding of a group element, not the identity; else
        InvalidPoint."""
        ...

    def mul(self, scalar: Scalar, point: bytes) -> Point:
        """scalar·point; validates `point` on the way (InvalidPoint if it is unacceptable)."""
        ...

    def mul_base(self, scalar: Scalar) -> Point:
        """scalar·G (InvalidScalar for a zero scalar)."""
        ...

    def mul_sum(self, scalars: Sequence[Scalar], points: Sequence[bytes]) -> Point:
        """Σ scalars[i]·points[i], validating every point (InvalidPoint if one is unacceptable,
        or if a product or the sum is the identity)."""
        ...

    def add(self, a: Point, b: Point) -> Point:
        """a + b, for validated points only (the backend may not check them)."""
        ...

    def sub(self, a: Point, b: Point) -> Point:
        """a − b, for validated points only."""
        ...

    def scalar_from_wide(self, data: bytes) -> Scalar:
        """A uniform scalar from `wide_scalar_size` uniform bytes; InvalidScalar if it is zero."""
        ...

    def scalar_from_hash(self, data: bytes) -> Scalar:
        """A challenge scalar from `wide_scalar_size` hash bytes (zero allowed)."""
        ...

    def decode_scalar(self, data: bytes) -> Scalar:
        """`data` as a canonical non-zero scalar (below the order); else InvalidScalar."""
        ...

    def scalar_mul(self, a: Scalar, b: Scalar) -> Scalar: ...

    def scalar_add(self, a: Scalar, b: Scalar) -> Scalar: ...

    def scalar_sub(self, a: Scalar, b: Scalar) -> Scalar: ...

    def scalar_invert(self, a: Scalar) -> Scalar: ...

    def hash_to_point(self, digest: bytes) -> Point:
        """A point with unknown discrete logarithm from a 64-byte hash (P3, P6)."""
        ...


class Ristretto255Group:
    """ristretto255 through rbcl's libsodium (see the module docstring)."""

    name = "ristretto255"
    point_size = 32
    scalar_size = 32
    wide_scalar_size = 64
    order = GROUP_ORDER
    # Pollard's rho needs about sqrt(pi·L/4) ≈ 2^125.8 group operations.
    security_bits = 125

    def generator(self) -> Point:
        return _GENERATOR

    def validate(self, data: bytes) -> Point:
        if (
            not _canonical_length_and_bit(data)
            or data == _IDENTITY
            or not rbcl.crypto_core_ristretto255_is_valid_point(data)
        ):
            raise InvalidPoint("not the encoding of a group element, or the identity")
        return Point(data)

    def mul(self, scalar: Scalar, point: bytes) -> Point:
        if not _canonical_length_and_bit(point):
            raise InvalidPoint("not the encoding of a group element, or the identity")
        try:
            return Point(rbcl.crypto_scalarmult_ristretto255(scalar, point))
        except RuntimeError:
            # The scalar is canonical and non-zero and the group has prime order, so only a bad
            # encoding or the identity can make the multiplication fail.
            raise InvalidPoint("not the encoding of a group element, or the identity") from None

    def mul_base(self, scalar: Scalar) -> Point:
        try:
            return Point(rbcl.crypto_scalarmult_ristretto255_base(scalar))
        except RuntimeError:
            raise InvalidScalar("the scalar is zero") from None

    def mul_sum(self, scalars: Sequence[Scalar], points: Sequence[bytes]) -> Point:
        if len(scalars) != len(points) or not points:
            raise ValueError("a multi-scalar sum needs as many scalars as points, at least one")
        products = [self.mul(scalar, point) for scalar, point in zip(scalars, points, strict=True)]
        total = products[0]
        for product in products[1:]:
            total = self.add(total, product)
        if total == _IDENTITY:
            raise InvalidPoint("the sum is the identity")
        return total

    def add(self, a: Point, b: Point) -> Point:
        return Point(rbcl.crypto_core_ristretto255_add(a, b))

    def sub(self, a: Point, b: Point) -> Point:
        return Point(rbcl.crypto_core_ristretto255_sub(a, b))

    def scalar_from_wide(self, data: bytes) -> Scalar:
        scalar = self.scalar_from_hash(data)
        if scalar == _ZERO:
            raise InvalidScalar("the scalar is zero")
        return scalar

    def scalar_from_hash(self, data: bytes) -> Scalar:
        if len(data) != 64:
            raise InvalidScalar("a wide scalar is 64 bytes")
        return Scalar(rbcl.crypto_core_ristretto255_scalar_reduce(data))

    def decode_scalar(self, data: bytes) -> Scalar:
        if len(data) != 32:
            raise InvalidScalar("a scalar is 32 bytes")
        value = int.from_bytes(data, "little")
        if value >= GROUP_ORDER:
            raise InvalidScalar("the scalar is not reduced below the group order")
        if value == 0:
            raise InvalidScalar("the scalar is zero")
        return Scalar(data)

    def scalar_mul(self, a: Scalar, b: Scalar) -> Scalar:
        return Scalar(rbcl.crypto_core_ristretto255_scalar_mul(a, b))

    def scalar_add(self, a: Scalar, b: Scalar) -> Scalar:
        return Scalar(rbcl.crypto_core_ristretto255_scalar_add(a, b))

    def scalar_sub(self, a: Scalar, b: Scalar) -> Scalar:
        return Scalar(rbcl.crypto_core_ristretto255_scalar_sub(a, b))

    def scalar_invert(self, a: Scalar) -> Scalar:
        return Scalar(rbcl.crypto_core_ristretto255_scalar_invert(a))

    def hash_to_point(self, digest: bytes) -> Point:
        if len(digest) != 64:
            raise InvalidPoint("hash-to-point takes a 64-byte hash")
        # RFC 9496's one-way map: two Elligator maps of the halves, summed; uniform over the group.
        return self.validate(rbcl.crypto_core_ristretto255_from_hash(digest))

    def __repr__(self) -> str:
        return "Ristretto255Group()"


def _canonical_length_and_bit(data: bytes) -> bool:
    """32 bytes with bit 255 clear: what libsodium's decoding does not check itself."""
    return len(data) == 32 and not data[31] & 0x80


_ZERO = Scalar(bytes(32))
_IDENTITY = bytes(32)
_GENERATOR = Point(rbcl.crypto_scalarmult_ristretto255_base((1).to_bytes(32, "little")))

RISTRETTO255: Group = Ristretto255Group()
