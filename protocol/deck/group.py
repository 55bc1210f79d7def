"""The prime-order group the deck's commutative locks live in.

The deck code talks to a small `Group` interface so that another backend could be swapped in;
the one backend is the prime-order subgroup of edwards25519 through PyNaCl's `nacl.bindings`
(libsodium). Points and scalars are plain `bytes` (typed as `Point` and `Scalar`) so that they
cross process pools and the wire without conversion.

Facts about libsodium this module relies on (each is proved by tests/test_group.py):

- `crypto_scalarmult_ed25519_noclamp` refuses a point that is non-canonical, off the curve, of
  small order or of mixed order (not in the prime-order subgroup), and refuses a zero or identity
  result. A multiplication is therefore also a full validation of its input point (CRYPTO.md P4).
- It silently drops bit 255 of the scalar (P5), so scalars are always reduced below L first.
- `crypto_core_ed25519_add`/`_sub` check nothing beyond decodability: they accept small-order,
  mixed-order and non-canonical inputs. Only validated points may enter them (P4).
- `crypto_core_ed25519_from_uniform` of 32 zero bytes is the identity (P6).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NewType, Protocol

import nacl.bindings as sodium
from nacl.exceptions import CryptoError

Point = NewType("Point", bytes)
Scalar = NewType("Scalar", bytes)

# The order of the prime-order subgroup of edwards25519.
ED25519_ORDER = 2**252 + 27742317777372353535851937790883648493


class InvalidPoint(ValueError):
    """A byte string that is not an acceptable group element (or a forbidden identity)."""


class InvalidScalar(ValueError):
    """A byte string that is not a canonical, non-zero scalar."""


class Group(Hashable, Protocol):
    """A prime-order group with hash-to-group, as the deck needs it (hashable: stateless)."""

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
        """`data` as a point of the prime-order subgroup, not the identity; else InvalidPoint."""
        ...

    def mul(self, scalar: Scalar, point: bytes) -> Point:
        """scalar·point; validates `point` on the way (InvalidPoint if it is unacceptable)."""
        ...

    def mul_base(self, scalar: Scalar) -> Point:
        """scalar·G."""
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


class Ed25519Group:
    """The prime-order subgroup of edwards25519 through libsodium (see the module docstring)."""

    name = "edwards25519"
    point_size = 32
    scalar_size = 32
    wide_scalar_size = 64
    order = ED25519_ORDER
    # Pollard's rho needs about sqrt(pi·L/4) ≈ 2^125.8 group operations.
    security_bits = 125

    def generator(self) -> Point:
        return _GENERATOR

    def validate(self, data: bytes) -> Point:
        if len(data) != 32 or not sodium.crypto_core_ed25519_is_valid_point(data):
            raise InvalidPoint("not a point of the prime-order subgroup")
        return Point(data)

    def mul(self, scalar: Scalar, point: bytes) -> Point:
        if len(point) != 32:
            raise InvalidPoint("a point is 32 bytes")
        try:
            return Point(sodium.crypto_scalarmult_ed25519_noclamp(scalar, point))
        except CryptoError:
            # The scalar is canonical and non-zero and the subgroup has prime order, so only an
            # unacceptable point can make the multiplication fail.
            raise InvalidPoint("not a point of the prime-order subgroup") from None

    def mul_base(self, scalar: Scalar) -> Point:
        return Point(sodium.crypto_scalarmult_ed25519_base_noclamp(scalar))

    def mul_sum(self, scalars: Sequence[Scalar], points: Sequence[bytes]) -> Point:
        if len(scalars) != len(points) or not points:
            raise ValueError("a multi-scalar sum needs as many scalars as points, at least one")
        products = [self.mul(scalar, point) for scalar, point in zip(scalars, points, strict=True)]
        total = products[0]
        for product in products[1:]:
            total = self.add(total, product)
        # A sum of subgroup points stays in the subgroup; only the identity is left to refuse.
        if total == _IDENTITY:
            raise InvalidPoint("the sum is the identity")
        return total

    def add(self, a: Point, b: Point) -> Point:
        return Point(sodium.crypto_core_ed25519_add(a, b))

    def sub(self, a: Point, b: Point) -> Point:
        return Point(sodium.crypto_core_ed25519_sub(a, b))

    def scalar_from_wide(self, data: bytes) -> Scalar:
        scalar = self.scalar_from_hash(data)
        if scalar == _ZERO:
            raise InvalidScalar("the scalar is zero")
        return scalar

    def scalar_from_hash(self, data: bytes) -> Scalar:
        if len(data) != 64:
            raise InvalidScalar("a wide scalar is 64 bytes")
        return Scalar(sodium.crypto_core_ed25519_scalar_reduce(data))

    def decode_scalar(self, data: bytes) -> Scalar:
        if len(data) != 32:
            raise InvalidScalar("a scalar is 32 bytes")
        value = int.from_bytes(data, "little")
        if value >= ED25519_ORDER:
            raise InvalidScalar("the scalar is not reduced below the group order")
        if value == 0:
            raise InvalidScalar("the scalar is zero")
        return Scalar(data)

    def scalar_mul(self, a: Scalar, b: Scalar) -> Scalar:
        return Scalar(sodium.crypto_core_ed25519_scalar_mul(a, b))

    def scalar_add(self, a: Scalar, b: Scalar) -> Scalar:
        return Scalar(sodium.crypto_core_ed25519_scalar_add(a, b))

    def scalar_sub(self, a: Scalar, b: Scalar) -> Scalar:
        return Scalar(sodium.crypto_core_ed25519_scalar_sub(a, b))

    def scalar_invert(self, a: Scalar) -> Scalar:
        return Scalar(sodium.crypto_core_ed25519_scalar_invert(a))

    def hash_to_point(self, digest: bytes) -> Point:
        if len(digest) != 64:
            raise InvalidPoint("hash-to-point takes a 64-byte hash")
        # Two independent Elligator 2 maps, summed, give a point whose distribution is close to
        # uniform; each map's output is cofactor-cleared, hence in the prime-order subgroup.
        first = sodium.crypto_core_ed25519_from_uniform(digest[:32])
        second = sodium.crypto_core_ed25519_from_uniform(digest[32:])
        return self.validate(sodium.crypto_core_ed25519_add(first, second))

    def __repr__(self) -> str:
        return "Ed25519Group()"


_ZERO = Scalar(bytes(32))
_IDENTITY = (1).to_bytes(32, "little")
_GENERATOR = Point(sodium.crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little")))

ED25519: Group = Ed25519Group()
