"""The linear-size shuffle argument: complete, sound against every tamper, and each pitfall S1–S8.

Soundness is shown three ways: every tampered statement or proof is refused (and blamed on the
prover), an extractor with the challenge reprogrammed gets k and π back from two answers
(special soundness), and generators with a known relation let a bad deck through (so hashing
them is what the binding rests on). Zero-knowledge: a simulator that never sees π makes
transcripts the verifier accepts, and natural guessers find where a card went no better than
chance.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.deck import shuffle_argument as sa
from protocol.deck.errors import ProofError
from protocol.deck.group import RISTRETTO255, Point, Scalar
from protocol.deck.public import card_points
from protocol.deck.secrets import SeatSecrets
from protocol.kdf import Stream
from tests.test_group import BAD_POINTS

GROUP = RISTRETTO255
Q = GROUP.order
G = GROUP.generator()
GAME = b"shuffle-arg game"
CARDS = card_points(GROUP, GAME)
WIDTH = 32


def enc(value: int) -> Scalar:
    return Scalar((value % Q).to_bytes(32, "little"))


def dec(data: bytes) -> int:
    return int.from_bytes(data, "little")


def random_scalar(stream: Stream) -> Scalar:
    return GROUP.scalar_from_wide(stream.read(64))


def random_point(stream: Stream) -> Point:
    return GROUP.hash_to_point(stream.read(64))


class Case:
    """An honest shuffle of the first `size` card points, and its proof."""

    def __init__(
        self,
        size: int,
        label: str = "case",
        permutation: list[int] | None = None,
        context: bytes | None = None,
    ) -> None:
        stream = Stream(b"shuffle argument tests seed 0000", label, size)
        self.size = size
        self.key = random_scalar(stream)
        self.permutation = permutation if permutation is not None else stream.permutation(size)
        self.secret = stream.read(32)
        self.deck_in = tuple(CARDS[:size])
        self.deck_out = tuple(GROUP.mul(self.key, self.deck_in[j]) for j in self.permutation)
        self.context = context if context is not None else sa.shuffle_context(GAME, 5, 0, 2, 2)
        self.statement = self.make_statement()
        self.proof = sa.prove_shuffle(
            GROUP, self.statement, self.key, self.permutation, self.secret
        )

    def make_statement(self, **changes: object) -> sa.Statement:
        fields: dict[str, object] = {
            "context": self.context,
            "deck_in": self.deck_in,
            "deck_out": self.deck_out,
            "public_key": GROUP.mul_base(self.key),
        }
        fields.update(changes)
        return sa.Statement(**fields)  # type: ignore[arg-type]

    def field_offsets(self) -> dict[str, list[int]]:
        """Byte offset of every item of the proof, by field name."""
        n = self.size
        items = [WIDTH * index for index in range(4 * n + 5)]
        return {
            "c": items[:n],
            "c_hat": items[n : 2 * n],
            "e": [items[2 * n]],
            "s": items[2 * n + 1 : 2 * n + 5],
            "s_hat": items[2 * n + 5 : 3 * n + 5],
            "s_prime": items[3 * n + 5 :],
        }


def replaced(data: bytes, offset: int, item: bytes) -> bytes:
    return data[:offset] + item + data[offset + len(item) :]


def accepts(statement: sa.Statement, proof: bytes) -> bool:
    return sa.check_shuffle(GROUP, statement, proof) is None


THREE_CYCLE_CASE = Case(5, "tamper", permutation=[1, 2, 0, 4, 3])


# Completeness -----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 44, 64, 130, 154])
def test_an_honest_proof_verifies_and_has_the_exact_length(size):
    case = Case(size)
    assert len(case.proof) == 32 * (4 * size + 5)
    assert sa.check_shuffle(GROUP, case.statement, case.proof) is None
    sa.verify_shuffle(GROUP, case.statement, case.proof, prover=2, step="test")


def test_a_rerun_gives_the_same_proof_byte_for_byte():
    case = THREE_CYCLE_CASE
    again = sa.prove_shuffle(GROUP, case.statement, case.key, case.permutation, case.secret)
    assert again == case.proof


def test_the_soundness_is_the_strength_of_the_group():
    assert sa.soundness_bits(GROUP, 154) == 125


@settings(max_examples=25, deadline=None)
@given(
    size=st.integers(min_value=1, max_value=5),
    data=st.data(),
)
def test_every_honest_proof_verifies_and_every_changed_byte_is_refused(size, data):
    permutation = data.draw(st.permutations(list(range(size))))
    key = enc(data.draw(st.integers(min_value=1, max_value=Q - 1)))
    secret = data.draw(st.binary(min_size=32, max_size=32))
    deck_out = tuple(GROUP.mul(key, CARDS[j]) for j in permutation)
    statement = sa.Statement(b"ctx", tuple(CARDS[:size]), deck_out, GROUP.mul_base(key))
    proof = sa.prove_shuffle(GROUP, statement, key, permutation, secret)
    assert accepts(statement, proof)
    at = data.draw(st.integers(min_value=0, max_value=len(proof) - 1))
    flip = data.draw(st.integers(min_value=1, max_value=255))
    changed = proof[:at] + bytes([proof[at] ^ flip]) + proof[at + 1 :]
    assert not accepts(statement, changed)


# Tampered statements: a proof that fits no deck but the honest one ------------------------------


def tampered_decks(case: Case) -> dict[str, tuple[Point, ...]]:
    out = list(case.deck_out)
    stream = Stream(b"tamper stream seed 0000000000000", "decks")
    other_key = random_scalar(stream)
    swapped = out.copy()
    swapped[0], swapped[1] = swapped[1], swapped[0]
    return {
        "two outputs swapped": tuple(swapped),
        "one output replaced": tuple([random_point(stream), *out[1:]]),
        "one output duplicated": tuple([out[1], *out[1:]]),
        "one card under another key": tuple(
            [GROUP.mul(other_key, case.deck_in[case.permutation[0]]), *out[1:]]
        ),
    }


@pytest.mark.parametrize("tamper", list(tampered_decks(THREE_CYCLE_CASE)))
def test_a_tampered_output_is_refused_with_the_honest_proof_and_with_a_fresh_one(tamper):
    case = THREE_CYCLE_CASE
    statement = case.make_statement(deck_out=tampered_decks(case)[tamper])
    assert not accepts(statement, case.proof)
    forged = sa.prove_shuffle(GROUP, statement, case.key, case.permutation, case.secret)
    with pytest.raises(ProofError) as caught:
        sa.verify_shuffle(GROUP, statement, forged, prover=3, step="epoch 0 (shuffle of seat 3)")
    assert caught.value.blame == 3


def test_a_public_key_of_another_key_is_refused():
    case = THREE_CYCLE_CASE
    other = GROUP.mul_base(enc(dec(case.key) + 1))
    statement = case.make_statement(public_key=other)
    assert not accepts(statement, case.proof)
    forged = sa.prove_shuffle(GROUP, statement, case.key, case.permutation, case.secret)
    assert not accepts(statement, forged)


@pytest.mark.parametrize(
    "context",
    [
        sa.shuffle_context(b"another game 123", 5, 0, 2, 2),
        sa.shuffle_context(GAME, 4, 0, 2, 2),
        sa.shuffle_context(GAME, 5, 1, 2, 2),
        sa.shuffle_context(GAME, 5, 0, 3, 2),
        sa.shuffle_context(GAME, 5, 0, 2, 3),
    ],
    ids=["game", "players", "epoch", "seat", "position"],
)
def test_a_proof_from_another_context_is_refused(context):
    case = THREE_CYCLE_CASE
    assert not accepts(case.make_statement(context=context), case.proof)


# Tampered proofs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["c", "c_hat", "e", "s", "s_hat", "s_prime"])
def test_each_item_of_each_proof_field_changed_is_refused(field):
    case = THREE_CYCLE_CASE
    stream = Stream(b"field stream seed 00000000000000", field)
    for offset in case.field_offsets()[field]:
        value = random_point(stream) if field in ("c", "c_hat") else random_scalar(stream)
        assert not accepts(case.statement, replaced(case.proof, offset, value)), offset


@pytest.mark.parametrize("field", ["e", "s", "s_hat", "s_prime"])
def test_a_non_canonical_scalar_is_refused_before_any_use(field):
    case = THREE_CYCLE_CASE
    for offset in case.field_offsets()[field]:
        value = case.proof[offset : offset + WIDTH]
        for bad in (dec(value) + Q, dec(value) | 1 << 255, 0):
            proof = replaced(case.proof, offset, bad.to_bytes(32, "little"))
            reason = sa.check_shuffle(GROUP, case.statement, proof)
            assert reason is not None and "scalar" in reason, (offset, reason)


@pytest.mark.parametrize("bad", list(BAD_POINTS), ids=list(BAD_POINTS))
def test_a_bad_point_in_any_point_field_of_the_proof_is_refused(bad):
    case = THREE_CYCLE_CASE
    point = BAD_POINTS[bad].ljust(WIDTH, b"\0")
    offsets = case.field_offsets()
    for offset in offsets["c"] + offsets["c_hat"]:
        reason = sa.check_shuffle(GROUP, case.statement, replaced(case.proof, offset, point))
        assert reason is not None, offset


@pytest.mark.parametrize("bad", list(BAD_POINTS), ids=list(BAD_POINTS))
def test_a_bad_point_anywhere_in_the_statement_is_refused(bad):
    case = THREE_CYCLE_CASE
    point = Point(BAD_POINTS[bad].ljust(WIDTH, b"\0"))
    for where in range(case.size):
        deck_in = list(case.deck_in)
        deck_in[where] = point
        deck_out = list(case.deck_out)
        deck_out[where] = point
        assert not accepts(case.make_statement(deck_in=tuple(deck_in)), case.proof)
        assert not accepts(case.make_statement(deck_out=tuple(deck_out)), case.proof)
    assert not accepts(case.make_statement(public_key=point), case.proof)


@pytest.mark.parametrize("change", [-33, -32, -1, 1, 32])
def test_a_proof_of_the_wrong_length_is_refused(change):
    case = THREE_CYCLE_CASE
    proof = case.proof[:change] if change < 0 else case.proof + bytes(change)
    reason = sa.check_shuffle(GROUP, case.statement, proof)
    assert reason is not None and "bytes" in reason
    assert sa.check_shuffle(GROUP, case.statement, b"") is not None


def test_decks_of_different_sizes_are_refused():
    case = THREE_CYCLE_CASE
    assert not accepts(case.make_statement(deck_out=case.deck_out[:-1]), case.proof)


# S1: nonces ------------------------------------------------------------------------------------


def test_s1_two_statements_never_share_a_nonce():
    case = THREE_CYCLE_CASE
    swapped = list(case.deck_out)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    statements = [
        case.statement,
        case.make_statement(deck_out=tuple(swapped)),
        case.make_statement(context=sa.shuffle_context(GAME, 5, 1, 2, 2)),
    ]
    names = [("r", case.size), ("r hat", case.size), ("omega", 4), ("omega hat", case.size)]
    seat = SeatSecrets(GROUP, GAME, 2, bytes(range(32)))
    seen: set[bytes] = set()
    for statement, epoch in itertools.product(statements, range(2)):
        nonces = sa.Nonces(GROUP, seat.shuffle_argument_secret(epoch), statement)
        for name, count in names:
            for index in range(count):
                nonce = nonces(name, index)
                assert nonce not in seen
                seen.add(nonce)


def test_s1_one_nonce_for_two_statements_would_give_the_key_away():
    """Why S1 matters: prove a second statement with the first one's nonces and solve for k."""
    case = THREE_CYCLE_CASE
    swapped = list(case.deck_out)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    other = case.make_statement(deck_out=tuple(swapped))
    other_permutation = case.permutation.copy()
    other_permutation[0], other_permutation[1] = other_permutation[1], other_permutation[0]
    reused = sa.Nonces(GROUP, case.secret, case.statement)  # the flaw: not bound to `other`
    first = sa.prove_shuffle(GROUP, case.statement, case.key, case.permutation, case.secret)
    second = prove_by_hand(other, case.key, other_permutation, reused)
    assert accepts(other, second)
    offsets = case.field_offsets()
    e1, e2 = (dec(p[offsets["e"][0] :][:WIDTH]) for p in (first, second))
    s41, s42 = (dec(p[offsets["s"][3] :][:WIDTH]) for p in (first, second))
    assert (s41 - s42) * pow(e2 - e1, -1, Q) % Q == dec(case.key)


