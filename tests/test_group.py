"""The group under the deck: facts about rbcl's libsodium we rely on, and the Group interface.

Each library fact the deck depends on (CRYPTO.md P1, P4, P5, P6, P7) is proved here against the
installed library, so an upgrade that changes one fails a test instead of the deck.
"""

import pytest
import rbcl
from hypothesis import given
from hypothesis import strategies as st

from protocol.deck.group import GROUP_ORDER, RISTRETTO255, InvalidPoint, InvalidScalar, Scalar
from protocol.deck.public import card_point, card_points

L = GROUP_ORDER
P = 2**255 - 19
GAME = b"group test game!"


def enc(value: int) -> bytes:
    return value.to_bytes(32, "little")


def with_bit_255(point: bytes) -> bytes:
    return point[:31] + bytes([point[31] | 0x80])


IDENTITY = bytes(32)
G = RISTRETTO255.generator()

# Bad encodings from RFC 9496, appendix A.2, and the two libsodium lets through.
BAD_POINTS = {
    "identity": IDENTITY,
    "identity with bit 255": with_bit_255(IDENTITY),  # libsodium decodes it as the identity
    "generator with bit 255": with_bit_255(G),  # libsodium decodes it as G: a second encoding
    "non-canonical": enc(P),  # the field element 0, written as p
    "non-canonical large": enc(2**255 - 1),
    "negative": enc(1),  # s must be even ("non-negative")
    "non-square": bytes.fromhex("26948d35ca62e643e26a83177332e6b6afeb9d08e4268b650f1f5bbd8d81d371"),
    "s = -1": enc(P - 1),
    "edwards25519 point of order 8": bytes.fromhex(
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"
    ),
    "short": G[:31],
}

scalars = st.integers(min_value=1, max_value=L - 1).map(lambda v: Scalar(enc(v)))


@pytest.mark.parametrize("name", [n for n in BAD_POINTS if "bit 255" not in n and n != "short"])
def test_libsodium_refuses_every_bad_encoding_but_the_identity_in_its_check(name):
    valid = rbcl.crypto_core_ristretto255_is_valid_point(BAD_POINTS[name])
    assert valid == (name == "identity")
    with pytest.raises(RuntimeError):
        rbcl.crypto_scalarmult_ristretto255(enc(5), BAD_POINTS[name])


def test_libsodium_ignores_bit_255_of_a_point_so_the_group_checks_it():
    # P4: without our check, G and G with bit 255 set would be two byte strings for one card.
    assert rbcl.crypto_core_ristretto255_is_valid_point(with_bit_255(G))
    assert rbcl.crypto_core_ristretto255_is_valid_point(with_bit_255(IDENTITY))
    five = enc(5)
    assert rbcl.crypto_scalarmult_ristretto255(five, with_bit_255(G)) == (
        rbcl.crypto_scalarmult_ristretto255(five, G)
    )


def test_multiplication_refuses_zero_and_identity_results():
    with pytest.raises(RuntimeError):
        rbcl.crypto_scalarmult_ristretto255(enc(0), G)
    with pytest.raises(RuntimeError):
        rbcl.crypto_scalarmult_ristretto255(enc(L), G)  # L·G is the identity
    with pytest.raises(RuntimeError):
        rbcl.crypto_scalarmult_ristretto255_base(enc(L))
    with pytest.raises(InvalidScalar):
        RISTRETTO255.mul_base(Scalar(enc(L)))


def test_multiplication_drops_bit_255_of_the_scalar():
    # P5: a key with bit 255 set acts as the key without it, so keys are reduced first and a
    # received key must be canonical (below L) to be accepted.
    k = 123456789
    assert rbcl.crypto_scalarmult_ristretto255(enc(k | 1 << 255), G) == (
        rbcl.crypto_scalarmult_ristretto255(enc(k), G)
    )


@pytest.mark.parametrize("name", ["non-square", "negative", "non-canonical"])
def test_core_add_and_sub_refuse_nothing_so_only_validated_points_may_enter(name):
    # P4: add/sub answer a bad encoding with the identity's bytes instead of an error.
    bad = BAD_POINTS[name]
    assert rbcl.crypto_core_ristretto255_add(G, bad) == IDENTITY
    assert rbcl.crypto_core_ristretto255_sub(G, bad) == IDENTITY


def test_from_hash_of_zero_bytes_is_the_identity_and_hash_to_point_refuses_it():
    assert rbcl.crypto_core_ristretto255_from_hash(bytes(64)) == IDENTITY  # P6
    with pytest.raises(InvalidPoint):
        RISTRETTO255.hash_to_point(bytes(64))


@given(st.binary(min_size=32, max_size=32))
def test_every_point_the_group_accepts_has_prime_order_and_one_encoding(data):
    # No small-order elements: (L-1)·X + X is the identity for every X that passes validate.
    try:
        point = RISTRETTO255.validate(data)
    except InvalidPoint:
        return
    assert rbcl.crypto_core_ristretto255_add(
        RISTRETTO255.mul(Scalar(enc(L - 1)), point), point
    ) == (IDENTITY)
    assert RISTRETTO255.mul(Scalar(enc(1)), point) == point  # its encoding is the canonical one


@pytest.mark.parametrize("name", list(BAD_POINTS))
def test_the_group_refuses_bad_points_in_validate_and_mul(name):
    with pytest.raises(InvalidPoint):
        RISTRETTO255.validate(BAD_POINTS[name])
    with pytest.raises(InvalidPoint):
        RISTRETTO255.mul(Scalar(enc(7)), BAD_POINTS[name])


