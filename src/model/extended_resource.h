// ExtendedResource: a countable node resource beyond cpu, memory and devices: "rdma/hca",
// "ephemeral-storage", "license/matlab". Nodes declare (or the agent discovers) how many they
// have, tasks request whole units, queues hold quota of them, and the ledger meters them like cpu.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus {

// A small dense id for an interned extended resource name.
using ExtendedId = uint16_t;

class ExtendedResource {
 public:
  // Parses "NAME" or "PREFIX/NAME": lowercase letters, digits, '.', '-' and '_' (PREFIX without
  // '_'), each part starting and ending with a letter or digit; not "cpu", "memory" nor a device
  // flavor ("gpu/…", "npu/…"). InvalidArgument with the reason otherwise.
  static Result<ExtendedResource> Parse(std::string_view name);

  const std::string& name() const { return name_; }
  // Returns true when amounts are bytes ("ephemeral-storage", any name ending in "storage").
  bool is_bytes() const { return bytes_; }
  // Parses an amount: whole units ("4"), or for byte resources a quantity ("500Gi").
  // InvalidArgument on a fraction or a negative amount.
  Result<int64_t> ParseAmount(std::string_view text) const;
  // Formats an amount as ParseAmount reads it ("4", "500Gi").
  std::string FormatAmount(int64_t amount) const;

  // Returns the process-wide dense id of this name, interning it on first use (thread-safe).
  ExtendedId Intern() const;
  // Returns the resource interned as `id`; `id` must come from Intern().
  static const ExtendedResource& FromId(ExtendedId id);

 private:
  std::string name_;
  bool bytes_ = false;
};

// Parses "NAME=AMOUNT,NAME=AMOUNT" ("rdma/hca=4,ephemeral-storage=500Gi") into amounts by
// name; InvalidArgument naming the bad item. An amount of 0 is kept (it declares none).
Result<std::map<std::string, int64_t>> ParseExtendedList(std::string_view text);

}  // namespace abacus
