# fuzz_dsl seed 22030 (--rate 0.02): an atomic on an index tensor built an
# llvm.atomicrmw on `index`, and its verifier hit an assertion in LLVM's
# type checks (isScalableVectorType: "expected LLVM-compatible vector type").
# EXPECT atomic: atomic add on Index: declare the tensor (or convert the value) as Int64
from nvtma import cuda, dsl


@dsl.kernel(block=(128,))
def k(counts: dsl.Tensor("index", (256,))):
    cuda.red_add(counts, (dsl.thread_idx(),), dsl.Uint32(1))  # MARK:error


if __name__ == "__main__":
    k.compile()