def prove_by_hand(
    statement: sa.Statement,
    key: Scalar,
    permutation: list[int],
    nonces: sa.Nonces,
    misread: bool = False,
) -> bytes:
    """The honest prover with the nonces given instead of derived (S1); `misread` commits
    with c_i = r_i·G + h_π(i), π read the other way round (S8)."""
    n = statement.size
    _, hs = sa.generators(GROUP, n)
    randomness = [nonces("r", j) for j in range(n)]
    row = list(range(n))  # row[j]: the generator committed at input index j
    for i, j in enumerate(permutation):
        row[j] = i
    if misread:
        row = list(permutation)
    commitments = [GROUP.add(GROUP.mul_base(randomness[j]), hs[row[j]]) for j in range(n)]
    u = sa.matrix_challenges(GROUP, statement, commitments)
    return sa.prove_committed(
        GROUP,
        statement,
        commitments,
        [u[j] for j in permutation],
        enc(sum(map(dec, randomness))),
        enc(sum(dec(r) * dec(x) for r, x in zip(randomness, u, strict=True))),
        key,
        nonces,
    )


# S2/S3: the challenges cover everything --------------------------------------------------------


def public_inputs(case: Case) -> dict[str, sa.Statement]:
    stream = Stream(b"public input stream 000000000000", "inputs")
    changes: dict[str, sa.Statement] = {
        "context": case.make_statement(context=case.context + b"!"),
        "public key": case.make_statement(public_key=random_point(stream)),
    }
    for index in range(case.size):
        for name, deck in (("deck_in", case.deck_in), ("deck_out", case.deck_out)):
            changed = list(deck)
            changed[index] = random_point(stream)
            changes[f"{name}[{index}]"] = case.make_statement(**{name: tuple(changed)})
    return changes


