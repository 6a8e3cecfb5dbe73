module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> f16
    %b = arith.remf %a, %a : f16
    llvm.store %b, %p : f16, !llvm.ptr<1>
    gpu.return
  }
}
}