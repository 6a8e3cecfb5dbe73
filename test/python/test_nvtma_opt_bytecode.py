"""nvtma-opt on MLIR bytecode: valid bytecode reads as its text does, and
corrupted bytecode is an error and exit status 1, never an abort or a hang.

MLIR 22's bytecode reader trusts fields it has not checked: single flipped
bytes of a six-line module make it fail an assertion, ask SmallVector for
2^57 elements (a fatal error) or loop forever. nvtma-opt therefore reads a
bytecode input in a forked child first (tools/nvtma-opt/nvtma-opt.cpp)."""

import subprocess
import time

from helpers import REPO, load_file, nvtma_opt

MODULE = """\
func.func private @f(memref<4x8xf32>, memref<?x16xi8, strided<[32, 1]>>) -> vector<4xf16>
func.func @g(%a: i32) -> i32 {
  %c = arith.constant 7 : i32
  %s = arith.addi %a, %c : i32
  return %s : i32
}
"""

# What an abort, a fatal error or a sanitizer prints: the fuzzer's markers.
CRASH_BANNER = load_file("fuzz_nvtma_opt", REPO / "test" / "fuzz" / "fuzz_nvtma_opt.py").CRASH_MARKERS


def _opt(path, *args, timeout=60):
    return subprocess.run([nvtma_opt(), *args, str(path)], capture_output=True, text=True, errors="replace",
                          timeout=timeout)


def _bytecode(tmp_path):
    text = tmp_path / "m.mlir"
    text.write_text(MODULE)
    out = tmp_path / "m.mlirbc"
    subprocess.run([nvtma_opt(), str(text), "--emit-bytecode", "-o", str(out)], check=True)
    return text, out.read_bytes()


def test_valid_bytecode_reads_as_its_text(tmp_path):
    text, data = _bytecode(tmp_path)
    assert data[:4] == b"ML\xefR"
    (tmp_path / "ok.mlirbc").write_bytes(data)
    from_bytecode = _opt(tmp_path / "ok.mlirbc")
    from_text = _opt(text)
    assert from_bytecode.returncode == 0, from_bytecode.stderr
    assert from_bytecode.stdout == from_text.stdout
    assert "memref<?x16xi8, strided<[32, 1]>>" in from_bytecode.stdout


def test_corrupted_bytecode_is_an_error_not_a_crash(tmp_path):
    """Every byte past the magic set to 0x00 and to 0xff, one at a time."""
    _, data = _bytecode(tmp_path)
    bad = tmp_path / "bad.mlirbc"
    outcomes = {"read": 0, "refused": 0, "corrupted": 0, "timed out": 0}
    for offset in range(4, len(data)):
        for value in (0x00, 0xFF):
            if data[offset] == value:
                continue
            mutated = bytearray(data)
            mutated[offset] = value
            bad.write_bytes(mutated)
            start = time.monotonic()
            r = _opt(bad, "--nvtma-bytecode-read-limit=1")
            took = time.monotonic() - start
            where = f"byte {offset} = {value:#04x}: rc {r.returncode}\n{r.stderr[-800:]}"
            assert r.returncode in (0, 1), where
            assert not CRASH_BANNER.search(r.stderr), where
            if r.returncode == 0:
                outcomes["read"] += 1
            elif "corrupted MLIR bytecode" in r.stderr:
                looped = "had not finished after 1 s (--nvtma-bytecode-read-limit)" in r.stderr
                outcomes["timed out" if looped else "corrupted"] += 1
                assert took < (10 if looped else 5), where
                assert f"{bad}: error: corrupted MLIR bytecode: MLIR's bytecode reader " in r.stderr, where
            else:
                outcomes["refused"] += 1
                assert "error:" in r.stderr, where
    # With MLIR 22.1.8 these bytes reach each of the reader's failures: its
    # own diagnostics, aborts and fatal errors, and an endless loop.
    assert outcomes["refused"] > 50 and outcomes["corrupted"] >= 3 and outcomes["timed out"] >= 1, outcomes
