module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i127
    %b = arith.divsi %a, %a : i127
    llvm.store %b, %p : i127, !llvm.ptr<1>
    gpu.return
  }
}
}