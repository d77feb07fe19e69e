"""The lock files hold every pin of pyproject.toml, at the same version."""

import importlib.util

from tests.processes import ROOT

spec = importlib.util.spec_from_file_location("check_lock", ROOT / "scripts" / "check_lock.py")
check_lock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_lock)


def test_the_locks_are_in_step_with_pyproject():
    assert check_lock.main() == 0


def test_a_pin_missing_from_a_lock_or_locked_at_another_version_is_caught():
    locked = check_lock.pins(["django==5.2.19", "    # via concord", "numpy==2.4.5 ; os_name"])
    wanted = check_lock.pins(["Django==5.2.19", "numpy==2.4.6", "psycopg[binary]==3.3.9"])
    assert check_lock.out_of_step(wanted, locked, "lock.txt") == [
        "numpy: pyproject.toml pins 2.4.6, lock.txt has 2.4.5",
        "psycopg==3.3.9 is in pyproject.toml but not in lock.txt",
    ]
