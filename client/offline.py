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
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from prompt_toolkit.formatted_text import FormattedText, to_plain_text

from client.gamefile import GameFile, GameFileError
from client.screen import (
    PlayerView,
    ascii_punctuation,
    colour_wanted,
    plain_wanted,
    render_event,
    render_story,
    render_table,
    show,
    story_lines,
)
from client.story import GameStory
from protocol.blame import Cheat
from protocol.cards import Card
from protocol.deck import AuditError, audit
from protocol.ending import seats_in
from protocol.identity import SignatureError, Verifier
from protocol.lockstep import GameConfig, Lockstep, StepReport
from protocol.messages import MessageError
from protocol.peer_messages import Ended, EndVote, StepFrame
from protocol.rules import Phase, Slot, State


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


def outcome_line(saved: GameFile, lockstep: Lockstep) -> str:
    """How the game ended, in one line that `audit`, `replay` and `replay --summary` all
    print the same: from the replayed steps where they reach the end, otherwise from the
    ending the file's seat recorded (each kind of docs/gamefile.md), or its absence."""
    names = [seat.name for seat in saved.roster.seats]
    rules = lockstep.rules
    at = f"turn {rules.turn}" if rules is not None else "the deal"
    at = f"{at} (step {len(saved.steps)})"
    end, final = saved.end, lockstep.final
    if final is not None:
        scores = ", ".join(f"{n} {s}" for n, s in zip(names, final.result.scores, strict=True))
        won = _listed(names[seat] for seat in final.result.winners)
        words = f"played to the end, over {at}: {scores}; {won} won"
        if not final.agreed:
            words += f"; {_listed(names[s] for s in final.disagreeing)} reported another end"
        return f"Outcome: {words}."
    file_of = f"{names[saved.seat]}'s client"
    if end is None and saved.left:
        return f"Outcome: not over: {names[saved.seat]} left at {at}, and may resume the game."
    if end is None:
        return (
            f"Outcome: not over: the file stops at {at} with no ending: {file_of} stopped in "
            "the middle of the game (a crash), or plays it still."
        )
    audited = True  # whether the seats revealed their seeds, for an audit of what was played
    if end["kind"] == "abandoned":
        gone = _listed(_name(names, seat) for seat in end.get("gone", ()))
        voted = _votes(saved, end)
        words = f"ended early at {at}: {voted} to end it without {gone} (gone for good)"
    elif end["kind"] == "stopped" and end.get("seat") is not None:
        blamed = _listed(_name(names, seat) for seat in [end["seat"], *end.get("also", ())])
        reason = _named(names, str(end.get("reason", "cheated")))
        words = f"stopped at {at}: " + (
            reason if reason.startswith(blamed) else f"{blamed} {reason}"
        )
        audited = False
    elif end["kind"] == "stopped" and "step" in end:
        words = f"stopped at {at}: the deal broke ({end.get('reason', 'no reason given')})"
    elif end["kind"] == "stopped":
        words = f"stopped at {at}: {file_of} failed ({end.get('reason', 'no reason given')})"
    elif end["kind"] == "ended_by":
        followed, revealed = _followed(names, end)
        words = f"ended early at {at}, as {followed}"
        audited = revealed
    else:  # an "end" record the replayed steps do not reach
        words = f"no end: {file_of} recorded an end, but its steps stop at {at}"
    findings = end.get("audit")
    if findings is not None and audited:
        words += "; the audit of what was played " + (
            "passed" if not findings else "found: " + _named(names, "; ".join(findings))
        )
    return f"Outcome: {words}; no winner."


def _named(names: list[str], text: str) -> str:
    """A reason or finding with its seat numbers (from 0) turned into names."""

    return re.sub(r"\bseat (\d+)", lambda found: _name(names, int(found.group(1))), text)


def _name(names: list[str], seat: object) -> str:
    """A seat's name; a seat number the roster does not have (a damaged record) as it is."""
    return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else f"seat {seat}"


