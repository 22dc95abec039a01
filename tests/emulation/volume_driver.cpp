// Runs the volume engine's kernels (kernels/volume.cu, kernels/wff.cu) on the host (see
// shim.h), every block one voxel and the blocks one after another, with the host loop of
// src/maxflow/cuda/volume.rs: global relabels repeated until no height falls, then push
// launches (or Wave Front Fetch's unit operations, with `wff`), doubled while the active
// voxels do not halve, until none is active; stalled waves hand over to push-relabel.
//
//   volume_driver PROBLEM MASK_OUT FIRST MOST CYCLES [wff]
//
// FIRST and MOST: push launches after the first relabel and at the most between two,
// CYCLES: steps of a voxel a launch (the engine's constants, which the test passes).
// PROBLEM is text: `W H D K`, then the source, sink and K edge arrays (voxel order, as
// VolumeProblem holds them). Prints `flow F global_relabels G push_launches P` and writes
// the voxels that cannot reach t (255) or can (0) to MASK_OUT; with `wff` also
// `waves W took_over 0|1`.
#include "shim.h"
#define BX 1
#define BY 1
#define BZ 1
#define __constant__
extern Dim3 blockDim;
inline int __syncthreads_count(int v) { return v != 0; }
// One lane: the others' values are nothing.
template <class T> inline T __shfl_down_sync(unsigned, T, int) { return 0; }
#include KERNEL_SOURCE
#include WFF_SOURCE
#include <cstring>
#include <vector>

Dim3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim{1, 1, 1};

// Every block of a launch over `n` voxels (the linear launches) or of the tile grid.
template <class F> static void each_voxel(long long n, F f) {
    for (long long p = 0; p < n; ++p) {
        blockIdx = {(u32)p, 0, 0};
        f();
    }
}

template <class F> static void each_tile(int w, int h, int d, F f) {
    for (int z = 0; z < d; ++z)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                blockIdx = {(u32)x, (u32)y, (u32)z};
                f();
            }
}

int main(int argc, char** argv) {
    if (argc != 6 && argc != 7) return 2;
    const u32 first = (u32)atoi(argv[3]), most = (u32)atoi(argv[4]);
    const int cycles = atoi(argv[5]);
    bool waves = argc == 7 && !strcmp(argv[6], "wff");
    FILE* f = fopen(argv[1], "r");
    if (!f) return 2;
    int w, h, d, k;
    if (fscanf(f, "%d %d %d %d", &w, &h, &d, &k) != 4 || k != VOL_K) return 2;
    long long n = (long long)w * h * d;
    std::vector<int> src(n), snk(n), res(n * k);
    for (auto* a : {&src, &snk, &res})
        for (auto& v : *a)
            if (fscanf(f, "%d", &v) != 1) return 2;
    fclose(f);
    std::vector<long long> excess(n);
    std::vector<u32> sink(n), flags(2);
    std::vector<int> height(n), stamp(n, 0);
    std::vector<unsigned char> mask(n);
    u64 base = 0, in = 0, left = 0;
    for (long long p = 0; p < n; ++p) {
        base += (u64)(src[p] < snk[p] ? src[p] : snk[p]);
        in += src[p] > snk[p] ? (u64)(src[p] - snk[p]) : 0;
    }
    u32* r = (u32*)res.data();
    each_voxel(n, [&] { vol_init(src.data(), snk.data(), excess.data(), sink.data(), n); });
    u32 pushes = first, last = ~0u, stalls = 0;
    u64 relabels = 0, launches = 0, wave_ops = 0;
    bool took_over = false;
    for (;;) {
        each_voxel(n, [&] { vol_relabel_init(sink.data(), height.data(), n); });
        do {
            flags[0] = 0;
            each_tile(w, h, d, [&] { vol_bfs(r, height.data(), w, h, d, flags.data()); });
        } while (flags[0]);
        ++relabels;
        flags[0] = 0;
        each_voxel(n, [&] { vol_count(excess.data(), height.data(), n, flags.data()); });
        u32 active = flags[0];
        if (active == 0) break;
        if (active > last / 2) pushes = pushes * 2 < most ? pushes * 2 : most;
        stalls = pushes == most && active >= last ? stalls + 1 : 0;
        if (waves && stalls >= 4) {
            waves = false;
            took_over = true;
        }
        last = active;
        for (u32 i = 0; i < pushes; ++i) {
            if (waves) {
                int now = (int)++wave_ops;
                each_voxel(n, [&] { wff_wave(r, excess.data(), sink.data(), height.data(), stamp.data(), w, h, n, now); });
            } else {
                each_voxel(n, [&] { vol_push(r, excess.data(), sink.data(), height.data(), w, h, n, cycles); });
                launches += 1;
            }
        }
    }
    each_voxel(n, [&] { vol_finish(excess.data(), height.data(), mask.data(), n, &left); });
    printf("flow %llu global_relabels %llu push_launches %llu waves %llu took_over %d\n", base + in - left,
           relabels, launches, wave_ops, took_over ? 1 : 0);
    FILE* m = fopen(argv[2], "wb");
    if (!m) return 2;
    fwrite(mask.data(), 1, n, m);
    fclose(m);
    return 0;
}
