#!/usr/bin/env python3
"""Build a local stand-in for cluster/Dockerfile's base image (``python:3.11-slim``).

    python3 scripts/python_standin_image.py [--tag python:3.11-slim] [--check] [--force]

Why: on a build machine that reaches no container registry (only the Debian and Python package
indexes), ``docker build`` cannot pull ``python:3.11-slim``.  This script builds an image that
serves the Dockerfile the same way from Debian packages alone, so the project's Dockerfile stays
exactly what users build: ``debootstrap --variant=minbase bookworm`` with python3 and pip,
``python``/``pip`` on PATH in /usr/local/bin as in the official image (pip installs into
/usr/local, no PEP 668 marker), then ``docker import`` under the official tag.

The image uses the package sources this host uses, read from its configuration when the script
runs (nothing here names a mirror or index):
  * debootstrap's mirror and the image's apt sources: the host's Debian entries for the suite
    (``/etc/apt/sources.list[.d]``), plus the host's apt proxy settings;
  * the image's /etc/pip.conf: the host's network pip settings (``pip config list``: index-url,
    extra-index-url, trusted-host, proxy, timeout, retries; file:// indexes are left out, they
    do not exist in a container) and the HTTP(S)_PROXY variables;
  * the host's CA bundle replaces the image's, so pip and apt in ``docker build`` trust what
    the host trusts (the host's TLS setup, including any CA of a proxy in between).

Every input (this script, the suite and packages, the sources, pip.conf, apt settings, the CA
bundle) goes into one digest, stored as the image label ``org.sharded.standin-inputs``: with
the same digest the image is up to date and is reused (``--check`` tells, exit 0/1).  An image
under the tag without that label (the official one, pulled where a registry is reachable) is
never replaced unless ``--force``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TAG = "python:3.11-slim"
SUITE = "bookworm"  # Debian 12 ships Python 3.11, the official image's base is also bookworm
PACKAGES = ["python3", "python3-pip", "ca-certificates"]
LABEL = "org.sharded.standin-inputs"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
IMAGE_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
PIP_KEYS = {
    "index-url",
    "extra-index-url",
    "trusted-host",
    "proxy",
    "timeout",
    "default-timeout",
    "retries",
}
APT_KEYS = ["Acquire::http::Proxy", "Acquire::https::Proxy", "Acquire::Check-Valid-Until"]
ENV = [
    "PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG=C.UTF-8",
    "PYTHON_VERSION=3.11",
]


def log(msg: str) -> None:
    print(f"python-standin: {msg}", file=sys.stderr, flush=True)


# --- the host's configuration ------------------------------------------------------------------


def _deb822_entries(text: str) -> list[dict[str, str]]:
    entries = []
    for block in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = None
        for line in block.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line[0] in " \t" and key:
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip()
            fields[key] = value.strip()
        if fields.get("Enabled", "yes").lower() != "no" and "URIs" in fields:
            entries.append(fields)
    return entries


def _one_line_entries(text: str) -> list[dict[str, str]]:
    entries = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        words = line.split()[1:]
        opts = ""
        if words and words[0].startswith("["):
            end = next(i for i, w in enumerate(words) if w.endswith("]"))
            opts = " ".join(words[: end + 1]).strip("[]")
            words = words[end + 1 :]
        if len(words) < 3:
            continue
        entry = {
            "Types": "deb",
            "URIs": words[0],
            "Suites": words[1],
            "Components": " ".join(words[2:]),
        }
        m = re.search(r"signed-by=(\S+)", opts)
        if m:
            entry["Signed-By"] = m.group(1)
        entries.append(entry)
    return entries


def host_debian_sources(suite: str = SUITE, root: Path = Path("/etc/apt")) -> list[dict]:
    """The host's enabled Debian entries for ``suite`` (and its -updates/-security), main only."""
    entries: list[dict[str, str]] = []
    files = [root / "sources.list", *sorted((root / "sources.list.d").glob("*"))]
    for f in files:
        if not f.is_file():
            continue
        if f.suffix == ".sources":
            entries += _deb822_entries(f.read_text())
        elif f.suffix == ".list" or f.name == "sources.list":
            entries += _one_line_entries(f.read_text())
    wanted = {suite, f"{suite}-updates", f"{suite}-security"}
    out = []
    for e in entries:
        suites = [s for s in e.get("Suites", "").split() if s in wanted]
        signed = e.get("Signed-By", "")
        # Only Debian's own archive (a third-party repository's key is not in the image).
        if (
            "deb" not in e.get("Types", "deb").split()
            or not suites
            or "main" not in e.get("Components", "").split()
            or (signed and "debian-archive" not in signed)
        ):
            continue
        out.append({"URIs": e["URIs"].split()[0], "Suites": " ".join(suites)})
    return out


