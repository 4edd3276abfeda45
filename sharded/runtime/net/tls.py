"""TLS for sharded's own sockets (``st.init(tls=True)``): a certificate made for one session.

The channel's handshake and MACs (:mod:`.channel`) authenticate both ends and every frame,
but the frames travel in the clear. Where the network needs confidentiality, every
connection (the driver's wire, worker to worker) also runs TLS 1.3, and the channel's own
handshake and MACs run inside it, unchanged (they still bind the worker a connection asked
for).

**The certificate.** The driver makes a fresh self-signed certificate and private key
(EC P-256) for each session, in memory (with the ``cryptography`` package where it is
installed, else with the ``openssl`` command), and hands them to the workers through Ray
with the session key. Every process trusts that certificate alone: a server proves it
holds the session's key pair, and so must every client (mutual TLS). Its dates mean
nothing (it lives as long as the session, and the nodes' clocks may differ): they are not
checked. ``ssl`` loads a key pair from files only: each process writes them to a private
directory (0700, files 0600, made exclusively), loads them, and removes them at once.

What this does not cover: the session key and the certificate's private key travel through
Ray, as do the batches and the data that go by Ray's object store: confidentiality on the
network needs Ray's own TLS (``RAY_USE_TLS``) as well.

Examples
--------
>>> cert, key = session_cert()
>>> cert.startswith(b"-----BEGIN CERTIFICATE-----")
True
>>> Tls.from_pem(cert, key).server.minimum_version.name
'TLSv1_3'
"""

from __future__ import annotations

import datetime
import os
import shutil
import ssl
import subprocess
import tempfile

from ...errors import BackendUnavailable

# X509_V_FLAG_NO_CHECK_TIME (OpenSSL >= 1.1.0): the session certificate's dates are not checked
_NO_CHECK_TIME = 0x200000


class Tls:
    """The TLS contexts of one session: ``client`` dials, ``server`` accepts; both present
    the session certificate and trust it alone.

    Parameters
    ----------
    client, server : ssl.SSLContext
        Made by :meth:`from_pem`.
    """

    __slots__ = ("client", "server", "cert")

    def __init__(self, client, server, cert: bytes):
        self.client, self.server, self.cert = client, server, cert

    @classmethod
    def from_pem(cls, cert: bytes, key: bytes) -> Tls:
        """The contexts of the session whose certificate and private key are ``cert`` and
        ``key`` (PEM).

        Examples
        --------
        >>> tls = Tls.from_pem(*session_cert())
        >>> tls.client.verify_mode == tls.server.verify_mode == ssl.CERT_REQUIRED
        True
        """
        client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        client.check_hostname = False  # (the pinned certificate names no host)
        server.num_tickets = 0  # (no session is ever resumed)
        with _private_files(cert, key) as (cert_path, key_path):
            for ctx in (client, server):
                ctx.minimum_version = ssl.TLSVersion.TLSv1_3
                ctx.verify_mode = ssl.CERT_REQUIRED
                ctx.verify_flags |= _NO_CHECK_TIME
                ctx.load_verify_locations(cadata=cert.decode("ascii"))
                ctx.load_cert_chain(cert_path, key_path)
        return cls(client, server, cert)


class _private_files:
    """``cert`` and ``key`` written to files only this user can read, removed on exit."""

    def __init__(self, cert: bytes, key: bytes):
        self.pems = (cert, key)

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="sharded-tls-")  # (mode 0700)
        paths = []
        try:
            for name, pem in zip(("cert.pem", "key.pem"), self.pems):
                path = os.path.join(self.dir, name)
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                fd = os.open(path, flags, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(pem)
                paths.append(path)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        return paths

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)


def session_cert() -> tuple[bytes, bytes]:
    """A fresh self-signed certificate and its private key (EC P-256), PEM: with the
    ``cryptography`` package if it imports, else with the ``openssl`` command. Raises
    :class:`~sharded.errors.BackendUnavailable` when neither is here.

    Examples
    --------
    >>> a, b = session_cert(), session_cert()
    >>> a[0] != b[0] and a[1] != b[1]  # one per session
    True
    """
    try:
        return _with_cryptography()
    except ImportError:
        pass
    exe = shutil.which("openssl")
    if exe is None:
        raise BackendUnavailable(
            "st.init(tls=True) makes a certificate for the session with the 'cryptography' "
            "package or the 'openssl' command; neither is here (pip install cryptography)"
        )
    return _with_openssl(exe)


def _dates():
    now = datetime.datetime.now(datetime.timezone.utc)
    return now - datetime.timedelta(days=1), now + datetime.timedelta(days=3650)


def _with_cryptography():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sharded session")])
    start, end = _dates()
    usage = dict.fromkeys(
        ("content_commitment", "key_encipherment", "data_encipherment", "key_agreement"),
        False,
    )
    usage.update(key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, **usage), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


_OPENSSL_CONF = """[req]
distinguished_name = dn
x509_extensions = ext
prompt = no
[dn]
CN = sharded session
[ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
"""


def _with_openssl(exe: str):
    """The certificate and key made by the ``openssl`` command in a private directory
    (removed afterwards)."""
    tmp = tempfile.mkdtemp(prefix="sharded-tls-")  # (mode 0700)
    try:
        conf, cert, key = (os.path.join(tmp, n) for n in ("req.conf", "cert.pem", "key.pem"))
        with open(conf, "w") as f:
            f.write(_OPENSSL_CONF)
        cmd = [exe, "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt"]
        cmd += ["ec_paramgen_curve:P-256", "-nodes", "-sha256", "-days", "3650"]
        cmd += ["-config", conf, "-keyout", key, "-out", cert]
        got = subprocess.run(cmd, capture_output=True, timeout=60, check=False)
        if got.returncode != 0:
            raise BackendUnavailable(
                f"st.init(tls=True): 'openssl req' failed ({got.returncode}): "
                f"{got.stderr.decode(errors='replace').strip()[-300:]}"
            )
        with open(cert, "rb") as c, open(key, "rb") as k:
            return c.read(), k.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
