module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%x: f32, %o: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %v = vector.load %o[%c0] : memref<?xf32>, vector<32768xf32>
    %m = arith.cmpf olt, %v, %v : vector<32768xf32>
    %w = arith.select %m, %v, %v : vector<32768xi1>, vector<32768xf32>
    vector.store %w, %o[%c0] : memref<?xf32>, vector<32768xf32>
    gpu.return
  }
}
}