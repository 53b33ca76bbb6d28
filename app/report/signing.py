"""The installation's report-signing key: Ed25519 (``cryptography``), made on first use.

The private key lives in the user data folder as ``report-signing-key.pem`` (PKCS #8, unencrypted, mode 0600
in a 0700 folder), or wherever ``LINEUP_SIGNING_KEY`` points. Its fingerprint is the SHA-256 of the raw
32-byte public key in hex; reports print it, manifests carry the public key and a signature over their own
canonical JSON (``app.report.manifest``), so a report cannot be re-issued or edited without this key.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from platformdirs import user_data_dir

from app.report.errors import ReportError
from engine.permissions import owner_only_umask, restrict

KEY_FILE = "report-signing-key.pem"
KEY_VARIABLE = "LINEUP_SIGNING_KEY"
ALGORITHM = "Ed25519"


def key_path() -> Path:
    """Where this installation's signing key is (``LINEUP_SIGNING_KEY`` or the user data folder)."""
    override = os.environ.get(KEY_VARIABLE, "").strip()
    return Path(override).expanduser() if override else Path(user_data_dir("lineup", appauthor=False)) / KEY_FILE


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
