module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i128
    %f = arith.sitofp %a : i128 to f32
    %b = arith.fptosi %f : f32 to i128
    llvm.store %b, %p : i128, !llvm.ptr<1>
    gpu.return
  }
}
}