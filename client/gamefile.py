"""The game file: one seat's signed transcript of a game and its secret seed, appended as the
game goes (format in docs/gamefile.md).

A client that crashes comes back from it (`bean-client resume`); anyone can audit or replay a
finished game from it. It holds the seat's seed, from which every secret of that seat derives,
so it is created readable by its owner only. Each record is a 4-byte big-endian length and a
msgpack map; what must survive a crash is synced before it matters, and a torn last record (a
crash mid-write) is ignored when reading.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from protocol.messages import GameStart
from protocol.table import AgreedTable

#: 5: as 3, for protocol 5 (the shuffle argument travels with the shuffler's relock). 4: as
#: 3, for protocol 4 (the argument travels with the shuffle). 3: every message of this seat
#: recorded and synced before it is sent. 2: only those with moves, and `passive_until`
#: records; 1: as 3, unsynced. Formats 1 to 4 hold games of older deck protocols (1 to 3
#: proved by cut-and-choose), which this version can no longer check or replay.
FORMAT = 5
OLDER = (1, 2, 3, 4)
_PREFIX = struct.Struct(">I")
MAX_RECORD = 64 * 1024 * 1024

Frame = tuple[bytes, bytes]  # a signed step message: (payload, signature)
#: Records that end a game for good: played to the end, stopped by a cheat or a broken deal,
#: ended by a vote without seats gone for good, or ended following another seat's ending. Each
#: is written and synced before this seat reveals its seed; an "audit" record may follow.
ENDINGS = ("end", "stopped", "abandoned", "ended_by")


def data_home() -> Path:
    """Where games are kept: $XDG_DATA_HOME/bohnanza-p2p (~/.local/share/bohnanza-p2p)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "bohnanza-p2p"


def games_dir() -> Path:
    return data_home() / "games"


def game_path(game_id: bytes, seat: int, directory: Path | None = None) -> Path:
    return (directory or games_dir()) / f"{game_id.hex()}-seat{seat}.game"


class GameFileError(ValueError):
    """A game file that cannot be read as one."""


