"""Where a user's key lives: `<config dir>/bohnanza-p2p/identity/<profile>.key`, mode 0600.

The config dir is $XDG_CONFIG_HOME (else ~/.config) on Linux and other Unixes,
~/Library/Application Support on macOS and %APPDATA% on Windows. A profile (or a whole
directory) per client lets several clients, bots and tests on one machine have their own keys.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from protocol.identity import Identity, IdentityError

APP_DIR = "bohnanza-p2p"
DEFAULT_PROFILE = "default"
_PROFILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def config_home(environ: Mapping[str, str] = os.environ) -> Path:
    """The platform's directory for per-user configuration."""
    if sys.platform == "win32" and environ.get("APPDATA"):
        return Path(environ["APPDATA"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    xdg = environ.get("XDG_CONFIG_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".config"


def identity_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return config_home(environ) / APP_DIR / "identity"


def key_path(profile: str = DEFAULT_PROFILE, directory: Path | None = None) -> Path:
    """The key file of `profile`, in `directory` (default: the platform's identity dir)."""
    if not _PROFILE.fullmatch(profile):
        raise IdentityError(
            f"a profile name is 1 to 64 letters, digits, '_', '.' or '-', not {profile!r}"
        )
    return (directory or identity_dir()) / f"{profile}.key"


def load_or_create(profile: str = DEFAULT_PROFILE, directory: Path | None = None) -> Identity:
    """The profile's identity, created (0600, in a 0700 directory) on first use."""
    return load_or_create_file(key_path(profile, directory))


def lobby_key_path() -> Path:
    """Where `bean-lobby` keeps its own key unless told otherwise (`--key-file`)."""
    return config_home() / APP_DIR / "lobby" / "lobby.key"


def load_or_create_file(path: Path) -> Identity:
    """The identity in this key file, created (0600, in a 0700 directory) if it is missing.

    Creation is atomic: the key is written to a private temporary file and linked into place,
    so two processes starting at once end up with the same key, never a half-written one.
    """
    try:
        return _load(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    identity = Identity.generate()
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(identity.to_pem())
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:  # another process created it first: use theirs
            return _load(path)
    finally:
        temporary.unlink(missing_ok=True)
    return identity


def _load(path: Path) -> Identity:
    mode = stat.S_IMODE(path.stat().st_mode)
    if sys.platform != "win32" and mode & 0o077:
        raise IdentityError(
            f"the key file {path} can be read by other users (mode {mode:04o}); "
            f"run: chmod 600 {path}"
        )
    try:
        return Identity.from_pem(path.read_bytes())
    except IdentityError as error:
        raise IdentityError(f"the key file {path} is unusable: {error}") from None


def find_identity(public_key: bytes, directory: Path | None = None) -> Identity | None:
    """The user's identity whose public key this is, among all its profiles (a game file
    names the key its seat played with, not the profile)."""
    found = _find(public_key, directory)
    return found[1] if found is not None else None


def find_profile(public_key: bytes, directory: Path | None = None) -> str | None:
    """The name of the user's profile whose key this is (a bot's: NAME-botN)."""
    found = _find(public_key, directory)
    return found[0] if found is not None else None


def _find(public_key: bytes, directory: Path | None) -> tuple[str, Identity] | None:
    folder = directory or identity_dir()
    for path in sorted(folder.glob("*.key")):
        try:
            identity = _load(path)
        except (IdentityError, OSError):
            continue
        if identity.public_key == public_key:
            return path.stem, identity
    return None
