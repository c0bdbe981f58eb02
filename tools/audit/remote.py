"""PyPI, read the cheap way: the simple JSON index, and single members of multi-GB wheels.

A torch wheel is close to 1 GB; the audit needs a dozen small files out of it. A wheel is a zip,
whose central directory sits at the end, so `zipfile.ZipFile` over a file object that turns each
`read` into an HTTP range request fetches the directory and then exactly the members asked for.
Everything fetched is cached by the wheel's sha256 outside the checkout, so a second run is offline.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional

INDEX = "https://pypi.org/simple/{name}/"
USER_AGENT = "inductor-doctor-release-audit/1 (+https://pypi.org/project/inductor-doctor/)"
TIMEOUT_S = 60.0
RETRIES = 4


def cache_root() -> Path:
    """Where downloads live: `$INDUCTOR_DOCTOR_AUDIT_CACHE`, else ~/.cache/inductor-doctor-audit."""
    env = os.environ.get("INDUCTOR_DOCTOR_AUDIT_CACHE")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    root = base if env else base / "inductor-doctor-audit"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _request(url: str, headers: Dict[str, str]) -> bytes:
    """GET with retries: the CDN drops the odd range request under load."""
    last: Optional[Exception] = None
    for attempt in range(RETRIES):
        req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **headers})
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                return resp.read()
        except (urllib.error.URLError, OSError) as exc:
            last = exc
            time.sleep(1.5 * (attempt + 1))
    raise RuntimeError(f"could not fetch {url}: {last}")


def index(name: str, refresh: bool = True) -> Dict[str, Any]:
    """The PEP 691 JSON page of a project; cached so that `--offline` runs reuse the last one."""
    path = cache_root() / "index" / f"{name}.json"
    if refresh or not path.exists():
        data = _request(INDEX.format(name=name), {"Accept": "application/vnd.pypi.simple.v1+json"})
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return json.loads(path.read_text())


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file; each read is one HTTP range request.

    Reads are rounded up to `block` bytes and the blocks kept, because `zipfile` reads headers a
    few dozen bytes at a time.
    """

    def __init__(self, url: str, size: int, block: int = 256 * 1024) -> None:
        super().__init__()
        self.url, self.size, self.block = url, size, block
        self.pos = 0
        self.blocks: Dict[int, bytes] = {}
        self.fetched = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def _fetch(self, start: int, end: int) -> None:
        """Fetch blocks [start, end) that are not cached, in one request per contiguous run."""
        missing = [b for b in range(start, end) if b not in self.blocks]
        while missing:
            first = last = missing.pop(0)
            while missing and missing[0] == last + 1:
                last = missing.pop(0)
            lo, hi = first * self.block, min(self.size, (last + 1) * self.block) - 1
            data = _request(self.url, {"Range": f"bytes={lo}-{hi}"})
            if len(data) != hi - lo + 1:
                raise RuntimeError(f"{self.url}: asked for {hi - lo + 1} bytes, got {len(data)}")
            self.fetched += len(data)
            for b in range(first, last + 1):
                off = (b - first) * self.block
                self.blocks[b] = data[off : off + self.block]

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.size - self.pos
        n = min(n, self.size - self.pos)
        if n <= 0:
            return b""
        first, last = self.pos // self.block, (self.pos + n - 1) // self.block
        self._fetch(first, last + 1)
        data = b"".join(self.blocks[b] for b in range(first, last + 1))
        off = self.pos - first * self.block
        out = data[off : off + n]
        self.pos += len(out)
        return out

    def readinto(self, buf: Any) -> int:
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)


class Wheel:
    """The members of one remote wheel, fetched on demand and cached under its sha256."""

    def __init__(self, file: Dict[str, Any]) -> None:
        self.filename: str = file["filename"]
        self.url: str = file["url"]
        self.size: int = int(file["size"])
        self.sha256: str = file["hashes"]["sha256"]
        self.dir = cache_root() / "wheels" / self.sha256
        self._zip: Optional[zipfile.ZipFile] = None
        self._raw: Optional[RangeFile] = None
        self._names: Optional[list] = None

    def _open(self) -> zipfile.ZipFile:
        if self._zip is None:
            # Large blocks for the directory, which zipfile reads sequentially from the end.
            self._raw = RangeFile(self.url, self.size, block=1 << 20)
            self._zip = zipfile.ZipFile(self._raw)
        return self._zip

    def prefetch(self, names: list, gap: int = 1 << 20) -> None:
        """Fetch the members `names` not cached yet in a few large range requests, not one each:
        members that lie within `gap` bytes of each other come in one span (a wheel's files are
        stored by path, so a package's sources are mostly one run)."""
        wanted = [n for n in names if not (self.dir / "files" / n).exists() and n in self.names()]
        if not wanted:
            return
        zf = self._open()
        assert self._raw is not None
        # A member is its local header (30 bytes, its name, an extra field) and its data.
        infos = [zf.getinfo(n) for n in wanted]
        spans = sorted((i.header_offset, i.header_offset + 30 + len(i.filename.encode()) + 1024
                        + i.compress_size) for i in infos)
        merged: List[List[int]] = []
        for lo, hi in spans:
            if merged and lo - merged[-1][1] <= gap:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        block = self._raw.block
        for lo, hi in merged:
            self._raw._fetch(lo // block, min(hi, self.size - 1) // block + 1)
        for n in wanted:
            self.member(n)

    def names(self) -> list:
        """Every member name; the central directory is cached as a plain list."""
        if self._names is None:
            path = self.dir / "names.json"
            if path.exists():
                self._names = json.loads(path.read_text())
            else:
                self._names = self._open().namelist()
                self.dir.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(self._names))
        return self._names

    def member(self, name: str) -> Optional[Path]:
        """A local copy of one member (None when the wheel has no such file)."""
        local = self.dir / "files" / name
        if local.exists():
            return local
        if name not in self.names():
            return None
        zf = self._open()
        info = zf.getinfo(name)
        data = zf.read(info)
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = local.with_name(local.name + ".tmp")
        tmp.write_bytes(data)
        os.chmod(tmp, 0o755 if info.external_attr >> 16 & 0o111 else 0o644)
        os.replace(tmp, local)
        return local

    def text(self, name: str) -> Optional[str]:
        path = self.member(name)
        return path.read_text(encoding="utf-8", errors="replace") if path else None


class Sdist:
    """A source distribution (`.tar.gz`), downloaded whole once (sdists are small) and cached under
    its sha256; member names drop the archive's top folder (`xformers-0.0.28/`)."""

    def __init__(self, file: Dict[str, Any]) -> None:
        self.filename: str = file["filename"]
        self.url: str = file["url"]
        self.sha256: str = file["hashes"]["sha256"]
        self.path = cache_root() / "sdists" / f"{self.sha256}.tar.gz"
        self._members: Optional[Dict[str, Any]] = None

    def _open(self) -> Dict[str, Any]:
        if self._members is None:
            import tarfile

            if not self.path.exists():
                data = _request(self.url, {})
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_suffix(".tmp")
                tmp.write_bytes(data)
                os.replace(tmp, self.path)
            tar = tarfile.open(self.path, "r:*")
            self._tar = tar
            self._members = {m.name.partition("/")[2]: m for m in tar.getmembers() if m.isfile()}
        return self._members

    def names(self) -> list:
        return sorted(self._open())

    def prefetch(self, names: list) -> None:
        self._open()

    def text(self, name: str) -> Optional[str]:
        member = self._open().get(name)
        if member is None:
            return None
        f = self._tar.extractfile(member)
        return f.read().decode("utf-8", errors="replace") if f else None


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
