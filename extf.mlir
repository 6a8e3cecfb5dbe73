module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @k(%x: f32, %o: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %h = arith.truncf %x : f32 to f16
    %a = vector.broadcast %h : f16 to vector<32768xf16>
    %d = arith.extf %a : vector<32768xf16> to vector<32768xf64>
    %t = arith.truncf %d : vector<32768xf64> to vector<32768xf32>
    vector.store %t, %o[%c0] : memref<?xf32>, vector<32768xf32>
    gpu.return
  }
}
}