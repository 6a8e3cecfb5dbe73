module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> f32
    %b = math.powf %a, %a : f32
    llvm.store %b, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}
}