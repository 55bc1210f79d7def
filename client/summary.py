"""The result of a game as one seat saw it: a summary for machines, and a line for people.

`bean-client bot`, `resume --bot` and the test drivers end with these; `play --no-human`
compares the summaries of every seat.
"""

from __future__ import annotations

import json
from typing import Any

from client.game import Outcome, PeerGame, StepKind
from protocol.rules import state_hash


def summarize(game: PeerGame, outcome: Outcome) -> dict[str, Any]:
    """The result as one seat saw it (what `play --no-human` compares across seats)."""

    def milliseconds(kind: StepKind) -> list[float]:
        """How long each step of this kind took here, in order."""
        return [round(t.seconds * 1000, 3) for t in game.timings if t.kind is kind]

    rules = game.lockstep.rules
    final, cheat = outcome.final, outcome.cheat
    return {
        "name": game.names[game.seat],
        "seat": game.seat,
        "game": game.table.identity.hex(),
        "table_code": game.table.code,
        "names": list(game.names),
        "steps": game.step,
        "final_state": state_hash(rules).hex() if final is not None and rules else None,
        "scores": list(final.result.scores) if final else None,
        "winners": list(final.result.winners) if final else None,
        "agreed": final.agreed if final else False,
        "audit": list(final.audit_findings if final else outcome.audit_findings),
        "cheat": None
        if cheat is None
        else {
            "seat": cheat.seat,
            "seats": list(cheat.seats),
            "step": cheat.step,
            "reason": cheat.reason,
        },
        "gone": list(outcome.gone),
        "ended_by": outcome.ended_by,
        "disagreeing": list(final.disagreeing) if final else [],
        "ok": bool(final and final.agreed and final.audit_passed),
        "game_s": round(game.ended_at - game.started_at, 3),
        "frames_sent": game.mesh.sent_frames,
        "dropped": dict(game.dropped),
        "bytes_sent": game.mesh.sent_bytes,
        "bytes_sent_to": [game.mesh.sent_bytes_to[seat] for seat in range(game.players)],
        "step_ms": milliseconds(StepKind.GAME),
        "deck_round_ms": milliseconds(StepKind.DECK_ROUND),
        "audit_step_ms": milliseconds(StepKind.AUDIT),
    }


def describe(summary: dict[str, Any]) -> str:
    who = f"{summary['name']} (seat {summary['seat']})"
    names = summary["names"]
    audit = "passed" if not summary["audit"] else "FAILED: " + "; ".join(summary["audit"])
    if summary["cheat"]:
        cheat = summary["cheat"]
        blamed = " and ".join(names[seat] for seat in cheat["seats"]) or "the deal"
        seeds = f"; audit of the revealed seeds: {audit}" if cheat["seat"] is None else ""
        stopped = f"the game stopped at step {cheat['step']}: {blamed} {cheat['reason']}"
        return f"{who}: {stopped}{seeds}"
    if summary["gone"]:
        gone = " and ".join(names[seat] for seat in summary["gone"])
        return f"{who}: the game ended without {gone}, gone for good; audit {audit}"
    if summary["ended_by"] is not None:
        return f"{who}: {names[summary['ended_by']]}'s client ended the game; audit {audit}"
    if summary["scores"] is None:
        return f"{who}: the game ended without a result"
    scores = ", ".join(f"{n} {s}" for n, s in zip(names, summary["scores"], strict=True))
    disagreeing = " and ".join(names[seat] for seat in summary["disagreeing"])
    agreed = (
        "all peers agree"
        if summary["agreed"]
        else f"{disagreeing} reported another final state than this seat's"
    )
    return f"{who}: final scores {scores}; {agreed}; audit {audit}"


def report_refusal(name: str, refused: Exception, as_json: bool) -> int:
    """A table that did not start: the reason (and, for machines, a summary saying so)."""
    print(f"{name}: the game did not start: {refused}", flush=True)
    if as_json:
        print(json.dumps({"name": name, "ok": False, "refused": str(refused)}), flush=True)
    return 1


def report(game: PeerGame, outcome: Outcome, as_json: bool) -> int:
    """Print how the game ended (and its summary as one JSON line); the exit status."""
    summary = summarize(game, outcome)
    print(describe(summary), flush=True)
    if as_json:
        print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1
