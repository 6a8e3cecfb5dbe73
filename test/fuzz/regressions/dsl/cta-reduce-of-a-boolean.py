# fuzz_dsl seed 1501: cuda.cta_min of a Boolean put its partials through an
# i1 shared scratch buffer: the same StoreOpLowering assertion, abort.
# EXPECT reduce: cta_reduce of a Boolean
from nvtma import cuda, dsl


@dsl.kernel(block=(128,))
def k(y: dsl.Tensor("f32", (128,))):
    y[dsl.thread_idx()] = cuda.cta_min(dsl.thread_idx() < 3).to(dsl.Float32)  # MARK:error


if __name__ == "__main__":
    k.compile()
