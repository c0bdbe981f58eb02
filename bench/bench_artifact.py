"""Benchmark: the static part of `check --artifact` on a 1 GB AOTInductor package.

Goal: reading what a package was built for takes under a second for a package of a gigabyte, and at
most a tenth of the time it takes just to read the file once: the reader opens the zip's directory,
the metadata, and the ELF headers and sections it needs of each `.so`, in place; it never reads the
embedded weights. The 1 GB package is a real one (built by the test torch) whose model `.so` gets a
1 GB section of constants (objcopy), as a package built with its weights in the `.so` has. All
figures come from one run of this script, back to back:

    python bench/bench_artifact.py [--package model.pt2] [--size-mb 1024]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def default_package() -> Path:
    from importlib.metadata import version

    envs = Path(os.environ.get("INDUCTOR_DOCTOR_TEST_ENVS", Path.home() / ".cache" / "inductor-doctor-tests"))
    out = envs / "artifacts" / version("torch")
    if not (out / ".ready").exists():
        subprocess.run([sys.executable, str(REPO / "tests" / "data" / "artifacts" / "build.py"), str(out)],
                       check=True)
        (out / ".ready").touch()
    return out / "model.pt2"


def inflate(package: Path, size_mb: int, where: Path) -> Path:
    """A copy of `package` whose model .so carries `size_mb` MB more, stored (as AOTInductor stores)."""
    big = where / "big.pt2"
    filler = where / "constants.bin"
    with open(filler, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size_mb):
            f.write(chunk)
    stored = zipfile.ZIP_STORED
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(big, "w", stored, allowZip64=True) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".so"):
                so = where / "model.so"
                so.write_bytes(data)
                subprocess.run(["objcopy", "--add-section", f".aoti_constants={filler}", str(so)], check=True)
                dst.write(so, info.filename)
            else:
                dst.writestr(info.filename, data)
    filler.unlink()
    return big


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", type=Path, default=None)
    ap.add_argument("--size-mb", type=int, default=1024)
    ns = ap.parse_args()
    if not shutil.which("objcopy"):
        sys.exit("objcopy (binutils) is needed to build the large package")
    sys.path.insert(0, str(REPO))
    from inductor_doctor.artifact import read_artifact

    package = ns.package or default_package()
    with tempfile.TemporaryDirectory() as tmp:
        big = inflate(package, ns.size_mb, Path(tmp))
        size = big.stat().st_size
        start = time.perf_counter()
        with open(big, "rb") as f:
            while f.read(8 << 20):
                pass
        whole = time.perf_counter() - start
        times = []
        for _ in range(3):
            start = time.perf_counter()
            art = read_artifact(str(big))
            times.append(time.perf_counter() - start)
        assert art.error is None and art.objects, art.error
        so = next(o for o in art.objects if o.kind == "so")
        cli = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "inductor_doctor", "plan", "--artifact", str(big)],
                              capture_output=True, text=True, cwd=str(REPO))
        cli = time.perf_counter() - cli
    best = min(times)
    print(f"package:                          {size / 2**30:6.2f} GiB ({so.name.rsplit('/', 1)[-1]}: "
          f"{so.size / 2**30:.2f} GiB, {len(so.torch_symbols)} torch symbols, GLIBCXX_{so.glibcxx})")
    print(f"reading the whole file once:      {whole:7.3f} s")
    print(f"read_artifact (best of 3):        {best:7.3f} s   (goal < 1 s)   runs: "
          + ", ".join(f"{t:.3f}" for t in times))
    print(f"ratio read_artifact / whole read: {best / whole:7.3f}   (goal <= 0.1)")
    print(f"plan --artifact, end to end:      {cli:7.3f} s   (exit {proc.returncode})")


if __name__ == "__main__":
    main()