def image_sources(entries: list[dict]) -> str:
    blocks = [
        f"Types: deb\nURIs: {e['URIs']}\nSuites: {e['Suites']}\nComponents: main\n"
        f"Signed-By: {DEBIAN_KEYRING}\n"
        for e in entries
    ]
    return "\n".join(blocks)


def debootstrap_mirror(entries: list[dict], suite: str = SUITE) -> str | None:
    for e in entries:
        if suite in e["Suites"].split():
            return e["URIs"]
    return None  # debootstrap's own default


def _pip_config(python: str) -> dict[str, str]:
    try:
        res = subprocess.run(
            [python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    found: dict[str, str] = {}
    for line in res.stdout.splitlines():
        m = re.match(r"^[^.]*\.([\w-]+)='(.*)'$", line.strip())
        if m:
            found.setdefault(m.group(1), m.group(2))  # environment first, as pip reads it
    return found


def image_pip_conf(python: str = sys.executable, environ=os.environ) -> str:
    """/etc/pip.conf for the image: the host's network settings, the image's CA bundle."""
    conf = {k: v for k, v in _pip_config(python).items() if k in PIP_KEYS}
    for key in ("index-url", "extra-index-url"):
        if key in conf:
            urls = [u for u in conf[key].split() if u.startswith(("http://", "https://"))]
            conf[key] = " ".join(urls)
            if not urls:
                del conf[key]
    if "default-timeout" in conf:
        conf.setdefault("timeout", conf.pop("default-timeout"))
    proxy = environ.get("HTTPS_PROXY") or environ.get("https_proxy")
    if proxy and "proxy" not in conf:
        conf["proxy"] = proxy
    conf["cert"] = IMAGE_CA_BUNDLE
    return "[global]\n" + "".join(f"{k} = {v}\n" for k, v in sorted(conf.items()))


def image_apt_conf() -> str:
    lines = []
    for key in APT_KEYS:
        try:
            res = subprocess.run(
                ["apt-config", "dump", key], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        for line in res.stdout.splitlines():
            if line.lower().startswith(key.lower() + " "):
                lines.append(line.rstrip() if line.rstrip().endswith(";") else line + ";")
    return "".join(line + "\n" for line in lines)


def inputs(suite: str = SUITE, python: str = sys.executable) -> dict:
    """Everything the image is built from; its digest is the image's label."""
    entries = host_debian_sources(suite)
    bundle = HOST_CA_BUNDLE.read_bytes() if HOST_CA_BUNDLE.is_file() else b""
    return {
        "script": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
        "suite": suite,
        "packages": PACKAGES,
        "mirror": debootstrap_mirror(entries, suite),
        "sources": image_sources(entries),
        "pip.conf": image_pip_conf(python),
        "apt.conf": image_apt_conf(),
        "ca-bundle": hashlib.sha256(bundle).hexdigest(),
        "env": ENV,
    }


def digest(inp: dict) -> str:
    return hashlib.sha256(json.dumps(inp, sort_keys=True).encode()).hexdigest()[:32]


# --- the image ---------------------------------------------------------------------------------


def image_label(tag: str, docker: str = "docker") -> str | None:
    """The stand-in label of ``tag``: None when there is no such image, "" when it has none."""
    res = subprocess.run(
        [docker, "image", "inspect", "--format", "{{json .Config.Labels}}", tag],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        return None
    labels = json.loads(res.stdout.strip() or "null") or {}
    return labels.get(LABEL, "")


def _run(cmd: list[str], **kw) -> None:
    log("$ " + shlex.join(cmd))
    subprocess.run(cmd, check=True, **kw)


def build(tag: str, inp: dict, docker: str = "docker", workdir: str | None = None) -> None:
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="python-standin-", dir=workdir or "/var/tmp"))
    rootfs = tmp / "rootfs"
    try:
        cmd = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            "--components=main",
            inp["suite"],
            str(rootfs),
        ]
        if inp["mirror"]:
            cmd.append(inp["mirror"])
        _run(cmd, stdout=subprocess.DEVNULL)
        etc = rootfs / "etc"
        (etc / "apt/sources.list").write_text("")
        if inp["sources"]:
            (etc / "apt/sources.list.d/debian.sources").write_text(inp["sources"])
        if inp["apt.conf"]:
            (etc / "apt/apt.conf.d/90host").write_text(inp["apt.conf"])
        (etc / "pip.conf").write_text(inp["pip.conf"])
        if HOST_CA_BUNDLE.is_file():
            shutil.copyfile(HOST_CA_BUNDLE, rootfs / IMAGE_CA_BUNDLE.lstrip("/"))
            # update-ca-certificates (run when a package touches certificates) rebuilds the
            # bundle from /usr/local/share/ca-certificates too: the host's CAs stay in it.
            local = rootfs / "usr/local/share/ca-certificates"
            local.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(HOST_CA_BUNDLE, local / "host-ca-bundle.crt")
        # As in the official image: no PEP 668 marker (pip installs into /usr/local), and
        # python, python3, pip, pip3 in /usr/local/bin.
        for marker in (rootfs / "usr/lib").glob("python3*/EXTERNALLY-MANAGED"):
            marker.unlink()
        bin_ = rootfs / "usr/local/bin"
        bin_.mkdir(parents=True, exist_ok=True)
        for name, target in [
            ("python", "/usr/bin/python3"),
            ("python3", "/usr/bin/python3"),
            ("pip", "/usr/bin/pip3"),
            ("pip3", "/usr/bin/pip3"),
        ]:
            (bin_ / name).unlink(missing_ok=True)
            (bin_ / name).symlink_to(target)
        _run(["chroot", str(rootfs), "apt-get", "clean"])
        for d in ("var/lib/apt/lists", "var/cache/apt", "var/log", "tmp"):
            for p in (rootfs / d).glob("*"):
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
        changes = [f"ENV {e}" for e in inp["env"]]
        changes += ['CMD ["python3"]', f"LABEL {LABEL}={digest(inp)}"]
        cmd = [docker, "import"]
        for c in changes:
            cmd += ["--change", c]
        tar = subprocess.Popen(
            [
                "tar",
                "--numeric-owner",
                "--exclude=./dev/*",
                "--exclude=./proc/*",
                "--exclude=./sys/*",
                "-C",
                str(rootfs),
                "-c",
                ".",
            ],
            stdout=subprocess.PIPE,
        )
        _run([*cmd, "-", tag], stdin=tar.stdout, stdout=subprocess.DEVNULL)
        tar.stdout.close()
        if tar.wait() != 0:
            raise subprocess.CalledProcessError(tar.returncode, "tar")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"built {tag} ({digest(inp)}) in {time.monotonic() - t0:.0f} s")


