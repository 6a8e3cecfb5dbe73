"""Launch-path diagnosis on the GPU: which handle/launcher combination works."""
import sys
import torch
from pathlib import Path
import nvtma.runtime as rt
from nvtma.runtime import driver
from cuda.bindings import driver as d

art = Path(sys.argv[1])
sys.path.insert(0, "test/python")
import gpu_cases
spec = [s for s in gpu_cases.all_specs() if s.name == "tile_copy"][0]
mod = rt.load(art / spec.key)
print("record", mod.kernels["tile_copy"].get("launch"), "grid", spec.grid)
x = torch.randn(*[300, 500], device="cuda")
x = torch.randn(spec.param_types[0].shape, device="cuda", dtype=getattr(torch, {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}.get(spec.param_types[0].element.name, "float32")))
y = torch.zeros_like(x)
k = mod.kernel("tile_copy")
try:
    k(x, y, grid=spec.grid)
    torch.cuda.synchronize()
    print("runtime launch ok", torch.equal(x, y))
except Exception as e:
    print("runtime launch:", e)
# now by hand: same packed buffer
func = k._func
print("func handle", hex(func), "buffer", hex(k._buffer.address), "ctx current", d.cuCtxGetCurrent())
try:
    fn = d.cuKernelGetFunction(d.CUkernel(func))
    print("cuKernelGetFunction", fn)
except Exception as e:
    print("cuKernelGetFunction failed", e)
g = spec.grid
s = torch.cuda.current_stream().cuda_stream
for name, f in (("CUkernel as CUfunction", d.CUfunction(func)), ("cuKernelGetFunction", fn[1] if fn[0] == 0 else None)):
    if f is None:
        continue
    r = d.cuLaunchKernel(f, g[0], g[1], g[2], 128, 1, 1, 8192 if False else k._config(g, None, None, None)[6], s, k._buffer.address, 0)
    torch.cuda.synchronize()
    print(name, "->", r, torch.equal(x, y))
r = d.cuModuleLoadData(mod.cubin)
print("module load", r[0])
f2 = d.cuModuleGetFunction(r[1], b"tile_copy")
print("module func", f2[0])
y.zero_()
r = d.cuLaunchKernel(f2[1], g[0], g[1], g[2], 128, 1, 1, k._config(g, None, None, None)[6], s, k._buffer.address, 0)
torch.cuda.synchronize()
print("module launch ->", r, torch.equal(x, y))
ext = driver._extension()
print("ext", ext, ext.init() if ext else None)
y.zero_()
ctx = driver.primary_context(0)
rc = ext.launch(int(f2[1]), g[0], g[1], g[2], 128, 1, 1, k._config(g, None, None, None)[6], s, k._buffer.address, ctx, 0, 0, 0)
torch.cuda.synchronize()
print("ext launch with module function ->", rc, torch.equal(x, y))
y.zero_()
rc = ext.launch(func, g[0], g[1], g[2], 128, 1, 1, k._config(g, None, None, None)[6], s, k._buffer.address, ctx, 0, 0, 0)
torch.cuda.synchronize()
print("ext launch with CUkernel ->", rc, torch.equal(x, y))
