"""The installation's report-signing key: Ed25519 (``cryptography``), made on first use.

The private key lives in the user data folder as ``report-signing-key.pem`` (PKCS #8, unencrypted, mode 0600
in a 0700 folder), or wherever ``LINEUP_SIGNING_KEY`` points. Its fingerprint is the SHA-256 of the raw
32-byte public key in hex; reports print it, manifests carry the public key and a signature over their own
canonical JSON (``app.report.manifest``), so a report cannot be re-issued or edited without this key.

A signature only says which key signed; whom to believe is the verifier's choice. The keys a verifier trusts
(``trusted_keys``) are its own key, the public keys in its trusted-keys folder (``trusted-keys/`` in the user
data folder, or ``LINEUP_TRUSTED_KEYS``; ``lineup key trust`` adds one there after the examiner's fingerprint
was compared by another channel) and any given for one check. ``lineup key export`` writes this
installation's public key for others to trust (docs/hardening.md).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from platformdirs import user_data_dir

from app.report.errors import ReportError
from engine.kernel.atomic import atomic_write_bytes
from engine.kernel.permissions import owner_only_umask, restrict

KEY_FILE = "report-signing-key.pem"
KEY_VARIABLE = "LINEUP_SIGNING_KEY"
TRUSTED_FOLDER = "trusted-keys"
TRUSTED_VARIABLE = "LINEUP_TRUSTED_KEYS"
PUBLIC_SUFFIX = ".pub"
ALGORITHM = "Ed25519"
#: a public key file is a few hundred bytes; anything far larger is not one
_PUBLIC_FILE_LIMIT = 16 * 1024
_HEX = re.compile(r"[0-9a-f]{64}")


def key_path() -> Path:
    """Where this installation's signing key is (``LINEUP_SIGNING_KEY`` or the user data folder)."""
    override = os.environ.get(KEY_VARIABLE, "").strip()
    return Path(override).expanduser() if override else Path(user_data_dir("lineup", appauthor=False)) / KEY_FILE


def trusted_keys_dir() -> Path:
    """The folder of public keys this installation trusts (``LINEUP_TRUSTED_KEYS`` or the user data folder)."""
    override = os.environ.get(TRUSTED_VARIABLE, "").strip()
    if override:
        return Path(override).expanduser()
    return Path(user_data_dir("lineup", appauthor=False)) / TRUSTED_FOLDER


def fingerprint(public_raw: bytes) -> str:
    """SHA-256 of the raw public key, hex."""
    return hashlib.sha256(public_raw).hexdigest()


def grouped(fingerprint_hex: str) -> str:
    """A fingerprint in groups of four characters, for people to compare by eye."""
    return " ".join(fingerprint_hex[i : i + 4] for i in range(0, len(fingerprint_hex), 4))


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey
    path: Path

    @property
    def public_raw(self) -> bytes:
        return self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def public_b64(self) -> str:
        return base64.b64encode(self.public_raw).decode("ascii")

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_raw)

    def sign(self, data: bytes) -> str:
        """Base64 Ed25519 signature of ``data``."""
        return base64.b64encode(self.private.sign(data)).decode("ascii")

    def public_pem(self) -> bytes:
        """The public key as a PEM SubjectPublicKeyInfo block (what ``lineup key export`` writes)."""
        return self.private.public_key().public_bytes(serialization.Encoding.PEM,
                                                      serialization.PublicFormat.SubjectPublicKeyInfo)


def _read_key(path: Path) -> SigningKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise ReportError(f"report signing key {path} cannot be read: {exc.strerror or exc}") from None
    except (ValueError, TypeError) as exc:
        raise ReportError(f"report signing key {path} is damaged or not a PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ReportError(f"report signing key {path} is not an {ALGORITHM} key")
    restrict(path)  # a key copied in with looser permissions is made owner-only
    return SigningKey(key, path)


def installation_key(*, create: bool = True) -> SigningKey | None:
    """This installation's key; made (0600) on first use when ``create``, else None when there is none."""
    path = key_path()
    if path.is_file():
        return _read_key(path)
    if not create:
        return None
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    with owner_only_umask():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it meanwhile: use that one
            return _read_key(path)
        except OSError as exc:
            raise ReportError(f"cannot create the report signing key {path}: {exc.strerror or exc}") from None
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(pem)
                out.flush()
                os.fsync(out.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                path.unlink()
            raise
    return SigningKey(key, path)


def signature_valid(public_b64: str, signature_b64: str, data: bytes) -> bool:
    """Whether ``signature_b64`` is a valid Ed25519 signature of ``data`` by the public key ``public_b64``;
    malformed keys or signatures are simply invalid."""
    try:
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_b64, validate=True))
        public.verify(base64.b64decode(signature_b64, validate=True), data)
    except (InvalidSignature, ValueError, TypeError, binascii.Error):
        return False
    return True