def ensure(
    tag: str = TAG,
    suite: str = SUITE,
    force: bool = False,
    docker: str = "docker",
    python: str = sys.executable,
) -> str:
    """Make ``tag`` usable as the Dockerfile's base; return what was done: "built", "cached"
    (the stand-in with the same inputs) or "official" (an image without the stand-in label)."""
    inp = inputs(suite, python)
    label = image_label(tag, docker)
    if not force and label == digest(inp):
        return "cached"
    if not force and label == "":
        return "official"
    build(tag, inp, docker)
    return "built"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tag", default=TAG, help=f"image tag (default {TAG})")
    p.add_argument("--suite", default=SUITE, help=f"Debian suite (default {SUITE})")
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 0 if the tag is up to date (or the official image), 1 if not",
    )
    p.add_argument("--force", action="store_true", help="rebuild even when up to date")
    p.add_argument("--print-inputs", action="store_true", help="show the inputs and digest")
    args = p.parse_args(argv)
    if args.print_inputs:
        inp = inputs(args.suite)
        print(json.dumps({**inp, "digest": digest(inp)}, indent=2))
        return 0
    if args.check:
        label = image_label(args.tag)
        return 0 if label == "" or label == digest(inputs(args.suite)) else 1
    log(f"{args.tag}: {ensure(args.tag, args.suite, args.force)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
