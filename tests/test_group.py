"""The group under the deck: facts about libsodium we rely on, and the Group interface.

Each libsodium fact the deck depends on (CRYPTO.md P1, P4, P5, P6, P7) is proved here against the
installed library, so an upgrade that changes one fails a test instead of the deck.
"""

import nacl.bindings as sodium
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nacl.exceptions import CryptoError

from protocol.deck.group import ED25519, ED25519_ORDER, InvalidPoint, InvalidScalar, Scalar
from protocol.deck.public import card_point, card_points

L = ED25519_ORDER
P = 2**255 - 19
GAME = b"group test game!"


def enc(value: int) -> bytes:
    return value.to_bytes(32, "little")


IDENTITY = enc(1)  # y = 1, x = 0
NEGATIVE_ZERO_IDENTITY = enc(1 | 1 << 255)  # the identity with the sign bit of x set
ORDER_2 = enc(P - 1)
ORDER_4 = enc(0)
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
OFF_CURVE = enc(2)  # no x satisfies the curve equation for y = 2
ON_CURVE_MIXED = enc(3)  # on the curve, but not in the prime-order subgroup
NON_CANONICAL = enc(P + 3)  # y = 3 + p, the non-canonical twin of ON_CURVE_MIXED
G = ED25519.generator()
MIXED = sodium.crypto_core_ed25519_add(G, ORDER_8)  # G plus a torsion component

BAD_POINTS = {
    "identity": IDENTITY,
    "negative-zero identity": NEGATIVE_ZERO_IDENTITY,
    "order 2": ORDER_2,
    "order 4": ORDER_4,
    "order 8": ORDER_8,
    "mixed order": MIXED,
    "on-curve mixed order": ON_CURVE_MIXED,
    "non-canonical": NON_CANONICAL,
    "off-curve": OFF_CURVE,
    "short": G[:31],
}

scalars = st.integers(min_value=1, max_value=L - 1).map(lambda v: Scalar(enc(v)))


def add_times(point: bytes, times: int) -> bytes:
    total = point
    for _ in range(times - 1):
        total = sodium.crypto_core_ed25519_add(total, point)
    return total


def test_the_torsion_constants_have_the_orders_claimed():
    assert add_times(ORDER_2, 2) == IDENTITY
    assert add_times(ORDER_4, 2) != IDENTITY and add_times(ORDER_4, 4) == IDENTITY
    assert add_times(ORDER_8, 4) != IDENTITY and add_times(ORDER_8, 8) == IDENTITY


@pytest.mark.parametrize("name", [name for name in BAD_POINTS if name != "short"])
def test_noclamp_multiplication_refuses_every_bad_point(name):
    with pytest.raises(CryptoError):
        sodium.crypto_scalarmult_ed25519_noclamp(enc(5), BAD_POINTS[name])
    assert not sodium.crypto_core_ed25519_is_valid_point(BAD_POINTS[name])


def test_noclamp_multiplication_refuses_zero_and_identity_results():
    with pytest.raises(CryptoError):
        sodium.crypto_scalarmult_ed25519_noclamp(enc(0), G)
    with pytest.raises(CryptoError):
        sodium.crypto_scalarmult_ed25519_noclamp(enc(L), G)  # L·G is the identity
    with pytest.raises(CryptoError):
        sodium.crypto_scalarmult_ed25519_base_noclamp(enc(L))


def test_noclamp_multiplication_drops_bit_255_of_the_scalar():
    # P5: a key with bit 255 set acts as the key without it, so keys are reduced first and a
    # received key must be canonical (below L) to be accepted.
    k = 123456789
    assert sodium.crypto_scalarmult_ed25519_noclamp(
        enc(k | 1 << 255), G
    ) == sodium.crypto_scalarmult_ed25519_noclamp(enc(k), G)


@pytest.mark.parametrize(
    "name", ["order 2", "order 8", "mixed order", "non-canonical", "negative-zero identity"]
)
def test_core_add_and_sub_check_nothing_so_only_validated_points_may_enter(name):
    # P4: add/sub accept small-order, mixed-order and non-canonical inputs without complaint.
    bad = BAD_POINTS[name]
    total = sodium.crypto_core_ed25519_add(G, bad)
    difference = sodium.crypto_core_ed25519_sub(G, bad)
    assert len(total) == len(difference) == 32


def test_core_add_treats_a_non_canonical_encoding_as_its_canonical_twin():
    assert sodium.crypto_core_ed25519_add(G, NON_CANONICAL) == sodium.crypto_core_ed25519_add(
        G, ON_CURVE_MIXED
    )


def test_from_uniform_of_zero_bytes_is_the_identity_and_hash_to_point_refuses_it():
    assert sodium.crypto_core_ed25519_from_uniform(bytes(32)) == IDENTITY  # P6
    with pytest.raises(InvalidPoint):
        ED25519.hash_to_point(bytes(64))  # identity + identity


@pytest.mark.parametrize("name", list(BAD_POINTS))
def test_the_group_refuses_bad_points_in_validate_and_mul(name):
    with pytest.raises(InvalidPoint):
        ED25519.validate(BAD_POINTS[name])
    with pytest.raises(InvalidPoint):
        ED25519.mul(Scalar(enc(7)), BAD_POINTS[name])


@pytest.mark.parametrize(
    ("value", "why"),
    [(0, "zero"), (L, "not reduced"), (L + 1, "not reduced"), (5 | 1 << 255, "not reduced")],
)
def test_decode_scalar_refuses_zero_unreduced_and_bit_255(value, why):
    with pytest.raises(InvalidScalar, match=why):
        ED25519.decode_scalar((value % 2**256).to_bytes(32, "little"))


