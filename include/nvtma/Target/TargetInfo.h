//===- TargetInfo.h - what LLVM's NVPTX backend can select ------*- C++ -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one table of GPU chips and PTX ISA versions the NVPTX backend of the
// LLVM nvtma is built against (22) accepts. A chip it does not know, or a PTX
// version older than the chip needs, does not fail politely there: LLVM
// reports a fatal error or an instruction it "cannot select" and the process
// ends. Every entry point that hands a target to LLVM (the nvtma-to-ptx
// pipeline, nvtma-check-target, lower_to_ptx) checks it here first.
//
// Plain C++: no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_TARGET_TARGETINFO_H
#define NVTMA_TARGET_TARGETINFO_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nvtma::target {

/// One `-mcpu` of the NVPTX backend.
struct Chip {
  const char *name;  ///< "sm_90a"
  unsigned sm;       ///< 90
  char suffix;       ///< 0, 'a' (architecture-specific) or 'f' (family)
  unsigned minPtx;   ///< the oldest PTX ISA (times 10) LLVM emits for it
};

/// Every chip LLVM 22's NVPTX backend selects, in `llc -mcpu=help` order of
/// generations.
const Chip *chipsBegin();
const Chip *chipsEnd();

/// The chip called `name`, or nullptr.
const Chip *lookupChip(std::string_view name);

/// The most static shared memory (bytes) ptxas gives one kernel of `chip`
/// (CUDA 13.0's ptxas, measured): 48 KiB, or for an architecture-specific
/// `a` chip what a CTA of it can opt into (227 KiB from sm_90a, 99 KiB on
/// sm_120a and sm_121a).
unsigned maxStaticSharedMemory(const Chip &chip);

/// Whether LLVM 22 knows `+ptx<ptx>` (32, 40, ..., 88, 90).
bool isKnownPtx(unsigned ptx);

/// The newest PTX ISA LLVM 22 emits, and the one nvtma asks for when the
/// caller names none (raised to the chip's minimum where that is newer).
constexpr unsigned kNewestPtx = 90;
constexpr unsigned kDefaultPtx = 86;
/// The oldest chip with a TMA unit.
constexpr unsigned kMinTmaSM = 90;

/// "sm_90, sm_90a, ..." (chips from `minSM` on).
std::string supportedChips(unsigned minSM = 0);
/// "+ptx80, +ptx81, ..." (versions `chip` accepts).
std::string supportedPtx(const Chip &chip);

/// A target as the NVVM serializer will see it.
struct Resolved {
  const Chip *chip = nullptr;
  unsigned ptx = 0;        ///< the PTX ISA LLVM will emit
  std::string features;    ///< "+ptxNN": what to hand to #nvvm.target
  unsigned optLevel = 3;
};

/// Checks a target: `chip` must be one LLVM selects, `features` empty (the
/// default PTX ISA) or a single known `+ptxNN` the chip accepts, `optLevel`
/// 0..3. `defaultPtx` says what empty features mean: kDefaultPtx raised to
/// the chip's minimum for a target nvtma attaches, 0 for one written in the
/// IR (LLVM then emits the chip's minimum). On failure returns false and
/// sets `error` to a message naming the rule, the value and the supported
/// set.
bool resolve(std::string_view chip, std::string_view features,
             int64_t optLevel, Resolved &out, std::string &error,
             unsigned defaultPtx = kDefaultPtx);

} // namespace nvtma::target

#endif // NVTMA_TARGET_TARGETINFO_H
