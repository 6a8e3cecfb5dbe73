# fuzz_dsl seed 1501 (reduced): a store to an i1 tensor reached LLVM's memref
# lowering, which asserts `integralElementType.getWidth() >= 8`: abort.
# EXPECT dtype: a store of a Boolean (i1) tensor
from nvtma import dsl


@dsl.kernel(block=(128,))
def k(flags: dsl.Tensor("i1", (128,))):
    flags[dsl.thread_idx()] = dsl.thread_idx() < 3  # MARK:error


if __name__ == "__main__":
    k.compile()
