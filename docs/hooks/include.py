"""MkDocs hook: pages that are the members' READMEs (and TASKS.md files, examples,
benchmarks) without copying their prose.

A docs page says ``<!-- include: tools/blender/README.md -->`` on a line of its own
and gets that file's text there; ``<!-- include-code: examples/x.py -->`` gets the
file as a Python code block; ``<!-- include-examples: examples -->`` a section with
the source of every Python file of that folder. Links inside an included file are rewritten so the
site stays whole: to another included file, a link to its page; to an image, a
link to a copy of it in the site; to any other file of the repository, its path
as text (the site has no page for it). The docs tests use ``expand`` too, so what
they execute is exactly what the site shows.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r"^<!--\s*include(-code)?:\s*(\S+)\s*-->[ \t]*$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
IMAGE_PREFIX = "_included"


def includes(docs_dir: Path) -> dict[str, str]:
    """Which page includes which repository file: {repo path: page src_uri}."""
    found: dict[str, str] = {}
    for page in sorted(docs_dir.rglob("*.md")):
        uri = page.relative_to(docs_dir).as_posix()
        for match in INCLUDE.finditer(page.read_text(encoding="utf-8")):
            if not match.group(1):
                found.setdefault(match.group(2), uri)
    return found


def _relative(target: str, page_uri: str) -> str:
    """``target`` (a site path) as seen from the page ``page_uri``."""
    depth = len(PurePosixPath(page_uri).parent.parts)
    return "../" * depth + target


def _rewrite_links(
    text: str, source: str, page_uri: str, pages: dict[str, str]
) -> tuple[str, list[str]]:
    """Links of ``source`` (a repo path) made right for the page; and the images used."""
    images: list[str] = []
    base = PurePosixPath(source).parent

    def fix(match: re.Match[str]) -> str:
        bang, label, href = match.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith(("#", "/")):
            return match.group(0)
        path, _, anchor = href.partition("#")
        repo_path = (ROOT / base / path).resolve()
        try:
            rel = repo_path.relative_to(ROOT).as_posix()
        except ValueError:
            return label
        if bang and repo_path.is_file():
            images.append(rel)
            return f"![{label}]({_relative(f'{IMAGE_PREFIX}/{rel}', page_uri)})"
        if rel in pages:
            target = pages[rel]
            link = _relative(target, page_uri) + (f"#{anchor}" if anchor else "")
            return f"[{label}]({link})"
        return f"{label} (`{rel}`)"

    out: list[str] = []
    last = 0
    for fence in FENCE.finditer(text):  # links inside code blocks are code, not links
        out.append(LINK.sub(fix, text[last : fence.start()]))
        out.append(fence.group(0))
        last = fence.end()
    out.append(LINK.sub(fix, text[last:]))
    return "".join(out), images


EXAMPLES = re.compile(r"^<!--\s*include-examples:\s*(\S+)\s*-->[ \t]*$", re.M)


def _examples(folder: str) -> str:
    """A section per Python file of ``folder``, each with its source included."""
    return "\n\n".join(
        f"## `{path.name}`\n\n<!-- include-code: {folder}/{path.name} -->"
        for path in sorted((ROOT / folder).glob("*.py"))
    )


def expand(markdown: str, page_uri: str, pages: dict[str, str]) -> tuple[str, list[str]]:
    """The page's markdown with its includes filled in; and the images they use."""
    images: list[str] = []
    markdown = EXAMPLES.sub(lambda m: _examples(m.group(1)), markdown)

    def fill(match: re.Match[str]) -> str:
        code, source = match.group(1), match.group(2)
        path = ROOT / source
        if not path.is_file():
            raise FileNotFoundError(f"{page_uri}: included file {source} does not exist")
        text = path.read_text(encoding="utf-8")
        if code:
            return f'```python title="{source}"\n{text.rstrip()}\n```'
        text, used = _rewrite_links(text, source, page_uri, pages)
        images.extend(used)
        return text

    return INCLUDE.sub(fill, markdown), images


# -- MkDocs events ------------------------------------------------------------------

_pages: dict[str, str] = {}


def on_files(files: Any, config: Any) -> Any:
    """Add copies of the images the included files show."""
    from mkdocs.structure.files import File

    docs_dir = Path(config["docs_dir"])
    _pages.clear()
    _pages.update(includes(docs_dir))
    seen: set[str] = set()
    for page in sorted(docs_dir.rglob("*.md")):
        uri = page.relative_to(docs_dir).as_posix()
        _, used = expand(page.read_text(encoding="utf-8"), uri, _pages)
        for rel in used:
            if rel not in seen:
                seen.add(rel)
                files.append(
                    File.generated(config, f"{IMAGE_PREFIX}/{rel}", abs_src_path=str(ROOT / rel))
                )
    llms = ROOT / "llms.txt"
    if llms.is_file():
        files.append(File.generated(config, "llms.txt", abs_src_path=str(llms)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill in the page's includes."""
    text, _ = expand(markdown, page.file.src_uri, _pages)
    return text