def test_decode_scalar_accepts_the_largest_canonical_scalar_and_refuses_wrong_lengths():
    assert ED25519.decode_scalar(enc(L - 1)) == enc(L - 1)
    with pytest.raises(InvalidScalar):
        ED25519.decode_scalar(enc(1)[:31])


@given(st.integers(min_value=0, max_value=2**256 - 1))
def test_decode_scalar_accepts_exactly_the_canonical_non_zero_scalars(value):
    accepted = True
    try:
        ED25519.decode_scalar(value.to_bytes(32, "little"))
    except InvalidScalar:
        accepted = False
    assert accepted == (0 < value < L)


def test_scalar_from_wide_refuses_zero_after_reduction():
    with pytest.raises(InvalidScalar):
        ED25519.scalar_from_wide(bytes(64))
    with pytest.raises(InvalidScalar):
        ED25519.scalar_from_wide((3 * L).to_bytes(64, "little"))


@given(scalars, scalars)
def test_locks_commute(a, b):
    card = card_point(ED25519, GAME, 17)
    assert ED25519.mul(a, ED25519.mul(b, card)) == ED25519.mul(b, ED25519.mul(a, card))


@given(scalars)
def test_the_inverse_removes_a_lock(a):
    card = card_point(ED25519, GAME, 3)
    assert ED25519.mul(ED25519.scalar_invert(a), ED25519.mul(a, card)) == card


@given(scalars, scalars)
def test_scalar_arithmetic_is_arithmetic_modulo_the_order(a, b):
    x, y = int.from_bytes(a, "little"), int.from_bytes(b, "little")
    assert int.from_bytes(ED25519.scalar_mul(a, b), "little") == x * y % L
    assert int.from_bytes(ED25519.scalar_add(a, b), "little") == (x + y) % L
    assert int.from_bytes(ED25519.scalar_sub(a, b), "little") == (x - y) % L
    assert int.from_bytes(ED25519.scalar_invert(a), "little") == pow(x, -1, L)


@given(st.lists(scalars, min_size=1, max_size=4))
def test_a_multi_scalar_sum_is_the_sum_of_the_products(weights):
    points = [card_point(ED25519, GAME, index) for index in range(len(weights))]
    expected = ED25519.mul(weights[0], points[0])
    for weight, point in zip(weights[1:], points[1:], strict=True):
        expected = ED25519.add(expected, ED25519.mul(weight, point))
    assert ED25519.mul_sum(weights, points) == expected


@pytest.mark.parametrize("bad", list(BAD_POINTS), ids=list(BAD_POINTS))
def test_a_multi_scalar_sum_validates_every_point(bad):
    one = Scalar(enc(1))
    with pytest.raises(InvalidPoint):
        ED25519.mul_sum([one, one], [G, BAD_POINTS[bad]])


def test_a_multi_scalar_sum_refuses_an_identity_result():
    minus_one = Scalar(enc(L - 1))
    with pytest.raises(InvalidPoint):
        ED25519.mul_sum([Scalar(enc(1)), minus_one], [G, G])


def is_probable_prime(n: int) -> bool:
    """Miller–Rabin with fixed bases: true for every prime, false for composites in practice."""
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for base in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41):
        x = pow(base, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def test_sra_modulo_a_prime_leaks_residuosity_which_is_why_we_use_a_prime_order_group():
    # P1, the pitfall: in Z_p* a lock m -> m^k with odd k keeps the quadratic character of m.
    p = 1019
    for message in range(2, 40):
        character = pow(message, (p - 1) // 2, p)
        assert all(pow(pow(message, k, p), (p - 1) // 2, p) == character for k in (3, 5, 101))
    # Our group has odd prime order L, so it has no such character: every card point has
    # order exactly L (L·M is the identity, which libsodium refuses to output).
    assert is_probable_prime(L)
    assert not is_probable_prime(L + 2)
    for card in (0, 77, 153):
        with pytest.raises(CryptoError):
            sodium.crypto_scalarmult_ed25519_noclamp(enc(L), card_point(ED25519, GAME, card))


def test_the_generator_is_the_standard_base_point_not_chosen_by_anyone():
    # P7: the RFC 8032 base point (y = 4/5), fixed by the standard.
    assert enc(4 * pow(5, -1, P) % P) == G


def test_card_points_follow_the_published_hash_to_curve_recipe():
    # P3: M_c = from_uniform(h[0:32]) + from_uniform(h[32:64]), h = SHA-512(label, game, c);
    # recomputed here straight from hashlib and libsodium.
    import hashlib

    from protocol.deck.public import CARD_POINT_LABEL
    from protocol.kdf import encode_label

    for card in (0, 1, 153):
        digest = hashlib.sha512(encode_label(CARD_POINT_LABEL, GAME, card)).digest()
        expected = sodium.crypto_core_ed25519_add(
            sodium.crypto_core_ed25519_from_uniform(digest[:32]),
            sodium.crypto_core_ed25519_from_uniform(digest[32:]),
        )
        assert card_point(ED25519, GAME, card) == expected


def test_card_points_are_distinct_per_physical_card_and_have_no_simple_relation():
    points = card_points(ED25519, GAME)
    assert len(set(points)) == len(points) == 154  # P2: one point per card, not per type
    # P3: not multiples of G, not an arithmetic progression.
    assert all(points[c] != ED25519.mul_base(Scalar(enc(c + 1))) for c in range(154))
    steps = {ED25519.sub(points[c + 1], points[c]) for c in range(153)}
    assert len(steps) == 153
    assert card_points(ED25519, b"another game id!")[0] != points[0]
