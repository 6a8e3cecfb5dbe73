"""dsl.max_grid: a kernel whose work split holds only up to some number of
CTAs records that limit (launch.max_grid), and the launch refuses larger
grids (test_runtime_launch.py checks the refusal against the stub driver)."""

import dsl_testing  # noqa: F401 (puts the build on the path)
from dsl_testing import assert_names_line, build_error
from nvtma import dsl


def _kernel(*limits):
    @dsl.kernel(block=(64,))
    def k(y: dsl.Tensor("i32", (64,))):
        for n in limits:
            dsl.max_grid(n)  # the limit
        y[dsl.thread_idx()] = dsl.Int32(dsl.block_idx())
    return k


def _record(k):
    import nvtma
    return nvtma.compile(k.build().ir).records["kernels"]["k"]["launch"]


def test_the_least_limit_is_the_records_max_grid():
    assert _record(_kernel(1 << 32))["max_grid"] == 1 << 32
    assert _record(_kernel(4096, 96, 1000))["max_grid"] == 96
    assert "max_grid" not in _record(_kernel())


def test_a_limit_that_is_not_a_positive_python_int_names_the_line():
    for bad in (0, -1, True, 2.0, 1 << 63):
        e = build_error(_kernel(bad), rule="launch-config")
        assert "max_grid" in str(e) and repr(bad) in str(e), str(e)
        assert_names_line(e, __file__, "the limit")


def test_a_run_time_limit_is_refused():
    @dsl.kernel(block=(64,))
    def k(y: dsl.Tensor("i32", (64,))):
        dsl.max_grid(dsl.Int32(dsl.block_idx()))
    e = build_error(k, rule="launch-config")
    assert "known when the kernel is built" in str(e)


def test_the_gemv_records_the_grid_its_32_bit_shares_hold():
    """gemv_spec's info["max_grid"] is what its kernel records: (blockIdx + 1)
    · tiles (row blocks with split "rows") stays below 2^32."""
    import nvtma
    from nvtma.kernels.gemv import gemv
    for split, m, k in (("tiles", 4096, 8192), ("rows", 4096, 8192), ("tiles", 1 << 16, 1 << 16)):
        sp = gemv(m, k, tile=(64, 256), stages=4, split=split)
        rec = nvtma.compile(sp).records["kernels"]["gemv"]["launch"]
        total = sp.info["tiles"] if split == "tiles" else m // 64
        assert rec["max_grid"] == sp.info["max_grid"] == min(((1 << 32) - 1) // total, (1 << 31) - 1)
        assert rec["max_grid"] * total < 1 << 32