def test_s2_u_changes_when_any_public_input_or_commitment_changes():
    case = THREE_CYCLE_CASE
    commitments = [case.proof[o : o + WIDTH] for o in case.field_offsets()["c"]]
    u = sa.matrix_challenges(GROUP, case.statement, commitments)
    for name, statement in public_inputs(case).items():
        changed = sa.matrix_challenges(GROUP, statement, commitments)
        assert all(a != b for a, b in zip(u, changed, strict=True)), name
    for index in range(case.size):
        moved = commitments.copy()
        moved[index] = G
        assert sa.matrix_challenges(GROUP, case.statement, moved)[0] != u[0], index


def test_s3_e_changes_when_any_input_of_statement_or_proof_changes():
    case = THREE_CYCLE_CASE
    n = case.size
    stream = Stream(b"challenge stream seed 0000000000", "e")
    parts = [[random_point(stream) for _ in range(count)] for count in (n, n, 5, n)]
    base = sa.challenge(GROUP, case.statement, *parts)
    for name, statement in public_inputs(case).items():
        assert sa.challenge(GROUP, statement, *parts) != base, name
    for which, part in enumerate(parts):
        for index in range(len(part)):
            changed = [p.copy() for p in parts]
            changed[which][index] = random_point(stream)
            assert sa.challenge(GROUP, case.statement, *changed) != base, (which, index)


