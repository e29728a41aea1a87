// The radix sort moved to core (spindle/core/radix_sort.h) so that physics can sort spatial keys
// without depending on render; these names keep render code and games that used them working.
//
// Usage: see spindle/core/radix_sort.h; spindle::render::radix_sort is the same function.
#pragma once

#include "spindle/core/radix_sort.h"

namespace spindle::render {
using core::kRadixBuckets;
using core::kRadixPasses;
using core::radix_sort;
using core::RadixSortScratch;
}  // namespace spindle::render
