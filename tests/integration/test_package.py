"""The package builds from `pyproject.toml` with no warning from its own metadata (an SPDX
license expression, not a table), and the built metadata says so."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_building_the_wheel_warns_of_nothing_in_the_projects_metadata(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # pip's own notes about this machine's package indexes are not the project's.
    warnings = [line for line in (done.stdout + done.stderr).splitlines()
                if "warn" in line.lower() and not line.startswith("WARNING: Location ")]
    assert not warnings, warnings
    [wheel] = tmp_path.glob("reddog_ledger-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode()
    assert "License-Expression: MIT" in metadata
    assert "Provides-Extra: postgres" in metadata
