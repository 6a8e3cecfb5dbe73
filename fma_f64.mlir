module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> f64
    %b = math.fma %a, %a, %a : f64
    llvm.store %b, %p : f64, !llvm.ptr<1>
    gpu.return
  }
}
}