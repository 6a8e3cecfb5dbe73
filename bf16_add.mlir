module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> bf16
    %b = arith.addf %a, %a : bf16
    llvm.store %b, %p : bf16, !llvm.ptr<1>
    gpu.return
  }
}
}