"""A minimal in-tree PEP 517 build backend for the q8rt module (pyproject.toml names it).

It needs nothing from PyPI: `pip install examples/python` runs the repository's `make lib` (a C
compiler and the Debian packages of third_party/install-deps.sh; no Python headers, no compiled
extension) and writes a wheel holding q8rt/__init__.py and that libq8rt.so, tagged
py3-none-<platform> since the library is native code. Q8RT_LIBRARY_SOURCE=/path/libq8rt.so
packages that library instead of building one."""

import base64
import hashlib
import os
import subprocess
import sysconfig
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NAME, VERSION = "q8rt", "0.1.0"
DIST_INFO = f"{NAME}-{VERSION}.dist-info"


def _tag() -> str:
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _metadata() -> bytes:
    readme = (HERE / "README.md").read_text()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: Python bindings (ctypes) for q8rt, an embeddable int8 ONNX inference runtime\n"
            "License: MIT\nRequires-Python: >=3.8\nRequires-Dist: numpy\n"
            f"Description-Content-Type: text/markdown\n\n{readme}").encode()


def _wheel_file() -> bytes:
    return f"Wheel-Version: 1.0\nGenerator: q8rt_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n".encode()


def _library() -> bytes:
    src = os.environ.get("Q8RT_LIBRARY_SOURCE")
    if not src:
        if not (REPO / "Makefile").is_file() or not (REPO / "include" / "q8rt.h").is_file():
            raise RuntimeError(f"q8rt sources not found at {REPO}: install from the q8rt source tree "
                               "(pip install examples/python) or set Q8RT_LIBRARY_SOURCE")
        subprocess.check_call(["make", "-C", str(REPO), "lib"])
        src = str(REPO / "build" / "libq8rt.so")
    return Path(os.path.realpath(src)).read_bytes()


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = Path(metadata_directory) / DIST_INFO
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_bytes(_metadata())
    (d / "WHEEL").write_bytes(_wheel_file())
    return DIST_INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {f"{NAME}/__init__.py": (HERE / NAME / "__init__.py").read_bytes(),
             f"{NAME}/libq8rt.so": _library(),
             f"{DIST_INFO}/METADATA": _metadata(),
             f"{DIST_INFO}/WHEEL": _wheel_file()}
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{DIST_INFO}/RECORD,,")
    files[f"{DIST_INFO}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{NAME}-{VERSION}-{_tag()}.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if path.endswith(".so") else 0o644) << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return name
