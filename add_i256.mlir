module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i256
    %b = arith.addi %a, %a : i256
    llvm.store %b, %p : i256, !llvm.ptr<1>
    gpu.return
  }
}
}