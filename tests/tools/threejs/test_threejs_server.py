"""The loopback asset server and browser discovery (no browser is started)."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from agentsdk_threejs._browser import BrowserNotFoundError, find_browser
from agentsdk_threejs._server import AssetServer, find_three_root


@pytest.fixture
def server(tmp_path: Path) -> Iterator[AssetServer]:
    assets = tmp_path / "assets"
    (assets / "models").mkdir(parents=True)
    (assets / "models" / "cube.obj").write_text("v 0 0 0\n")
    (tmp_path / "secret.txt").write_text("do not serve")
    (assets / "escape.txt").symlink_to(tmp_path / "secret.txt")
    started = AssetServer(find_three_root(), [assets])
    started.start()
    yield started
    started.close()


def test_serves_three_harness_and_assets_on_loopback(server: AssetServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    three = httpx.get(server.base_url + "three/build/three.module.js")
    assert three.status_code == 200
    assert three.headers["content-type"] == "text/javascript"
    assert "REVISION" in three.text
    page = httpx.get(server.page_url)
    assert page.status_code == 200 and "importmap" in page.text
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    model = httpx.get(server.base_url + "assets/0/models/cube.obj")
    assert model.status_code == 200 and model.text == "v 0 0 0\n"


@pytest.mark.parametrize(
    "path",
    [
        "assets/0/../secret.txt",
        "assets/0/%2e%2e/secret.txt",
        "assets/0/models/%2e%2e/%2e%2e/secret.txt",
        "assets/0/escape.txt",
        "assets/1/models/cube.obj",
        "etc/passwd",
        "three/../../secret.txt",
    ],
)
def test_refuses_anything_outside_the_roots(server: AssetServer, path: str) -> None:
    # http.client sends the path as written (httpx would normalise "..").
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    connection.request("GET", f"/{server.token}/{path}")
    response = connection.getresponse()
    assert response.status == 404
    assert b"do not serve" not in response.read()
    connection.close()


def test_needs_the_token_and_only_answers_get(server: AssetServer) -> None:
    assert (
        httpx.get(f"http://127.0.0.1:{server.port}/three/build/three.module.js").status_code == 404
    )
    assert (
        httpx.get(f"http://127.0.0.1:{server.port}/wrong/three/build/three.module.js").status_code
        == 404
    )
    posted = httpx.post(server.base_url + "assets/0/models/cube.obj", content=b"x")
    assert posted.status_code == 501
    assert httpx.head(server.base_url + "assets/0/models/cube.obj").status_code == 200


def test_asset_url_only_for_files_inside_asset_folders(server: AssetServer, tmp_path: Path) -> None:
    inside = server.asset_url(tmp_path / "assets" / "models" / "cube.obj")
    assert inside == server.base_url + "assets/0/models/cube.obj"
    assert server.asset_url(tmp_path / "secret.txt") is None
    assert server.asset_url(tmp_path / "assets" / "models" / "missing.obj") is None


def test_browser_discovery_prefers_playwrights_own_then_the_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "chrome"
    own.write_text("")
    assert find_browser(str(own)) == str(own)
    system = find_browser(str(tmp_path / "not-installed" / "chrome"))
    assert Path(system).name in (
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    )
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(BrowserNotFoundError, match=r"apt-get install chromium.*executable_path"):
        find_browser(None)