# S4: generators ----------------------------------------------------------------------------------


def test_s4_generators_are_hashed_valid_and_pairwise_distinct():
    base, hs = sa.generators(GROUP, 154)
    everything = [G, base, *hs]
    assert len(set(everything)) == len(everything)
    for index, point in enumerate([base, *hs]):
        assert GROUP.validate(point) == point
        assert point == GROUP.hash_to_point(sa._hash("generator", index))


def test_s4_generators_with_a_known_relation_let_a_bad_deck_through(monkeypatch):
    """With h_i = a_i·G known, two cards under k·b and k/b verify; hashed generators stop it."""
    case = THREE_CYCLE_CASE
    n = case.size
    stream = Stream(b"trapdoor stream seed 00000000000", "s4")
    b = random_scalar(stream)
    deck_out = list(case.deck_out)
    deck_out[0] = GROUP.mul(b, deck_out[0])
    deck_out[1] = GROUP.mul(GROUP.scalar_invert(b), deck_out[1])
    statement = case.make_statement(deck_out=tuple(deck_out))
    trapdoors = [random_scalar(stream) for _ in range(n)]
    base, _ = sa.generators(GROUP, n)
    weak = (base, [GROUP.mul_base(a) for a in trapdoors])

    def forge() -> bytes:
        opening = [random_scalar(stream) for _ in range(n)]
        commitments = [GROUP.mul_base(r) for r in opening]
        u = sa.matrix_challenges(GROUP, statement, commitments)
        u_permuted = [dec(u[j]) for j in case.permutation]
        u_permuted[0] = u_permuted[0] * pow(dec(b), -1, Q) % Q
        u_permuted[1] = u_permuted[1] * dec(b) % Q
        a = [dec(x) for x in trapdoors]
        row_key = sum(map(dec, opening)) - sum(a)
        weighted_key = sum(dec(r) * dec(x) for r, x in zip(opening, u, strict=True)) - sum(
            x * y for x, y in zip(u_permuted, a, strict=True)
        )
        return sa.prove_committed(
            GROUP,
            statement,
            commitments,
            [enc(x) for x in u_permuted],
            enc(row_key),
            enc(weighted_key),
            case.key,
            sa.Nonces(GROUP, case.secret, statement),
        )

    with monkeypatch.context() as patched:
        patched.setattr(sa, "generators", lambda group, size: weak)
        forged = forge()
        assert accepts(statement, forged)
    assert not accepts(statement, forged)


