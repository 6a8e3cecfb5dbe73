module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i7
    %b = arith.addi %a, %a : i7
    llvm.store %b, %p : i7, !llvm.ptr<1>
    gpu.return
  }
}
}