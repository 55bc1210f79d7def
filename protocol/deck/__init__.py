"""The jointly shuffled deck: commutative locks on a prime-order group, proofs, and the audit.

What it offers (import these from `protocol.deck`, never from its modules):

- `DeckPlayer`: one seat's side of the deck, with the secrets derived from its committed seed;
  `audit`: anyone's check of a whole transcript once the seeds are revealed;
- `DeckConfig`, `epoch_rounds` and `parts_due`: a game's deck parameters and its fixed round
  schedule;
- the deck's wire messages (`DeckMessage`, `EpochMessage`, `Keys`, `SeedReveal`) and
  `decode_message`, which names the author of a malformed one;
- `Opening`, the keys a step owes for some slots, and the errors (`DeckError`, `AuditError`),
  each naming the seat to blame;
- `RISTRETTO255`, `multiply_all`, `BACKGROUND_WORK` and `soundness_bits`: the group, its bulk
  work, the work a seat runs beside the deck's chain (proofs it checks, its own shuffle
  argument: the client gives it threads of its own) and the shuffle proof's strength.

Inside: `player` (a seat's secrets and messages), `public` (every check made from public
data), `shuffle_argument` (the shuffle proof), `proofs` (the relock proof and bulk work),
`schedule`, `secrets` (the KDF labels of every secret), `messages`, `errors`, and `group`
(ristretto255 through rbcl's libsodium). The protocol and its pitfalls: docs/deck.md and
../shared/CRYPTO.md.

It must never import the rules, the lockstep or anything with I/O: the deck knows card ids and
slots, not beans or turns. Only `protocol.kdf` is shared with the rest of protocol/.
"""

from .errors import AuditError, DeckError
from .group import RISTRETTO255
from .messages import DeckMessage, EpochMessage, Keys, SeedReveal, decode_message
from .player import DeckPlayer, audit
from .proofs import multiply_all
from .public import BACKGROUND_WORK, Opening
from .schedule import DeckConfig, epoch_rounds, parts_due
from .shuffle_argument import soundness_bits

__all__ = [
    "BACKGROUND_WORK",
    "RISTRETTO255",
    "AuditError",
    "DeckConfig",
    "DeckError",
    "DeckMessage",
    "DeckPlayer",
    "EpochMessage",
    "Keys",
    "Opening",
    "SeedReveal",
    "audit",
    "decode_message",
    "epoch_rounds",
    "multiply_all",
    "parts_due",
    "soundness_bits",
]
