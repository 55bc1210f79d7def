"""Errors of the shared deck: each names the seat to blame, the step and what failed.

The text is meant for people ("seat 2 cheated at epoch 0 round 4 (answers of seat 2): ...").
Nothing secret (seeds, keys, permutations) ever goes into an error.
"""

from __future__ import annotations


class DeckError(Exception):
    """A deck step failed. `blame` is the seat at fault; None when no seat can be blamed yet
    (an accounting failure without proofs, which only the audit can pin on someone)."""

    def __init__(self, reason: str, *, blame: int | None, step: str) -> None:
        self.reason = reason
        self.blame = blame
        self.step = step
        who = f"seat {blame}" if blame is not None else "unknown seat (run the audit)"
        super().__init__(f"{who} at {step}: {reason}")


class WireError(DeckError):
    """A message that is malformed: wrong types, sizes, counts or fields."""


class BadPoint(DeckError):
    """A received point that is not an element of the group, or is its identity, or a repeat."""


class BadKey(DeckError):
    """A published key that is not canonical, or does not match its public lock Y."""


class ProofError(DeckError):
    """A shuffle or relock proof that does not verify."""


class ScheduleError(DeckError):
    """A message missing where the schedule needs one, a part that is not due, a wrong round."""


class CommitmentError(DeckError):
    """A revealed value (seed, coin share) that does not match its commitment."""


class RefusedOpen(DeckError):
    """A request to open a slot that the public state does not allow (order, owner, twice)."""


class MissingKeys(DeckError):
    """An open that cannot proceed because some seats have not published their keys yet."""

    def __init__(self, reason: str, *, missing: tuple[int, ...], step: str) -> None:
        self.missing = missing
        super().__init__(reason, blame=missing[0] if missing else None, step=step)


class FalseDispute(DeckError):
    """A holder claimed its slot opens to no valid card, and it does."""


class AccountingError(DeckError):
    """An open that does not add up: unknown card, a card twice, a slot with two cards."""


class ReplayMismatch(DeckError):
    """A message that is not what its author's revealed seed gives (found by the audit)."""


class AuditError(DeckError):
    """The audit found cheating; `findings` lists every finding in transcript order."""

    def __init__(self, findings: tuple[DeckError, ...]) -> None:
        self.findings = findings
        first = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        super().__init__(first.reason + more, blame=first.blame, step=first.step)
