# fuzz_dsl (an ExitStack mutation): a dsl.if_ entered and never exited left
# its insertion point on MLIR's context stack; the kernel built (returning
# inside the branch) and the interpreter aborted at exit: "PyThreadState_Get:
# the function must be called with the GIL held".
# EXPECT region: this dsl.if_ is entered but never exited
import contextlib

from nvtma import dsl


@dsl.kernel(block=(128,))
def k(y: dsl.Tensor("f32", (128,))):
    stack = contextlib.ExitStack()
    stack.enter_context(dsl.if_(dsl.thread_idx() < 3))  # MARK:error
    y[dsl.thread_idx()] = 1.0


if __name__ == "__main__":
    k.compile()
