module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i129
    %b = arith.divsi %a, %a : i129
    llvm.store %b, %p : i129, !llvm.ptr<1>
    gpu.return
  }
}
}