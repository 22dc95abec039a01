// Exact push-relabel max-flow on volumes (W x H x D grids of 6, 10 or 26 neighbours),
// driven by src/maxflow/cuda/volume.rs.
//
// Layout: structure of arrays in the problem's own voxel order p = (z*H + y)*W + x.
// `res[d*n + p]` is the residual capacity of the arc from p at step OFFSETS[d]
// (reverse arc d ^ 1, as in src/grid/volume.rs); capacities are i32 >= 0, so a
// residual (at most the two directions' sum) fits in 32 unsigned bits. The terminals
// are folded: `excess[p]` = s - t where positive, `sink[p]` = t - s where positive.
// Arcs that leave the volume have capacity 0 and never gain residual capacity (only a
// push from the neighbour would give it), so no kernel tests borders: it reads a
// neighbour only through an arc with residual capacity.
//
// Scheme (Hong's lock-free push-relabel with exact global relabels):
// * vol_push: each voxel with excess and a finite height pushes to its lowest
//   residual neighbour (the sink at height 0) if it is higher, else relabels to one
//   above it; residuals and excesses change by atomics, so concurrent pushes are safe.
// * vol_relabel_init + vol_bfs: exact distances to the sink in the residual graph,
//   each block relaxing its tile to a fixpoint and the host repeating launches until
//   no height changes; voxels that cannot reach the sink get INF and stay inactive.
// * vol_count: voxels with excess that can still reach the sink; none = the preflow is
//   maximum, and the voxels at INF (cannot reach t) are the source side of a minimum cut.
// * vol_finish: the mask, and the excess left in the volume (flow = excess in - left).

#ifndef VOL_K
#error "VOL_K (6, 10 or 26 neighbours) must be defined"
#endif

#define INF 0x3fffffff
// Tile of a vol_bfs block (x, y, z), matching the launch in volume.rs (the host
// emulation in tests/emulation/ runs blocks of one voxel).
#ifndef BX
#define BX 32
#define BY 4
#define BZ 4
#endif

#ifndef LIVECUT_EMU
typedef unsigned int u32;
typedef unsigned long long u64;
#endif

// Steps (dx, dy, dz) in direction order: src/grid/volume.rs's OFFSETS.
__constant__ int DX[26] = {1, -1, 0, 0, 0, 0, 1, -1, -1, 1, 1, -1, -1, 1, 0, 0, 0, 0, 1, -1, -1, 1, 1, -1, -1, 1};
__constant__ int DY[26] = {0, 0, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0, 0, 0, 1, -1, -1, 1, 1, -1, 1, -1, -1, 1, -1, 1};
__constant__ int DZ[26] = {0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1};

// Index step of direction d in a volume of rows w and slices w*h.
__device__ __forceinline__ long long step_of(int d, int w, int h) {
    return (long long)DX[d] + (long long)w * ((long long)DY[d] + (long long)h * DZ[d]);
}

// Terminals folded into excess and sink residual; the neighbour arcs were uploaded
// into `res` as they are.
extern "C" __global__ void vol_init(const int* source, const int* sink_cap, long long* excess,
                                    u32* sink, long long n) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    long long e = (long long)source[p] - (long long)sink_cap[p];
    excess[p] = e > 0 ? e : 0;
    sink[p] = e < 0 ? (u32)(-e) : 0u;
}

