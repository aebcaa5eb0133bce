"""`make install` and what a C/C++ project does with it (issue 12): a versioned shared library
(libq8rt.so.X.Y.Z, SONAME libq8rt.so.X, symlinks), a pkg-config file and a relocatable CMake
package, used to build examples/embed.c from outside the source tree:

- `make install DESTDIR=build/test-install/root PREFIX=/usr/local` (a staged install, as a
  distribution package build does it);
- CMake: tests/install/CMakeLists.txt with CMAKE_PREFIX_PATH at the staged prefix
  (find_package(q8rt 0.1) -> q8rt::q8rt and q8rt::q8rt_static); find_package(q8rt 0.2) must fail;
- pkg-config (PKG_CONFIG_SYSROOT_DIR at the stage root): shared and --static;
- every binary runs the classifier model and prints the same thing, including
  q8rt_version() == the header's version; the shared ones load libq8rt.so.X through its SONAME.
Skipped in the sanitizer build (the install is of the optimized library). About 10 s.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import q8rt_harness as h

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"
MODEL = BUILD / "models" / "cls" / "qop_u8s8_pc.onnx"

pytestmark = pytest.mark.skipif(h.is_sanitized_build(), reason="installs the optimized build")


def version() -> str:
    return re.search(r'#define Q8RT_VERSION_STRING "([^"]+)"', (REPO / "include" / "q8rt.h").read_text()).group(1)


def run(args, env=None, cwd=None, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    if check:
        assert r.returncode == 0, f"{' '.join(map(str, args))}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    root = BUILD / "test-install" / "root"
    shutil.rmtree(BUILD / "test-install", ignore_errors=True)
    run(["make", "-s", "-C", REPO, "install", f"DESTDIR={root}", "PREFIX=/usr/local"])
    return root, root / "usr" / "local"


def test_layout_and_soname(staged):
    _, prefix = staged
    v = version()
    major = v.split(".")[0]
    lib = prefix / "lib"
    assert (lib / f"libq8rt.so.{v}").is_file() and not (lib / f"libq8rt.so.{v}").is_symlink()
    assert os.readlink(lib / f"libq8rt.so.{major}") == f"libq8rt.so.{v}"
    assert os.readlink(lib / "libq8rt.so") == f"libq8rt.so.{major}"
    dyn = run(["readelf", "-d", lib / f"libq8rt.so.{v}"]).stdout
    assert f"Library soname: [libq8rt.so.{major}]" in dyn
    for f in ["include/q8rt.h", "lib/libq8rt.a", "bin/q8rt-run", "lib/pkgconfig/q8rt.pc",
              "lib/cmake/q8rt/q8rt-config.cmake", "lib/cmake/q8rt/q8rt-config-version.cmake"]:
        assert (prefix / f).is_file(), f
    assert "@" not in (lib / "cmake" / "q8rt" / "q8rt-config.cmake").read_text()
    assert f"Version: {v}" in (lib / "pkgconfig" / "q8rt.pc").read_text()


def check_embed(exe: Path, env=None, shared=True) -> str:
    r = run([exe, MODEL], env=env)
    v = version()
    assert r.stdout.startswith(f"q8rt {v} (header {v})\n"), r.stdout
    assert "output " in r.stdout and "first values:" in r.stdout, r.stdout
    needed = run(["readelf", "-d", exe]).stdout
    if shared:
        assert f"Shared library: [libq8rt.so.{v.split('.')[0]}]" in needed, needed
    else:
        assert "libq8rt" not in needed, needed
    return r.stdout


def test_cmake_find_package(staged, tmp_path):
    _, prefix = staged
    if shutil.which("cmake") is None:
        pytest.fail("cmake not found (third_party/install-deps.sh installs it)", pytrace=False)
    bdir = tmp_path / "cmake-build"
    r = run(["cmake", "-S", REPO / "tests" / "install", "-B", bdir, f"-DCMAKE_PREFIX_PATH={prefix}",
             "-DCMAKE_BUILD_TYPE=Release"])
    assert f"found q8rt {version()} in {prefix}/lib/cmake/q8rt" in r.stdout, r.stdout
    run(["cmake", "--build", bdir, "-j", "2"])
    out_shared = check_embed(bdir / "embed_shared")  # CMake's build rpath points at the stage
    out_static = check_embed(bdir / "embed_static", shared=False)
    assert out_shared == out_static
    # a newer minor version than installed must not be found (0.x: minor releases may break the ABI)
    r = run(["cmake", "-S", REPO / "tests" / "install", "-B", tmp_path / "too-new", f"-DCMAKE_PREFIX_PATH={prefix}",
             "-DQ8RT_WANT=0.2"], check=False)
    assert r.returncode != 0 and "q8rt" in r.stderr and "0.2" in r.stderr, r.stderr


def test_pkg_config(staged, tmp_path):
    root, prefix = staged
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"), PKG_CONFIG_SYSROOT_DIR=str(root))
    assert run(["pkg-config", "--modversion", "q8rt"], env=env).stdout.strip() == version()
    cflags = run(["pkg-config", "--cflags", "q8rt"], env=env).stdout.split()
    outs = []
    for static in (False, True):
        libs = run(["pkg-config", "--libs"] + (["--static"] if static else []) + ["q8rt"], env=env).stdout.split()
        exe = tmp_path / ("embed_static" if static else "embed_shared")
        link = ["-static-libgcc", "-Wl,-Bstatic", "-lq8rt", "-Wl,-Bdynamic"] if static else []
        libs = [x for x in libs if x != "-lq8rt"] if static else libs
        run([os.environ.get("CC", "cc"), REPO / "examples" / "embed.c", "-o", exe] + cflags +
            (libs[:1] + link + libs[1:] if static else libs))
        run_env = dict(os.environ, LD_LIBRARY_PATH=str(prefix / "lib")) if not static else None
        outs.append(check_embed(exe, env=run_env, shared=not static))
    assert outs[0] == outs[1]
