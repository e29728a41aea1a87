// Four-lane vectors for the rasteriser (private): GCC/Clang vector extensions, which compile to
// SSE2 on x86-64 and to scalar or the target's SIMD elsewhere. Intrinsics only where they beat
// the generic form and the build allows them (SPINDLE_SIMD).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__) && (!defined(SPINDLE_SIMD) || SPINDLE_SIMD)
#include <emmintrin.h>
#define SPINDLE_RASTER_SSE2 1
#else
#define SPINDLE_RASTER_SSE2 0
#endif

// The rasteriser's per-pixel helpers must inline into its loops (GCC gives up on the larger ones).
#if defined(__GNUC__)
#define SPINDLE_RASTER_INLINE inline __attribute__((always_inline))
#else
#define SPINDLE_RASTER_INLINE inline
#endif

namespace spindle::render::raster::simd {

typedef std::int32_t v4i __attribute__((vector_size(16)));
typedef std::uint32_t v4u __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));

inline v4f splat(float x) {
  return v4f{x, x, x, x};
}
inline v4u splat_u(std::uint32_t x) {
  return v4u{x, x, x, x};
}
inline v4i splat_i(std::int32_t x) {
  return v4i{x, x, x, x};
}

// Loads and stores of 16-byte aligned data without aliasing questions.
inline v4f load_f(const float* p) {
  v4f r;
  std::memcpy(&r, __builtin_assume_aligned(p, 16), sizeof r);
  return r;
}
inline v4u load_u(const std::uint32_t* p) {
  v4u r;
  std::memcpy(&r, __builtin_assume_aligned(p, 16), sizeof r);
  return r;
}
inline void store_f(float* p, v4f v) {
  std::memcpy(__builtin_assume_aligned(p, 16), &v, sizeof v);
}
inline void store_u(std::uint32_t* p, v4u v) {
  std::memcpy(__builtin_assume_aligned(p, 16), &v, sizeof v);
}

// One bit per lane whose mask is all ones.
inline int mask_bits(v4i m) {
#if SPINDLE_RASTER_SSE2
  return _mm_movemask_ps(_mm_castsi128_ps(reinterpret_cast<__m128i>(m)));
#else
  return (m[0] & 1) | (m[1] & 2) | (m[2] & 4) | (m[3] & 8);
#endif
}

// Lanes set in mask_bits' result (no popcnt instruction on baseline x86-64).
inline int lane_count(int bits) {
  return (0x4332322132212110ull >> (4 * bits)) & 0xf;
}

// min/max that turn NaN into the bound.
inline v4f vmax(v4f a, v4f b) {
  return a > b ? a : b;
}
inline v4f vmin(v4f a, v4f b) {
  return a < b ? a : b;
}
inline v4i vmax_i(v4i a, v4i b) {
  return a > b ? a : b;
}
inline v4i vmin_i(v4i a, v4i b) {
  return a < b ? a : b;
}

inline v4f to_float(v4i v) {
  return __builtin_convertvector(v, v4f);
}
inline v4f to_float(v4u v) {
  return __builtin_convertvector(reinterpret_cast<v4i>(v), v4f);
}
inline v4i truncate(v4f v) {
  return __builtin_convertvector(v, v4i);
}

inline v4u select(v4i mask, v4u a, v4u b) {
  const v4u m = reinterpret_cast<v4u>(mask);
  return (a & m) | (b & ~m);
}
inline v4i select(v4i mask, v4i a, v4i b) {
  return (a & mask) | (b & ~mask);
}
inline v4f select(v4i mask, v4f a, v4f b) {
  return reinterpret_cast<v4f>(select(mask, reinterpret_cast<v4u>(a), reinterpret_cast<v4u>(b)));
}

}  // namespace spindle::render::raster::simd
