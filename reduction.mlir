module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%x: f32, %o: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %a = vector.broadcast %x : f32 to vector<32768xf32>
    %r = vector.reduction <add>, %a : vector<32768xf32> into f32
    memref.store %r, %o[%c0] : memref<?xf32>
    gpu.return
  }
}
}