def _listed(items: Iterable[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    items = list(items)
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _votes(saved: GameFile, end: dict[str, Any]) -> str:
    """Who voted, as the signatures of the recorded votes say (the file's word is not
    taken for it)."""
    names = [seat.name for seat in saved.roster.seats]
    voters = []
    for wire in end.get("votes", ()):
        try:
            vote = EndVote.from_wire(wire)
            vote.verify(Verifier(saved.roster.seats[vote.seat].public_key))
        except (MessageError, SignatureError, IndexError):
            return "the others voted (a recorded vote does not hold)"
        if vote.game != saved.table.identity or vote.step != end.get("step"):
            return "the others voted (a recorded vote is for another game or step)"
        voters.append(_name(names, vote.seat))
    return f"{_listed(voters)} voted" if voters else "the others voted"


def _followed(names: list[str], end: dict[str, Any]) -> tuple[str, bool]:
    """ "bot1 ended it (a vote without bot2)": the ending this seat followed; and whether it
    revealed its seed (then this seat did too, for an audit of what was played)."""
    who = _name(names, end.get("seat"))
    why = str(end.get("why"))
    try:
        ended = Ended.from_wire(end["ended"])
    except (MessageError, KeyError):
        ended = None
    gone = _listed(_name(names, seat) for seat in seats_in(ended.gone)) if ended else ""
    reason = {
        "vote": f"a vote without {gone or 'a seat gone'}",
        "dispute": "the deal broke",
        "stopped": "it stopped the game for a cheat",
    }.get(why, why)
    return f"{who} ended it ({reason})", ended is not None and ended.seed is not None


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
    print(outcome_line(saved, lockstep))
    final = lockstep.final
    if final is None or lockstep.rules is None:
        print("every recorded step holds, but the game did not end: no full audit")
        return 1
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


def run_replay(path: Path, plain: bool = False) -> int:
    """Turn by turn, as the file's seat saw it; each turn's table waits until the seat has
    opened the cards it drew (their keys come in the steps after), so that its hand shows.
    `plain` (or no terminal): no colour, and plain ASCII punctuation, as plain mode."""
    saved = GameFile.read(path)
    names = [seat.name for seat in saved.roster.seats]
    emit = _shower(plain_wanted(plain))
    turn = 0
    me = names[saved.seat]
    print(f'The game as {me} saw it, from its file ("you" below is {me}).')
    known: dict[Slot, Card] = {}  # every hand card this seat has opened so far
    table: State | None = None  # the state at the start of the turn, its table not shown yet
    held_back: list[FormattedText] = []  # what happened since, shown after that table

    def show_table() -> None:
        nonlocal table
        if table is not None:
            emit(render_table(PlayerView(table, saved.seat, known, names)))
            table = None
        for text in held_back:
            emit(text)
        held_back.clear()

    def shown(lockstep: Lockstep, report: StepReport) -> None:
        nonlocal turn, table
        rules = lockstep.rules
        if rules is None:
            return
        known.update(lockstep.hand)
        if table is not None and all(
            held.card is not None or held.slot in known for held in table.players[saved.seat].hand
        ):
            show_table()
        if rules.turn != turn and rules.phase is not Phase.OVER:
            show_table()
            turn = rules.turn
            emit(FormattedText([("bold", f"\n--- turn {turn}: {names[rules.active]} ---")]))
            table = rules
        for applied in report.applied:
            text = render_event(
                applied.before, applied.seat, applied.action, applied.after, names, lockstep.seat
            )
            if text and table is not None:
                held_back.append(text)
            elif text:
                emit(text)

    try:
        lockstep = replay(saved, shown)
    except (Cheat, SignatureError) as problem:
        show_table()
        print(f"the game stops here: {problem}")
        return 1
    show_table()
    print(outcome_line(saved, lockstep))
    return 0


def _shower(plain: bool) -> Callable[[FormattedText], None]:
    """How `replay` shows text: styled on a terminal, or plain lines in ASCII (a screen
    reader reads "·" or "…" aloud by name)."""
    if plain:
        return lambda text: print(ascii_punctuation(to_plain_text(text)), flush=True)
    colour = colour_wanted()
    return lambda text: show(text, colour)


def run_summary(path: Path, plain: bool) -> int:
    """The game's story, from its file: every step replayed (and checked) as in `replay`.
    Nobody in it is "you": whoever reads a file, its seat is named."""
    saved = GameFile.read(path)
    names = [seat.name for seat in saved.roster.seats]
    story = GameStory()
    try:
        lockstep = replay(saved, lambda lockstep, report: story.add(report))
    except (Cheat, SignatureError) as problem:
        print(f"the game stops here: {problem}")
        return 1
    print(outcome_line(saved, lockstep))
    if plain_wanted(plain):
        print("\n".join(story_lines(story, names, None)))
    else:
        show(render_story(story, names, None), colour_wanted())
    return 0


def run_offline(args: argparse.Namespace) -> int:
    path = Path(args.gamefile)
    if not path.is_file():
        raise GameFileError(f"there is no game file {path}")
    try:
        if args.command == "replay" and args.summary:
            return run_summary(path, args.plain)
        return run_audit(path) if args.command == "audit" else run_replay(path, args.plain)
    except BrokenPipeError:  # `bean-client replay F | head`
        sys.stderr.close()
        return 0
