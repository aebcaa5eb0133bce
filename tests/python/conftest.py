"""pytest configuration for q8rt's Python suite.

Environment (set by `make test-python`):
  Q8RT_RUN    absolute path of the q8rt-run binary under test (default build/q8rt-run)
  Q8RT_BUILD  the build directory it belongs to (default build)

At the end of the session the parity / conformance counts are printed and written to
build/parity-summary.txt (build/san/parity-summary.txt for the sanitizer build).
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import q8rt_harness as h  # noqa: E402


@pytest.fixture(scope="session")
def q8rt_run() -> Path:
    exe = h.runner_path()
    if not exe.exists():
        pytest.fail(f"q8rt-run not found at {exe}: build it (make) or set Q8RT_RUN", pytrace=False)
    return exe


def _summary_path() -> Path:
    b = h.build_dir()
    # The optimized build writes build/parity-summary.txt; the sanitizer build its own file.
    if b.resolve() == h.shared_build_dir().resolve():
        return h.shared_build_dir() / "parity-summary.txt"
    return b / "parity-summary.txt"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not h.SUMMARY.parity and not h.SUMMARY.conformance:
        return
    text = h.SUMMARY.render()
    path = _summary_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        where = f"written to {path}"
    except OSError as e:
        where = f"could not write {path}: {e}"
    terminalreporter.section("q8rt parity summary")
    # Print everything but the per-test listing of passing conformance tests.
    for line in text.splitlines():
        if not line.endswith(": passed"):
            terminalreporter.write_line(line)
    terminalreporter.write_line(f"(full summary {where})")
