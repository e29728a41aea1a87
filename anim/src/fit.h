// fit(v): a vector's capacity brought down to its size. std::vector::shrink_to_fit is only a
// request, and libstdc++ ignores it in code built without exceptions (the handheld profile's
// engine code), where a compressed clip then kept twice the memory it reports needing. A copy of
// exactly the size does it in every build. Internal to anim/src; for set-up, not per frame.
#pragma once

#include <vector>

namespace spindle::anim::detail {

template <class T>
void fit(std::vector<T>& v) {
  if (v.capacity() != v.size()) std::vector<T>(v.begin(), v.end()).swap(v);
}

}  // namespace spindle::anim::detail
