module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i1
    %b = arith.xori %a, %a : i1
    llvm.store %b, %p : i1, !llvm.ptr<1>
    gpu.return
  }
}
}