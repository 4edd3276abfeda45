"""scripts/python_standin_image.py without Docker: what it reads from the host's apt and pip
configuration, and that its inputs' digest changes with them."""

from __future__ import annotations

import importlib.util
import sys

from tests.cluster import compose

_spec = importlib.util.spec_from_file_location(
    "python_standin_image", compose.ROOT / "scripts/python_standin_image.py"
)
standin = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = standin
_spec.loader.exec_module(standin)

KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


def test_debian_sources_from_deb822_and_one_line_files(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(
        "# a comment\ndeb [signed-by=/usr/share/keyrings/other.gpg] http://other.example/x "
        "bookworm main\ndeb http://mirror.example/debian bookworm-updates main contrib\n"
    )
    (tmp_path / "sources.list.d/debian.sources").write_text(
        f"Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        f"Components: main\nSigned-By: {KEYRING}\n\n"
        f"Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
        f"Components: main\nSigned-By: {KEYRING}\n\n"
        f"Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\nComponents: main\n\n"
        f"Types: deb\nURIs: http://old.example/debian\nSuites: bullseye\nComponents: main\n"
    )
    (tmp_path / "sources.list.d/third.sources.disabled").write_text(
        "Types: deb\nURIs: http://third.example\nSuites: bookworm\nComponents: main\n"
    )
    entries = standin.host_debian_sources("bookworm", tmp_path)
    assert entries == [
        {"URIs": "http://mirror.example/debian", "Suites": "bookworm-updates"},
        {"URIs": "http://mirror.example/debian", "Suites": "bookworm bookworm-updates"},
        {"URIs": "http://mirror.example/debian-security", "Suites": "bookworm-security"},
    ]
    assert standin.debootstrap_mirror(entries) == "http://mirror.example/debian"
    assert standin.debootstrap_mirror([]) is None  # debootstrap's default
    text = standin.image_sources(entries)
    assert text.count("Types: deb\n") == 3 and f"Signed-By: {KEYRING}" in text


def test_pip_conf_keeps_network_settings_only(monkeypatch):
    found = {
        "index-url": "https://index.example/simple",
        "extra-index-url": "file:///opt/local/simple https://more.example/simple",
        "find-links": "/opt/wheels",
        "cert": "/host/ca.pem",
        "default-timeout": "180",
        "constraint": "/etc/constraints.txt",
    }
    monkeypatch.setattr(standin, "_pip_config", lambda python: dict(found))
    conf = standin.image_pip_conf("python", environ={"HTTPS_PROXY": "http://proxy.example:3128"})
    assert conf == (
        "[global]\n"
        f"cert = {standin.IMAGE_CA_BUNDLE}\n"
        "extra-index-url = https://more.example/simple\n"
        "index-url = https://index.example/simple\n"
        "proxy = http://proxy.example:3128\n"
        "timeout = 180\n"
    )
    found["extra-index-url"] = "file:///opt/local/simple"
    assert "extra-index-url" not in standin.image_pip_conf("python", environ={})


def test_digest_follows_the_inputs():
    inp = standin.inputs()
    assert len(standin.digest(inp)) == 32
    assert standin.digest(inp) == standin.digest(dict(inp))
    assert standin.digest({**inp, "pip.conf": inp["pip.conf"] + "retries = 9\n"}) != standin.digest(
        inp
    )
