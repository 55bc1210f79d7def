"""The shuffle argument: one non-interactive, linear-size proof that a deck was shuffled.

Statement (one shuffler, one epoch): the input deck D = (D_1..D_n), the output deck
D' = (D'_1..D'_n) and the shuffler's public key PK; the prover knows k and a permutation π with
PK = k·G and D'_i = k·D_π(i) for every i. This is Neff's "same secret power" shuffle.

The argument is the proof of a shuffle of Terelius and Wikström ("Proofs of restricted
shuffles", AFRICACRYPT 2010), in the form Haenni, Locher, Koenig and Dubuis give as pseudo-code
("Pseudo-code algorithms for verifiable re-encryption mix-nets", FC 2017 Voting workshop,
GenShuffleProof / CheckShuffleProof), with the re-encryption relation replaced by the linear one
above. Per line, with G the group's base point and H, h_1..h_n generators hashed to the group
(nobody knows a relation between them):

1. Commit to the permutation matrix: c_π(i) = r_π(i)·G + h_i.
2. Challenges u_1..u_n = hash(statement, c): drawn only once D', PK and c are fixed.
3. u'_i = u_π(i); commitment chain ĉ_0 = H, ĉ_i = r̂_i·G + u'_i·ĉ_(i−1) (commits to Π u').
4. A Schnorr-style proof of knowledge of (r̄, r̂, r̃, k, u', r̂_i) with
   Σ c_j − Σ h_i = r̄·G                       (every row of the matrix sums to one),
   ĉ_n − (Π u_j)·H = r̂·G                     (Π u'_i = Π u_j),
   Σ u_j·c_j = r̃·G + Σ u'_i·h_i              (u' is the committed matrix applied to u),
   Σ u'_i·D'_i = k·X̃, X̃ = Σ u_j·D_j          (the output deck under the same u),
   PK = k·G                                  (the same k: one nonce ω_4 and one response s_4
                                              serve both, which ties the deck's key to PK),
   ĉ_i = r̂_i·G + u'_i·ĉ_(i−1)                 (the chain uses the same u').
   Fiat–Shamir: e = hash(statement, c, ĉ, every commitment t); the proof carries e and the
   responses s = ω − e·witness, and the verifier recomputes each t from them.

The first three relations make the committed matrix a permutation matrix (Terelius and
Wikström's criterion: rows that sum to one, and the product of its linear forms in u equal to
Π u_j, checked at the random point u), so u' = π(u); the fourth then reads
Σ_i u_π(i)·(D'_i − k·D_π(i)) = 0, which for u drawn after D' forces every term to zero except
with probability (n+1)/q per hash query.

Soundness: special soundness (two accepting proofs with the same commitments and different e
give k and π, see the tests), so in the random-oracle model a false statement is accepted only
by breaking the discrete logarithm among G, H, h_i (the commitments' binding) or with
probability about Q·(n+1)/q for Q hash queries. On ristretto255 (q ≈ 2^252) that is the
strength of the group, about 2^-125 (`soundness_bits`). Honest-verifier zero-knowledge: the
proof shows nothing about π or k beyond the statement (a simulator that picks e first makes
accepting transcripts).

Nonces (r, r̂, ω, ω̂, ω') are derived from a seed-derived secret and a hash of the whole
statement, so two different statements never share one (with one ω_4 for two statements,
s_4 − s_4' = (e' − e)·k gives k away), and a rerun gives the same proof byte for byte.

Wire form: c_1..c_n ‖ ĉ_1..ĉ_n ‖ e ‖ s_1..s_4 ‖ ŝ_1..ŝ_n ‖ s'_1..s'_n, exactly 32·(4n+5) bytes.
The verifier checks every scalar canonical and non-zero before any use (libsodium ignores bit
255 and gives s and s + q the same product), validates every point by the multiplication it
needs anyway (the identity and every non-canonical encoding refused), and turns any refusal of
the group's on the prover's data into a rejection.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from protocol.kdf import Label, encode_label

from .errors import ProofError
from .group import Group, InvalidScalar, Point, Scalar
from .secrets import VERSION

DOMAIN = "bohnanza-p2p shuffle argument v1"


def proof_size(group: Group, size: int) -> int:
    """The exact length of a proof for a deck of `size` cards: 4n points and scalars, plus 5."""
    return group.scalar_size * (4 * size + 5)


def soundness_bits(group: Group, size: int) -> int:
    """-log2 of the chance that a false statement is accepted: the group's discrete-log strength,
    or the challenge's (n+1)/q if that were weaker."""
    return min(group.security_bits, (group.order // (size + 1)).bit_length() - 1)


def shuffle_context(game_id: bytes, players: int, epoch: int, seat: int, position: int) -> bytes:
    """Everything a proof is about besides its decks and key: no replay elsewhere (P11)."""
    return encode_label(VERSION, DOMAIN, game_id, players, epoch, seat, position)


@dataclass(frozen=True)
class Statement:
    """D' = π(k·D) and PK = k·G, in a context (game, epoch, seat, position)."""

    context: bytes
    deck_in: tuple[Point, ...]
    deck_out: tuple[Point, ...]
    public_key: Point

    @property
    def size(self) -> int:
        return len(self.deck_in)

    def digest(self) -> bytes:
        return _hash(
            "statement",
            self.context,
            self.size,
            b"".join(self.deck_in),
            b"".join(self.deck_out),
            self.public_key,
        )


class _Proof(NamedTuple):
    commitments: list[bytes]  # c_1..c_n
    chain: list[bytes]  # ĉ_1..ĉ_n
    challenge: bytes  # e
    responses: list[bytes]  # s_1..s_4
    chain_responses: list[bytes]  # ŝ_1..ŝ_n
    matrix_responses: list[bytes]  # s'_1..s'_n

    def to_bytes(self) -> bytes:
        return b"".join(
            [
                *self.commitments,
                *self.chain,
                self.challenge,
                *self.responses,
                *self.chain_responses,
                *self.matrix_responses,
            ]
        )

    @classmethod
    def parse(cls, group: Group, size: int, data: bytes) -> _Proof:
        width = group.scalar_size
        items = [data[at : at + width] for at in range(0, len(data), width)]
        n = size
        return cls(
            items[:n],
            items[n : 2 * n],
            items[2 * n],
            items[2 * n + 1 : 2 * n + 5],
            items[2 * n + 5 : 3 * n + 5],
            items[3 * n + 5 :],
        )


def _hash(*parts: Label) -> bytes:
    return hashlib.sha512(encode_label(DOMAIN, *parts)).digest()


@cache
def _generator(group: Group, index: int) -> Point:
    return group.hash_to_point(_hash("generator", index))


def generators(group: Group, size: int) -> tuple[Point, list[Point]]:
    """H and h_1..h_n, hashed to the group under the argument's own label (P7)."""
    return _generator(group, 0), [_generator(group, index) for index in range(1, size + 1)]


def matrix_challenges(
    group: Group, statement: Statement, commitments: Sequence[bytes]
) -> list[Scalar]:
    """u_1..u_n: a hash of the whole statement and the permutation commitment."""
    seed = _hash("u", statement.digest(), b"".join(commitments))
    return [
        group.scalar_from_hash(hashlib.sha512(encode_label(seed, index)).digest())
        for index in range(statement.size)
    ]


def challenge(
    group: Group,
    statement: Statement,
    commitments: Sequence[bytes],
    chain: Sequence[bytes],
    announcements: Sequence[bytes],
    chain_announcements: Sequence[bytes],
) -> Scalar:
    """e: a hash of the statement, both commitments and every t (Fiat–Shamir over it all)."""
    digest = _hash(
        "e",
        statement.digest(),
        b"".join(commitments),
        b"".join(chain),
        b"".join(announcements),
        b"".join(chain_announcements),
    )
    return group.scalar_from_hash(digest)


class Nonces:
    """The prover's nonces: from a seed-derived secret and the statement's hash (S1)."""

    def __init__(self, group: Group, secret: bytes, statement: Statement) -> None:
        self._group = group
        self._key = _hash("nonce key", secret, statement.digest())

    def __call__(self, name: str, index: int) -> Scalar:
        attempt = 0
        while True:  # a zero nonce is refused; the next attempt is as uniform
            wide = hashlib.sha512(encode_label(self._key, name, index, attempt)).digest()
            try:
                return self._group.scalar_from_wide(wide)
            except InvalidScalar:
                attempt += 1


def _one(group: Group) -> Scalar:
    return Scalar((1).to_bytes(group.scalar_size, "little"))


def _sum(group: Group, scalars: Sequence[Scalar]) -> Scalar:
    total = scalars[0]
    for scalar in scalars[1:]:
        total = group.scalar_add(total, scalar)
    return total


def _product(group: Group, scalars: Sequence[Scalar]) -> Scalar:
    total = scalars[0]
    for scalar in scalars[1:]:
        total = group.scalar_mul(total, scalar)
    return total


def _dot(group: Group, a: Sequence[Scalar], b: Sequence[Scalar]) -> Scalar:
    return _sum(group, [group.scalar_mul(x, y) for x, y in zip(a, b, strict=True)])


def _response(group: Group, nonce: Scalar, e: Scalar, witness: Scalar) -> bytes:
    """s = ω − e·w."""
    return group.scalar_sub(nonce, group.scalar_mul(e, witness))


def prove_shuffle(
    group: Group,
    statement: Statement,
    key: Scalar,
    permutation: Sequence[int],
    secret: bytes,
) -> bytes:
    """The proof that deck_out[i] = key·deck_in[permutation[i]] and public_key = key·G."""
    prover = _honest_prover(group, statement, key, permutation, secret)
    return prover.respond(prover.announce()).to_bytes()


def is_own_proof(
    group: Group,
    statement: Statement,
    key: Scalar,
    permutation: Sequence[int],
    secret: bytes,
    proof: bytes,
) -> bool:
    """Whether `proof`, which has verified, is byte for byte what `prove_shuffle` gives, at
    about a third of its cost (for the quick audit).

    It recomputes c and ĉ and the responses to the proof's own e, not the announcements. If
    those match, the verifier's recomputed announcements are the prover's own (the e-terms
    cancel, since the prover's relations hold), so the e that verified is the prover's e.
    """
    prover = _honest_prover(group, statement, key, permutation, secret)
    if len(proof) != proof_size(group, statement.size):
        return False
    e = _Proof.parse(group, statement.size, proof).challenge
    return prover.respond(Scalar(e)).to_bytes() == proof


def _honest_prover(
    group: Group,
    statement: Statement,
    key: Scalar,
    permutation: Sequence[int],
    secret: bytes,
) -> _Prover:
    """Step 1 (c, committing to the permutation) and what follows from it."""
    n = statement.size
    if n == 0 or len(statement.deck_out) != n or sorted(permutation) != list(range(n)):
        raise ValueError("the witness does not fit the statement")
    nonces = Nonces(group, secret, statement)
    _, hs = generators(group, n)
    randomness = [nonces("r", j) for j in range(n)]
    commitments: list[bytes] = [b""] * n
    for i, j in enumerate(permutation):
        commitments[j] = group.add(group.mul_base(randomness[j]), hs[i])
    u = matrix_challenges(group, statement, commitments)
    return _Prover(
        group,
        statement,
        commitments,
        [u[j] for j in permutation],
        _sum(group, randomness),
        _dot(group, randomness, u),
        key,
        nonces,
    )


def prove_committed(
    group: Group,
    statement: Statement,
    commitments: Sequence[bytes],
    u_permuted: Sequence[Scalar],
    commitment_sum_key: Scalar,
    commitment_weighted_key: Scalar,
    key: Scalar,
    nonces: Nonces,
) -> bytes:
    """Steps 3 to 6 once c is fixed: the chain, the t's, e and the responses.

    `commitment_sum_key` is r̄ with Σc − Σh = r̄·G, `commitment_weighted_key` is r̃ with
    Σ u_j·c_j = r̃·G + Σ u'_i·h_i, and `u_permuted` is u'.
    """
    prover = _Prover(
        group,
        statement,
        commitments,
        u_permuted,
        commitment_sum_key,
        commitment_weighted_key,
        key,
        nonces,
    )
    return prover.respond(prover.announce()).to_bytes()


class _Prover:
    """The prover once c is fixed: it builds the chain ĉ (step 3) at once."""

    def __init__(
        self,
        group: Group,
        statement: Statement,
        commitments: Sequence[bytes],
        u_permuted: Sequence[Scalar],
        commitment_sum_key: Scalar,
        commitment_weighted_key: Scalar,
        key: Scalar,
        nonces: Nonces,
    ) -> None:
        n = statement.size
        self.group, self.statement, self.nonces = group, statement, nonces
        self.commitments, self.u_permuted = list(commitments), list(u_permuted)
        base, _ = generators(group, n)
        self.chain_keys = [nonces("r hat", i) for i in range(n)]
        self.chain: list[bytes] = []
        self.previous: list[bytes] = [base]
        for i in range(n):
            link = group.add(
                group.mul_base(self.chain_keys[i]), group.mul(u_permuted[i], self.previous[i])
            )
            self.chain.append(link)
            self.previous.append(link)
        # v_i = Π_{j>i} u'_j, so that ĉ_n = (Σ r̂_i·v_i)·G + (Π u')·H.
        weights = [_one(group)] * n
        for i in range(n - 1, 0, -1):
            weights[i - 1] = group.scalar_mul(u_permuted[i], weights[i])
        self.witnesses = [
            commitment_sum_key,
            _dot(group, self.chain_keys, weights),
            commitment_weighted_key,
            key,
        ]
        self.omega = [nonces("omega", m) for m in range(4)]
        self.omega_hat = [nonces("omega hat", i) for i in range(n)]
        self.omega_prime = [nonces("omega prime", i) for i in range(n)]

    def announce(self) -> Scalar:
        """Steps 4 and 5: the announcements t and the challenge e they give."""
        group, statement, n = self.group, self.statement, self.statement.size
        _, hs = generators(group, n)
        u = matrix_challenges(group, statement, self.commitments)
        combined_in = group.mul_sum(u, statement.deck_in)
        omega, omega_prime = self.omega, self.omega_prime
        announcements = [
            group.mul_base(omega[0]),
            group.mul_base(omega[1]),
            group.add(group.mul_base(omega[2]), group.mul_sum(omega_prime, hs)),
            group.sub(
                group.mul_sum(omega_prime, statement.deck_out), group.mul(omega[3], combined_in)
            ),
            group.mul_base(omega[3]),
        ]
        chain_announcements = [
            group.add(
                group.mul_base(self.omega_hat[i]), group.mul(omega_prime[i], self.previous[i])
            )
            for i in range(n)
        ]
        return challenge(
            group, statement, self.commitments, self.chain, announcements, chain_announcements
        )

    def respond(self, e: Scalar) -> _Proof:
        """Step 6: the responses s = ω − e·w to the challenge e."""
        group = self.group
        return _Proof(
            self.commitments,
            self.chain,
            e,
            [_response(group, self.omega[m], e, self.witnesses[m]) for m in range(4)],
            [
                _response(group, o, e, w)
                for o, w in zip(self.omega_hat, self.chain_keys, strict=True)
            ],
            [
                _response(group, o, e, w)
                for o, w in zip(self.omega_prime, self.u_permuted, strict=True)
            ],
        )


def check_shuffle(group: Group, statement: Statement, proof: bytes) -> str | None:
    """Why `proof` does not prove `statement`, or None if it does (safe for a process pool)."""
    n = statement.size
    if n == 0 or len(statement.deck_out) != n:
        return "the decks of the statement differ in size"
    expected = proof_size(group, n)
    if len(proof) != expected:
        return f"the proof is {len(proof)} bytes, not {expected}"
    fields = _Proof.parse(group, n, proof)
    try:
        e = group.decode_scalar(fields.challenge)
        responses = [group.decode_scalar(s) for s in fields.responses]
        chain_responses = [group.decode_scalar(s) for s in fields.chain_responses]
        matrix_responses = [group.decode_scalar(s) for s in fields.matrix_responses]
    except InvalidScalar as error:
        return f"a scalar of the proof is refused: {error}"
    try:
        recomputed = _recompute_challenge(
            group, statement, fields, e, responses, chain_responses, matrix_responses
        )
    except ValueError:
        return "a point of the proof or the statement is not in the group, or is the identity"
    if recomputed != e:
        return "the proof does not verify"
    return None


def _recompute_challenge(
    group: Group,
    statement: Statement,
    fields: _Proof,
    e: Scalar,
    responses: Sequence[Scalar],
    chain_responses: Sequence[Scalar],
    matrix_responses: Sequence[Scalar],
) -> Scalar:
    n = statement.size
    base, hs = generators(group, n)
    commitments, chain = fields.commitments, fields.chain
    u = matrix_challenges(group, statement, commitments)
    # The multiplications come first: each validates its point (every c_j, ĉ_i, D_j, D'_i and
    # PK), so only group elements reach the additions below.
    weighted = group.mul_sum(u, commitments)
    combined_in = group.mul_sum(u, statement.deck_in)
    chain_times_e = [group.mul(e, link) for link in chain]
    key_times_e = group.mul(e, statement.public_key)
    combined_out = group.mul_sum(matrix_responses, statement.deck_out)
    previous = [base, *chain[:-1]]
    chain_announcements = [
        group.add(
            group.add(chain_times_e[i], group.mul_base(chain_responses[i])),
            group.mul(matrix_responses[i], previous[i]),
        )
        for i in range(n)
    ]
    row_sum = group.sub(_point_sum(group, commitments), _point_sum(group, hs))
    chain_end = group.sub(Point(chain[-1]), group.mul(_product(group, u), base))
    announcements = [
        group.add(group.mul(e, row_sum), group.mul_base(responses[0])),
        group.add(group.mul(e, chain_end), group.mul_base(responses[1])),
        group.add(
            group.add(group.mul(e, weighted), group.mul_base(responses[2])),
            group.mul_sum(matrix_responses, hs),
        ),
        group.sub(combined_out, group.mul(responses[3], combined_in)),
        group.add(key_times_e, group.mul_base(responses[3])),
    ]
    return challenge(group, statement, commitments, chain, announcements, chain_announcements)


def _point_sum(group: Group, points: Sequence[bytes]) -> Point:
    total = Point(points[0])
    for point in points[1:]:
        total = group.add(total, Point(point))
    return total


def verify_shuffle(
    group: Group, statement: Statement, proof: bytes, prover: int, step: str
) -> None:
    """Raise ProofError blaming `prover` unless `proof` proves `statement`."""
    reason = check_shuffle(group, statement, proof)
    if reason is not None:
        raise ProofError(f"shuffle proof: {reason}", blame=prover, step=step)
