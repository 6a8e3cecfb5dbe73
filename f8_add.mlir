module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> f8E4M3FN
    %b = arith.addf %a, %a : f8E4M3FN
    llvm.store %b, %p : f8E4M3FN, !llvm.ptr<1>
    gpu.return
  }
}
}