# S6: zero-knowledge ----------------------------------------------------------------------------


def simulate(statement: sa.Statement, e: Scalar, stream: Stream) -> tuple[bytes, list, list]:
    """A transcript for challenge e without the witness: c, ĉ and the responses at random, the
    announcements solved from the verification equations (written here from the docstring)."""
    n = statement.size
    base, hs = sa.generators(GROUP, n)
    c = [random_point(stream) for _ in range(n)]
    chain = [random_point(stream) for _ in range(n)]
    s = [random_scalar(stream) for _ in range(4)]
    s_hat = [random_scalar(stream) for _ in range(n)]
    s_prime = [random_scalar(stream) for _ in range(n)]
    u = sa.matrix_challenges(GROUP, statement, c)

    def total(points):
        result = points[0]
        for point in points[1:]:
            result = GROUP.add(result, point)
        return result

    def msm(scalars, points):
        return total([GROUP.mul(x, p) for x, p in zip(scalars, points, strict=True)])

    row_sum = GROUP.sub(total(c), total(hs))
    product = 1
    for x in u:
        product = product * dec(x) % Q
    chain_end = GROUP.sub(chain[-1], GROUP.mul(enc(product), base))
    combined_in = msm(u, statement.deck_in)
    t = [
        GROUP.add(GROUP.mul(e, row_sum), GROUP.mul_base(s[0])),
        GROUP.add(GROUP.mul(e, chain_end), GROUP.mul_base(s[1])),
        total([GROUP.mul(e, msm(u, c)), GROUP.mul_base(s[2]), msm(s_prime, hs)]),
        GROUP.sub(msm(s_prime, statement.deck_out), GROUP.mul(s[3], combined_in)),
        GROUP.add(GROUP.mul(e, statement.public_key), GROUP.mul_base(s[3])),
    ]
    previous = [base, *chain[:-1]]
    t_hat = [
        total(
            [GROUP.mul(e, chain[i]), GROUP.mul_base(s_hat[i]), GROUP.mul(s_prime[i], previous[i])]
        )
        for i in range(n)
    ]
    proof = b"".join([*c, *chain, e, *s, *s_hat, *s_prime])
    return proof, t, t_hat


def programmed_oracle(monkeypatch, answers: dict[tuple, Scalar]) -> None:
    """Reprogram the random oracle e = H(...) at the given points."""
    real = sa.challenge

    def oracle(group, statement, commitments, chain, t, t_hat):
        key = (statement, *map(tuple, (commitments, chain, t, t_hat)))
        if key in answers:
            return answers[key]
        return real(group, statement, commitments, chain, t, t_hat)

    monkeypatch.setattr(sa, "challenge", oracle)


@pytest.mark.parametrize("size", [1, 3, 8])
def test_s6_a_simulator_without_the_witness_makes_transcripts_the_verifier_accepts(
    monkeypatch, size
):
    case = Case(size, "simulator")
    stream = Stream(b"simulator stream seed 0000000000", size)
    answers: dict[tuple, Scalar] = {}
    proofs = []
    for _ in range(3):
        e = random_scalar(stream)
        proof, t, t_hat = simulate(case.statement, e, stream)
        n = size
        commitments = [proof[i * WIDTH : (i + 1) * WIDTH] for i in range(n)]
        chain = [proof[(n + i) * WIDTH : (n + i + 1) * WIDTH] for i in range(n)]
        answers[(case.statement, *map(tuple, (commitments, chain, t, t_hat)))] = e
        proofs.append(proof)
    assert not any(accepts(case.statement, proof) for proof in proofs)  # real oracle
    programmed_oracle(monkeypatch, answers)
    assert all(accepts(case.statement, proof) for proof in proofs)


