"""The docs site: it builds with warnings as errors, every code block of its own pages
runs as it stands (or says above it why it cannot here), every block of the member
pages it includes parses and imports only names that exist, every example it shows
is run by a test, and llms.txt points at pages that exist."""

from __future__ import annotations

import ast
import functools
import importlib
import json
import os
import re
import runpy
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "tests" / "core" / "obs"))  # the OTLP receiver
SKIP = re.compile(r"^<!--\s*docs-test:\s*skip:\s*(\S.*?)\s*-->\s*$")
FENCE_OPEN = re.compile(r"^(```|~~~)\s*([\w+-]*)([^\n]*)$")
RUN_LANGUAGES = {"python", "bash", "sh", "console"}
DATA_LANGUAGES = {"toml", "json", "yaml"}
SHOWN_LANGUAGES = {"", "text", "html"}  # output and listings: shown, not run


@functools.cache
def hook() -> dict[str, Any]:
    """The globals of the site's include hook (docs/hooks/include.py), read once."""
    return runpy.run_path(str(DOCS / "hooks" / "include.py"))


@dataclass
class Block:
    page: str
    source: str  # the file the block is written in
    line: int
    language: str
    code: str
    skip: str | None  # why it is not run here

    def where(self) -> str:
        return f"{self.source}:{self.line}"


def fenced_blocks(text: str, page: str, source: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = FENCE_OPEN.match(lines[i])
        if not match:
            i += 1
            continue
        fence, language = match.group(1), match.group(2).lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        skip = None
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        if before >= 0 and (m := SKIP.match(lines[before])):
            skip = m.group(1)
        blocks.append(Block(page, source, start + 1, language, "\n".join(body) + "\n", skip))
        i += 1
    return blocks


def own_pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)


def page_blocks(page: Path) -> tuple[list[Block], list[Block]]:
    """(blocks written on the page, blocks of the files it includes)."""
    uri = page.relative_to(DOCS).as_posix()
    text = page.read_text(encoding="utf-8")
    mine = fenced_blocks(hook()["INCLUDE"].sub("", text), uri, f"docs/{uri}")
    included: list[Block] = []
    for match in hook()["INCLUDE"].finditer(text):
        if match.group(1):  # include-code: examples, checked by test_examples_are_run
            continue
        source = match.group(2)
        included += fenced_blocks((ROOT / source).read_text(encoding="utf-8"), uri, source)
    return mine, included


PAGES_WITH_CODE = [p for p in own_pages() if page_blocks(p)[0]]


