# fuzz_dsl seed 242: lang.WarpRole(w, regs=...) in a kernel for sm_90 (not
# sm_90a): "LLVM ERROR: Cannot select: intrinsic
# %llvm.nvvm.setmaxnreg.dec.sync.aligned.u32" ended the process.
# EXPECT arch: setmaxnreg (regs=232) is an arch-specific instruction
from nvtma import dsl, lang


@dsl.kernel(block=(128,), arch="sm_90")
def k(y: dsl.Tensor("f32", (128,))):
    with lang.WarpRole(1, regs=232):  # MARK:error
        y[dsl.thread_idx()] = 1.0


if __name__ == "__main__":
    k.compile()
