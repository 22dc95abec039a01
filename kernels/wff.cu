// Wave Front Fetch (../shared/seeds/wave-front-fetch-graph-cut.txt) on volumes: the
// unit operation of the seed's `wave_push` variant over the arrays of volume.cu, which
// this file is compiled after (src/maxflow/cuda/volume/wff.rs, the schedule
// experiments), with its global relabels deciding termination as for push-relabel.
//
// Each voxel holds a time stamp instead of a height. A voxel with a residual arc to the
// sink takes the newest time, `now`; a voxel with a residual arc to a neighbour of newer
// time pushes its excess there and, where the arc keeps residual capacity (or it had no
// excess), takes that time. Waves of time run from the sink up the residual paths, and
// excess runs down them to the newest time, with no relabelling. Voxels the last global
// relabel found cut off from the sink take no part.

// One unit operation of every voxel, at time `now` (newer than every stamp).
extern "C" __global__ void wff_wave(u32* res, long long* excess, u32* sink, const int* height, int* stamp, int w, int h, long long n, int now) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n || height[p] >= INF) return;
    volatile long long* ve = excess;
    volatile int* vs = stamp;
    long long e = ve[p];
    u32 rs = sink[p];
    if (rs > 0 && e > 0) {
        u32 delta = e < (long long)rs ? (u32)e : rs;
        rs -= delta;
        sink[p] = rs;
        atomicAdd((u64*)&excess[p], (u64)(-(long long)delta));
        e -= delta;
    }
    int mine = rs > 0 ? now : vs[p];
#pragma unroll
    for (int d = 0; d < VOL_K; ++d) {
        u32 r = res[(long long)d * n + p];
        if (r == 0) continue;
        long long q = p + step_of(d, w, h);
        int theirs = vs[q];
        if (theirs <= mine) continue;
        if (e > 0) {
            u32 delta = e < (long long)r ? (u32)e : r;
            atomicSub(&res[(long long)d * n + p], delta);
            atomicAdd(&res[(long long)(d ^ 1) * n + q], delta);
            atomicAdd((u64*)&excess[q], (u64)delta);
            atomicAdd((u64*)&excess[p], (u64)(-(long long)delta));
            e -= delta;
            if (r > delta) mine = theirs;
        } else {
            mine = theirs;
        }
    }
    vs[p] = mine;
}
