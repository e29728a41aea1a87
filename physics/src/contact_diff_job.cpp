#include "spindle/physics/contact_diff_job.h"

#include <cstddef>
#include <limits>

namespace spindle::physics {

namespace {

bool strictly_ascending(std::span<const ContactPair> pairs) {
  if (pairs.size() > std::numeric_limits<std::uint32_t>::max()) return false;
  for (std::size_t i = 1; i < pairs.size(); ++i)
    if (!(pairs[i - 1] < pairs[i])) return false;
  return true;
}

}  // namespace

bool ContactDiffJob::validate() const {
  return began_count != nullptr && ended_count != nullptr && began.size() >= current.size() &&
         ended.size() >= previous.size() && strictly_ascending(previous) &&
         strictly_ascending(current);
}

bool ContactDiffJob::run() const {
  if (!validate()) return false;
  std::uint32_t began_n = 0, ended_n = 0;
  std::size_t i = 0, j = 0;  // current, previous
  while (i < current.size() || j < previous.size()) {
    if (j == previous.size() || (i < current.size() && current[i] < previous[j])) {
      began[began_n++] = static_cast<std::uint32_t>(i++);
    } else if (i == current.size() || previous[j] < current[i]) {
      ended[ended_n++] = static_cast<std::uint32_t>(j++);
    } else {  // in both: still touching
      ++i, ++j;
    }
  }
  *began_count = began_n;
  *ended_count = ended_n;
  return true;
}

}  // namespace spindle::physics
