# wgmma.mma_async with a_type/b_type "f32" (what an f32 tile's descriptor
# also said) reached an llvm_unreachable in NVVM's wgmma op: abort.
# EXPECT wgmma: wgmma a_type 'f32': one of bf16, e4m3, e5m2, f16, tf32
from nvtma import dsl, wgmma


@dsl.kernel(block=(128,))
def k(y: dsl.Tensor("f32", (128,)), a: dsl.Uint64, b: dsl.Uint64):
    acc = wgmma.Accumulator(64)
    wgmma.fence()
    acc = wgmma.mma_async(acc, a, b, a_type="f32", b_type="f32")  # MARK:error
    wgmma.commit_group()
    wgmma.wait_group(0)
    y[dsl.thread_idx()] = acc[0]


if __name__ == "__main__":
    k.compile()