def public_fingerprint(public_b64: str) -> str | None:
    """The fingerprint of a base64 public key, None when it is malformed."""
    try:
        raw = base64.b64decode(public_b64, validate=True)
    except (ValueError, binascii.Error):
        return None
    return fingerprint(raw) if len(raw) == 32 else None


def read_public_key(path: str | Path) -> bytes:
    """The raw 32-byte Ed25519 public key in ``path``: a PEM public key (``lineup key export``) or one line of
    base64 (a manifest's ``signer.public_key``). ``ReportError`` names the file and what is wrong."""
    path = Path(path)
    try:
        if path.stat().st_size > _PUBLIC_FILE_LIMIT:
            raise ReportError(f"public key file {path} is {path.stat().st_size:,} bytes: not a public key")
        data = path.read_bytes()
    except OSError as exc:
        raise ReportError(f"public key file {path} cannot be read: {exc.strerror or exc}") from None
    if data.lstrip().startswith(b"-----BEGIN"):
        try:
            key = serialization.load_pem_public_key(data)
        except (ValueError, TypeError) as exc:
            raise ReportError(f"public key file {path} is damaged or not a PEM public key ({exc})") from None
        if not isinstance(key, Ed25519PublicKey):
            raise ReportError(f"public key file {path} does not hold an {ALGORITHM} key")
        return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    try:
        raw = base64.b64decode(data.strip(), validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != 32:
        raise ReportError(f"public key file {path} holds neither a PEM public key nor a base64 {ALGORITHM} key")
    return raw


def _public_pem(raw: bytes) -> bytes:
    return Ed25519PublicKey.from_public_bytes(raw).public_bytes(serialization.Encoding.PEM,
                                                               serialization.PublicFormat.SubjectPublicKeyInfo)


def export_public_key(out: str | Path) -> tuple[Path, str]:
    """Write this installation's public key (made on first use) to ``out`` as PEM; returns (path,
    fingerprint)."""
    key = installation_key()
    out = Path(out)
    atomic_write_bytes(out, key.public_pem())
    return out, key.fingerprint


def trust_key(path: str | Path) -> str:
    """Add the public key in ``path`` to the trusted-keys folder (as ``<fingerprint>.pub``); returns its
    fingerprint. Trusting a key already trusted changes nothing."""
    raw = read_public_key(path)
    digest = fingerprint(raw)
    folder = trusted_keys_dir()
    with owner_only_umask():
        folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{digest}{PUBLIC_SUFFIX}"
    if not target.is_file():
        atomic_write_bytes(target, _public_pem(raw))
    return digest


def parse_trust(value: str) -> tuple[str, str]:
    """One ``--trust`` value: a public key file or a fingerprint (hex, spaces allowed). Returns (fingerprint,
    where it came from)."""
    path = Path(value).expanduser()
    if path.is_file():
        return fingerprint(read_public_key(path)), f"key file {path.name}"
    compact = "".join(value.split()).lower()
    if not _HEX.fullmatch(compact):
        raise ReportError(f"--trust {value!r} is neither a public key file nor a 64-hex-digit key fingerprint")
    return compact, "a fingerprint given to this check"


def trusted_keys(extra: Iterable[str] = ()) -> dict[str, str]:
    """{fingerprint: why it is trusted}: this installation's own key (when it has one), every key in the
    trusted-keys folder (a file that is not a key is skipped, named in the reason of no key) and ``extra``
    (``parse_trust`` values)."""
    trusted: dict[str, str] = {}
    own = installation_key(create=False)
    if own is not None:
        trusted[own.fingerprint] = "this installation's own key"
    folder = trusted_keys_dir()
    if folder.is_dir():
        for file in sorted(folder.glob(f"*{PUBLIC_SUFFIX}")):
            try:
                trusted.setdefault(fingerprint(read_public_key(file)), f"trusted key {file.name}")
            except ReportError:
                continue
    for value in extra:
        digest, why = parse_trust(value)
        trusted.setdefault(digest, why)
    return trusted
