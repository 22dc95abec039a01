// Host emulation of the CUDA kernels in kernels/pushrelabel/: the kernel source is
// compiled as C++ with one thread per block (BDIM 1, so a thread owns all the pixels of
// its tile) and blocks run one after another, which is one legal schedule of the
// single-pass entry points (the host-driven scheme). Used by tests/kernel_emulation.rs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;

#define LIVECUT_EMU 1
#define BDIM 1
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define DYN_SMEM(name) alignas(16) static unsigned char name[1 << 18]

struct Dim3 {
    u32 x, y, z;
};
extern Dim3 threadIdx, blockIdx;

inline void __syncthreads() {}
inline int __syncthreads_or(int v) { return v != 0; }
inline void __threadfence() {}
template <class T> inline T atomicAdd(T* a, T v) { T o = *a; *a = o + v; return o; }
template <class T> inline T atomicSub(T* a, T v) { T o = *a; *a = o - v; return o; }
template <class T> inline T atomicOr(T* a, T v) { T o = *a; *a = o | v; return o; }
template <class T> inline T atomicExch(T* a, T v) { T o = *a; *a = v; return o; }
template <class T> inline T atomicCAS(T* a, T c, T v) { T o = *a; if (o == c) *a = v; return o; }
template <class T> inline T ld_relaxed(const T* p) { return *p; }
template <class T> inline void st_relaxed(T* p, T v) { *p = v; }
inline u32 ld_acquire(const u32* p) { return *p; }
inline void st_release(u32* p, u32 v) { *p = v; }
// A warp's ballot stored as one row word: here the one thread sets its pixel's bit.
inline void row_word_store(u32* words, u32 i, u32 bit) {
    if (bit) words[i / 32] |= 1u << (i % 32);
    else words[i / 32] &= ~(1u << (i % 32));
}
// A warp's sum added to a counter: here the one thread's value.
template <class T> inline void warp_add(T* counter, T v) { if (v) *counter += v; }
inline void warp_or(u32* word, u32 v) { *word |= v; }
struct Params;
// The work queue belongs to the persistent solve, which is not emulated.
inline void q_push(const Params&, u32, u32) {
    fprintf(stderr, "emulation: q_push called\n");
    abort();
}
