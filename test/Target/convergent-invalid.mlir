// RUN: nvtma-opt %s -split-input-file -verify-diagnostics

// On an op that translates to no call it is an error, not ignored.
gpu.module @k {
  gpu.func @add(%x: i32) kernel {
    // expected-error @+1 {{nvtma.convergent belongs on an llvm.inline_asm, llvm.call or llvm.call_intrinsic (ops that translate to a call), not on 'llvm.add'}}
    %y = llvm.add %x, %x {nvtma.convergent} : i32
    gpu.return
  }
}

// -----

// An op lowered before the translation would drop it.
gpu.module @k {
  gpu.func @ex2(%x: f32) kernel {
    // expected-error @+1 {{nvtma.convergent belongs on an llvm.inline_asm, llvm.call or llvm.call_intrinsic (ops that translate to a call), not on 'nvtma.float_fn'}}
    %y = nvtma.float_fn <ex2_approx> %x {nvtma.convergent} : f32
    gpu.return
  }
}

// -----

// A unit attribute: a value (false too) is not taken as one.
gpu.module @k {
  gpu.func @asm(%x: i32) kernel {
    // expected-error @+1 {{nvtma.convergent is a unit attribute (the LLVM IR call is convergent), got false}}
    %y = llvm.inline_asm has_side_effects {nvtma.convergent = false} "mov.b32 $0, $1;", "=r,r" %x : (i32) -> i32
    gpu.return
  }
}
