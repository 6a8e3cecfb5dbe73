# A value kept from another kernel's build (here a tensor argument stored in
# a global) used in the next build: an op mixing two MLIR contexts, segfault.
# EXPECT foreign-value: this TensorValue was made for another kernel's build and is used in another build
from nvtma import dsl

KEPT = []


@dsl.kernel(block=(128,))
def first(x: dsl.Tensor("f32", (128,))):
    KEPT.append(x)


@dsl.kernel(block=(128,))
def second(y: dsl.Tensor("f32", (128,))):
    KEPT[0][dsl.thread_idx()] = 1.0  # MARK:error


if __name__ == "__main__":
    first.build()
    second.compile()
