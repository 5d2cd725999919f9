"""Shared by both connectors' tests: the fault-injecting server and the run driver."""

import sys
from pathlib import Path

# pytest runs with --import-mode=importlib, which does not put test folders on sys.path;
# fault_server, fault_shapes and fault_runs have names unique to this folder.
sys.path.insert(0, str(Path(__file__).parent))
