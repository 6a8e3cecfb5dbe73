# Accumulator.from_values with more values than registers built an
# llvm.insertvalue past the struct (the same assertion as acc[i]).
# EXPECT wgmma: Accumulator.from_values(8, ...) takes at most 4 values (n/2 a thread), got 5
from nvtma import dsl, wgmma


@dsl.kernel(block=(128,))
def k(y: dsl.Tensor("f32", (128,))):
    acc = wgmma.Accumulator.from_values(8, [dsl.Float32(1.0)] * 5)  # MARK:error
    y[dsl.thread_idx()] = acc[0]


if __name__ == "__main__":
    k.compile()
