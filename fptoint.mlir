module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%x: f32, %o: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %a = vector.broadcast %x : f32 to vector<32768xf32>
    %i = nvtma.fptoint_sat %a : vector<32768xf32> to vector<32768xi64>
    %f = arith.sitofp %i : vector<32768xi64> to vector<32768xf32>
    vector.store %f, %o[%c0] : memref<?xf32>, vector<32768xf32>
    gpu.return
  }
}
}