// Up to `cycles` push or relabel steps of each active voxel.
extern "C" __global__ void vol_push(u32* res, long long* excess, u32* sink, int* height, int w,
                                    int h, long long n, int cycles) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    // read afresh each step: other voxels' pushes and relabels land meanwhile
    volatile long long* ve = excess;
    volatile int* vh = height;
    for (int c = 0; c < cycles; ++c) {
        long long e = ve[p];
        int hp = vh[p];
        if (e <= 0 || hp >= INF) return;
        u32 rs = sink[p];
        if (rs > 0) {
            // the sink is at height 0, below every voxel
            u32 delta = e < (long long)rs ? (u32)e : rs;
            sink[p] = rs - delta;
            atomicAdd((u64*)&excess[p], (u64)(-(long long)delta));
            continue;
        }
        int low = INF, best = -1;
#pragma unroll
        for (int d = 0; d < VOL_K; ++d) {
            if (res[(long long)d * n + p] > 0) {
                int hq = vh[p + step_of(d, w, h)];
                if (hq < low) {
                    low = hq;
                    best = d;
                }
            }
        }
        if (best >= 0 && hp > low) {
            long long q = p + step_of(best, w, h);
            u32 r = res[(long long)best * n + p];
            u32 delta = e < (long long)r ? (u32)e : r;
            atomicSub(&res[(long long)best * n + p], delta);
            atomicAdd(&res[(long long)(best ^ 1) * n + q], delta);
            atomicAdd((u64*)&excess[q], (u64)delta);
            atomicAdd((u64*)&excess[p], (u64)(-(long long)delta));
        } else {
            vh[p] = low >= INF - 1 ? INF : low + 1;
        }
    }
}

// Heights before a global relabel: 1 next to the sink, INF elsewhere.
extern "C" __global__ void vol_relabel_init(const u32* sink, int* height, long long n) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    height[p] = sink[p] > 0 ? 1 : INF;
}

// Relaxes heights to min over residual arcs of (neighbour + 1) until this block's tile
// changes no more; sets *changed where any height of the tile fell. Neighbours in
// other tiles are read as they are: every height written is at least the distance,
// so racing reads only delay convergence.
extern "C" __global__ void __launch_bounds__(BX * BY * BZ) vol_bfs(const u32* res, int* height, int w, int h, int depth, u32* changed) {
    int x = blockIdx.x * BX + threadIdx.x;
    int y = blockIdx.y * BY + threadIdx.y;
    int z = blockIdx.z * BZ + threadIdx.z;
    bool inside = x < w && y < h && z < depth;
    long long n = (long long)w * h * depth;
    long long p = ((long long)z * h + y) * w + x;
    u32 arcs = 0;
    int hp = INF;
    if (inside) {
#pragma unroll
        for (int d = 0; d < VOL_K; ++d)
            if (res[(long long)d * n + p] > 0) arcs |= 1u << d;
        hp = height[p];
    }
    volatile int* vh = height;
    bool fell = false;
    for (;;) {
        int best = hp;
        if (hp > 1 && arcs) {
#pragma unroll
            for (int d = 0; d < VOL_K; ++d) {
                if (arcs & (1u << d)) {
                    int hq = vh[p + step_of(d, w, h)] + 1;
                    best = hq < best ? hq : best;
                }
            }
        }
        int moved = best < hp;
        if (moved) {
            hp = best;
            vh[p] = best;
            fell = true;
        }
        if (!__syncthreads_or(moved)) break;
    }
    if (__syncthreads_or(fell) && threadIdx.x + threadIdx.y + threadIdx.z == 0) *changed = 1u;
}

// Adds the voxels with excess that can still reach the sink to counts[0].
extern "C" __global__ void vol_count(const long long* excess, const int* height, long long n,
                                     u32* counts) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool active = p < n && excess[p] > 0 && height[p] < INF;
    int block = __syncthreads_count(active);
    if (threadIdx.x == 0 && block > 0) atomicAdd(&counts[0], (u32)block);
}

// The cut (255 where the voxel cannot reach the sink) and the excess left, added to
// *left.
extern "C" __global__ void vol_finish(const long long* excess, const int* height, unsigned char* mask,
                                      long long n, u64* left) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long e = 0;
    if (p < n) {
        mask[p] = height[p] >= INF ? 255 : 0;
        e = excess[p];
    }
    // a warp's sum, then one atomic per warp
    for (int o = 16; o > 0; o >>= 1) e += __shfl_down_sync(0xffffffffu, e, o);
    if ((threadIdx.x & 31) == 0 && e != 0) atomicAdd(left, (u64)e);
}
