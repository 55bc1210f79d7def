"""bean-client audit and replay on real game files: a finished game audits clean, a file with
one byte changed or cut short does not, and the replay shows every turn."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from client.gamefile import GameFile, GameFileWriter
from tests.processes import BIN, isolated_env, results, running_lobby, start_bot


@pytest.fixture(scope="module")
def finished_game(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    tmp_path = tmp_path_factory.mktemp("offline")
    env = isolated_env(tmp_path)
    with running_lobby(env) as port:
        bots = [
            start_bot(
                port,
                3,
                f"bot{n}",
                env,
                tmp_path,
            )
            for n in range(3)
        ]
        found = results(bots, timeout=240, tmp_path=tmp_path)
    assert all(r["ok"] for r in found)
    files = sorted(Path(env["XDG_DATA_HOME"]).glob("**/*.game"))
    return files[0], env


def bean_client(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "bean-client"), *args], env=env, capture_output=True, text=True, timeout=300
    )


def rewritten(source: Path, target: Path, steps: list, end: bool) -> Path:
    saved = GameFile.read(source)
    writer = GameFileWriter.create(target, saved.table, saved.seed, saved.listen_host)
    for number, frames in enumerate(steps):
        writer.step(number, frames)
    if end:
        writer.write(saved.end or {})
    writer.close()
    return target


@pytest.mark.slow
def test_a_finished_game_passes_the_full_audit_from_its_file(finished_game):
    path, env = finished_game
    run = bean_client("audit", str(path), env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "full audit from the revealed seeds: passed" in run.stdout
    assert "every player reported the same final state: yes" in run.stdout


@pytest.mark.slow
def test_one_changed_byte_or_a_forged_signature_is_found(finished_game, tmp_path):
    path, env = finished_game
    steps = GameFile.read(path).steps
    payload, signature = steps[20][1]
    changed = bytearray(payload)
    changed[-5] ^= 1
    tampered = [list(frames) for frames in steps]
    tampered[20][1] = (bytes(changed), signature)
    run = bean_client("audit", str(rewritten(path, tmp_path / "t.game", tampered, True)), env=env)
    assert run.returncode == 1 and "does not hold" in run.stdout, run.stdout + run.stderr
    forged = [list(frames) for frames in steps]
    forged[30][2] = (steps[30][2][0], bytes(64))
    run = bean_client("audit", str(rewritten(path, tmp_path / "f.game", forged, True)), env=env)
    assert run.returncode == 1 and "signature" in run.stdout


@pytest.mark.slow
def test_a_file_cut_short_is_not_passed_as_a_finished_game(finished_game, tmp_path):
    path, env = finished_game
    steps = GameFile.read(path).steps
    short = rewritten(path, tmp_path / "short.game", steps[: len(steps) // 2], False)
    run = bean_client("audit", str(short), env=env)
    assert run.returncode == 1 and "did not end" in run.stdout


@pytest.mark.slow
def test_the_replay_shows_every_turn_and_the_end(finished_game):
    path, env = finished_game
    run = bean_client("replay", str(path), env=env)
    assert run.returncode == 0, run.stderr
    assert "--- turn 1:" in run.stdout and "Traceback" not in run.stderr
    assert run.stdout.count("--- turn ") >= 10
    assert run.stdout.strip().splitlines()[-1].startswith("Outcome: played to the end, over")
    assert "·" not in run.stdout and "…" not in run.stdout  # not a terminal: plain, in ASCII
    assert re.search(r"^Turn 1, (your|\w+'s) turn, step 1", run.stdout, re.MULTILINE)  # "·" as ","


def test_a_missing_file_is_named_not_a_traceback(tmp_path):
    run = bean_client("audit", str(tmp_path / "none.game"), env=isolated_env(tmp_path))
    assert run.returncode == 1 and "no game file" in run.stderr and "Traceback" not in run.stderr
