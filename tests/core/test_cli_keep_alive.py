"""``--keep-alive`` of ``agentsdk demo`` and ``agentsdk run``: the engines' keep-alive for
one command, read by engine plugins from ``AGENTSDK_ENGINE_KEEP_ALIVE``."""

from __future__ import annotations

import argparse
import os

import pytest
from agentsdk.cli import build_parser
from agentsdk.cli._keep_alive import DEFAULT_KEEP_ALIVE, KEEP_ALIVE_ENV, engine_keep_alive


def test_the_option_sets_the_engines_keep_alive_for_the_command_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(KEEP_ALIVE_ENV, raising=False)
    for command in (["demo"], ["run", "hi"]):
        args = build_parser().parse_args([*command, "--keep-alive", "42"])
        with engine_keep_alive(args):
            assert os.environ[KEEP_ALIVE_ENV] == "42"
        assert KEEP_ALIVE_ENV not in os.environ  # restored: an in-process caller keeps its own
    with engine_keep_alive(build_parser().parse_args(["demo"])):
        assert float(os.environ[KEEP_ALIVE_ENV]) == DEFAULT_KEEP_ALIVE == 300


def test_the_environment_is_the_default_and_a_negative_value_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEEP_ALIVE_ENV, "0")
    with engine_keep_alive(argparse.Namespace(keep_alive=None)):
        assert os.environ[KEEP_ALIVE_ENV] == "0"
    assert os.environ[KEEP_ALIVE_ENV] == "0"
    with pytest.raises(ValueError, match="--keep-alive must be 0 or more seconds"):
        with engine_keep_alive(argparse.Namespace(keep_alive=-1.0)):
            pass
