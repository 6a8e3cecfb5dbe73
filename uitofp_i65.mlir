module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i65
    %f = arith.uitofp %a : i65 to f64
    %b = arith.fptoui %f : f64 to i65
    llvm.store %b, %p : i65, !llvm.ptr<1>
    gpu.return
  }
}
}