module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> f16
    %i = arith.fptosi %a : f16 to i128
    %b = arith.sitofp %i : i128 to f16
    llvm.store %b, %p : f16, !llvm.ptr<1>
    gpu.return
  }
}
}