module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%x: f32, %o: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %v = vector.broadcast %x : f32 to vector<16385xf32>
    vector.store %v, %o[%c0] : memref<?xf32>, vector<16385xf32>
    gpu.return
  }
}
}