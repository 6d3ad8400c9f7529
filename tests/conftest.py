"""Shared fixtures for the whole suite. Keep this small: suites add their own fixtures in their own files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / ".artifacts"

# No telemetry and no version probes from anything a test starts.
os.environ.setdefault("AGNO_TELEMETRY", "false")
os.environ.setdefault("REFLEX_CHECK_LATEST_VERSION", "0")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (where rxconfig.py and pyproject.toml live)."""
    return ROOT


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """A git-ignored folder for logs and screenshots a test wants to keep (tests/.artifacts/)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
