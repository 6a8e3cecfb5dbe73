# A wgmma accumulator kept from another kernel's build: its struct value
# lives in that build's MLIR context, and reading a register segfaulted.
# EXPECT foreign-value: this wgmma.Accumulator was made while building kernel 'first'
from nvtma import dsl, wgmma

KEPT = []


@dsl.kernel(block=(128,))
def first(x: dsl.Tensor("f32", (128,))):
    KEPT.append(wgmma.Accumulator(8))


@dsl.kernel(block=(128,))
def second(y: dsl.Tensor("f32", (128,))):
    y[dsl.thread_idx()] = KEPT[0][1]  # MARK:error


if __name__ == "__main__":
    first.build()
    second.compile()