def check_imports(block: Block) -> None:
    """The block parses (top-level await allowed) and every ``from X import a`` names
    something X has."""
    try:
        tree = compile(
            block.code, block.where(), "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
    except SyntaxError as exc:
        raise AssertionError(f"{block.where()}: does not parse: {exc}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = importlib.import_module(node.module)
            for alias in node.names:
                if alias.name == "*":
                    continue
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        raise AssertionError(
                            f"{block.where()}: {node.module} has no {alias.name}"
                        ) from None
        elif isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)


def check_data(block: Block) -> None:
    if block.language == "toml":
        tomllib.loads(block.code)
    elif block.language == "json":
        json.loads(block.code)
    elif block.language == "yaml":
        import yaml

        yaml.safe_load(block.code)


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_block_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    from otlp_receiver import OTLPReceiver

    mine, _ = page_blocks(page)
    bin_dir = str(Path(sys.executable).parent)
    with OTLPReceiver() as collector:
        env = {
            **os.environ,
            "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,  # where the OTLP example sends
            "COLUMNS": "100",
        }
        env.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
        ran = 0
        for block in mine:  # in order, in one folder: a shell block may read a file made before
            language = block.language
            assert language in RUN_LANGUAGES | DATA_LANGUAGES | SHOWN_LANGUAGES, (
                f"{block.where()}: a ```{language} block; the docs tests do not know how to check it"
            )
            if language in DATA_LANGUAGES:
                check_data(block)
                continue
            if language in SHOWN_LANGUAGES:
                continue
            if language == "python":
                check_imports(block)
            if block.skip is not None:
                assert len(block.skip) > 10, f"{block.where()}: say why it is not run"
                continue
            argv = (
                [sys.executable, "-c", block.code]
                if language == "python"
                else ["bash", "-euo", "pipefail", "-c", block.code]
            )
            done = subprocess.run(
                argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == 0, (
                f"{block.where()} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
            )
            ran += 1
        if page.name == "tracing.md":  # the OTLP example really sent its spans
            names = {s.name for s in collector.spans()}
            assert {"invoke_agent helper", "chat scripted"} <= names, names
            assert "gen_ai.client.token.usage" in collector.metric_names()
    assert ran or all(b.skip or b.language not in RUN_LANGUAGES for b in mine)


def test_blocks_of_the_included_member_pages_parse_and_import_what_exists() -> None:
    checked = 0
    for page in own_pages():
        for block in page_blocks(page)[1]:
            if block.language == "python":
                check_imports(block)
                checked += 1
            elif block.language in DATA_LANGUAGES:
                check_data(block)
    assert checked >= 10  # the member READMEs have their examples


ENGINES = ("local:", "openai:", "anthropic:", "vllm:", "ollama:", "mcp:", "MCPToolkit")


def test_included_member_blocks_that_need_no_engine_or_network_run(tmp_path: Path) -> None:
    """Member README blocks on a scripted model run as they stand; the others name a hosted
    model (no key or network here) or start an engine, which the members' own tests do."""
    seen: set[tuple[str, int]] = set()
    ran = 0
    for page in own_pages():
        for block in page_blocks(page)[1]:
            if block.language != "python" or (block.source, block.line) in seen:
                continue
            seen.add((block.source, block.line))
            scripted = "ScriptedModel" in block.code or "FunctionModel" in block.code
            if not scripted or any(e in block.code for e in ENGINES):
                continue
            try:  # a fragment with top-level await belongs to a page that says so
                compile(block.code, block.where(), "exec")
            except SyntaxError:
                continue
            folder = tmp_path / f"{len(seen)}"
            folder.mkdir()
            done = subprocess.run(
                [sys.executable, "-c", block.code],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=folder,
            )
            assert done.returncode == 0, f"{block.where()}: {done.stderr[-2000:]}"
            ran += 1
    assert ran >= 4


def test_examples_are_all_shown_and_each_is_run_by_a_test() -> None:
    page, _ = hook()["expand"](
        (DOCS / "examples.md").read_text(encoding="utf-8"), "examples.md", {}
    )
    tests = "\n".join(p.read_text(errors="replace") for p in (ROOT / "tests").rglob("test_*.py")
                      if "node_modules" not in p.parts and ".venv" not in p.parts)  # fmt: skip
    for example in sorted((ROOT / "examples").glob("*.py")):
        assert f'```python title="examples/{example.name}"' in page, example.name
        assert example.name in tests, f"no test runs examples/{example.name}"


def test_llms_txt_links_every_page_and_only_files_that_exist() -> None:
    text = (ROOT / "llms.txt").read_text(encoding="utf-8")
    assert text.startswith("# agentsdk\n\n> ")
    links = re.findall(r"\]\(([^)]+)\)", text)
    for link in links:
        assert (ROOT / link).is_file(), link
    listed = set(links)
    for page in own_pages():
        rel = page.relative_to(ROOT).as_posix()
        if rel.startswith("docs/concepts/") or rel == "docs/getting-started.md":
            assert rel in listed, rel
    for source in hook()["includes"](DOCS):
        assert source in listed, source


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-6000:]
    assert "WARNING" not in done.stderr, done.stderr[-6000:]
    assert (site / "llms.txt").read_text() == (ROOT / "llms.txt").read_text()
    tracing = (site / "concepts" / "tracing" / "index.html").read_text()
    assert "trace-viewer.png" in tracing and (site / "assets" / "trace-viewer.png").is_file()
    blender = (site / "members" / "blender" / "index.html").read_text()
    image = re.search(r'src="([^"]*report-example\.png)"', blender)
    assert image is not None
    assert (site / "members" / "blender" / image.group(1)).resolve().is_file()
    api = (site / "api" / "core" / "index.html").read_text()
    assert "Run to a final answer" in api  # Agent.run's docstring, rendered
