# A load from a Boolean shared buffer: LoadOpLowering's assertion on i1, abort.
# EXPECT dtype: a load of a Boolean (i1) tensor
from nvtma import dsl, lang


@dsl.kernel(block=(128,))
def k(y: dsl.Tensor("f32", (128,))):
    s = lang.SMEMPool().alloc((4,), dsl.Boolean)
    y[dsl.thread_idx()] = s[1].to(dsl.Float32)  # MARK:error


if __name__ == "__main__":
    k.compile()
