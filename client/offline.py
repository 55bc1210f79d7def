"""bean-client audit / replay: a game judged or shown from one seat's game file, offline.

`audit` checks every signed message against the roster, replays every step through the
lockstep (every rule, every deck check), and, for a finished game, runs the full deck audit
from the seeds revealed at the end: it trusts nothing the file's owner saw or concluded.
`replay` shows the game turn by turn, as that seat saw it; `replay --summary` only its story
(each player's coins and harvests, and their coins over the turns: client.story), as the
screen shows it at the end of a game (plain lines with --plain or when not on a terminal).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from prompt_toolkit.formatted_text import FormattedText

from client.gamefile import GameFile, GameFileError
from client.screen import (
    PlayerView,
    colour_wanted,
    plain_wanted,
    render_event,
    render_story,
    render_table,
    show,
    story_lines,
)
from client.story import GameStory
from protocol.deck import AuditError, audit
from protocol.identity import SignatureError, Verifier
from protocol.lockstep import Cheat, GameConfig, Lockstep, StepReport
from protocol.messages import MessageError
from protocol.peer_messages import StepFrame
from protocol.rules import Phase


def replay(
    saved: GameFile, each_step: Callable[[Lockstep, StepReport], None] | None = None
) -> Lockstep:
    """Every recorded step, signatures checked, through a fresh lockstep; raises Cheat or
    SignatureError at the first step that does not hold."""
    lockstep = Lockstep(
        GameConfig.from_roster(saved.roster, saved.table.identity), saved.seat, saved.seed
    )
    verifiers = [Verifier(seat.public_key) for seat in saved.roster.seats]
    game = saved.table.identity
    for step, frames in enumerate(saved.steps):
        for seat, (payload, signature) in enumerate(frames):
            try:
                frame = StepFrame(game, step, seat, payload, signature)
                frame.verify(verifiers[seat])
                frame.read()
            except (MessageError, SignatureError) as problem:
                raise SignatureError(f"step {step}, seat {seat}: {problem}") from None
        report = lockstep.play({seat: frame[0] for seat, frame in enumerate(frames)})
        if each_step is not None:
            each_step(lockstep, report)
    return lockstep


def run_audit(path: Path) -> int:
    saved = GameFile.read(path)
    names = [seat.name for seat in saved.roster.seats]
    print(
        f"game {saved.table.identity.hex()} (table code {saved.table.code}): "
        f"{', '.join(names)}; {len(saved.steps)} steps"
    )
    try:
        lockstep = replay(saved)
    except (Cheat, SignatureError) as problem:
        print(f"the game does not hold: {problem}")
        return 1
    final = lockstep.final
    if final is None or lockstep.rules is None:
        why = saved.end["reason"] if saved.end else "the file ends before the game did"
        print(f"every recorded step holds, but the game did not end ({why}): no full audit")
        return 1
    scores = ", ".join(f"{n} {s}" for n, s in zip(names, final.result.scores, strict=True))
    print(f"final scores: {scores}; winners: {', '.join(names[w] for w in final.result.winners)}")
    print(f"every player reported the same final state: {'yes' if final.agreed else 'NO'}")
    try:
        audit(
            GameConfig.from_roster(saved.roster, saved.table.identity).deck,
            lockstep.rules.epochs,
            lockstep.transcript,
            lockstep.seeds,
        )
    except AuditError as error:
        for finding in error.findings:
            who = "the deal" if finding.blame is None else names[finding.blame]
            print(f"audit: {who}: {finding.reason} ({finding.step})")
        return 1
    print("full audit from the revealed seeds: passed")
    return 0 if final.agreed else 1


def run_replay(path: Path) -> int:
    saved = GameFile.read(path)
    names = [seat.name for seat in saved.roster.seats]
    colour = colour_wanted()
    turn = 0

    def shown(lockstep: Lockstep, report: StepReport) -> None:
        nonlocal turn
        rules = lockstep.rules
        if rules is None:
            return
        if rules.turn != turn and rules.phase is not Phase.OVER:
            turn = rules.turn
            show(FormattedText([("bold", f"\n--- turn {turn}: {names[rules.active]} ---")]), colour)
            show(render_table(PlayerView(rules, lockstep.seat, lockstep.hand, names)), colour)
        for applied in report.applied:
            text = render_event(
                applied.before, applied.seat, applied.action, applied.after, names, lockstep.seat
            )
            if text:
                show(text, colour)

    try:
        replay(saved, shown)
    except (Cheat, SignatureError) as problem:
        print(f"the game stops here: {problem}")
        return 1
    return 0


def run_summary(path: Path, plain: bool) -> int:
    """The game's story, from its file: every step replayed (and checked) as in `replay`."""
    saved = GameFile.read(path)
    names = [seat.name for seat in saved.roster.seats]
    story = GameStory()
    try:
        replay(saved, lambda lockstep, report: story.add(report))
    except (Cheat, SignatureError) as problem:
        print(f"the game stops here: {problem}")
        return 1
    if story.result is None:
        print(f"the game did not end (at turn {story.turns + 1}); its story so far:")
    if plain_wanted(plain):
        print("\n".join(story_lines(story, names, saved.seat)))
    else:
        show(render_story(story, names, saved.seat), colour_wanted())
    return 0


def run_offline(args: argparse.Namespace) -> int:
    path = Path(args.gamefile)
    if not path.is_file():
        raise GameFileError(f"there is no game file {path}")
    try:
        if args.command == "replay" and args.summary:
            return run_summary(path, args.plain)
        return run_audit(path) if args.command == "audit" else run_replay(path)
    except BrokenPipeError:  # `bean-client replay F | head`
        sys.stderr.close()
        return 0
