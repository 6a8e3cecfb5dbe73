"""GPU tests of the kernel ABI the lowering gives (issue 16 / contracts.md
item 1): TMA into gpu.dynamic_shared_memory next to a static mbarrier, a
kernel compiled for exactly its block (.reqntid) and its cluster
(.reqnctapercluster). Skipped without a GPU.

The AOT path (the H200 box has no MLIR extension) needs these kernels in
$NVTMA_GPU_ARTIFACTS: add SPECS to gpu_cases.all_specs()."""

import dataclasses

import pytest

from conftest import build

pytestmark = pytest.mark.gpu

_BARS = "!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>"


@dataclasses.dataclass
class Spec:
    ir: str
    name: str


def _dynamic_smem_copy(cluster: int) -> Spec:
    """64x64 f16 in and out through a 128-byte-swizzled tile at offset 0 of
    dynamic shared memory, with the mbarrier in static shared memory: when
    the dynamic buffer was a demoted static variable, the TMA load wrote
    over the mbarrier it completes on."""
    ld = "!nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b>"
    st = "!nvtma.tma_atom<store, f16, box = [64, 64], swizzle = swizzle_128b>"
    mem = "memref<64x64xf16>"
    tile = "memref<64x64xf16, #gpu.address_space<workgroup>>"
    name = f"dyn_smem_copy_c{cluster}"
    ir = f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {{
    gpu.func @{name}(%in: {mem}, %out: {mem}) kernel attributes {{
        known_block_size = array<i32: 128, 1, 1>, known_cluster_size = array<i32: {cluster}, 1, 1>,
        nvtma.dynamic_smem = 8192 : i64}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s = memref.view %dyn[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to {tile}
      %a = nvtma.make_tiled_tma_atom %in {{cta_tiler = array<i64: 64, 64>}} : {mem} -> {ld}
      %b = nvtma.make_tiled_tma_atom %out {{cta_tiler = array<i64: 64, 64>}} : {mem} -> {st}
      %bar = nvgpu.mbarrier.create -> {_BARS}
      %tid = gpu.thread_id x
      %is0 = arith.cmpi eq, %tid, %c0 : index
      %w = arith.divui %tid, %c32 : index
      %w0 = arith.cmpi eq, %w, %c0 : index
      scf.if %is0 {{
        nvgpu.mbarrier.init %bar[%c0], %c1 : {_BARS}
        nvvm.fence.mbarrier.init
      }}
      gpu.barrier
      scf.if %is0 {{
        %bytes = arith.constant 8192 : index
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : {_BARS}
      }}
      scf.if %w0 {{
        nvtma.copy %a[%c0, %c0], %s, barrier %bar[%c0] : {ld}, {tile}, {_BARS}
      }}
      %phase = arith.constant false
      %ticks = arith.constant 10000000 : index
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %phase, %ticks : {_BARS}
      %rank = gpu.cluster_block_id x
      %first = arith.cmpi eq, %rank, %c0 : index
      %store = arith.andi %w0, %first : i1
      scf.if %store {{
        nvtma.copy %b[%c0, %c0], %s : {st}, {tile}
        nvtma.bulk_commit_group
        nvtma.bulk_wait_group 0
      }}
      gpu.return
    }}
  }}
}}
"""
    return Spec(ir, name)


SPECS = [_dynamic_smem_copy(1), _dynamic_smem_copy(2)]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_tma_into_dynamic_shared_memory(spec):
    torch = pytest.importorskip("torch")
    mod = build(spec)
    rec = mod.kernels[spec.name]
    cluster = rec["launch"]["cluster"]
    assert rec["launch"]["block"] == [128, 1, 1] and rec["launch"]["smem"] == 8192
    x = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    y = torch.full((64, 64), 7.0, dtype=torch.float16, device="cuda")
    grid = (cluster[0], 1, 1)
    getattr(mod, spec.name)(x, y, grid=grid, block=(128, 1, 1), cluster=tuple(cluster), smem=8192)
    torch.cuda.synchronize()
    assert torch.equal(x.view(torch.int16), y.view(torch.int16)), "the tile did not survive dynamic smem"


def test_the_block_is_required():
    """.reqntid: a launch with another block size is refused by the driver
    (CUDA_ERROR_INVALID_VALUE), not run with a wrong block."""
    torch = pytest.importorskip("torch")
    spec = SPECS[0]
    mod = build(spec)
    x = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    y = torch.zeros(64, 64, dtype=torch.float16, device="cuda")
    with pytest.raises(Exception):
        getattr(mod, spec.name)(x, y, grid=(1, 1, 1), block=(64, 1, 1), smem=8192)
        torch.cuda.synchronize()
