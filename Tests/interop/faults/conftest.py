"""The fault matrix: what the server does when its surroundings fail.

Fast tests (well under 20 s each) run with the rest of Tests/interop. Tests marked `slow` (long webhook
timeouts, network emulation) are skipped unless FAULTS_SLOW=1, which `make faults` sets.
"""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a fault test over ~20 s; runs under `make faults` (FAULTS_SLOW=1)")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("FAULTS_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow fault test: run with FAULTS_SLOW=1 (make faults)")
    for item in items:
        if "slow" in item.keywords and "/faults/" in str(item.fspath):
            item.add_marker(skip)