@pytest.mark.parametrize(
    ("value", "why"),
    [(0, "zero"), (L, "not reduced"), (L + 1, "not reduced"), (5 | 1 << 255, "not reduced")],
)
def test_decode_scalar_refuses_zero_unreduced_and_bit_255(value, why):
    with pytest.raises(InvalidScalar, match=why):
        RISTRETTO255.decode_scalar((value % 2**256).to_bytes(32, "little"))


def test_decode_scalar_accepts_the_largest_canonical_scalar_and_refuses_wrong_lengths():
    assert RISTRETTO255.decode_scalar(enc(L - 1)) == enc(L - 1)
    with pytest.raises(InvalidScalar):
        RISTRETTO255.decode_scalar(enc(1)[:31])


@given(st.integers(min_value=0, max_value=2**256 - 1))
def test_decode_scalar_accepts_exactly_the_canonical_non_zero_scalars(value):
    accepted = True
    try:
        RISTRETTO255.decode_scalar(value.to_bytes(32, "little"))
    except InvalidScalar:
        accepted = False
    assert accepted == (0 < value < L)


def test_scalar_from_wide_refuses_zero_after_reduction():
    with pytest.raises(InvalidScalar):
        RISTRETTO255.scalar_from_wide(bytes(64))
    with pytest.raises(InvalidScalar):
        RISTRETTO255.scalar_from_wide((3 * L).to_bytes(64, "little"))


@given(scalars, scalars)
def test_locks_commute(a, b):
    card = card_point(RISTRETTO255, GAME, 17)
    assert RISTRETTO255.mul(a, RISTRETTO255.mul(b, card)) == RISTRETTO255.mul(
        b, RISTRETTO255.mul(a, card)
    )


@given(scalars)
def test_the_inverse_removes_a_lock(a):
    card = card_point(RISTRETTO255, GAME, 3)
    assert RISTRETTO255.mul(RISTRETTO255.scalar_invert(a), RISTRETTO255.mul(a, card)) == card


@given(scalars, scalars)
def test_scalar_arithmetic_is_arithmetic_modulo_the_order(a, b):
    x, y = int.from_bytes(a, "little"), int.from_bytes(b, "little")
    assert int.from_bytes(RISTRETTO255.scalar_mul(a, b), "little") == x * y % L
    assert int.from_bytes(RISTRETTO255.scalar_add(a, b), "little") == (x + y) % L
    assert int.from_bytes(RISTRETTO255.scalar_sub(a, b), "little") == (x - y) % L
    assert int.from_bytes(RISTRETTO255.scalar_invert(a), "little") == pow(x, -1, L)


@given(st.lists(scalars, min_size=1, max_size=4))
def test_a_multi_scalar_sum_is_the_sum_of_the_products(weights):
    points = [card_point(RISTRETTO255, GAME, index) for index in range(len(weights))]
    expected = RISTRETTO255.mul(weights[0], points[0])
    for weight, point in zip(weights[1:], points[1:], strict=True):
        expected = RISTRETTO255.add(expected, RISTRETTO255.mul(weight, point))
    assert RISTRETTO255.mul_sum(weights, points) == expected


@pytest.mark.parametrize("bad", list(BAD_POINTS), ids=list(BAD_POINTS))
def test_a_multi_scalar_sum_validates_every_point(bad):
    one = Scalar(enc(1))
    with pytest.raises(InvalidPoint):
        RISTRETTO255.mul_sum([one, one], [G, BAD_POINTS[bad]])


def test_a_multi_scalar_sum_refuses_an_identity_result():
    minus_one = Scalar(enc(L - 1))
    with pytest.raises(InvalidPoint):
        RISTRETTO255.mul_sum([Scalar(enc(1)), minus_one], [G, G])


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
        with pytest.raises(RuntimeError):
            rbcl.crypto_scalarmult_ristretto255(enc(L), card_point(RISTRETTO255, GAME, card))


def test_the_generator_is_the_standard_base_point_not_chosen_by_anyone():
    # P7: RFC 9496's generator (the encoding of edwards25519's base point), fixed by the
    # standard, and its double as the RFC's appendix A.1 lists it.
    assert G.hex() == "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76"
    assert RISTRETTO255.mul_base(Scalar(enc(2))).hex() == (
        "6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919"
    )


def test_card_points_follow_the_published_hash_to_curve_recipe():
    # P3: M_c = from_hash(h), h = SHA-512(label, game, c), RFC 9496's one-way map; recomputed
    # here straight from hashlib and the library.
    import hashlib

    from protocol.deck.public import CARD_POINT_LABEL
    from protocol.kdf import encode_label

    for card in (0, 1, 153):
        digest = hashlib.sha512(encode_label(CARD_POINT_LABEL, GAME, card)).digest()
        expected = rbcl.crypto_core_ristretto255_from_hash(digest)
        assert card_point(RISTRETTO255, GAME, card) == expected


def test_card_points_are_distinct_per_physical_card_and_have_no_simple_relation():
    points = card_points(RISTRETTO255, GAME)
    assert len(set(points)) == len(points) == 154  # P2: one point per card, not per type
    # P3: not multiples of G, not an arithmetic progression.
    assert all(points[c] != RISTRETTO255.mul_base(Scalar(enc(c + 1))) for c in range(154))
    steps = {RISTRETTO255.sub(points[c + 1], points[c]) for c in range(153)}
    assert len(steps) == 153
    assert card_points(RISTRETTO255, b"another game id!")[0] != points[0]
