module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i65
    %b = arith.addi %a, %a : i65
    llvm.store %b, %p : i65, !llvm.ptr<1>
    gpu.return
  }
}
}