# fuzz_dsl seed 1355: acc[i] past the accumulator's n/2 registers built an
# llvm.extractvalue past the struct: ArrayRef "Invalid index!" assertion, abort.
# EXPECT wgmma: accumulator register 32 of a 64 x 64 accumulator: it has 32 (0-31)
from nvtma import dsl, wgmma


@dsl.kernel(block=(128,))
def k(y: dsl.Tensor("f32", (128,))):
    acc = wgmma.Accumulator(64)
    y[dsl.thread_idx()] = acc[32]  # MARK:error


if __name__ == "__main__":
    k.compile()