@pytest.mark.slow
def test_s6_a_verifier_guesses_where_a_card_went_no_better_than_chance():
    """300 proofs of 3-card shuffles; natural guessers for the slot of input card 0."""
    size, trials = 3, 300
    stream = Stream(b"guessing stream seed 00000000000", "guess")
    _, hs = sa.generators(GROUP, size)
    offsets = Case(size, "offsets").field_offsets()

    def item(proof: bytes, field: str, index: int) -> bytes:
        at = offsets[field][index]
        return proof[at : at + WIDTH]

    guessers = {
        "smallest s'": lambda proof: min(range(size), key=lambda i: item(proof, "s_prime", i)),
        "smallest ŝ": lambda proof: min(range(size), key=lambda i: item(proof, "s_hat", i)),
        "smallest ĉ": lambda proof: min(range(size), key=lambda i: item(proof, "c_hat", i)),
        "c_0 nearest h_i": lambda proof: min(
            range(size),
            key=lambda i: bin(dec(item(proof, "c", 0)) ^ dec(hs[i])).count("1"),
        ),
        "a byte of c_0": lambda proof: item(proof, "c", 0)[0] % size,
    }
    hits = dict.fromkeys(guessers, 0)
    for trial in range(trials):
        permutation = stream.permutation(size)
        key = random_scalar(stream)
        deck_out = tuple(GROUP.mul(key, CARDS[j]) for j in permutation)
        statement = sa.Statement(
            b"guess %d" % trial, tuple(CARDS[:size]), deck_out, GROUP.mul_base(key)
        )
        proof = sa.prove_shuffle(GROUP, statement, key, permutation, stream.read(32))
        where = permutation.index(0)
        for name, guess in guessers.items():
            hits[name] += guess(proof) == where
    # Chance is 100 of 300 with standard deviation 8.2: four deviations either side.
    assert all(67 <= count <= 133 for count in hits.values()), hits


# S7: special soundness ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [3, 10])
def test_s7_two_answers_to_one_commitment_give_back_the_key_and_the_permutation(monkeypatch, size):
    case = Case(size, "extractor")
    offsets = case.field_offsets()
    first = case.proof
    e1 = dec(first[offsets["e"][0] :][:WIDTH])
    e2 = (e1 + 12345) % Q
    real = sa.challenge
    monkeypatch.setattr(sa, "challenge", lambda *args: enc(e2))
    second = sa.prove_shuffle(GROUP, case.statement, case.key, case.permutation, case.secret)
    assert accepts(case.statement, second)  # under the reprogrammed oracle
    monkeypatch.setattr(sa, "challenge", real)
    assert first[: offsets["e"][0]] == second[: offsets["e"][0]]  # same c and ĉ
    inverse = pow(e2 - e1, -1, Q)

    def extracted(field: str, index: int) -> int:
        at = offsets[field][index]
        s1, s2 = dec(first[at : at + WIDTH]), dec(second[at : at + WIDTH])
        return (s1 - s2) * inverse % Q

    assert extracted("s", 3) == dec(case.key)
    commitments = [first[o : o + WIDTH] for o in offsets["c"]]
    u = [dec(x) for x in sa.matrix_challenges(GROUP, case.statement, commitments)]
    permutation = [u.index(extracted("s_prime", i)) for i in range(size)]
    assert permutation == case.permutation


# S8: the index convention ------------------------------------------------------------------------


def misread_proof(case: Case) -> bytes:
    nonces = sa.Nonces(GROUP, case.secret, case.statement)
    return prove_by_hand(case.statement, case.key, case.permutation, nonces, misread=True)


def test_s8_a_three_cycle_verifies_and_the_misread_convention_fails_on_it():
    case = Case(3, "s8", permutation=[1, 2, 0])
    assert accepts(case.statement, case.proof)
    assert not accepts(case.statement, misread_proof(case))
    transposition = Case(3, "s8", permutation=[1, 0, 2])
    assert accepts(transposition.statement, misread_proof(transposition))


# The quick audit's comparison -------------------------------------------------------------------


def test_a_verified_proof_is_recognised_as_the_provers_own_only_when_it_is():
    case = THREE_CYCLE_CASE
    args = (GROUP, case.statement, case.key, case.permutation)
    assert sa.is_own_proof(*args, case.secret, case.proof)
    other = sa.prove_shuffle(*args, b"another secret, another nonce!!!")
    assert accepts(case.statement, other)  # valid, but not the one the secret gives
    assert not sa.is_own_proof(*args, case.secret, other)
    assert not sa.is_own_proof(*args, case.secret, case.proof[:-32])
