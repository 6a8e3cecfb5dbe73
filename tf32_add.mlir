module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> tf32
    %b = arith.addf %a, %a : tf32
    llvm.store %b, %p : tf32, !llvm.ptr<1>
    gpu.return
  }
}
}