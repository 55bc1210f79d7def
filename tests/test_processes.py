"""The end-to-end helpers' promise: a client process a test started does not outlive it."""

from __future__ import annotations

import sys

from tests.processes import isolated_env, kill_leftovers, start


def test_a_process_still_running_at_the_end_of_a_test_is_killed_and_reaped(tmp_path):
    sleeper = start([sys.executable, "-c", "import time; time.sleep(600)"],
                    isolated_env(tmp_path), tmp_path / "sleeper.log")  # fmt: skip
    finished = start([sys.executable, "-c", "pass"], isolated_env(tmp_path), tmp_path / "ok.log")
    finished.communicate(timeout=60)
    kill_leftovers()
    assert sleeper.returncode is not None and sleeper.returncode < 0  # killed by a signal
    assert finished.returncode == 0