class GameFileWriter:
    """Appends records; `sync` makes everything written so far durable."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    @classmethod
    def create(
        cls,
        path: Path,
        table: AgreedTable,
        seed: bytes,
        listen_host: str,
        relay: tuple[str, int] | None = None,
    ) -> GameFileWriter:
        """`relay`: the lobby whose relay carries the links that cannot be made directly
        (a resumed game uses it again)."""
        if path.exists():
            raise GameFileError(f"{path} already exists; resume the game from it instead")
        writer = cls(path)
        writer.write(
            {
                "kind": "header",
                "format": FORMAT,
                "roster": table.roster.to_wire(),
                "seat": table.seat,
                "contributions": list(table.contributions),  # the game's identity derives
                # from the roster and these (protocol.table)
                "seed": seed,
                "listen_host": listen_host,
                **({} if relay is None else {"relay": list(relay)}),
            }
        )
        writer.sync()
        return writer

    def write(self, record: dict[str, Any]) -> None:
        packed: bytes = msgpack.packb(record, use_bin_type=True)
        os.write(self._fd, _PREFIX.pack(len(packed)) + packed)

    def own(self, step: int, frame: Frame) -> None:
        """This seat's signed message for a step, synced before it is sent (and with it the
        steps recorded before it): a client that crashes and resumes sends that same
        message again, never a different one (which would be equivocation)."""
        self.write({"kind": "own", "step": step, "frame": list(frame)})
        self.sync()

    def step(self, step: int, frames: Sequence[Frame]) -> None:
        """Every seat's signed message of one step, in seat order. Not synced by itself: this
        seat's next message syncs it before it leaves, and a step lost in a crash is fetched
        again from the peers (every message in it is signed)."""
        self.write({"kind": "step", "step": step, "frames": [list(f) for f in frames]})

    def sync(self) -> None:
        os.fdatasync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@dataclass
class GameFile:
    """What a game file holds."""

    path: Path
    roster: GameStart
    seat: int
    seed: bytes
    listen_host: str  # where this seat listened for its peers (on the roster's port)
    contributions: tuple[bytes, ...] = ()
    steps: list[list[Frame]] = field(default_factory=list)
    own: dict[int, Frame] = field(default_factory=dict)  # its messages, by step
    end: dict[str, Any] | None = None  # the last of the ENDINGS records, with its audit
    left: bool = False  # the player left, and no step was played since (docs/gamefile.md)
    whole: int = 0  # bytes up to the end of the last whole record
    relay: tuple[str, int] | None = None  # the lobby's relay (host, port), if the game used one

    @property
    def finished(self) -> bool:
        return self.end is not None

    @property
    def table(self) -> AgreedTable:
        """The table this seat agreed on (its identity names the game)."""
        return AgreedTable(self.roster, self.seat, self.contributions)

    @classmethod
    def read(cls, path: Path) -> GameFile:
        records = iter(_records(path.read_bytes()))
        header, whole = next(records, (None, 0))
        if header is not None and header.get("kind") == "header" and header.get("format") in OLDER:
            raise GameFileError(
                f"{path} is a game from an older protocol of bohnanza-p2p (game file format "
                f"{header['format']}); this version reads "
                f"format {FORMAT} only, so it cannot audit, replay or resume that game"
            )
        if header is None or header.get("kind") != "header" or header.get("format") != FORMAT:
            raise GameFileError(f"{path} is not a bohnanza-p2p game file (format {FORMAT})")
        try:
            roster = GameStart.from_wire(header["roster"])
            contributions = tuple(bytes(c) for c in header["contributions"])
            game = cls(
                path, roster, header["seat"], header["seed"], header["listen_host"], contributions
            )
            if "relay" in header:
                host, port = header["relay"]
                game.relay = (str(host), int(port))
        except (KeyError, ValueError, TypeError) as error:
            raise GameFileError(f"{path} has a damaged header: {error}") from None
        game.whole = whole
        for record, end in records:
            game.whole = end
            if record.get("kind") == "step":
                if record.get("step") != len(game.steps):
                    raise GameFileError(f"{path}: step {record.get('step')} is out of order")
                game.steps.append([(bytes(p), bytes(s)) for p, s in record["frames"]])
                game.left = False  # resumed since
            elif record.get("kind") == "own":
                payload, signature = record["frame"]
                game.own[record["step"]] = (bytes(payload), bytes(signature))
            elif record.get("kind") == "left":
                game.left = True
            elif record.get("kind") in ENDINGS:
                game.end = record
            elif record.get("kind") == "audit" and game.end is not None:
                game.end = {**game.end, "audit": record.get("findings")}
        return game

    def writer(self) -> GameFileWriter:
        """To append to this file again: anything after its last whole record (torn by a
        crash) is cut first, so that what is appended can be read back."""
        os.truncate(self.path, self.whole)
        return GameFileWriter(self.path)


def _records(data: bytes) -> Iterator[tuple[dict[str, Any], int]]:
    """Each whole record, with the offset just after it."""
    offset = 0
    while offset + _PREFIX.size <= len(data):
        (length,) = _PREFIX.unpack_from(data, offset)
        start, end = offset + _PREFIX.size, offset + _PREFIX.size + length
        if length > MAX_RECORD or end > len(data):
            return  # a torn last record: the crash happened while writing it
        try:
            record = msgpack.unpackb(data[start:end], raw=False, strict_map_key=True)
        except Exception:  # a damaged record ends what can be trusted
            return
        if not isinstance(record, dict):
            return
        yield record, end
        offset = end


def unfinished_games(directory: Path | None = None) -> list[GameFile]:
    """Games in the games directory that have not ended, newest first."""
    found = []
    folder = directory or games_dir()
    for path in sorted(folder.glob("*.game"), key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            game = GameFile.read(path)
        except (GameFileError, OSError):
            continue
        if not game.finished:
            found.append(game)
    return found
